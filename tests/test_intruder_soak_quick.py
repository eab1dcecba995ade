"""The intruder soak, short (support/intruder.py; the long run is soak/test_intruder_soak.py): a second
writer and forged rows under load from real hook processes. Every record the ledger sent is stored
exactly once, and every forged row is named `foreign_rows` by the daemon and by `verify`."""

from __future__ import annotations

import pytest
from support import intruder

from agentwatch import platform_layer

pytestmark = pytest.mark.skipif(not platform_layer.writer_lock_supported(),
                                reason="the lock on the store file needs Linux's open-file-description locks")


def test_a_second_writer_and_forged_rows_under_load(tmp_path):
    config = intruder.IntruderConfig(prefill=300, sends=60, senders=3, forged_batches=5, second_serves=2)
    report = intruder.run(tmp_path / "soak", config)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert report.stored == 61  # the sends, and the one the second writer's lock turned to the spool
    assert len(report.forged_seqs) == 10
