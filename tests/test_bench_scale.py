"""Readers at scale (issue #25, item 4): how each command's time and memory grow with the store.

Stores of AGENTWATCH_BENCH_SCALE events (100,000, 300,000 and 1,000,000; the 5,000,000 row of
docs/benchmarks.md is `AGENTWATCH_BENCH_SCALE=100000,1000000,5000000`, about 4 minutes to build)
are built through the real store path (packing on) from three event shapes normalized
and redacted once: 4,000 sessions interleaved as agents run side by side, each event a prompt
or a paired tool call of a claude-code session. Each command runs as its own process (`agentwatch ...` through the CLI)
and `/usr/bin/time` gives its wall time and peak memory. The same-run baselines
are `agentwatch path` (the CLI's start-up alone) and one `SELECT count(*)` over the records
table through `agentwatch sql` (the floor of any full scan).
Figures are printed, never asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.sessions import policy

from agentwatch.record import normalize
from agentwatch.store.append import Append, Store

pytestmark = pytest.mark.bench

SIZES = [int(n) for n in os.environ.get("AGENTWATCH_BENCH_SCALE", "100000,300000,1000000").split(",")]
SESSIONS = 4000
FULL_LIST_UPTO = int(os.environ.get("AGENTWATCH_BENCH_SCALE_FULL", "300000"))  # the unpaged list beyond: minutes


def build(path: Path, n: int) -> None:
    """n events through the real normalize + redact path once per shape, then the session and call ids
    put into the canonical bytes (values only: the bytes stay canonical JSON), packed by the store."""
    pol = policy()
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the failing test in shop/cart.py", "cwd": "/w"}
    call = {"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/test_cart.py", "description": "run tests"},
            "cwd": "/w", "tool_use_id": "TOOLUSE-ID-XXXXXXXX"}
    shapes = [prompt, {"hook_event_name": "PreToolUse", **call},
              {"hook_event_name": "PostToolUse", **call,
               "tool_response": {"stdout": "..F..\n1 failed, 4 passed in 0.31s\n" * 8, "exit_code": 1}}]
    templates = [normalize.to_append({"record_id": "t", "harness": "claude-code", "pid": 1, "ppid": 2,
                                      "payload": {**body, "session_id": "SESSION-ID-XXXXXXXX"}}, policy=pol).payload
                 for body in shapes]
    with Store(path) as store:
        batch = []
        for i in range(n):
            s = (i // 7) % SESSIONS  # runs of 7 events per session, sessions interleaved as agents run side by side
            step = i % 7
            payload = templates[0 if step == 0 else 1 + (step + 1) % 2].replace(
                b"SESSION-ID-XXXXXXXX", b"scale-%013d" % s).replace(b"TOOLUSE-ID-XXXXXXXX", b"t-%017d" % ((i + 1) // 2))
            batch.append(Append(f"r{i}", "event", payload))
            if len(batch) == 5000:
                store.append(batch)
                batch = []
        if batch:
            store.append(batch)


def measure(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident memory (MiB) of one CLI command in its own process."""
    cmd = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "agentwatch.cli", *argv]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    rss_kib = int(done.stderr.strip().splitlines()[-1].split()[1])
    return wall, rss_kib // 1024


def test_readers_at_scale(tmp_path):
    rows = []
    for n in SIZES:
        store = tmp_path / f"s{n}.db"
        t0 = time.perf_counter()
        build(store, n)
        built = time.perf_counter() - t0
        s = str(store)
        start = measure(["path", "--store", s])
        base = measure(["sql", "--store", s, "SELECT count(*) FROM records"])
        figures = {
            "sessions --limit 20": measure(["sessions", "--store", s, "--limit", "20", "--json"]),
            "sessions (all)": measure(["sessions", "--store", s, "--json"]) if n <= FULL_LIST_UPTO else None,
            "show SESSION": measure(["show", "scale-%013d" % 7, "--store", s, "--json"]),
            "tail --from head-1000": measure(["tail", "--store", s, "--from", str(max(1, n - 1000)), "--json"]),
            "export jsonl --from head-10000": measure(["export", "--format", "jsonl", "--store", s,
                                                       "--from", str(max(1, n - 10000))]),
            "reconcile": measure(["reconcile", "--store", s, "--json"]),
        }
        rows.append((n, built, start, base, figures))
        store.unlink()
    print(f"\nreaders at scale ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}); "
          "seconds / peak MiB, each command its own process:")
    for n, built, start, base, figures in rows:
        print(f"  {n:>9,} events (built in {built:.0f} s); baselines: `path` (start-up only) {start[0]:.2f} s / "
              f"{start[1]} MiB, `sql SELECT count(*)` {base[0]:.2f} s / {base[1]} MiB")
        for label, got in figures.items():
            text = "not run (minutes)" if got is None else f"{got[0]:6.2f} s / {got[1]:4d} MiB"
            print(f"      {label:<34} {text}")
