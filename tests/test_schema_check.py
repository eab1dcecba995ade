"""The schema is part of what is verified (store/schema_check.py, docs/reliability.md).

Class 2 of the adversarial pass: a `BEFORE INSERT ... RAISE(IGNORE)` trigger planted with the
sqlite3 shell made the daemon acknowledge records it never stored, and a generated column
rewritten through `writable_schema` made the forensic columns lie while the chain verified.
Tampering goes through the standard library's sqlite3, as an attacker's shell would.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from support.daemon import Daemon, append_many, envelope, wait_for

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db, schema_check
from agentwatch.store.append import Append, Store, StoreIntegrityError
from agentwatch.store.chain import canonical_json
from agentwatch.store.schema_check import SchemaChanged

pytestmark = pytest.mark.usefixtures("reap_daemons")

IGNORE_TRIGGER = "CREATE TRIGGER swallow BEFORE INSERT ON records BEGIN SELECT RAISE(IGNORE); END"


def event(record_id: str, tool: str = "Bash") -> Append:
    return Append(record_id, "event", canonical_json({"harness": "claude-code", "tool": {"name": tool}}))


def shell(path, *statements: str, writable_schema: bool = False) -> None:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        if writable_schema:
            con.execute("PRAGMA writable_schema = ON")
        for sql in statements:
            con.execute(sql)
    finally:
        con.close()


def lie_about_tool_name(path) -> None:
    """Rewrite the generated column tool_name to read the harness instead (no schema cookie bump)."""
    shell(path, "UPDATE sqlite_schema SET sql = replace(sql, '''$.tool.name''', '''$.harness''') "
          "WHERE type = 'table' AND name = 'records'", writable_schema=True)


def test_a_fresh_store_has_exactly_the_shipped_schema(tmp_path):
    Store(tmp_path / "store.db").close()
    conn = db.open_reader(tmp_path / "store.db")
    try:
        assert schema_check.differences(conn) == []
    finally:
        conn.close()


def test_a_planted_ignore_trigger_stops_the_append_before_anything_is_acknowledged(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append([event("a")])
        shell(path, IGNORE_TRIGGER)
        with pytest.raises(SchemaChanged, match="extra trigger 'swallow'"):
            store.append([event("b")])
        assert store.head()[0] == 1
        assert store.conn.getautocommit()
    with pytest.raises(SchemaChanged):
        Store(path)  # and a writer refuses to open it


def test_an_append_counts_what_was_stored_even_when_the_schema_check_is_passed(tmp_path, monkeypatch):
    """The read-back alone: with the schema check out of the way, the dropped row still shows."""
    path = tmp_path / "store.db"
    with Store(path) as store:
        monkeypatch.setattr(Store, "_check_schema", lambda self: None)
        store.append([event("a")])
        shell(path, IGNORE_TRIGGER)
        with pytest.raises(StoreIntegrityError) as raised:
            store.append([event("b"), event("c")])
        assert raised.value.kind == "not_stored"
        assert store.head()[0] == 1


def test_a_rewritten_generated_column_is_found_by_verify_and_refused_by_the_writer(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append([event("a", tool="Bash")])
    lie_about_tool_name(path)
    result = verify_store(path)
    assert [f.kind for f in result.findings] == ["schema_changed"]
    assert result.exit_code == 7
    assert "changed table 'records'" in result.findings[0].detail
    out = subprocess.run([sys.executable, "-m", "agentwatch.cli", "verify", "--store", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 7
    with pytest.raises(SchemaChanged, match="changed table 'records'"):
        Store(path)


def test_a_trigger_planted_under_the_running_daemon_stops_its_acks(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        append_many(d, 3, "before")
        shell(d.store, IGNORE_TRIGGER)
        reply = d.request(envelope("after-trigger"))
        assert (reply["ok"], reply["error"]) == (False, "unavailable")
        health = d.health()
        assert health["status"] == "stopped"
        assert "schema_changed" in health["writer"]["stopped_reason"]
        assert [r["record_id"] for r in d.rows("event")] == [f"before-{i}" for i in range(3)]
    finally:
        assert d.stop() == 3
    refused = Daemon(tmp_path, verify_interval=0.1)
    refused.spawn()
    assert refused.wait() == 7


def test_a_schema_rewrite_without_a_cookie_change_is_found_by_the_sweeper(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        append_many(d, 2, "before")
        lie_about_tool_name(d.store)
        health = wait_for(lambda: (h := d.health())["status"] == "stopped" and h, "the sweeper's schema finding")
        kinds = [f["kind"] for f in health["sweeper"]["findings"]]
        assert kinds == ["schema_changed"]
        assert d.request(envelope("after-rewrite"))["error"] == "unavailable"
    finally:
        assert d.stop() == 3
