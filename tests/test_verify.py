"""verify_store / verify_range behaviour: modes, anchors, chunking, errors, JSON, and the
standalone verifier's command line."""

from __future__ import annotations

import ast
import base64
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys

import pytest
from support import chain_tamper as t

from agentwatch import paths
from agentwatch.errors import SchemaError, StoreUnreachable, UsageError
from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Store
from agentwatch.store.chain import GENESIS, format_hash
from agentwatch.verify.findings import FINDING_KINDS
from agentwatch.verify.walk import read_store_id, verify_range


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return t.build_store(tmp_path_factory.mktemp("template") / "store.db")


@pytest.fixture
def store(template, tmp_path):
    return t.copy_store(template, tmp_path / "store.db")


def stored_head_hash(path) -> str:
    with Store(path) as s:
        return format_hash(s.head()[1])


# --- full and incremental -------------------------------------------------------------------


def test_first_verify_is_full_and_records_the_anchor(store):
    result = verify_store(store)
    assert (result.ok, result.mode, result.rows_checked, result.first_seq_checked) == (True, "full", 12, 1)
    assert (result.head_seq, result.verified_through, result.finding) == (12, 12, None)
    assert result.head_hash == stored_head_hash(store)
    assert result.exit_code == 0
    anchor = result.anchor
    assert (anchor.status, anchor.before, anchor.after.seq) == ("created", None, 12)
    assert anchor.path == paths.state_dir() / "anchors" / f"{result.store_id}.json"
    assert stat.S_IMODE(anchor.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(anchor.path.parent.stat().st_mode) == 0o700
    doc = json.loads(anchor.path.read_text())
    assert doc == {
        "format": "agentwatch-anchor/1",
        "store_id": result.store_id,
        "chain_version": 1,
        "seq": 12,
        "hash": result.head_hash,
        "verified_at_ns": anchor.after.verified_at_ns,
        "store": os.path.abspath(store),
        # the Merkle tree's compact range over rows 1..12 (two perfect subtrees: 8 and 4 rows)
        "tree": base64.b64encode(anchor.after.tree).decode(),
    }
    assert len(anchor.after.tree) == 64
    assert [p.name for p in anchor.path.parent.iterdir()] == [anchor.path.name]  # no temp file left


def test_incremental_verify_checks_only_new_rows(store):
    verify_store(store)
    t.append_rows(store, 5)
    second = verify_store(store)
    assert (second.ok, second.mode, second.rows_checked, second.first_seq_checked) == (True, "incremental", 5, 13)
    assert (second.head_seq, second.verified_through) == (17, 17)
    assert (second.anchor.status, second.anchor.before.seq, second.anchor.after.seq) == ("advanced", 12, 17)

    third = verify_store(store)
    assert (third.ok, third.mode, third.rows_checked, third.first_seq_checked) == (True, "incremental", 0, None)
    assert (third.anchor.status, third.anchor.after.seq) == ("unchanged", 17)

    t.append_rows(store, 1, tag="one")
    assert verify_store(store).rows_checked == 1


def test_full_reverifies_everything_even_with_an_anchor(store):
    verify_store(store)
    t.append_rows(store, 3)
    result = verify_store(store, full=True)
    assert (result.ok, result.mode, result.rows_checked, result.first_seq_checked) == (True, "full", 15, 1)
    assert (result.anchor.status, result.anchor.after.seq) == ("advanced", 15)


def test_update_anchor_false_writes_nothing(store):
    result = verify_store(store, update_anchor=False)
    assert (result.ok, result.anchor.status, result.anchor.after) == (True, "absent", None)
    assert not (paths.state_dir() / "anchors").exists()


def test_state_dir_overrides_the_anchor_location(store, tmp_path):
    result = verify_store(store, state_dir=tmp_path / "elsewhere")
    assert result.anchor.path == tmp_path / "elsewhere" / "anchors" / f"{result.store_id}.json"
    assert result.anchor.path.exists()
    assert not (paths.state_dir() / "anchors").exists()
    assert verify_store(store, state_dir=tmp_path / "elsewhere").mode == "incremental"


def test_an_empty_store_verifies_and_records_no_anchor(tmp_path):
    path = tmp_path / "empty.db"
    Store(path).close()
    result = verify_store(path)
    assert (result.ok, result.rows_checked, result.head_seq, result.head_hash) == (True, 0, 0, None)
    assert (result.first_seq_checked, result.verified_through, result.anchor.status) == (None, 0, "absent")


def test_verify_never_writes_the_store(store):
    before = store.read_bytes()
    verify_store(store)
    verify_store(store, full=True)
    assert store.read_bytes() == before


def test_a_slower_verify_never_moves_the_anchor_backwards(store):
    nested = []

    def meanwhile(done, total):
        if done == total and not nested:  # the outer verify has walked to seq 12
            t.append_rows(store, 5)
            nested.append(verify_store(store))

    outer = verify_store(store, progress=meanwhile)
    assert (nested[0].anchor.status, nested[0].anchor.after.seq) == ("created", 17)
    assert (outer.ok, outer.head_seq, outer.anchor.status, outer.anchor.after.seq) == (True, 12, "unchanged", 17)
    assert json.loads(outer.anchor.path.read_text())["seq"] == 17


# --- anchors that cannot be used ------------------------------------------------------------


def test_an_unreadable_anchor_is_a_usage_error_and_is_left_alone(store):
    first = verify_store(store)
    first.anchor.path.write_text("{not json")
    with pytest.raises(UsageError, match="not a valid verify anchor") as info:
        verify_store(store)
    assert info.value.exit_code == 2
    assert first.anchor.path.read_text() == "{not json"


def test_an_anchor_naming_another_store_is_a_usage_error(store, tmp_path):
    other = t.build_store(tmp_path / "other.db", rows=3)
    mine = verify_store(store).anchor.path
    theirs = verify_store(other).anchor.path
    shutil.copyfile(theirs, mine)
    with pytest.raises(UsageError, match="belongs to store"):
        verify_store(store)


# --- chunks, progress, and the WAL --------------------------------------------------------


def test_progress_is_reported_between_bounded_chunks(store):
    calls = []
    result = verify_store(store, chunk_rows=5, progress=lambda done, total: calls.append((done, total)))
    assert result.rows_checked == 12
    assert calls == [(0, 12), (5, 12), (10, 12), (12, 12)]


def test_no_read_transaction_spans_chunks(store):
    """Between chunks a writer can append and checkpoint the whole WAL: nothing pins it."""
    writer = Store(store)
    checkpoints = []

    def between_chunks(done, total):
        writer.append(t.appends(100 + done, 1, tag=f"live{done}"))
        checkpoints.append(writer.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())

    try:
        result = verify_store(store, chunk_rows=4, progress=between_chunks)
    finally:
        writer.close()
    assert len(checkpoints) == 4
    assert [busy for busy, _, _ in checkpoints] == [0, 0, 0, 0]
    # Only the rows present when the verify started are in its verdict.
    assert (result.ok, result.rows_checked, result.head_seq) == (True, 12, 12)
    assert verify_store(store).rows_checked == 4


def test_verify_range_steps_through_the_chain(store):
    conn = db.open_reader(store)
    try:
        store_id = read_store_id(conn)
        first = verify_range(conn, store_id, 0, GENESIS, 5)
        assert (first.ok, first.rows, first.last_seq) == (True, 5, 5)
        second = verify_range(conn, store_id, first.last_seq, first.last_hash, 5)
        third = verify_range(conn, store_id, second.last_seq, second.last_hash, 5)
        assert (second.rows, third.rows, third.last_seq) == (5, 2, 12)  # rows < limit: caught up
        assert format_hash(third.last_hash) == stored_head_hash(store)
        idle = verify_range(conn, store_id, third.last_seq, third.last_hash, 5)
        assert (idle.ok, idle.rows, idle.last_seq) == (True, 0, 12)
        assert conn.getautocommit()
    finally:
        conn.close()


def test_verify_range_rechecks_the_position_it_starts_from(store):
    conn = db.open_reader(store)
    try:
        store_id = read_store_id(conn)
        good = verify_range(conn, store_id, 0, GENESIS, 5)
        stale = verify_range(conn, store_id, 5, b"\x01" * 32, 5)
        assert (stale.finding.kind, stale.finding.seq, stale.rows, stale.last_seq) == ("rewritten", 5, 0, 5)
        beyond = verify_range(conn, store_id, 20, good.last_hash, 5)
        assert (beyond.finding.kind, beyond.finding.seq) == ("truncated", 13)
        assert conn.getautocommit()
        with pytest.raises(ValueError):
            verify_range(conn, store_id, 0, b"\x01" * 32, 5)
    finally:
        conn.close()


def test_verify_range_names_a_break_inside_its_range(store):
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 3)
    conn = db.open_reader(store)
    try:
        result = verify_range(conn, read_store_id(conn), 0, GENESIS, 100)
    finally:
        conn.close()
    assert (result.ok, result.rows, result.last_seq) == (False, 2, 2)
    assert (result.finding.kind, result.finding.seq) == ("payload_edited", 3)


# --- the JSON document and exit codes -------------------------------------------------------


def test_to_json_is_stable_and_serialisable(store):
    ok = verify_store(store).to_json()
    assert list(ok) == [
        "ok", "mode", "store", "store_id", "chain_version", "rows_checked", "first_seq_checked",
        "head_seq", "head_hash", "verified_through", "finding", "anchor", "erased", "findings", "known_store",
        "evidence", "recorder", "retained", "recheck",
    ]
    assert (ok["ok"], ok["finding"], ok["chain_version"], ok["erased"], ok["findings"]) == (True, None, 1, [], [])
    assert list(ok["anchor"]) == ["path", "status", "before", "after"]
    assert ok["anchor"]["after"]["hash"] == ok["head_hash"]
    json.dumps(ok)

    with t.tamper(store) as con:
        t.flip_payload_byte(con, 12)  # the anchored row
    broken = verify_store(store)
    doc = broken.to_json()
    assert broken.exit_code == 1
    assert (doc["ok"], doc["mode"]) == (False, "incremental")
    assert (doc["finding"]["kind"], doc["finding"]["seq"]) == ("payload_edited", 12)
    assert set(doc["finding"]) == {"seq", "kind", "detail"}
    assert doc["verified_through"] == 11  # the anchored row broke: the walk from genesis names the break
    assert doc["anchor"]["status"] == "kept"
    json.dumps(doc)
    full = verify_store(store, full=True).to_json()
    assert (full["finding"]["kind"], full["finding"]["seq"], full["verified_through"]) == ("payload_edited", 12, 11)


def test_every_finding_kind_is_documented():
    text = (t.STANDALONE.parent.parent / "docs" / "chain.md").read_text(encoding="utf-8")
    assert set(FINDING_KINDS) == {
        "payload_edited", "hash_edited", "edited", "missing", "reordered", "inserted",
        "truncated", "rewritten", "bad_genesis", "malformed", "store_id_changed",
        "replaced", "rolled_back", "schema_changed", "foreign_rows", "checkpoint_lost", "witness_lost",
    }
    for kind in FINDING_KINDS:
        assert f"**{kind}**" in text


# --- stores that cannot be verified ---------------------------------------------------------


def test_a_missing_store_is_unreachable(tmp_path):
    with pytest.raises(StoreUnreachable) as info:
        verify_store(tmp_path / "nope.db")
    assert info.value.exit_code == 3
    assert t.standalone(tmp_path / "nope.db")[0] == 3


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(SchemaError):
        verify_store(path)
    assert t.standalone(path)[0] == 3


def test_a_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "foreign.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE records (seq INTEGER PRIMARY KEY)")
    con.commit()
    con.close()
    with pytest.raises(SchemaError):
        verify_store(path)
    assert t.standalone(path)[0] == 3


def test_an_unknown_chain_version_is_refused(store):
    con = sqlite3.connect(store, isolation_level=None)
    con.execute("DROP TRIGGER _agentwatch_meta_no_update")
    con.execute("UPDATE _agentwatch_meta SET value = '2' WHERE key = 'chain_version'")
    con.close()
    with pytest.raises(SchemaError, match="chain version"):
        verify_store(store)
    assert t.standalone(store)[0] == 3


# --- the standalone verifier as a program --------------------------------------------------


def test_standalone_imports_only_the_standard_library():
    tree = ast.parse(t.STANDALONE.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            imported.add(node.module.split(".")[0])
    assert imported and imported <= sys.stdlib_module_names


def test_standalone_runs_from_a_copy_anywhere(store, tmp_path):
    copy = tmp_path / "audit" / "standalone_verify.py"
    copy.parent.mkdir()
    shutil.copyfile(t.STANDALONE, copy)
    proc = subprocess.run([sys.executable, "-I", "-S", str(copy), str(store)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ok: 12 rows intact, head seq 12 {stored_head_hash(store)}")


def test_standalone_agrees_with_the_library_on_a_clean_store(store):
    rc, report, _ = t.standalone(store)
    lib = verify_store(store, update_anchor=False)
    assert rc == 0
    for key in ("ok", "store_id", "rows_checked", "head_seq", "head_hash", "verified_through", "finding"):
        assert report[key] == lib.to_json()[key], key


def test_standalone_reports_a_break_in_words_and_exit_1(store):
    with t.tamper(store) as con:
        t.delete_row(con, 6)
    proc = subprocess.run([sys.executable, "-I", "-S", str(t.STANDALONE), str(store)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("BROKEN at seq 6: missing:")


def test_standalone_usage_errors_exit_2(store, tmp_path):
    run = subprocess.run
    assert run([sys.executable, "-I", "-S", str(t.STANDALONE)], capture_output=True).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert t.standalone(store, "--anchor", str(bad))[0] == 2
    other = t.build_store(tmp_path / "other.db", rows=2)
    foreign = verify_store(other).anchor.path
    rc, _, err = t.standalone(store, "--anchor", str(foreign))
    assert rc == 2 and "anchor is for store" in err
