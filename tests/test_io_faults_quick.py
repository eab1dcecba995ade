"""I/O errors and a full disk under Store.append (docs/reliability.md).

A sample of the fault loop (every 9th operation index, seeded offset); the
whole loop is soak/test_io_faults.py. Then the behaviours the daemon's writer
relies on, one fault each.
"""

from __future__ import annotations

import apsw
import pytest
from support import iofaults
from support.faultvfs import FaultVFS

from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json


@pytest.fixture
def vfs():
    fault = FaultVFS()
    yield fault
    fault.close()


def event(rid: str) -> Append:
    return Append(rid, "event", canonical_json({"id": rid}))


def test_fault_loop_sample(tmp_path):
    report = iofaults.run(tmp_path, stride=9, offset=4)
    print(report.summary())
    assert report.cases > 30 and report.faults_injected == report.cases
    assert report.failures == 0, report.problems
    assert report.appends_raised > 0 and report.same_store_failed == 0


@pytest.mark.parametrize("error, raised", [("ioerr", apsw.IOError), ("full", apsw.FullError)])
def test_failed_write_raises_and_the_same_store_carries_on(vfs, store_path, error, raised):
    store = Store(store_path, vfs=vfs.name)
    store.append([event("a")])
    vfs.arm_fault("write", 1, error)
    with pytest.raises(raised):
        store.append([event("b")])
    assert store.conn.getautocommit()  # no transaction left open
    assert [r.seq for r in store.append([event("b"), event("c")])] == [2, 3]
    store.close()
    assert verify_store(store_path, full=True).ok


@pytest.mark.parametrize("sync_failure", ["keep", "drop"])
def test_failed_commit_sync_is_never_acknowledged_and_resending_is_exactly_once(vfs, store_path, sync_failure):
    vfs.sync_failure = sync_failure
    store = Store(store_path, vfs=vfs.name)
    store.append([event("a")])
    vfs.arm_fault("sync", 1)
    with pytest.raises(apsw.IOError):
        store.append([event("b")])
    vfs.clear_faults()
    # Resent, "b" is stored once: as a duplicate if the failed commit reached the WAL after all.
    again = store.append([event("b")])
    assert again[0].seq == 2
    store.close()
    with Store(store_path, vfs=vfs.name) as reopened:
        assert reopened.head()[0] == 2
    assert verify_store(store_path, full=True).ok


@pytest.mark.parametrize("kind, nth, existing", [("read", 3, True), ("write", 1, False), ("sync", 1, False)])
def test_a_store_that_fails_to_open_leaves_no_file_open(vfs, store_path, kind, nth, existing):
    if existing:
        Store(store_path).close()
    vfs.arm_fault(kind, nth, persist=True)
    with pytest.raises(apsw.IOError) as failed:
        Store(store_path, vfs=vfs.name)
    # Even while the exception (and the frames it references) is alive: the half-opened
    # connection was closed, not left to the garbage collector with the store's files and locks.
    assert failed.value is not None and vfs.open_files == 0
