"""I/O-error soak: a fault at every read, write, sync and truncate index of the workload.

    make soak
    .venv/bin/python -m pytest -m soak -s soak/test_io_faults.py

Every case, once and persistent; writes also as a full disk; syncs with both
failed-fsync behaviours (unsynced writes kept, or dropped as Linux does).
"""

from __future__ import annotations

import time

import pytest
from support import iofaults

pytestmark = pytest.mark.soak


def test_every_io_fault_index(tmp_path):
    started = time.monotonic()
    report = iofaults.run(tmp_path)
    print(f"\n{report.summary()}\n({time.monotonic() - started:.1f} s)")
    assert report.faults_injected == report.cases
    assert report.failures == 0, report.problems
    assert report.same_store_failed == 0
