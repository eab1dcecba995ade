"""Benchmarks of the views and of export (`make bench`); figures are printed, never asserted.

A store of AGENTWATCH_BENCH_VIEWS_SESSIONS sessions (50) of AGENTWATCH_BENCH_VIEWS_CALLS
paired tool calls each (500), a prompt and a stop around them. Same-run baselines:
`export --format jsonl` (read every row and write it: the floor of any export) for the OTLP
export, and one grouped query over the `tool_calls` view (the pairing every per-session
count needs) for `sessions`.
"""

from __future__ import annotations

import io
import os
import time

import pytest
from support.otlpreceiver import Receiver
from support.sessions import policy

from agentwatch.readers import export, sessions
from agentwatch.record import normalize
from agentwatch.store import db
from agentwatch.store.append import Store

SESSIONS = int(os.environ.get("AGENTWATCH_BENCH_VIEWS_SESSIONS", "50"))
CALLS = int(os.environ.get("AGENTWATCH_BENCH_VIEWS_CALLS", "500"))


def build(path) -> int:
    n = 0
    pol = policy()

    def row(payload: dict) -> object:
        nonlocal n
        n += 1
        return normalize.to_append(
            {"record_id": f"r{n}", "harness": "claude-code", "payload": payload,
             "ts_observed_ns": 10**18 + n * 10**6, "pid": 1, "ppid": 2, "delivery": "socket"}, policy=pol)

    with Store(path) as store:
        for s in range(SESSIONS):
            sid = f"bench-{s:05d}"
            batch = [row({"hook_event_name": "UserPromptSubmit", "session_id": sid, "prompt": "go", "cwd": "/w"})]
            for c in range(CALLS):
                call = {"session_id": sid, "tool_name": "Bash", "tool_input": {"command": f"echo {c}"},
                        "tool_use_id": f"t{s}-{c}"}
                batch.append(row({"hook_event_name": "PreToolUse", **call}))
                batch.append(row({"hook_event_name": "PostToolUse", **call, "tool_response": {"stdout": "x"}}))
            batch.append(row({"hook_event_name": "Stop", "session_id": sid}))
            store.append(batch)
    return n


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


@pytest.mark.bench
def test_bench_views_and_export(tmp_path):
    store = tmp_path / "store.db"
    rows = build(store)
    found, t_sessions = timed(lambda: sessions.list_sessions(store))
    conn = db.open_reader(store)
    try:
        _, t_view = timed(lambda: conn.execute(
            "SELECT harness, session_id, outcome, count(*) FROM tool_calls GROUP BY 1, 2, 3").fetchall())
    finally:
        conn.close()
    items, t_show = timed(lambda: sessions.timeline(store, found[len(found) // 2].session_id)[3])
    jsonl, t_jsonl = timed(lambda: export.export(store, fmt="jsonl", out=io.BytesIO()))
    with Receiver() as receiver:
        otlp, t_otlp = timed(lambda: export.export(store, fmt="otlp", endpoint=receiver.endpoint))
    print(f"\nviews on {rows} rows ({SESSIONS} sessions x {CALLS} calls)")
    print(f"  sessions: {len(found)} in {t_sessions:.2f} s; baseline one grouped tool_calls query "
          f"{t_view:.2f} s (ratio {t_sessions / t_view:.2f})")
    print(f"  show: {len(items)} lines of one session in {t_show * 1000:.0f} ms")
    print(f"  export jsonl (baseline): {jsonl.records / t_jsonl:,.0f} records/s")
    print(f"  export otlp: {otlp.records / t_otlp:,.0f} records/s, {otlp.spans} spans in {otlp.requests} requests "
          f"(ratio to jsonl {t_jsonl / t_otlp:.2f})")
