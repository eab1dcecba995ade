"""Rows deleted from the tail while the daemon runs (docs/reliability.md, "Store identity").

Class 3 of the adversarial pass: the truncation went unnoticed until the head grew past the
old position, `health` said `recording` with `sweeper.verified_seq` above the head, and after
a clean stop nothing showed it at all. Now it is a `truncated` finding on the next sweeper
round, in `health`, recorded as a row, and kept in the remembered state across a restart.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from support.daemon import Daemon, append_many, envelope, wait_for

from agentwatch.verify import known_stores

pytestmark = pytest.mark.usefixtures("reap_daemons")


def cut_tail(path, keep: int) -> None:
    """Delete every row above `keep` with the sqlite3 shell; the guard goes back exactly as it was.

    One transaction: no other connection ever sees the schema without its guard (a schema
    check that did would rightly stop the writer, and the test is about the cut alone).
    """
    con = sqlite3.connect(path, isolation_level=None)
    try:
        (guard,) = con.execute("SELECT sql FROM sqlite_schema WHERE name = 'records_append_only_delete'").fetchone()
        con.execute("BEGIN IMMEDIATE")
        con.execute("DROP TRIGGER records_append_only_delete")
        con.execute("DELETE FROM records WHERE seq > ?", (keep,))
        con.execute(guard)
        con.execute("COMMIT")
    finally:
        con.close()


def truncation_rows(d: Daemon) -> list[dict]:
    return [r for r in d.rows("attestation") if r["payload"].get("type") == "integrity_break"
            and r["payload"]["finding"]["kind"] == "truncated"]


def test_an_idle_daemon_finds_its_tail_cut_on_the_next_round_and_keeps_the_finding(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        seqs = append_many(d, 10, "r")
        wait_for(lambda: d.health()["sweeper"]["verified_seq"] >= seqs[-1], "the sweeper to verify every row")
        cut_tail(d.store, seqs[4])  # rows r-5 .. r-9 go
        health = wait_for(lambda: (h := d.health())["sweeper"]["state"] == "broken" and h, "the truncation")
        (finding,) = health["sweeper"]["findings"]
        assert (finding["kind"], finding["seq"]) == ("truncated", seqs[5])
        assert health["status"] == "degraded"
        (row,) = wait_for(lambda: truncation_rows(d), "the truncation recorded as a row")
        assert row["payload"]["finding"]["seq"] == seqs[5]
        # Recording goes on from the head the store has.
        assert d.request(envelope("after-cut"))["ok"] is True
        assert d.health()["sweeper"]["verified_seq"] <= d.health()["head_seq"]
    finally:
        assert d.stop() == 0

    known = known_stores.load(d.store)
    assert [(f["kind"], f["seq"], f["through_seq"]) for f in known.findings] == [("truncated", seqs[5], seqs[-1])]
    again = Daemon(tmp_path, verify_interval=0.1).start()  # not refused: the loss is already named
    try:
        health = again.health()
        assert [(f["kind"], f["seq"]) for f in health["sweeper"]["findings"]] == [("truncated", seqs[5])]
        assert health["status"] == "degraded"
    finally:
        assert again.stop() == 0
    assert len(truncation_rows(again)) == 1  # recorded once, not again at the restart
    verify = subprocess.run([sys.executable, "-m", "agentwatch.cli", "verify", "--store", str(d.store)],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 6, verify.stdout + verify.stderr


@pytest.mark.parametrize("interval", [5.0, 0.02])
def test_a_cut_found_by_the_writer_first_is_named_once(tmp_path, interval):
    """Slow sweeper: the writer finds the cut alone. Fast sweeper: both look while the writer
    commits over the cut, and the rows now at verified seqs are not taken for an edit."""
    d = Daemon(tmp_path, verify_interval=interval).start()
    try:
        seqs = append_many(d, 6, "r")
        if interval < 1:
            wait_for(lambda: d.health()["sweeper"]["verified_seq"] >= seqs[-1], "the sweeper to verify every row")
        cut_tail(d.store, seqs[2])
        reply = d.request(envelope("after-cut"))
        assert reply["ok"] is True, (reply, d.output())  # the writer sees the head moved
        append_many(d, 8, "more")  # rows over the cut, at seqs the sweeper had verified
        health = wait_for(lambda: (h := d.health())["sweeper"]["findings"] and h, "the writer's finding")
        wait_for(lambda: truncation_rows(d), "the truncation recorded as a row")
        wait_for(lambda: d.health()["sweeper"]["verified_seq"] >= d.health()["head_seq"] - 1 or interval > 1,
                 "the sweeper past the cut")
        health = d.health()
        assert [(f["kind"], f["seq"]) for f in health["sweeper"]["findings"]] == [("truncated", seqs[3])]
    finally:
        assert d.stop() == 0
    assert len(truncation_rows(d)) == 1
    assert [r["record_id"] for r in d.rows("event")] == (
        ["r-0", "r-1", "r-2", "after-cut"] + [f"more-{i}" for i in range(8)])


def test_a_cut_while_stopped_is_truncated(tmp_path):
    # Rows deleted from the store (its own tree state covers more than it holds) are `truncated`,
    # exit 6, as docs/chain.md's threat table names them; an older copy would be `rolled_back`.
    d = Daemon(tmp_path, verify_interval=0).start()
    seqs = append_many(d, 5, "r")
    assert d.stop() == 0
    cut_tail(d.store, seqs[1])
    refused = Daemon(tmp_path, verify_interval=0)
    refused.spawn()
    assert refused.wait() == 6
    assert "truncated" in refused.output()
