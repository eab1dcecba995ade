"""A store holding one realistic session per harness, at fixed times, for the views' tests.

Each session is a sequence of the harness fixtures under tests/fixtures/harness/
(payloads built from each harness's published hook documentation; every fixture
names its source), in the order the harness sends them. The records are
appended through the real normalize + redact + store path, one transaction per
record, with the store's clock and the client's clock pinned, so that what the
views print is the same on every run (the golden files depend on it).
"""

from __future__ import annotations

import json
import types
from pathlib import Path

from agentwatch.record import normalize, redact
from agentwatch.store import append as store_append
from agentwatch.store.append import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "harness"
T0_NS = 1_764_496_800_000_000_000  # 2025-11-30T10:00:00Z
STEP_NS = 1_500_000_000  # 1.5 s between events
SALT = bytes(range(32))  # a fixed redaction salt, so masks are the same on every run

# One session per harness: fixture names in the order the harness sends them.
SESSIONS = {
    "claude-code": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest",
                    "PostToolUseFailure", "PreToolUse-grep", "PreCompact", "Stop", "SessionEnd"],
    "codex": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
              "Stop"],
    "gemini-cli": ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterTool-error", "AfterAgent",
                   "SessionEnd"],
    "cursor": ["sessionStart", "beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution",
               "beforeMCPExecution", "afterMCPExecution", "postToolUseFailure", "stop", "sessionEnd"],
    "copilot": ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "postToolUse-denied",
                "sessionEnd"],
    "vscode": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreToolUse-terminal", "Stop"],
    "cline": ["TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUse-failure", "TaskComplete"],
    "openhands": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
}


def envelope(harness: str, name: str, index: int, at_ns: int, *, payload: dict | None = None) -> dict:
    fixture = json.loads((FIXTURES / harness / f"{name}.json").read_text(encoding="utf-8"))
    text = json.dumps(payload if payload is not None else fixture["payload"])
    env = {
        "record_id": f"{harness}-{index:03d}-{name}",
        "harness": harness,
        "payload_text": text,
        "orig_bytes": len(text.encode()),
        "truncated": False,
        "ts_observed_ns": at_ns,
        "ts_mono_ns": at_ns,
        "pid": 4242,
        "ppid": 4241,
        "delivery": "socket",
    }
    if fixture.get("event"):
        env["event"] = fixture["event"]
    return env


def policy() -> redact.Policy:
    return redact.Policy(redact.REDACTED, SALT)


class PinnedClock:
    """Stands in for the store module's `time`: each commit gets the next fixed time."""

    def __init__(self, start_ns: int):
        self.now = start_ns

    def time_ns(self) -> int:
        return self.now


def append_at(store: Store, envelopes: list[tuple[dict, int]], monkeypatch) -> list[int]:
    """Append each envelope in its own transaction, committed at its own time; the seqs."""
    clock = PinnedClock(0)
    monkeypatch.setattr(store_append, "time", types.SimpleNamespace(time_ns=clock.time_ns))
    seqs = []
    for env, at_ns in envelopes:
        clock.now = at_ns + 2_000_000  # committed 2 ms after the hook saw it
        seqs.append(store.append([normalize.to_append(env, policy=policy())])[0].seq)
    return seqs


def build(path: Path, monkeypatch, harnesses=None) -> dict[str, list[int]]:
    """A store at `path` with the sessions of `harnesses` (default: all), one after another; their seqs."""
    at = T0_NS
    out: dict[str, list[int]] = {}
    with Store(path) as store:
        for harness in harnesses or SESSIONS:
            envs = []
            for i, name in enumerate(SESSIONS[harness]):
                envs.append((envelope(harness, name, i, at), at))
                at += STEP_NS
            out[harness] = append_at(store, envs, monkeypatch)
            at += 60 * STEP_NS
    return out
