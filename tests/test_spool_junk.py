"""Junk in the spool cannot starve real records (issue #24, class 6; daemon/drain.py, daemon/spool.py).

Thousands of junk files named to sort before UUIDv7 names used to keep real spooled records
out of the store while the drainer turned each into its own gap row (about 250 a second). Now
names a hook writes go first, and a pass with more than JUNK_DETAIL unusable files sets them
aside under one summarizing `spool_junk` gap row.
"""

from __future__ import annotations

import os
import time

from support.daemon import Daemon, envelope, line, spool_write, wait_for

from agentwatch.daemon.drain import FILES_PER_PASS, JUNK_DETAIL
from agentwatch.hookclient import uuid7

JUNK = 3000


def plant_junk(spool, n: int) -> None:
    for i in range(n):
        spool_write(spool, f"0000-junk-{i:06d}", b'{"op": "append", "record_id": trunc' + str(i).encode())


def test_real_records_drain_before_junk_and_junk_is_set_aside_in_bulk(tmp_path):
    d = Daemon(tmp_path, verify_interval=0)
    plant_junk(d.spool, JUNK)
    real = [uuid7() for _ in range(3)]
    for rid in real:
        spool_write(d.spool, rid, line({**envelope(rid), "delivery": "spool"}))
    began = time.monotonic()
    d.start()
    try:
        wait_for(lambda: not os.listdir(d.spool / "new"), "the spool to drain", deadline_s=120)
        drained_s = time.monotonic() - began
        events = d.rows("event")
        junk_rows = [r for r in d.rows("gap") if r["payload"]["reason"] == "spool_junk"]
        assert sorted(r["record_id"] for r in events) == sorted(real)
        # The real records were committed before any junk row: the first pass took them first.
        assert max(r["seq"] for r in events) < min(r["seq"] for r in junk_rows)
        assert sum(r["payload"]["files"] for r in junk_rows) == JUNK
        assert [r for r in d.rows("gap") if r["payload"]["reason"] != "spool_junk"] == []
        assert len(junk_rows) == -(-(JUNK + 3) // FILES_PER_PASS)  # one summarizing row per pass
        assert all(len(r["payload"]["listed"]) == min(50, r["payload"]["files"]) for r in junk_rows)
        assert d.health()["counters"]["spool_quarantined"] == JUNK
        bad = [n for n in os.listdir(d.spool / "bad") if not n.endswith(".reason")]
        assert len(bad) == JUNK
    finally:
        assert d.stop() == 0
    print(f"\n{JUNK} junk files and 3 real records drained in {drained_s:.2f} s (daemon start included): "
          f"{JUNK / drained_s:.0f} junk files/s in {len(junk_rows)} gap rows")


def test_a_few_unusable_files_still_get_a_row_each(tmp_path):
    d = Daemon(tmp_path, verify_interval=0)
    plant_junk(d.spool, JUNK_DETAIL)
    d.start()
    try:
        wait_for(lambda: not os.listdir(d.spool / "new"), "the spool to drain")
        reasons = [r["payload"]["reason"] for r in d.rows("gap")]
        assert reasons == ["spool_unparsable"] * JUNK_DETAIL
    finally:
        assert d.stop() == 0
