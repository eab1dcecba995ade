"""What the agent feels: the ack latency of real hook processes while the daemon is loaded (issue #25).

Each arm starts a fresh `agentwatch serve`, runs AGENTWATCH_BENCH_HOOKS real hook processes one
after another (`python -I -S hook.py`, as a harness runs them) and reads each hook's own
ledger line: its latency from start to ack, and whether it was acked or spooled. Arms:

- idle: nothing else runs (the same-run baseline);
- (a) 8 flooders (tests/support/flood.py: 4 reading their acks, 4 never reading one);
- (b) a stream of ~1 MiB payloads (base64 of random bytes) being normalized;
- (c) 1,000 events/s paced on another connection, the sweeper every 0.05 s, a checkpoint
  every second and `agentwatch tail -f`;

and (a) and (b) again with `--normalize-workers 0` (normalization on the event loop), the
design before. Figures are printed, never asserted against a time (docs/benchmarks.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.daemon import Daemon, wait_for
from test_bench_daemon import _lines, _load, paced_latencies
from test_bench_hook import _percentile
from test_nowait import hook_env, ledger_lines, run_hook, start_flooders, stop_flooders

pytestmark = pytest.mark.bench

HOOKS = int(os.environ.get("AGENTWATCH_BENCH_HOOKS", "100"))


def _hooks(d: Daemon, root: Path, n: int = HOOKS) -> tuple[list[float], int]:
    ledger = root / f"ledger-{time.monotonic_ns()}.jsonl"
    env = hook_env(d, ledger)
    for i in range(n):
        run_hook(env, i)
    lines = ledger_lines(ledger)
    assert len(lines) == n
    return sorted(line["latency_us"] / 1000 for line in lines), sum(line["outcome"] != "acked" for line in lines)


def _row(label: str, lat: list[float], spooled: int, base: list[float]) -> str:
    p = _percentile
    return (f"  {label:<44} p50 {p(lat, .5):7.1f} ms  p99 {p(lat, .99):7.1f} ms  max {lat[-1]:7.1f} ms  "
            f"spooled {spooled:>3}   p99/idle {p(lat, .99) / p(base, .99):5.1f}x")


def _flooded(root: Path, modes: list[str], args: list[str]) -> tuple[list[float], int]:
    d = Daemon(root, verify_interval=5.0, extra_args=args).start()
    procs = start_flooders(d, root, modes)
    try:
        wait_for(lambda: d.health()["connections_open"] >= len(modes), "the flooders to connect")
        time.sleep(1.0)
        return _hooks(d, root)
    finally:
        stop_flooders(procs)
        assert d.stop() == 0, d.output()


def _steady(root: Path) -> tuple[list[float], int]:
    d = Daemon(root, verify_interval=0.05, extra_args=["--checkpoint-interval", "1"]).start()
    tail = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "tail", "-f", "--store", str(d.store), "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()

    def pace() -> None:
        while not stop.is_set():
            paced_latencies(d.socket, _lines(1000), 1000.0)

    pacer = threading.Thread(target=pace, daemon=True)
    pacer.start()
    try:
        time.sleep(1.0)
        return _hooks(d, root)
    finally:
        stop.set()
        pacer.join()
        tail.terminate()
        tail.wait()
        assert d.stop() == 0, d.output()


def test_hook_ack_latency_under_load(tmp_path):
    flooders = ["read"] * 4 + ["ignore"] * 4
    arms: list[tuple[str, tuple[list[float], int]]] = []
    d = Daemon(tmp_path / "idle", verify_interval=5.0).start()
    try:
        base = _hooks(d, tmp_path / "idle")
    finally:
        assert d.stop() == 0, d.output()
    arms.append(("idle daemon (baseline)", base))
    arms.append(("(a) 8 flooders", _flooded(tmp_path / "a", flooders, [])))
    arms.append(("(a) 8 flooders, normalizing on the loop", _flooded(tmp_path / "a0", flooders,
                                                                     ["--normalize-workers", "0"])))
    arms.append(("(b) ~1 MiB payloads streaming", _flooded(tmp_path / "b", ["large"], [])))
    arms.append(("(b) ~1 MiB payloads, normalizing on the loop", _flooded(tmp_path / "b0", ["large"],
                                                                          ["--normalize-workers", "0"])))
    arms.append(("(c) 1,000 ev/s + sweeper + checkpoints + tail", _steady(tmp_path / "c")))
    print(f"\nack latency of real hook processes, {HOOKS} hooks per arm ({_load()}):")
    for label, (lat, spooled) in arms:
        print(_row(label, lat, spooled, base[0]))


def test_ingestion_with_workers_and_on_the_loop(tmp_path):
    """The ingestion ceiling (item 5) with normalization in the workers and on the loop, beside the
    bare prototype, alternating rounds (a drift favours neither arm)."""
    from support.hook_fakes import SocketDir
    from test_bench_daemon import EVENTS, Prototype, one_per_connection, pipelined

    per_conn = max(EVENTS // 10, 500)
    figures: dict[str, list[tuple[float, float]]] = {"prototype": [], "workers": [], "loop": []}
    for r in range(3):
        arms = [("workers", ["--normalize-workers", "2"]), ("loop", ["--normalize-workers", "0"])]
        for label, args in arms if r % 2 == 0 else arms[::-1]:
            d = Daemon(tmp_path / f"{label}{r}", verify_interval=5.0, extra_args=args).start()
            try:
                figures[label].append((pipelined(d.socket, _lines(EVENTS)), one_per_connection(d.socket, _lines(per_conn))))
            finally:
                assert d.stop() == 0, d.output()
        with SocketDir() as short:
            proto = Prototype(short)
            try:
                figures["prototype"].append((pipelined(proto.socket, _lines(EVENTS)),
                                             one_per_connection(proto.socket, _lines(per_conn))))
            finally:
                proto.stop()

    def median(label: str, i: int) -> float:
        return sorted(f[i] for f in figures[label])[1]

    print(f"\ningestion, medians of 3 rounds ({_load()}):")
    for i, case in enumerate(("(a) pipelined", "(b) one event per connection")):
        base = median("prototype", i)
        print(f"  {case:<30} workers {median('workers', i):8,.0f}/s ({median('workers', i) / base:.2f}x)   "
              f"on the loop {median('loop', i):8,.0f}/s ({median('loop', i) / base:.2f}x)   prototype {base:8,.0f}/s")
