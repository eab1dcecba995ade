"""Benchmark of retention (`make bench`): a simulated year, measured; figures printed, never asserted.

AGENTWATCH_BENCH_RETENTION_DAYS days (365) of AGENTWATCH_BENCH_RETENTION_PER_DAY tool events
(10,000; about 1.5 KB each) are recorded through the store with a pinned clock (tests only: the
product cannot set a row's recorded time), with a 30-day payload retention applied once a
simulated day, as the daemon would. Printed: store size at each simulated month, time per
retention pass, append rate with retention transactions interleaved ÷ without (same run, same
rows), and `verify --full` and `prove` on the retained store.
"""

from __future__ import annotations

import os
import statistics
import time
import types
from pathlib import Path

import pytest

from agentwatch.evidence import bundle as bundles
from agentwatch.evidence import checkpoints
from agentwatch.evidence.audit import verify_store
from agentwatch.store import append as store_append
from agentwatch.store import retention
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

DAYS = int(os.environ.get("AGENTWATCH_BENCH_RETENTION_DAYS", "365"))
PER_DAY = int(os.environ.get("AGENTWATCH_BENCH_RETENTION_PER_DAY", "10000"))
BATCH = 100
T0 = 1_735_689_600_000_000_000  # 2025-01-01
DAY = retention.NS_PER_DAY


def event(day: int, i: int) -> bytes:
    return canonical_json({
        "schema": 1, "harness": "claude-code", "session_id": f"d{day}-s{i // 200}",
        "event": {"name": "PostToolUse", "kind": "tool_post"},
        "tool": {"name": "Bash", "category": "shell", "input": {"command": f"pytest -q tests/test_{i}.py"},
                 "response": {"stdout": f"{i} passed in 0.{i % 97}s\n" + "." * 1200}},
    })


def size_of(path: Path) -> int:
    return sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())


def record_day(store: Store, clock, day: int, per_day: int = PER_DAY) -> float:
    """Append one simulated day's events in batches; seconds spent appending."""
    spent = 0.0
    for first in range(0, per_day, BATCH):
        rows = [Append(f"d{day}-{i}", "event", event(day, i)) for i in range(first, min(first + BATCH, per_day))]
        clock.now = T0 + day * DAY + first * (DAY // per_day)
        t0 = time.perf_counter()
        store.append(rows)
        spent += time.perf_counter() - t0
    return spent


@pytest.mark.bench
def test_bench_a_simulated_year_of_retention(tmp_path, monkeypatch):
    clock = types.SimpleNamespace(now=T0)
    monkeypatch.setattr(store_append, "time", types.SimpleNamespace(time_ns=lambda: clock.now))
    path = tmp_path / "store.db"
    policy = retention.Policy(30)
    sizes: list[tuple[int, int]] = []
    pass_s: list[float] = []
    append_with: list[float] = []
    append_without: list[float] = []
    append_s: list[float] = []
    with Store(path) as store:
        for day in range(DAYS):
            spent = record_day(store, clock, day)
            append_s.append(spent)
            (append_with if day >= 31 else append_without).append(PER_DAY / spent)
            t0 = time.perf_counter()
            retention.retain(store, policy, T0 + (day + 1) * DAY)
            pass_s.append(time.perf_counter() - t0)
            if day % 30 == 29 or day == DAYS - 1:
                sizes.append((day + 1, size_of(path)))
        # The writer's time for a day's ingest with that day's pass ÷ without it (days with a pass).
        days_with = [(a, p) for a, p in zip(append_s, pass_s) if p > 0][31:] or list(zip(append_s, pass_s))
        share = sum(a for a, _ in days_with) / sum(a + p for a, p in days_with)
    monkeypatch.undo()
    state = tmp_path / "state"
    signed = checkpoints.sign_store(path, state_dir=state)
    t0 = time.perf_counter()
    verified = verify_store(path, full=True, state_dir=state, signer_dir=state, witness_dirs=[], jobs=1)
    verify_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bundles.prove_inclusion(path, 1, state_dir=state)
    prove_s = time.perf_counter() - t0
    rows = DAYS * PER_DAY
    print(f"\nretention over {DAYS} simulated days x {PER_DAY:,} events ({rows:,} rows), 30-day payload retention")
    print("  store size by day: " + ", ".join(f"{d}: {b / 2**20:.0f} MiB" for d, b in sizes))
    print(f"  retention pass (daily): median {statistics.median(pass_s) * 1000:.0f} ms, "
          f"max {max(pass_s) * 1000:.0f} ms")
    print(f"  append rate, days 1-31 (nothing to retain yet) median {statistics.median(append_without):,.0f} rows/s; "
          f"later days (a pass daily) {statistics.median(append_with):,.0f} rows/s")
    print(f"  ingest capacity with the daily pass ÷ without (the writer's time for a day's rows, without and "
          f"with that day's pass): {share:.2f}")
    print(f"  verify --full: {verified.rows_checked:,} rows ({verified.retained:,} retained) in {verify_s:.1f} s "
          f"({verified.rows_checked / verify_s:,.0f} rows/s), ok={verified.ok}; prove seq 1 (retained) "
          f"{prove_s * 1000:.0f} ms; checkpoint size {signed.checkpoint.size:,}")


def _ingest_rate(tmp_path, monkeypatch, name: str, retention_days: float, seconds: float = 8.0) -> tuple[float, int]:
    """Pipelined appends into a real daemon for `seconds`, on a store of 30,000 old rows; (acks/s, rows retained)."""
    from support.daemon import Daemon, envelope, line

    root = tmp_path / name
    d = Daemon(root, verify_interval=0, extra_args=["--retention-days", str(retention_days)])
    d.store.parent.mkdir(parents=True, exist_ok=True)
    clock = types.SimpleNamespace(now=T0)
    monkeypatch.setattr(store_append, "time", types.SimpleNamespace(time_ns=lambda: clock.now))
    with Store(d.store) as store:
        for day in range(3):
            record_day(store, clock, day, per_day=10_000)
    monkeypatch.undo()
    monkeypatch.setenv("AGENTWATCH_RETENTION_INTERVAL_S", "1")
    d.start()
    try:
        time.sleep(1.5)  # the first pass has begun (when retention is on)
        acked = 0
        batch = b"".join(line(envelope()) for _ in range(100))
        began = time.perf_counter()
        with d.client() as client:
            while time.perf_counter() - began < seconds:
                client.send(batch)
                replies = [client.reply() for _ in range(100)]
                acked += sum(1 for r in replies if r.get("ok"))
        rate = acked / (time.perf_counter() - began)
        retained = d.health().get("retention", {}).get("rows_retained", 0)
    finally:
        d.stop()
        monkeypatch.delenv("AGENTWATCH_RETENTION_INTERVAL_S")
    return rate, retained


@pytest.mark.bench
def test_bench_daemon_ingest_while_a_retention_pass_runs(tmp_path, monkeypatch):
    rounds = []
    for i in range(3):  # alternating, so drift on this shared machine hits both arms alike
        off, _ = _ingest_rate(tmp_path, monkeypatch, f"off{i}", 0)
        on, retained = _ingest_rate(tmp_path, monkeypatch, f"on{i}", 30)
        rounds.append((off, on, retained))
    ratios = sorted(on / off for off, on, _ in rounds)
    print("\ndaemon ingest (pipelined, 100 per round trip) with a retention pass running ÷ without, 3 rounds:")
    for off, on, retained in rounds:
        print(f"  without {off:,.0f} acks/s, with {on:,.0f} acks/s ({retained:,} rows retained meanwhile): "
              f"{on / off:.2f}")
    print(f"  median ratio {ratios[1]:.2f}")
