"""The benchmark cases of the adapters: one tool-completion event per harness, as an
envelope the way the hook client sends it. Kept free of pytest so a bare interpreter
(the instruction counts run one under callgrind) imports it cheaply."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "harness"
# A tool-completion event for each harness: the most frequent and the largest kind.
CASES = {
    "claude-code": "PostToolUse",
    "codex": "PostToolUse",
    "gemini-cli": "AfterTool",
    "cursor": "afterMCPExecution",
    "copilot": "postToolUse",
    "vscode": "PostToolUse",
    "cline": "PostToolUse",
    "openhands": "PostToolUse",
}


def envelope(harness: str, name: str) -> dict:
    fixture = json.loads((FIXTURES / harness / f"{name}.json").read_text(encoding="utf-8"))
    env = {
        "record_id": "0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f",
        "harness": harness,
        "payload_text": json.dumps(fixture["payload"]),
        "orig_bytes": 0,
        "truncated": False,
        "ts_observed_ns": 1764460800000000000,
        "ts_mono_ns": 123456789,
        "pid": 4242,
        "ppid": 4241,
        "delivery": "socket",
    }
    if fixture.get("event"):
        env["event"] = fixture["event"]
    env["orig_bytes"] = len(env["payload_text"].encode())
    return env
