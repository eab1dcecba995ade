import hashlib
import multiprocessing
import sqlite3

import apsw
import pytest

from agentwatch.store.append import Append, Appended, RowRefused, Store
from agentwatch.store.chain import GENESIS, canonical_json, row_hash


def event(record_id: str, **fields) -> Append:
    return Append(record_id, "event", canonical_json({"harness": "test", **fields}))


def chain_rows(path):
    conn = sqlite3.connect(path)
    try:
        store_id = bytes.fromhex(conn.execute("SELECT value FROM _agentwatch_meta WHERE key='store_id'").fetchone()[0])
        rows = conn.execute(
            "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash FROM records ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return store_id, rows


def assert_linear_chain(path, expected_rows: int) -> None:
    store_id, rows = chain_rows(path)
    assert [r[0] for r in rows] == list(range(1, expected_rows + 1))
    prev = GENESIS
    for seq, record_id, kind, at, payload, prev_hash, digest in rows:
        assert prev_hash == prev
        assert digest == row_hash(store_id, seq, at, kind, record_id, prev_hash, payload)
        prev = digest


def test_batch_gets_contiguous_seqs_and_links(store_path):
    with Store(store_path) as store:
        first = store.append([event(f"r{i}") for i in range(5)])
        second = store.append([event(f"s{i}") for i in range(3)])
    assert [r.seq for r in first + second] == list(range(1, 9))
    assert not any(r.duplicate for r in first + second)
    assert_linear_chain(store_path, 8)


def test_an_append_carries_its_payload_digest_from_where_it_was_built():
    """The payload is hashed when the row is built (the event loop), not in the writer."""
    row = event("d", text="x" * 5000)  # over hashlib's 2 KiB GIL-release size, too
    assert row.payload_sha256 == hashlib.sha256(row.payload).digest()
    assert row == Append("d", "event", row.payload)  # the digest is derived, not compared


@pytest.mark.parametrize("sizes", [(1, 2, 9), (10, 11, 99), (101, 1009, 1234)])
def test_every_group_size_is_inserted_whole_and_in_order(store_path, sizes):
    """Chunks of 1000, 100 and 10 rows, then the remainder in one statement."""
    with Store(store_path) as store:
        results = [store.append([event(f"n{n}-{i}") for i in range(n)]) for n in sizes]
    assert [[r.record_id for r in batch] for batch in results] == [[f"n{n}-{i}" for i in range(n)] for n in sizes]
    assert [r.seq for batch in results for r in batch] == list(range(1, sum(sizes) + 1))
    assert_linear_chain(store_path, sum(sizes))


def test_replay_is_a_duplicate_not_a_second_row(store_path):
    with Store(store_path) as store:
        store.append([event("a"), event("b")])
        results = store.append([event("b"), event("c"), event("c")])
        head = store.head()
    assert [(r.record_id, r.seq, r.duplicate) for r in results] == [("b", 2, True), ("c", 3, False), ("c", 3, True)]
    assert head[0] == 3
    assert_linear_chain(store_path, 3)


def test_a_replay_in_a_later_chunk_is_a_duplicate_and_the_chunks_around_it_stored_once(store_path):
    """A replay inside the third 1000-row chunk: the ids already stored are looked up before
    any insert, so it is answered as a duplicate and every new row is stored exactly once,
    at contiguous seqs across the chunk boundaries."""
    with Store(store_path) as store:
        store.append([event("old-1"), event("old-2")])
        batch = [event(f"n{i}") for i in range(2500)]
        batch[2100] = event("old-2")
        results = store.append(batch)
        head = store.head()
    assert results[2100] == Appended("old-2", 2, True)
    fresh = [r for r in results if not r.duplicate]
    assert [r.record_id for r in fresh] == [f"n{i}" for i in range(2500) if i != 2100]
    assert [r.seq for r in fresh] == list(range(3, 2502))
    assert head[0] == 2501
    assert_linear_chain(store_path, 2501)


def test_a_row_the_store_refuses_fails_the_batch_and_leaves_nothing(store_path):
    """A row SQLite refuses fails its whole transaction: the error is raised, nothing of the
    batch is stored and no transaction is left open (the writer then splits the group)."""
    with Store(store_path) as store:
        store.append([event("a")])
        poison = Append("poison", "event", b'{"harness": "claude-code", "not json')  # the JSON columns refuse it
        with pytest.raises(RowRefused, match="JSON"):
            store.append([event("b"), poison, event("c")])
        assert store.head()[0] == 1
        assert store.conn.getautocommit()
    assert_linear_chain(store_path, 1)


def test_payload_stored_verbatim(store_path):
    payload = canonical_json({"harness": "test", "text": "naïve ✓ \u2028 \"quoted\"", "n": 10**30})
    with Store(store_path) as store:
        store.append([Append("r1", "event", payload)])
    _, rows = chain_rows(store_path)
    assert rows[0][4] == payload


def test_triggers_refuse_update_and_delete(store_path):
    with Store(store_path) as store:
        store.append([event("a")])
        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.conn.execute("UPDATE records SET kind = 'gap' WHERE seq = 1")
        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.conn.execute("DELETE FROM records WHERE seq = 1")
        with pytest.raises(apsw.ConstraintError, match="immutable"):
            store.conn.execute("UPDATE _agentwatch_meta SET value = 'x' WHERE key = 'store_id'")


def test_trigger_refuses_a_seq_that_is_not_the_next(store_path):
    with Store(store_path) as store:
        store.append([event("a")])
        with pytest.raises(apsw.ConstraintError, match="head seq"):
            store.conn.execute(
                "INSERT INTO records (seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash) "
                "VALUES (5, 'x', 'event', 0, '{}', zeroblob(32), zeroblob(32))"
            )


@pytest.mark.parametrize(
    "record_id, kind, message",
    [
        ("", "event", "non-empty"),
        ("x" * 129, "event", "longer than 128"),
        ("a\nb", "event", "printable"),
        ("ok", "bogus", "unknown record kind"),
    ],
)
def test_invalid_appends_refused_before_the_writer(record_id, kind, message):
    with pytest.raises(ValueError, match=message):
        Append(record_id, kind, b"{}")


def test_failed_batch_rolls_back_whole(store_path, monkeypatch):
    with Store(store_path) as store:
        store.append([event("a")])
        bad = Append("b", "event", b"\xff")  # cannot decode: fails inside the transaction
        with pytest.raises(RowRefused, match="not UTF-8"):
            store.append([event("c"), bad])
        assert store.head()[0] == 1
        assert store.append([event("d")])[0].seq == 2
    assert_linear_chain(store_path, 2)


def _append_many(path: str, prefix: str, batches: int, ready) -> None:
    ready.wait()
    with Store(path) as store:
        for b in range(batches):
            store.append([event(f"{prefix}-{b}-{i}") for i in range(10)])


def test_two_processes_appending_never_fork_the_chain(store_path):
    Store(store_path).close()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    procs = [ctx.Process(target=_append_many, args=(str(store_path), p, 50, ready)) for p in ("p", "q")]
    for p in procs:
        p.start()
    ready.set()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert_linear_chain(store_path, 2 * 50 * 10)
