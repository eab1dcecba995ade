"""Health status, the sweeper's full passes and recorded breaks, the redaction self-test at start.

A real daemon per test, on paths the test owns. Conditions are polled with a
generous deadline; counts are exact and by kind.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from support.daemon import Daemon, append_many, envelope, wait_for

HEALTH_FIELDS = {"status", "reasons", "reachable", "last_commit_age_s", "wal_bytes", "redaction", "sweeper", "spool"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True, timeout=60
    )


def breaks(d: Daemon) -> list[dict]:
    return [row for row in d.rows("attestation") if row["payload"].get("type") == "integrity_break"]


# -- health ----------------------------------------------------------------------------------


def test_fresh_daemon_is_recording_with_every_summary_field(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        last = append_many(d, 20, "h")[-1]
        health = wait_for(lambda: (h := d.health())["sweeper"]["verified_seq"] >= last and h, "the sweeper")
        assert HEALTH_FIELDS <= health.keys()
        assert health["status"] == "recording"
        assert health["reasons"] == []
        assert health["reachable"] is True
        assert 0 <= health["last_commit_age_s"] < 3600
        assert health["wal_bytes"] > 0
        assert health["sweeper"]["lag_rows"] == 0
        assert health["sweeper"]["state"] == "ok"
        assert health["sweeper"]["findings"] == []
        assert health["sweeper"]["full"]["interval_s"] == 3600.0
        assert health["spool"]["backlog"] == 0
        assert health["spool"]["oldest_age_s"] is None
        assert health["redaction"]["mode"] == "redacted"
        self_test = health["redaction"]["self_test"]
        assert self_test["ok"] is True and self_test["failures"] == [] and self_test["checked"] > 0
        assert health["writer"]["state"] == "ok"  # the fields from before are still there

        out = cli("health", "--json", "--socket", str(d.socket))
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["status"] == "recording"
        text = cli("health", "--socket", str(d.socket))
        assert text.returncode == 0 and "status: recording" in text.stdout
    finally:
        assert d.stop() == 0


def test_health_counts_the_rows_the_store_holds_from_this_start(tmp_path):
    # The start attestation is a commit of this start: a fresh daemon's head seq 1 is "1 row in 1 commit".
    d = Daemon(tmp_path, verify_interval=0, attest_interval=0).start()
    try:
        health = d.health()
        stored = [row["seq"] for row in d.rows()]
        assert (health["head_seq"], health["writer"]["rows_committed"], health["writer"]["commits"]) == (1, 1, 1)
        assert stored == [1]
        text = cli("health", "--socket", str(d.socket))
        assert "writer: ok, 1 row in 1 commit since start, 0 queued\n" in text.stdout, text.stdout
        append_many(d, 3, "h")
        health = d.health()
        assert (health["head_seq"], health["writer"]["rows_committed"]) == (4, 4)
    finally:
        assert d.stop() == 0
    # A second start on the same store counts its own rows: the head is higher by the first run's five
    # (start, three events, stop).
    d = Daemon(tmp_path, verify_interval=0, attest_interval=0).start()
    try:
        health = d.health()
        assert (health["head_seq"], health["writer"]["rows_committed"], health["writer"]["commits"]) == (6, 1, 1)
        assert len(d.rows()) == 6
    finally:
        assert d.stop() == 0


def test_health_without_a_daemon_says_stopped_and_exits_3(tmp_path):
    sock = tmp_path / "run" / "nobody.sock"
    out = cli("health", "--json", "--socket", str(sock))
    assert out.returncode == 3
    report = json.loads(out.stdout)
    assert report["status"] == "stopped"
    assert report["reachable"] is False
    assert len(report["reasons"]) == 1 and "cannot connect" in report["reasons"][0]
    text = cli("health", "--socket", str(sock))
    assert text.returncode == 3
    assert "status: stopped" in text.stdout
    assert "cannot connect" in text.stderr


# -- a break is recorded, and recording goes on --------------------------------------------


def test_a_tampered_store_is_degraded_the_break_recorded_once_and_recording_goes_on(tmp_path):
    from support.chain_tamper import build_store, flip_payload_byte, tamper

    d = Daemon(tmp_path, verify_interval=0.1, extra_args=["--full-verify-interval", "0.2"])
    d.store.parent.mkdir(parents=True)
    build_store(d.store, rows=12)
    with tamper(d.store) as con:
        flip_payload_byte(con, 5)
    d.start()
    try:
        health = wait_for(lambda: (h := d.health())["status"] == "degraded" and h, "health to turn degraded")
        assert health["sweeper"]["finding"]["seq"] == 5
        assert health["sweeper"]["finding"]["kind"] == "payload_edited"
        assert any("payload_edited at seq 5" in reason for reason in health["reasons"])
        (row,) = wait_for(lambda: breaks(d), "the integrity_break row")
        assert row["payload"]["finding"]["seq"] == 5
        assert row["payload"]["finding"]["kind"] == "payload_edited"
        assert row["record_id"] == "attest-integrity-break-5-payload_edited"
        recorded = wait_for(lambda: d.health()["sweeper"]["findings"][0]["recorded_seq"], "the row's seq in health")
        assert recorded == row["seq"]
        # Further rounds and full passes find the same break again: still one row.
        passes = d.health()["sweeper"]["full"]["passes"]
        wait_for(lambda: d.health()["sweeper"]["full"]["passes"] >= passes + 3, "three more full passes")
        assert len(breaks(d)) == 1

        reply = d.request(envelope("after-the-break"))
        assert reply["ok"] is True
        assert [r["seq"] for r in d.rows("event") if r["record_id"] == "after-the-break"] == [reply["seq"]]
        out = cli("health", "--json", "--socket", str(d.socket))
        assert out.returncode == 1
        assert json.loads(out.stdout)["status"] == "degraded"
    finally:
        assert d.stop() == 0

    # A restart on the same store finds the same break: acknowledged as a duplicate, not stored again.
    again = Daemon(tmp_path, store=d.store, socket_path=d.socket, spool=d.spool, verify_interval=0.1)
    again.start()
    try:
        recorded = wait_for(
            lambda: (f := again.health()["sweeper"]["findings"]) and f[0]["recorded_seq"], "the restarted sweeper's finding"
        )
        assert recorded == row["seq"]  # the row stored by the first daemon: a duplicate
        assert len(breaks(again)) == 1
    finally:
        assert again.stop() == 0


def test_an_edit_behind_the_incremental_position_is_found_by_the_full_pass(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1, extra_args=["--full-verify-interval", "0.3"])
    d.start()
    try:
        last = append_many(d, 40, "r")[-1]
        wait_for(lambda: d.health()["sweeper"]["verified_seq"] >= last, "the sweeper to verify every row")
        target = next(r["seq"] for r in d.rows("event") if r["record_id"] == "r-10")
        # Tamper while the daemon runs: stdlib sqlite3, append-only trigger dropped and put back
        # as it was (a schema left changed is a finding of its own), valid JSON kept.
        con = sqlite3.connect(d.store, isolation_level=None)
        try:
            (guard,) = con.execute("SELECT sql FROM sqlite_schema WHERE name = 'records_append_only_update'").fetchone()
            con.execute("DROP TRIGGER records_append_only_update")
            con.execute("UPDATE records SET payload = replace(payload, '\"Bash\"', '\"Bask\"') WHERE seq = ?", (target,))
            con.execute(guard)
        finally:
            con.close()

        health = wait_for(lambda: (h := d.health())["sweeper"]["state"] == "broken" and h, "the full pass's finding")
        sweeper = health["sweeper"]
        assert sweeper["found_by"] == "full"
        assert sweeper["finding"]["seq"] == target
        assert sweeper["finding"]["kind"] == "payload_edited"
        assert sweeper["verified_seq"] >= last  # the incremental walk had passed it
        (row,) = wait_for(lambda: breaks(d), "the integrity_break row")
        assert row["payload"]["finding"] == sweeper["finding"]
        assert row["payload"]["found_by"] == "full"
        assert d.health()["status"] == "degraded"

        # New rows still chain from the head, and the incremental walk still verifies them.
        after = append_many(d, 5, "after")[-1]
        wait_for(lambda: d.health()["sweeper"]["verified_seq"] >= after, "the incremental walk past the break")
        assert d.count("event") == 45
        assert len(breaks(d)) == 1
    finally:
        assert d.stop() == 0


# -- the redaction self-test at start --------------------------------------------------------


class BrokenRedactorDaemon(Daemon):
    """A daemon whose redaction rules mask nothing, so its self-test fails."""

    def argv(self) -> list[str]:
        script = (
            "import sys, agentwatch.record.redact.rules as r\n"
            "r.RuleSet.redact = lambda self, text, mask, extra=None, path='': text\n"
            "from agentwatch.cli import app\n"
            "app(sys.argv[1:], prog_name='agentwatch')\n"
        )
        return [sys.executable, "-c", script, *super().argv()[3:]]


def test_a_failed_self_test_refuses_to_start_unless_privacy_is_full(tmp_path, monkeypatch):
    refused = BrokenRedactorDaemon(tmp_path / "redacted")
    refused.spawn()
    assert refused.wait() == 2
    assert "redaction self-test failed" in refused.output()
    assert not refused.store.exists()  # nothing recorded with a broken redactor
    assert not refused.socket.exists()

    monkeypatch.setenv("AGENTWATCH_PRIVACY", "full")
    full = BrokenRedactorDaemon(tmp_path / "full").start()
    try:
        health = full.health()
        assert health["status"] == "degraded"
        assert health["redaction"]["mode"] == "full"
        assert health["redaction"]["self_test"]["ok"] is False
        assert any("redaction self-test failed" in reason for reason in health["reasons"])
        assert full.request(envelope("recorded-in-full-mode"))["ok"] is True
    finally:
        assert full.stop() == 0
