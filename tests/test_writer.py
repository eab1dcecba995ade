"""The daemon's group-commit writer, in process: fail closed, then a gap row."""

from __future__ import annotations

import json
import os
import queue
import time

import apsw

from agentwatch.daemon.writer import Job, Writer
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.store.writerlock import LockFile


def event(record_id: str) -> Append:
    return Append(record_id, "event", canonical_json({"harness": "test", "n": record_id}))


class FlakyStore(Store):
    """A real store whose next `fail` appends raise, as a full disk would."""

    fail = 0

    def append(self, batch):
        if self.fail:
            self.fail -= 1
            raise apsw.FullError("database or disk is full")
        return super().append(batch)


def run_batches(writer: Writer, answers: queue.Queue, *batches: list[Append]) -> list[list]:
    """Submit each batch after the previous one was answered; return the answers."""
    out = []
    for batch in batches:
        got = []
        writer.submit([Job(row, lambda r, e, got=got: got.append((r, e))) for row in batch])
        for _ in batch:
            answers.get(timeout=30)
        out.append(got)
    return out


def make_writer(store: Store, **options) -> tuple[Writer, queue.Queue]:
    answers: queue.Queue = queue.Queue()

    def deliver(outcomes):  # the server hops onto its loop here; the test answers in place
        for job, result, error in outcomes:
            job.done(result, error)
            answers.put(1)

    return Writer(store, deliver, batch_max=100, **options), answers


def rows(path) -> list[tuple]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [(seq, rid, kind, json.loads(p)) for seq, rid, kind, p in conn.execute(
            "SELECT seq, record_id, kind, payload FROM records ORDER BY seq"
        )]  # fmt: skip
    finally:
        conn.close()


def test_failed_commit_is_refused_whole_then_a_gap_row_leads_the_next_commit(store_path):
    store = FlakyStore(store_path)
    writer, answers = make_writer(store)
    writer.start()
    try:
        (ok,) = run_batches(writer, answers, [event("a")])
        store.fail = 2
        refused1, refused2 = run_batches(writer, answers, [event("b"), event("c")], [event("d")])
        assert writer.outage is not None and writer.outage.failed_commits == 2
        (after,) = run_batches(writer, answers, [event("e")])
    finally:
        writer.stop()
        store.close()
    assert ok[0][1] is None and ok[0][0].seq == 1
    assert [e.code for _, e in refused1 + refused2] == ["unavailable"] * 3
    assert all(r is None for r, _ in refused1 + refused2)
    assert after == [(after[0][0], None)] and after[0][0].seq == 3
    stored = rows(store_path)
    assert [(seq, rid, kind) for seq, rid, kind, _ in stored] == [
        (1, "a", "event"),
        (2, stored[1][1], "gap"),
        (3, "e", "event"),
    ]
    gap = stored[1][3]
    assert gap["reason"] == "commit_failed"
    assert gap["failed_commits"] == 2
    assert gap["rows_refused"] == 3
    assert "FullError" in gap["error"]
    assert gap["first_failure_ns"] <= gap["last_failure_ns"]
    assert writer.outage is None
    assert writer.stats.commit_failures == 2
    assert writer.stats.gaps_recorded == 1
    assert writer.head_seq == 3
    with Store(store_path) as reread:
        assert (writer.head_seq, writer.head_hash) == reread.head()  # kept without asking the store


def test_the_head_follows_commits_and_ignores_duplicates(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.start()
    try:
        run_batches(writer, answers, [event("a"), event("b")])
        after_two = (writer.head_seq, writer.head_hash)
        run_batches(writer, answers, [event("a")])  # a replay stores nothing: the head stays
        after_replay = (writer.head_seq, writer.head_hash)
        run_batches(writer, answers, [event("b"), event("c")])  # a duplicate beside a new row
    finally:
        writer.stop()
    head = store.head()
    store.close()
    assert after_two[0] == 2 and after_replay == after_two
    assert (writer.head_seq, writer.head_hash) == head and head[0] == 3


def test_a_connection_that_cannot_roll_back_is_reopened(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    reopened = []

    def reopen():
        reopened.append(True)
        return Store(store_path)

    writer._reopen = reopen
    writer.start()
    try:
        run_batches(writer, answers, [event("a")])
        store.conn.close()  # whatever broke it, the next commit fails ...
        (refused,) = run_batches(writer, answers, [event("b")])
        (after,) = run_batches(writer, answers, [event("c")])  # ... and the one after works again
    finally:
        writer.stop()
        if writer.store is not None:
            writer.store.close()
    assert refused[0][0] is None and refused[0][1].code == "unavailable"
    assert after[0][1] is None
    assert reopened == [True]
    assert [kind for _, _, kind, _ in rows(store_path)] == ["event", "gap", "event"]


def test_row_built_on_the_writer_thread_sees_the_head(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.start()
    seen = []

    def attestation(w: Writer) -> Append:
        seen.append(w.head_seq)
        return Append("attest-x", "attestation", canonical_json({"head_seq": w.head_seq}))

    try:
        run_batches(writer, answers, [event("a"), event("b")])
        got = []
        writer.submit([Job(attestation, lambda r, e: got.append((r, e)))])
        answers.get(timeout=30)
    finally:
        writer.stop()
        store.close()
    assert seen == [2]
    assert got[0][0].seq == 3


def test_submit_after_stop_is_refused(store_path):
    store = Store(store_path)
    writer, _ = make_writer(store)
    writer.start()
    writer.stop()
    store.close()
    assert writer.submit([Job(event("late"), lambda r, e: None)]) is False


def test_a_row_the_store_refuses_is_refused_alone(store_path):
    # Malformed JSON passes Append's checks but fails the generated columns at INSERT,
    # which fails the whole transaction: the writer must split the group.
    poison = Append("poison", "event", b'{"harness": ')
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.start()
    try:
        (got,) = run_batches(writer, answers, [event("a"), event("b"), poison, event("c"), event("d")])
    finally:
        writer.stop()
        store.close()
    refused = [(r, e) for r, e in got if e is not None]
    assert len(refused) == 1 and refused[0][1].code == "bad_request"
    assert "SQLError" in refused[0][1].message
    stored = rows(store_path)
    assert [(seq, rid) for seq, rid, _, _ in stored] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert writer.outage is None
    assert writer.stats.commit_failures == 0
    assert writer.stats.rows_refused_by_store == 1


class BuggyStore(Store):
    """A real store whose append raises an exception that says nothing about any row."""

    error: BaseException = ValueError("a bug inside the store")

    def append(self, batch):
        raise self.error


def test_an_unexpected_exception_in_the_store_fails_closed_never_blames_the_row(store_path):
    """ValueError/TypeError/anything from the store's own code is `unavailable` (spool, retry), not bad_request."""
    for error in (ValueError("bug"), TypeError("bug"), KeyError("bug"), RuntimeError("bug"), apsw.SQLError("no such table")):
        BuggyStore.error = error
        store = BuggyStore(store_path)
        writer, answers = make_writer(store)
        writer.start()
        try:
            (got,) = run_batches(writer, answers, [event("a")])
            (many,) = run_batches(writer, answers, [event("b"), event("c")])
        finally:
            writer.stop()
            store.close()
        assert [e.code for _, e in got + many] == ["unavailable"] * 3, error
        assert writer.stats.rows_refused_by_store == 0
        assert writer.outage is not None and writer.outage.rows_refused == 3
    assert rows(store_path) == []


def test_a_payload_that_is_not_utf8_is_the_rows_fault(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.start()
    try:
        (got,) = run_batches(writer, answers, [event("a"), Append("bad", "event", b'{"x": "\xff"}'), event("c")])
    finally:
        writer.stop()
        store.close()
    assert [(e.code if e else None) for _, e in got] == [None, "bad_request", None]
    assert "not UTF-8" in got[1][1].message
    assert [rid for _, rid, _, _ in rows(store_path)] == ["a", "c"]


def test_rows_another_process_appended_are_named_in_a_gap_row(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.start()
    try:
        run_batches(writer, answers, [event("a")])
        with Store(store_path) as intruder:  # appends outside the daemon's writer
            intruder.append([event("x"), event("y")])
        run_batches(writer, answers, [event("b")], [event("c")])
    finally:
        writer.stop()
        store.close()
    got = rows(store_path)
    # The gap row leads the very commit that first chains past the foreign rows: no commit (and so
    # no checkpoint signed from one) covers them unnamed.
    assert [(seq, rid, kind) for seq, rid, kind, _ in got] == [
        (1, "a", "event"), (2, "x", "event"), (3, "y", "event"), (4, got[3][1], "gap"), (5, "b", "event"),
        (6, "c", "event")
    ]
    assert got[3][1].startswith("gap-foreign-2-3-")
    gap = got[3][3]
    assert (gap["reason"], gap["first_seq"], gap["last_seq"]) == ("foreign_rows", 2, 3)
    assert writer.tree_head[0] == 6
    assert writer.stats.foreign_rows == [{"first_seq": 2, "last_seq": 3, "gap_seq": 4}]


def test_an_idle_writer_names_foreign_rows_within_its_probe_interval(store_path):
    store = Store(store_path)
    writer, answers = make_writer(store)
    writer.probe_interval = 0.05
    writer.start()
    try:
        run_batches(writer, answers, [event("a")])
        with Store(store_path) as intruder:
            intruder.append([event("x")])
        deadline = time.monotonic() + 5
        while not writer.stats.foreign_rows and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        writer.stop()
        store.close()
    assert writer.stats.foreign_rows == [{"first_seq": 2, "last_seq": 2, "gap_seq": 3}]
    assert [(seq, kind) for seq, _, kind, _ in rows(store_path)] == [(1, "event"), (2, "event"), (3, "gap")]
    assert writer.tree_head[0] == 3


def test_a_second_writer_stops_the_first_within_one_commit_group(store_path):
    from agentwatch.store.writerlock import WriterLock, lock_path

    store = Store(store_path)
    lock = WriterLock(store_path).acquire()
    writer, answers = make_writer(store, guard=lock.check)
    writer.start()
    try:
        (first,) = run_batches(writer, answers, [event("a")])
        os.unlink(lock_path(store_path))
        (second,) = run_batches(writer, answers, [event("b")])  # the lock file is taken again
        assert lock.retaken == 1
        os.unlink(lock_path(store_path))
        other = LockFile(lock_path(store_path), "store").acquire()  # a second writer's lock file
        try:
            (third,) = run_batches(writer, answers, [event("c")])
        finally:
            other.release()
    finally:
        writer.stop()
        store.close()
        lock.release()
    assert [e for _, e in first + second] == [None, None]
    assert [e.code for _, e in third] == ["unavailable"]
    assert writer.halted.startswith("second_writer: ")
    assert [rid for _, rid, _, _ in rows(store_path)] == ["a", "b"]
