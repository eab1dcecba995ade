"""Daemon-owned record ids (docs/protocol.md, "Record ids"): clients cannot take them first.

Class 4 of the adversarial pass: a client appended an event with the record_id the sweeper
would later give its integrity_break row, and that row was then "deduplicated" away.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.daemon import Daemon, envelope, spool_write, wait_for

from agentwatch.record.ids import is_daemon_id
from agentwatch.store.append import Append, RowRefused, Store
from agentwatch.store.chain import canonical_json

pytestmark = pytest.mark.usefixtures("reap_daemons")

DAEMON_IDS = ["attest-integrity-break-5-payload_edited", "attest-0d6c", "gap-spool-abc", "gap-1"]


def test_a_socket_client_cannot_use_the_recorders_ids(daemon):
    for record_id in DAEMON_IDS:
        reply = daemon.request(envelope(record_id))
        assert (reply["ok"], reply["error"]) == (False, "bad_request"), record_id
        assert "recorder's own namespace" in reply["message"]
    assert daemon.request(envelope("attestation-but-not-the-prefix"))["ok"] is True
    assert [r["record_id"] for r in daemon.rows("event")] == ["attestation-but-not-the-prefix"]


def test_a_spool_file_with_a_recorders_id_is_quarantined_not_stored(tmp_path):
    d = Daemon(tmp_path, verify_interval=0)
    env = envelope("gap-from-a-client")
    spool_write(d.spool, "gap-from-a-client", json.dumps(env).encode())
    d.start()
    try:
        wait_for(lambda: d.health()["spool"]["bad"] == 1, "the file quarantined")
        (gap,) = [r for r in d.rows("gap") if r["payload"]["reason"] == "spool_unparsable"]
        assert "recorder's own namespace" in gap["payload"]["error"]
        assert d.rows("event") == []
    finally:
        assert d.stop() == 0


def test_an_import_line_with_a_recorders_id_is_rejected_and_recorded(tmp_path):
    store = tmp_path / "store.db"
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps(envelope("attest-forged")) + "\n" + json.dumps(envelope("fine-1")) + "\n")
    out = subprocess.run([sys.executable, "-m", "agentwatch.cli", "import", str(lines), "--store", str(store)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    with Store(store) as s:
        events = [r[0] for r in s.conn.execute("SELECT record_id FROM records WHERE kind = 'event'")]
        gaps = s.conn.execute("SELECT count(*) FROM records WHERE kind = 'gap'").fetchone()[0]
    assert (events, gaps) == (["fine-1"], 1)


def test_a_row_of_another_kind_is_never_taken_for_a_duplicate(tmp_path):
    with Store(tmp_path / "store.db") as store:
        store.append([Append("shared-id", "event", canonical_json({"n": 1}))])
        with pytest.raises(RowRefused, match="taken by a row of kind 'event'"):
            store.append([Append("shared-id", "attestation", canonical_json({"n": 2}))])
        assert store.append([Append("shared-id", "event", canonical_json({"n": 1}))])[0].duplicate


def test_the_break_is_recorded_even_when_an_event_took_its_id_first(tmp_path):
    """A store written before the namespace rule may hold a client event with the break's id."""
    from support.chain_tamper import build_store, flip_payload_byte, tamper

    d = Daemon(tmp_path, verify_interval=0.1)
    d.store.parent.mkdir(parents=True)
    build_store(d.store, rows=12)
    taken = "attest-integrity-break-5-payload_edited"
    with Store(d.store) as store:
        store.append([Append(taken, "event", canonical_json({"harness": "claude-code", "planted": True}))])
    with tamper(d.store) as con:
        flip_payload_byte(con, 5)
    d.start()
    try:
        def breaks():
            return [r for r in d.rows("attestation") if r["payload"].get("type") == "integrity_break"]

        (row,) = wait_for(breaks, "the integrity_break row")
        assert (row["payload"]["finding"]["seq"], row["payload"]["finding"]["kind"]) == (5, "payload_edited")
        assert row["record_id"].startswith(taken + "-")
    finally:
        assert d.stop() == 0


def test_the_namespace_covers_every_id_the_recorder_makes():
    assert all(is_daemon_id(i) for i in DAEMON_IDS)
    assert not any(is_daemon_id(i) for i in ("0194c9e2-7b1a-7000-8000-000000000000", "attestation", "gapless"))
