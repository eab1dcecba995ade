"""Class 7 of the adversarial pass: each behaviour now matches its documentation.

- `serve` on a store directory it cannot write exits 3 (docs/daemon.md, "Exit codes");
- changing only the store_id is `store_id_changed` (docs/chain.md), not `payload_edited@1`;
- an incremental and a full verify name a delete-and-renumber alike (docs/chain.md);
- a number beyond a double's range is never stored as `Infinity` (docs/record.md).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess

import pytest
from support import chain_tamper as t
from support.daemon import Daemon

from agentwatch.evidence.audit import verify_store
from agentwatch.record import normalize


def test_serve_on_a_store_directory_it_cannot_write_exits_3(tmp_path):
    d = Daemon(tmp_path, verify_interval=0)
    d.store.parent.mkdir(parents=True)
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: no way to make a directory read-only for root")
    # Immutable: not even root creates a file in it (a read-only mount behaves alike).
    made = subprocess.run(["chattr", "+i", str(d.store.parent)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"the file system refuses chattr +i: {made.stderr.strip()}")
    try:
        d.spawn()
        assert d.wait() == 3
        assert "cannot open the store" in d.output()
    finally:
        subprocess.run(["chattr", "-i", str(d.store.parent)], check=True)


def change_store_id(path) -> None:
    """Rewrite store_id with the sqlite3 shell (the immutability trigger dropped and put back)."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        (guard,) = con.execute("SELECT sql FROM sqlite_schema WHERE name = '_agentwatch_meta_no_update'").fetchone()
        con.execute("DROP TRIGGER _agentwatch_meta_no_update")
        con.execute("UPDATE _agentwatch_meta SET value = ? WHERE key = 'store_id'", ("ab" * 16,))
        con.execute(guard)
    finally:
        con.close()


def test_changing_only_the_store_id_is_named_so_by_both_verifiers_and_is_a_replacement(tmp_path):
    store = t.build_store(tmp_path / "store.db")
    copy = shutil.copyfile(store, tmp_path / "copy.db")
    assert verify_store(store).ok  # remembered at this path
    change_store_id(store)
    change_store_id(copy)
    library, standalone = t.both_verdicts(copy)
    assert library == standalone == (False, "store_id_changed", 1)
    result = verify_store(store, full=True)
    assert [f.kind for f in result.findings] == ["replaced", "store_id_changed"]
    assert result.exit_code == 4


def test_incremental_and_full_verify_name_a_delete_and_renumber_alike(tmp_path):
    store = t.build_store(tmp_path / "store.db", rows=50)
    assert verify_store(store).anchor.after.seq == 50  # the anchor at seq 50
    copy = shutil.copyfile(store, tmp_path / "copy.db")
    for path in (store, copy):
        with t.tamper(path) as con:
            t.delete_row(con, 25, renumber=True)
    incremental = verify_store(store)
    full = verify_store(store, full=True)
    assert incremental.mode == "incremental"
    assert t.verdict_of(incremental) == t.verdict_of(full) == (False, "missing", 25)
    assert t.both_verdicts(copy) == ((False, "missing", 25),) * 2  # and the standalone verifier


def test_a_number_beyond_a_doubles_range_is_kept_as_sent_never_as_infinity():
    text = '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"n": 1e999999}}'
    row = normalize.to_append({"record_id": "r1", "harness": "claude-code", "payload_text": text})
    doc = json.loads(row.payload)
    assert doc["raw"] == text
    assert "Infinity" not in row.payload.decode()
    assert doc["payload_error"] == "payload has values JSON cannot carry exactly; stored as text"
    assert (doc["event"]["name"], doc["tool"]["name"]) == ("PreToolUse", "Bash")  # normalized fields kept
