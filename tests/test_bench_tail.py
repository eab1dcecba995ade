"""Benchmarks of the live tail and of reconcile (`make bench`); figures are printed, never asserted.

- Delivery latency through the daemon's subscription at a steady rate
  (AGENTWATCH_BENCH_TAIL_RATE, 1000 events/s, for AGENTWATCH_BENCH_TAIL_S, 10 s).
  Reported two ways: commit -> arrival, from the row's `recorded_at_ns` (stamped in
  the writer's transaction just before INSERT and COMMIT, so it includes the
  commit's fsync) to the subscriber's receipt; and send -> arrival (the sender's
  clock when it wrote the request, so it adds the socket, parsing and queueing).
- `reconcile` wall time and peak RSS (VmHWM, in a child process) on stores of
  AGENTWATCH_BENCH_RECONCILE_ROWS rows (100000,1000000), with a consumer whose
  delivery log covers every row: memory should stay flat as the store grows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from support.daemon import Daemon, envelope, line

RATE = float(os.environ.get("AGENTWATCH_BENCH_TAIL_RATE", "1000"))
SECONDS = float(os.environ.get("AGENTWATCH_BENCH_TAIL_S", "10"))
ROWS = [int(n) for n in os.environ.get("AGENTWATCH_BENCH_RECONCILE_ROWS", "100000,1000000").split(",")]


def _pct(values: list[int], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] / 1e6


@pytest.mark.bench
def test_bench_commit_to_subscriber_latency(tmp_path):
    d = Daemon(tmp_path / "d").start()
    total = int(RATE * SECONDS)
    sent_ns: dict[str, int] = {}
    arrivals: list[tuple[str, int, int]] = []  # record_id, recorded_at_ns, arrival ns
    try:
        sub = d.client()
        sub.request({"op": "subscribe", "from": "head", "kinds": ["event"]})

        def subscriber():
            while len(arrivals) < total:
                raw = sub.reply_line()
                now = time.time_ns()
                if raw is None:
                    return
                doc = json.loads(raw)
                if "seq" in doc and "op" not in doc:
                    arrivals.append((doc["record_id"], doc["recorded_at_ns"], now))

        reader = threading.Thread(target=subscriber)
        reader.start()
        with d.client() as client:
            acks = threading.Thread(target=lambda: [client.reply() for _ in range(total)])
            acks.start()
            start = time.monotonic()
            for i in range(total):
                delay = start + i / RATE - time.monotonic()  # a monotonic schedule, not sleep(1/rate)
                if delay > 0:
                    time.sleep(delay)
                env = envelope(n=i)
                sent_ns[env["record_id"]] = time.time_ns()
                client.send(line(env))
            acks.join()
        reader.join(30)
        sub.close()
    finally:
        d.stop()
    commit = [arrived - recorded for _, recorded, arrived in arrivals]
    send = [arrived - sent_ns[rid] for rid, _, arrived in arrivals]
    print(f"\nlive tail at {RATE:g} events/s for {SECONDS:g} s over one connection: {len(arrivals)}/{total} arrived; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"  commit -> arrival (recorded_at_ns -> receipt): p50 {_pct(commit, 50):.2f} ms, "
          f"p99 {_pct(commit, 99):.2f} ms, max {max(commit) / 1e6:.2f} ms")
    print(f"  send -> arrival:                            p50 {_pct(send, 50):.2f} ms, "
          f"p99 {_pct(send, 99):.2f} ms, max {max(send) / 1e6:.2f} ms")


_BUILD = """
import json, sys
from pathlib import Path
from agentwatch.store.chain import canonical_json
from agentwatch.readers.consumers import Consumer
from agentwatch.store.append import Append, Store
path, rows, state = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
with Store(path) as store:
    for start in range(0, rows, 10_000):
        store.append([Append(f"ev-{i}", "event", canonical_json(
            {"harness": "bench", "event": {"name": "PreToolUse", "kind": "tool_call"}, "n": i}))
            for i in range(start, min(rows, start + 10_000))])
    consumer = Consumer("bench", store.store_id, state)
cursor = consumer.start(1, ["event"])
for start in range(1, rows + 1, 100_000):
    consumer.record_deliveries(range(start, min(rows, start + 99_999) + 1))
consumer.ack(cursor, rows)
consumer.close()
"""

_MEASURE = """
import json, sys, time
from pathlib import Path
from agentwatch.readers.reconcile import reconcile
t0 = time.perf_counter()
result = reconcile(Path(sys.argv[1]), consumer="bench", state_dir=Path(sys.argv[2]))
elapsed = time.perf_counter() - t0
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(json.dumps({"s": elapsed, "hwm_kib": int(hwm), "ok": result.within_bounds, "delivered": result.counts["delivered"]}))
"""


@pytest.mark.bench
def test_bench_reconcile_time_and_peak_rss(tmp_path):
    print(f"\nreconcile (chain verify + contiguity + consumer check), streamed; load average {os.getloadavg()[0]:.2f}")
    for rows in ROWS:
        store, state = tmp_path / f"s{rows}.db", tmp_path / f"state{rows}"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _BUILD, str(store), str(rows), str(state)], check=True)
        built = time.perf_counter() - t0
        out = subprocess.run([sys.executable, "-c", _MEASURE, str(store), str(state)], check=True,
                             capture_output=True, text=True)
        doc = json.loads(out.stdout)
        print(f"  {rows:>9} rows: reconcile {doc['s']:.2f} s ({rows / doc['s']:,.0f} rows/s), "
              f"peak RSS {doc['hwm_kib'] / 1024:.1f} MiB, within_bounds {doc['ok']}, "
              f"delivered {doc['delivered']} (built in {built:.1f} s)")
