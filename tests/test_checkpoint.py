"""WAL checkpoints off the commit path (agentwatch/checkpoint.py), step by step, no threads."""

import os

from support.daemon import wait_for

from agentwatch.daemon.writer import Job, Writer
from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.store.wal import Checkpointer


def commit_one(store: Store, checkpointer: Checkpointer, n: int) -> None:
    store.append([Append(f"r{n}", "event", canonical_json({"n": n, "pad": "x" * 3000}))])
    checkpointer.after_commit(store.conn)


def wal_frames(path) -> int:
    return (os.path.getsize(f"{path}-wal") - 32) // (4096 + 24)


def test_background_then_tail_restarts_the_wal(store_path):
    store = Store(store_path)
    cp = Checkpointer(store_path, background_at=60, cap=10_000)
    cp.attach(store.conn)
    cp.open()
    try:
        n = 0
        while cp._frames < 60:  # SQLite's own checkpoint is off: the WAL only grows
            commit_one(store, cp, n)
            n += 1
        assert cp._wake.is_set()  # past the threshold the writer only wakes the background thread
        assert cp.stats.as_dict() == {"background": 0, "tail": 0, "capped": 0, "busy": 0, "errors": 0, "last_error": None}
        # Commits go on while the background checkpoint runs. A reader that began before
        # the last commit stands in for that: the checkpoint copies only up to its snapshot.
        reader = db.open_reader(store_path)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM records").fetchall()
        snapshot = cp._frames
        commit_one(store, cp, n)
        n += 1
        cp._wake.clear()
        cp.background_once()
        reader.execute("COMMIT")
        reader.close()
        assert cp.stats.background == 1
        assert cp._background_ran_in == 0
        assert cp._frames > snapshot  # so the WAL is not all copied, and cannot start over yet

        commit_one(store, cp, n)  # the writer copies what was committed meanwhile itself
        n += 1
        assert cp.stats.tail == 1
        assert not cp._wake.is_set()
        longest = cp._frames

        commit_one(store, cp, n)  # and the next transaction starts the WAL over
        n += 1
        assert cp._generation == 1
        assert cp._frames < 30
        assert wal_frames(store_path) == longest  # written over from its start, not grown
        assert store.conn.execute("SELECT count(*) FROM records").fetchone()[0] == n
    finally:
        cp.stop()
        store.close()
    assert verify_store(store_path).ok


def test_the_cap_checkpoints_in_the_writer_when_the_background_never_runs(store_path):
    store = Store(store_path)
    cp = Checkpointer(store_path, background_at=20, cap=80)
    cp.attach(store.conn)
    try:
        n = 0
        while cp.stats.capped == 0:
            commit_one(store, cp, n)
            n += 1
            assert cp._frames < 80 + 20, "the WAL grew past the cap"
        commit_one(store, cp, n)
        assert cp._generation == 1 and cp._frames < 20
    finally:
        cp.stop()
        store.close()


def test_a_checkpoint_the_background_holds_is_not_waited_for(store_path):
    store = Store(store_path)
    cp = Checkpointer(store_path, background_at=1, cap=2)
    cp.attach(store.conn)
    try:
        with cp._one_at_a_time:  # the background thread is copying
            commit_one(store, cp, 0)
            commit_one(store, cp, 1)
        assert cp.stats.capped == 0  # the writer went on; it decides again after its next commit
        commit_one(store, cp, 2)
        assert cp.stats.capped == 1
    finally:
        cp.stop()
        store.close()


def test_without_a_checkpoint_connection_sqlite_checkpoints_in_the_commit(store_path, tmp_path):
    store = Store(store_path)
    answers = []
    writer = Writer(store, answers.extend, batch_max=1000, checkpointer=Checkpointer(tmp_path / "no-such-store.db"))
    writer.start()  # the second connection cannot open: the writer says so and goes on
    try:
        assert writer.checkpointer is None
        for n in range(150):  # ~10 frames each: SQLite's own checkpoint runs past 1000 frames
            writer.submit([Job(Append(f"r{n}", "event", canonical_json({"n": n, "pad": "x" * 3000})), lambda r, e: None)])
        wait_for(lambda: len(answers) == 150, "150 commits")
        frames = wal_frames(store_path)  # before the last close removes the WAL
    finally:
        writer.stop()
        store.close()
    assert [error for _job, _result, error in answers] == [None] * 150
    assert frames < 1000 + 20  # it started over instead of growing to ~1,500
    assert verify_store(store_path).ok
