"""Append throughput at 1, 100 and 1,000 rows per transaction, synchronous=FULL.

Figures are printed next to a baseline measured in the same run (a bare
small append + fsync in the same directory), never asserted against a time.
Run with `make bench`.
"""

import os
import time

import pytest

from agentwatch.record.ids import new_record_id
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

pytestmark = pytest.mark.bench

PAYLOAD = canonical_json(
    {
        "schema": 1,
        "harness": "claude-code",
        "session_id": "3f1c6a52-2d7e-4c55-9b1e-6a8f0d2c7e41",
        "event": {"name": "PostToolUse", "kind": "tool_post"},
        "tool": {"name": "Bash", "category": "shell", "call_id": "toolu_01ABC", "input": {"command": "ls -la src"}},
        "cwd": "/home/dev/project",
        "client": {"pid": 4242, "ppid": 4241, "ts_observed_ns": 1764460800000000000},
        "raw": {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la src"}},
    }
)


def bare_table_rows_per_s(directory, rows_per_txn: int, total: int, payload: bytes = PAYLOAD) -> float:
    """The same rows into a plain table (no indexes, triggers or generated columns), same settings."""
    import apsw

    directory.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(directory / "bare.db"))
    conn.pragma("journal_mode", "wal")
    conn.pragma("synchronous", "FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, record_id TEXT, kind TEXT, at INTEGER, payload TEXT, prev BLOB, hash BLOB)")
    text = payload.decode()
    batches = [
        [(b * rows_per_txn + i + 1, new_record_id(), "event", time.time_ns(), text, bytes(32), bytes(32)) for i in range(rows_per_txn)]
        for b in range(total // rows_per_txn)
    ]
    start = time.perf_counter()
    for batch in batches:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return total / elapsed


def bare_fsync_per_s(directory, n=500) -> float:
    path = directory / "fsync.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        start = time.perf_counter()
        for _ in range(n):
            os.write(fd, b"x" * 64)
            os.fsync(fd)
        return n / (time.perf_counter() - start)
    finally:
        os.close(fd)


@pytest.mark.parametrize("rows_per_txn", [1, 100, 1000])
def test_append_throughput(benchmark, tmp_path, rows_per_txn):
    store = Store(tmp_path / "bench.db")
    baseline = bare_fsync_per_s(tmp_path)
    total = 2000 if rows_per_txn == 1 else 50_000

    def batches():
        return [
            [Append(new_record_id(), "event", PAYLOAD) for _ in range(rows_per_txn)]
            for _ in range(total // rows_per_txn)
        ]

    def run(prepared):
        for batch in prepared:
            store.append(batch)

    benchmark.pedantic(run, setup=lambda: ((batches(),), {}), rounds=3, iterations=1)
    rows_per_s = total / benchmark.stats.stats.median
    bare = bare_table_rows_per_s(tmp_path, rows_per_txn, total)
    benchmark.extra_info.update(rows_per_s=round(rows_per_s), fsync_per_s=round(baseline), bare_table_rows_per_s=round(bare))
    print(
        f"\nappend {rows_per_txn:>5} rows/txn: {rows_per_s:>9,.0f} rows/s  "
        f"({rows_per_s / rows_per_txn:,.0f} commits/s; bare fsync {baseline:,.0f}/s; "
        f"bare table, same rows {bare:,.0f} rows/s, ratio {rows_per_s / bare:.2f})"
    )
    store.close()


def _sql_only_rows_per_s(conn, rows_per_txn: int, total: int, first_seq: int, payload: bytes) -> float:
    """The same rows as `append` writes, prebuilt, through the same multi-row INSERT: SQLite's part alone."""
    from agentwatch.store.append import _INSERT

    text = payload.decode()
    batches = []
    seq = first_seq
    for _ in range(total // rows_per_txn):
        values = []
        for _ in range(rows_per_txn):
            values.extend((seq, new_record_id(), "event", time.time_ns(), text, bytes(32), bytes(32), None, None))
            seq += 1
        batches.append(values)
    start = time.perf_counter()
    for values in batches:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(_INSERT[rows_per_txn], values)
        conn.execute("COMMIT")
    return total / (time.perf_counter() - start)


def _tool_event_document() -> bytes:
    """What the daemon stores for the PostToolUse envelope of the daemon benchmarks (about 2.9 KB)."""
    import json

    from support.ingest import append_line, post_tool_use

    from agentwatch.record.normalize import to_append

    return to_append(json.loads(append_line(new_record_id(), post_tool_use("bench"))), uid=0, peer_pid=1).payload


@pytest.mark.parametrize("document", ["small", "tool event"])
def test_append_cost_by_schema_part(tmp_path, document):
    """Where 1,000-row appends spend their time: the store, then SQLite alone into less and less schema.

    Each rung is a real store with parts of the schema dropped (a benchmark's own
    temp store: the drops are what is measured, never a way to write a store).
    Rounds alternate between the rungs; medians of 5. Two documents: the small
    one of the append benchmark, and the tool event the daemon benchmarks store.
    """
    payload = PAYLOAD if document == "small" else _tool_event_document()
    rows_per_txn, total = 1000, 20_000
    the_store = "the store (append, Python included)"
    rungs = {
        the_store: [],
        "SQL alone, the full schema": [],
        "  without the contiguity trigger": ["DROP TRIGGER records_contiguous_seq"],
        "  and without the four forensic indexes": [
            "DROP TRIGGER records_contiguous_seq",
            *(f"DROP INDEX {name}" for name in ("records_by_time", "records_by_session", "records_by_tool", "records_by_event")),
        ],
    }
    stores = {}
    for i, (name, drops) in enumerate(rungs.items()):
        store = Store(tmp_path / f"rung{i}.db")
        for statement in drops:
            store.conn.execute(statement)
        stores[name] = store
    figures: dict[str, list[float]] = {name: [] for name in rungs}
    bare: list[float] = []
    for round_ in range(5):
        for name, store in stores.items():
            if name == the_store:
                batches = [[Append(new_record_id(), "event", payload) for _ in range(rows_per_txn)] for _ in range(total // rows_per_txn)]
                start = time.perf_counter()
                for batch in batches:
                    store.append(batch)
                figures[name].append(total / (time.perf_counter() - start))
            else:
                figures[name].append(_sql_only_rows_per_s(store.conn, rows_per_txn, total, store.head()[0] + 1, payload))
        bare.append(bare_table_rows_per_s(tmp_path / f"bare{round_}", rows_per_txn, total, payload))
    for store in stores.values():
        store.close()
    medians = {name: sorted(values)[2] for name, values in figures.items()}
    bare_median = sorted(bare)[2]
    print(f"\nappend cost by schema part, {document} document ({len(payload):,} bytes), {rows_per_txn} rows/txn, "
          "synchronous=FULL (medians of 5, alternating):")
    for name, rate in medians.items():
        print(f"  {name:<42} {rate:>9,.0f} rows/s  {1e6 / rate:5.2f} µs/row")
    print(f"  {'bare table (no UNIQUE, index or trigger)':<42} {bare_median:>9,.0f} rows/s  {1e6 / bare_median:5.2f} µs/row")
