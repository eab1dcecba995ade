"""Normalization cost per event, per adapter: normalize.to_append on a realistic
envelope (payload as the hook client sends it, unparsed text).

Printed next to a baseline measured in the same run on the same payload:
json.loads + canonical_json, the least any path to the store must do. Columns:
`to_append` (everything the daemon does before the store, redaction included),
`normalize` (record_document + canonical_json: decoding, the adapter, the
envelope fields), `adapter` (adapter.normalize on the parsed payload alone).
The table uses CPU time (time.process_time), which a busy machine distorts
less than wall time; pytest-benchmark's own table is wall time. Figures are
reported, never asserted. Run with `make bench`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentwatch import normalize
from agentwatch.adapters import adapter_for
from agentwatch.chain import canonical_json

pytestmark = pytest.mark.bench

FIXTURES = Path(__file__).parent / "fixtures" / "harness"
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
RESULTS: dict[str, tuple[int, float, float, float, float]] = {}


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


def per_call_us(fn, *args, n: int = 2000, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.process_time() - start) / n)
    return best * 1e6


def baseline(text: str) -> bytes:
    return canonical_json(json.loads(text))


def normalize_only(env: dict) -> bytes:
    return canonical_json(normalize.record_document(env))


@pytest.fixture(scope="module", autouse=True)
def table():
    yield
    if RESULTS:
        print("\n\nnormalization cost per event, µs of CPU (baseline = json.loads + canonical_json of the payload)")
        print(f"{'harness':<12} {'bytes':>5} {'to_append':>9} {'normalize':>9} {'adapter':>7} {'baseline':>8}"
              f" {'normalize/baseline':>18}")
        for harness, (size, total, norm, adapter, base) in RESULTS.items():
            print(f"{harness:<12} {size:>5} {total:>9.1f} {norm:>9.1f} {adapter:>7.1f} {base:>8.1f}"
                  f" {norm / base:>18.2f}")


@pytest.mark.parametrize("harness", list(CASES))
def test_to_append_cost(benchmark, harness):
    env = envelope(harness, CASES[harness])
    payload = json.loads(env["payload_text"])
    adapter = adapter_for(harness)
    hint = env.get("event")

    benchmark(normalize.to_append, env)
    total = per_call_us(normalize.to_append, env)
    norm_us = per_call_us(normalize_only, env)
    adapter_us = per_call_us(adapter.normalize, payload, hint)
    base_us = per_call_us(baseline, env["payload_text"])
    RESULTS[harness] = (env["orig_bytes"], total, norm_us, adapter_us, base_us)
    benchmark.extra_info.update(
        cpu_us_to_append=round(total, 2), cpu_us_normalize=round(norm_us, 2),
        cpu_us_adapter=round(adapter_us, 2), cpu_us_baseline=round(base_us, 2),
    )
