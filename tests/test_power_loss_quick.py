"""Power loss at store level (docs/reliability.md): a short, seeded run of the simulation.

The full run (1,000+ crashes) is soak/test_power_loss.py. Here: the fault VFS
itself, then 30 crashes with the product's settings (nothing acknowledged may
be lost) and 30 with the commit unsynced (the control: losses must be seen).
"""

from __future__ import annotations

import random

import apsw
import pytest
from support import powerloss
from support.faultvfs import FaultVFS

from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json


@pytest.fixture
def vfs():
    fault = FaultVFS()
    yield fault
    fault.close()


def rows(path):
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [r[0] for r in conn.execute("SELECT record_id FROM records ORDER BY seq")]
    finally:
        conn.close()


def event(rid: str) -> Append:
    return Append(rid, "event", canonical_json({"id": rid}))


def lose_power(vfs: FaultVFS, store: Store, mode: str = "drop", seed: int = 0) -> None:
    vfs.crash()
    try:
        store.close()
    except apsw.Error:
        pass  # a dead machine's close fails; its files are closed all the same
    vfs.reboot(random.Random(seed), mode)


def test_synced_commit_survives_and_unsynced_one_does_not(vfs, store_path):
    store = Store(store_path, vfs=vfs.name)
    store.append([event("durable")])
    store.conn.pragma("synchronous", "OFF")
    store.append([event("unsynced")])  # acknowledged by SQLite, but never synced
    assert vfs.unsynced() > 0
    lose_power(vfs, store)
    assert rows(store_path) == ["durable"]


def test_an_armed_crash_fails_every_later_io_until_reboot(vfs, store_path):
    store = Store(store_path, vfs=vfs.name)
    store.append([event("a")])
    vfs.arm_crash(0)
    with pytest.raises(apsw.IOError):
        store.append([event("b")])
    assert vfs.crashed and vfs.crash_point == "write wal"
    with pytest.raises(apsw.Error):
        store.append([event("c")])
    lose_power(vfs, store)
    assert rows(store_path) == ["a"]
    with Store(store_path, vfs=vfs.name) as again:
        assert again.append([event("b")])[0].seq == 2


def test_reboot_refuses_while_a_connection_is_open(vfs, store_path):
    store = Store(store_path, vfs=vfs.name)
    vfs.crash()
    with pytest.raises(RuntimeError, match="still open"):
        vfs.reboot()
    try:
        store.close()
    except apsw.Error:
        pass
    vfs.reboot()


def test_torn_reboot_keeps_sector_pieces_of_unsynced_writes(vfs, tmp_path):
    path = str(tmp_path / "plain.db")
    conn = apsw.Connection(path, vfs=vfs.name)
    conn.pragma("journal_mode", "wal")
    conn.pragma("synchronous", "OFF")
    conn.execute("CREATE TABLE t(x)")
    for i in range(50):
        conn.execute("INSERT INTO t VALUES (?)", (i,))
    vfs.crash()
    try:
        conn.close()
    except apsw.Error:
        pass
    report = vfs.reboot(random.Random(7), "torn", sector=512)
    assert report.unsynced_ops > 0 and 0 < report.kept_ops < report.unsynced_ops
    assert report.shm in ("deleted", "stale", "garbage")


def test_no_acknowledged_record_is_lost_over_30_crashes(tmp_path):
    report = powerloss.run(tmp_path, crashes=30, seed=1)
    print(report.summary())
    assert report.crashes == 30
    assert report.failures == 0, report.problems
    assert report.acks_lost == 0 and report.acked_checked > 0
    assert report.by_mode["torn"] and report.by_mode["drop"]


def test_control_without_sync_loses_acknowledged_records(tmp_path):
    # The same harness, commits not synced: if it saw no loss here, it could not see one at all.
    report = powerloss.run(tmp_path, crashes=30, seed=1, synchronous="OFF")
    print(report.summary())
    assert report.crashes_losing_acks > 0 and report.acks_lost > 0
