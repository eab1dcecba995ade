"""Full-verify throughput and memory on a large store (1,000,000 rows by default).

Run with `make bench`. AGENTWATCH_BENCH_VERIFY_ROWS shrinks the store for a
quick check. The store is built once per session through Store.append in
10,000-row batches. Figures are printed next to a baseline measured in the same
run (reading the same payload bytes in the same chunks and hashing each once
with bare SHA-256), never asserted against a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.verify.walk import CHUNK_ROWS

pytestmark = pytest.mark.bench

ROWS = int(os.environ.get("AGENTWATCH_BENCH_VERIFY_ROWS", "1000000"))
BATCH = 10_000
KINDS = ("event",) * 8 + ("attestation", "gap")

# A typical normalised hook event (~400 bytes), keys already in canonical order.
PAYLOAD = (
    '{{"client":{{"pid":{pid},"ppid":4241,"ts_observed_ns":{ts}}},"cwd":"/home/dev/project",'
    '"event":{{"kind":"tool_post","name":"PostToolUse"}},"harness":"claude-code",'
    '"raw":{{"hook_event_name":"PostToolUse","tool_input":{{"command":"ls -la src/{n}"}},"tool_name":"Bash"}},'
    '"schema":1,"session_id":"3f1c6a52-2d7e-4c55-9b1e-{session:012d}",'
    '"tool":{{"call_id":"toolu_{n:08d}","category":"shell","input":{{"command":"ls -la src/{n}"}},"name":"Bash"}}}}'
)


def payload(n: int) -> bytes:
    return PAYLOAD.format(n=n, pid=4000 + n % 1000, ts=1764460800000000000 + n * 1000, session=n // 500).encode()


@pytest.fixture(scope="session")
def big_store(tmp_path_factory):
    assert canonical_json(json.loads(payload(7))) == payload(7)
    path = tmp_path_factory.mktemp("bench-verify") / "store.db"
    started = time.perf_counter()
    with Store(path) as store:
        for first in range(0, ROWS, BATCH):
            batch = range(first, min(ROWS, first + BATCH))
            store.append([Append(f"bench-{n:09d}", KINDS[n % len(KINDS)], payload(n)) for n in batch])
    print(f"\nbuilt a {ROWS:,}-row store in {time.perf_counter() - started:.1f} s")
    return path


def baseline_seconds(path) -> float:
    """Read every payload in the verifier's chunks and SHA-256 it once: the floor for a verify."""
    conn = db.open_reader(path)
    sha = hashlib.sha256
    try:
        started = time.perf_counter()
        last, count = 0, 0
        while True:
            conn.execute("BEGIN")
            n = 0
            for seq, data in conn.execute(
                "SELECT seq, CAST(payload AS BLOB) FROM records WHERE seq > ? ORDER BY seq LIMIT ?", (last, CHUNK_ROWS)
            ):
                sha(data).digest()
                last = seq
                n += 1
            conn.execute("COMMIT")
            count += n
            if n < CHUNK_ROWS:
                break
        elapsed = time.perf_counter() - started
    finally:
        conn.close()
    assert count == ROWS
    return elapsed


# Run in a fresh process. Linux carries ru_maxrss across exec, so a child of this (large)
# pytest process would report the parent's peak; VmHWM belongs to the child's own memory.
PEAK_RSS = """
import resource, sys
from agentwatch.store import db
from agentwatch.evidence.audit import verify_store

def peak_kib():
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

db.open_reader(sys.argv[1]).close()
before = peak_kib()
result = verify_store(sys.argv[1], full=True, update_anchor=False, state_dir=sys.argv[2])
print(result.ok, result.rows_checked, before, peak_kib())
"""


def test_full_verify_throughput(benchmark, big_store, tmp_path):
    timings = []

    def run():
        started = time.perf_counter()
        result = verify_store(big_store, full=True, update_anchor=False, state_dir=tmp_path)
        timings.append(time.perf_counter() - started)
        return result

    result = benchmark.pedantic(run, rounds=3, iterations=1)
    assert (result.ok, result.rows_checked) == (True, ROWS)
    verify_s = sorted(timings)[len(timings) // 2]
    base_s = min(baseline_seconds(big_store) for _ in range(3))

    proc = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(big_store), str(tmp_path)], capture_output=True, text=True, check=True
    )
    ok, rows, rss_before_kib, rss_peak_kib = proc.stdout.split()
    assert (ok, int(rows)) == ("True", ROWS)

    rows_per_s, base_per_s = ROWS / verify_s, ROWS / base_s
    benchmark.extra_info.update(
        rows=ROWS, rows_per_s=round(rows_per_s), baseline_rows_per_s=round(base_per_s),
        peak_rss_kib=int(rss_peak_kib), rss_after_imports_kib=int(rss_before_kib),
    )
    print(
        f"\nverify --full, {ROWS:,} rows: {rows_per_s:,.0f} rows/s (median of {len(timings)}, {verify_s:.2f} s)"
        f"\nbaseline, read + one bare sha256 of each payload: {base_per_s:,.0f} rows/s; "
        f"verify/baseline {rows_per_s / base_per_s:.2f}"
        f"\npeak RSS of a full verify in a fresh process: {int(rss_peak_kib) / 1024:.1f} MiB "
        f"({int(rss_before_kib) / 1024:.1f} MiB after imports and opening the store)"
    )


PACKED_ROWS = 20_000


def test_full_verify_of_packed_rows(tmp_path):
    """verify --full over packed rows (docs/chain.md, "Packed rows") against the same rows stored plain.

    The rows are the record-size benchmark's varied mix (Claude Code PostToolUse events that
    read a different part of a real source file each, about 1.8 KB): a packed row costs the
    walk an inflate, a parse and the projection's encoding besides the hash.
    """
    from test_bench_record_size import mix_envelopes

    from agentwatch.record import normalize, redact

    policy = redact.default_policy()
    envs = (mix_envelopes("varied") * (PACKED_ROWS // 4000 + 1))[:PACKED_ROWS]
    rows = []
    for i, env in enumerate(envs):
        env = dict(env, record_id=f"bench-packed-{i:08d}")
        rows.append(normalize.to_append(env, policy=policy))
    figures = {}
    for name, pack in (("plain", False), ("packed", True)):
        path = tmp_path / f"{name}.db"
        with Store(path, pack=pack) as store:
            for at in range(0, len(rows), 500):
                store.append(rows[at : at + 500])
            packed = store.conn.execute("SELECT count(payload_z) FROM records").fetchone()[0]
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            result = verify_store(path, full=True, update_anchor=False, state_dir=tmp_path / name, jobs=1)
            timings.append(time.perf_counter() - started)
            assert (result.ok, result.rows_checked) == (True, PACKED_ROWS)
        figures[name] = (PACKED_ROWS / sorted(timings)[1], packed)
    print(f"\nverify --full, {PACKED_ROWS:,} varied-mix tool events, one process: plain {figures['plain'][0]:,.0f} rows/s;"
          f" packed ({figures['packed'][1]:,} rows packed) {figures['packed'][0]:,.0f} rows/s;"
          f" packed/plain {figures['packed'][0] / figures['plain'][0]:.2f}")
