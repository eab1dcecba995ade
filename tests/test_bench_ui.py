"""Benchmark of the review page (`make bench`): how long each page takes on a large store.

A store of AGENTWATCH_BENCH_UI_SESSIONS sessions (2,000) of AGENTWATCH_BENCH_UI_CALLS paired
tool calls each (250): about 1M events. Each page is fetched over HTTP from a running
`agentwatch ui` server, three times, and the median printed beside two same-run baselines:
the stylesheet (the server's own floor: a request with no store work) and the library call
the page rests on (`sessions.list_sessions`, `sessions.timeline`). Figures are printed, never
asserted; docs/benchmarks.md keeps them.
"""

from __future__ import annotations

import os
import statistics
import time
import urllib.request

import pytest
from support.sessions import policy

from agentwatch.readers import sessions
from agentwatch.record import normalize
from agentwatch.store.append import Store
from agentwatch.ui.server import Settings, UIServer

SESSIONS = int(os.environ.get("AGENTWATCH_BENCH_UI_SESSIONS", "2000"))
CALLS = int(os.environ.get("AGENTWATCH_BENCH_UI_CALLS", "250"))


def build(path) -> int:
    pol = policy()
    n = 0
    # Normalizing is not what is measured: each shape is normalized once and its row reused
    # with a fresh record id (the store hashes and indexes every row as usual).
    with Store(path) as store:
        for s in range(SESSIONS):
            sid = f"bench-{s:05d}"
            batch = []

            def row(payload: dict):
                nonlocal n
                n += 1
                return normalize.to_append(
                    {"record_id": f"r{n}", "harness": "claude-code", "payload": payload,
                     "ts_observed_ns": 10**18 + n * 10**6, "pid": 1, "ppid": 2, "delivery": "socket"}, policy=pol)

            batch.append(row({"hook_event_name": "UserPromptSubmit", "session_id": sid, "prompt": "go", "cwd": "/w"}))
            for c in range(CALLS):
                call = {"session_id": sid, "tool_name": "Bash", "tool_input": {"command": f"echo {c}"},
                        "tool_use_id": f"t{s}-{c}"}
                batch.append(row({"hook_event_name": "PreToolUse", **call}))
                batch.append(row({"hook_event_name": "PostToolUse", **call, "tool_response": {"stdout": "x"}}))
                if len(batch) >= 2000:
                    store.append(batch)
                    batch = []
            batch.append(row({"hook_event_name": "Stop", "session_id": sid}))
            store.append(batch)
    return n


def median_s(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fetch(url: str) -> None:
    with urllib.request.urlopen(url, timeout=600) as response:
        response.read()


@pytest.mark.bench
def test_bench_ui_pages(tmp_path):
    store = tmp_path / "store.db"
    t0 = time.perf_counter()
    rows = build(store)
    built_s = time.perf_counter() - t0
    server = UIServer(Settings(store=store, state_dir=tmp_path / "state"))
    server.start_background()
    try:
        newest = f"bench-{SESSIONS - 1:05d}"
        floor = median_s(lambda: fetch(server.url + "static/app.css"))
        lib_sessions = median_s(lambda: sessions.list_sessions(store), runs=1)
        lib_timeline = median_s(lambda: sessions.timeline(store, newest), runs=1)
        pages = {
            "sessions (newest page)": "",
            f"one session ({2 * CALLS + 2} events)": f"session?id={newest}",
            "one record": f"record/{rows // 2}",
            "sql (count)": "sql?q=SELECT+count(*)+FROM+records",
        }
        figures = {name: median_s(lambda path=path: fetch(server.url + path)) for name, path in pages.items()}
    finally:
        server.close()
    print(f"\nreview page on {rows:,} events ({SESSIONS} sessions x {CALLS} calls; built in {built_s:.0f} s)")
    print(f"  baseline: the stylesheet (no store work) {floor * 1000:.1f} ms; list_sessions {lib_sessions:.2f} s; "
          f"timeline of one session {lib_timeline:.2f} s")
    for name, seconds in figures.items():
        print(f"  {name}: {seconds:.3f} s")
