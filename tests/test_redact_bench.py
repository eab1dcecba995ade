"""What redaction adds to the ingestion path, against canonical_json of the same document.

Run with `make bench`. Figures are µs per event; compare the ratio to the
baseline measured in the same run, not the absolute times.
"""

from __future__ import annotations

import json
import time
import timeit

import pytest

from agentwatch.record import normalize, redact
from agentwatch.store.chain import canonical_json

SALT = bytes(range(32))

CLAUDE_POST_BASH = {
    "session_id": "0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f",
    "transcript_path": "/home/alice/.claude/projects/-home-alice-src-app/0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f.jsonl",
    "cwd": "/home/alice/src/app",
    "permission_mode": "default",
    "hook_event_name": "PostToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git status --short && ls -la src/", "description": "Show working tree status"},
    "tool_response": {"stdout": " M src/main.py\n?? notes.txt\ntotal 24\n-rw-r--r-- 1 alice alice 1200 main.py",
                      "stderr": "", "interrupted": False, "isImage": False},
    "tool_use_id": "toolu_01ABCdefGHIjklMNOpqrSTUvw",
}


def _doc(payload: dict) -> dict:
    env = {"record_id": "0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f", "harness": "claude-code",
           "payload_text": json.dumps(payload), "ts_observed_ns": 1764460800000000000, "ts_mono_ns": 123456789,
           "pid": 4242, "ppid": 4241, "delivery": "socket"}
    return normalize.record_document(normalize.check_envelope(env), uid=1000)


CLEAN = _doc(CLAUDE_POST_BASH)
SMALL = _doc({k: v for k, v in CLAUDE_POST_BASH.items() if k != "tool_response"} | {"hook_event_name": "PreToolUse"})
WITH_SECRET = _doc({**CLAUDE_POST_BASH, "tool_input": {"command": "export DB_PASSWORD=hunter2x && ./migrate"}})

CASES = {
    "baseline canonical_json": (None, CLEAN),
    "baseline canonical_json, small event": (None, SMALL),
    "redacted, small clean event (fast path)": (redact.Policy(redact.REDACTED, SALT), SMALL),
    "redacted, clean event (fast path)": (redact.Policy(redact.REDACTED, SALT), CLEAN),
    "redacted, event with a secret": (redact.Policy(redact.REDACTED, SALT), WITH_SECRET),
    "hashed, clean event": (redact.Policy(redact.HASHED, SALT), CLEAN),
    "metadata-only, clean event": (redact.Policy(redact.METADATA_ONLY, SALT), CLEAN),
}


def _per_event_us(fn, doc) -> float:
    number = 2000
    # CPU time of this process: other load on the machine does not count against it.
    return min(timeit.repeat(lambda: fn(doc), number=number, repeat=5, timer=time.process_time)) / number * 1e6


@pytest.mark.bench
@pytest.mark.benchmark(group="redaction")
@pytest.mark.parametrize("case", list(CASES))
def test_redaction_cost_per_event(benchmark, case):
    policy, doc = CASES[case]
    fn = canonical_json if policy is None else policy.encode
    baseline = _per_event_us(canonical_json, doc)
    measured = _per_event_us(fn, doc)
    benchmark.extra_info.update({
        "doc_bytes": len(canonical_json(doc)),
        "baseline_canonical_json_us": round(baseline, 2),
        "us_per_event": round(measured, 2),
        "ratio_to_baseline": round(measured / baseline, 2),
    })
    print(f"\n{case}: {measured:.1f} µs/event, baseline canonical_json {baseline:.1f} µs "
          f"({measured / baseline:.2f}x, doc {len(canonical_json(doc))} bytes)")
    benchmark(fn, doc)
