"""Packed-row vectors (tests/vectors/packed_v1.json, made by tests/make_packed_vector.py): both verifiers.

The vector store is built from the JSON with the standard library's sqlite3: the records
table reduced to what a verifier reads plus the two columns of the packing migration
(migrations/*_packed_payloads.sql), and the dictionaries table, so no agentwatch code
writes it. The library walk (verify_range) and the standalone verifier must both find the
four rows intact, and name the same first break for every tampered case.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import apsw
import pytest

from agentwatch import standalone_verify
from agentwatch.store import packing
from agentwatch.store.chain import GENESIS, canonical_json, format_hash, parse_hash, row_hash
from agentwatch.store.migrations import APPLICATION_ID
from agentwatch.verify.walk import verify_range

HERE = Path(__file__).parent
VECTORS = json.loads((HERE / "vectors" / "packed_v1.json").read_text(encoding="utf-8"))
STORE_ID = bytes.fromhex(VECTORS["store_id"])
ROWS = VECTORS["rows"]
CASES = {case["name"]: case for case in VECTORS["cases"]}
MIGRATION = next((HERE.parent / "migrations").glob("*_packed_payloads.sql")).read_text(encoding="utf-8")
DICTIONARY = base64.b64decode(VECTORS["dictionaries"][0]["data_b64"])


def test_the_file_is_what_the_script_makes():
    made = subprocess.run([sys.executable, str(HERE / "make_packed_vector.py")], capture_output=True, text=True,
                          check=True, cwd=HERE.parent, env={"PYTHONPATH": str(HERE.parent)})
    assert json.loads(made.stdout) == VECTORS


def test_each_row_hashes_its_document_and_stores_its_projection():
    prev = GENESIS
    for v in ROWS:
        document = (v["document"] if v["payload_z"] else v["payload"]).encode("utf-8")
        assert format_hash(hashlib.sha256(document).digest()) == v["payload_sha256"]
        preimage = bytes.fromhex(v["preimage_hex"])
        assert preimage[-32:] == parse_hash(v["payload_sha256"])
        assert hashlib.sha256(preimage).digest() == parse_hash(v["hash"])
        assert row_hash(STORE_ID, v["seq"], v["recorded_at_ns"], v["kind"], v["record_id"], prev, document) == \
            parse_hash(v["hash"])
        if v["payload_z"]:
            inflater = zlib.decompressobj(-15, zdict=DICTIONARY)
            assert inflater.decompress(base64.b64decode(v["payload_z"])) == document and inflater.eof
            assert v["payload"].encode() == canonical_json(packing.projection(json.loads(document)))
        prev = parse_hash(v["hash"])
    assert [v["seq"] for v in ROWS if v["payload_z"]] == [2, 3]


def test_the_vector_schema_is_the_migration():
    assert "ALTER TABLE records ADD COLUMN payload_dict INTEGER;" in MIGRATION
    assert "ALTER TABLE records ADD COLUMN payload_z BLOB CHECK (" in MIGRATION
    assert "CREATE TABLE _agentwatch_dictionaries (\n    id            INTEGER PRIMARY KEY," in MIGRATION


def build(path: Path, case: dict | None = None) -> Path:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("CREATE TABLE _agentwatch_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO _agentwatch_meta VALUES ('store_id', ?), ('chain_version', '1')", (VECTORS["store_id"],))
    con.execute("CREATE TABLE records (seq INTEGER PRIMARY KEY, record_id TEXT, kind TEXT, recorded_at_ns INTEGER,"
                " payload TEXT, prev_hash BLOB, hash BLOB, payload_dict INTEGER, payload_z BLOB)")
    con.execute("CREATE TABLE _agentwatch_dictionaries (id INTEGER PRIMARY KEY, data BLOB NOT NULL,"
                " created_at_ns INTEGER NOT NULL)")
    data = (case or {}).get("dictionary", VECTORS["dictionaries"][0]["data_b64"])
    if data is not None:
        con.execute("INSERT INTO _agentwatch_dictionaries VALUES (1, ?, 0)", (base64.b64decode(data),))
    for v in ROWS:
        z = base64.b64decode(v["payload_z"]) if v["payload_z"] else None
        con.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (v["seq"], v["record_id"], v["kind"], v["recorded_at_ns"], v["payload"],
                     parse_hash(v["prev_hash"]), parse_hash(v["hash"]), v["payload_dict"], z))
    for change in (case or {}).get("set", []):
        assert change["column"] in ("payload", "payload_z", "payload_dict")
        if "value_b64" in change:
            value = None if change["value_b64"] is None else base64.b64decode(change["value_b64"])
        else:
            value = change["value"]
        con.execute(f"UPDATE records SET {change['column']} = ? WHERE seq = ?", (value, change["seq"]))
    con.close()
    return path


def library(path: Path):
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return verify_range(conn, STORE_ID, 0, GENESIS, 100)
    finally:
        conn.close()


def test_both_verifiers_find_the_packed_rows_intact(tmp_path):
    path = build(tmp_path / "vectors.db")
    result = library(path)
    assert (result.ok, result.rows, result.last_seq) == (True, VECTORS["expect"]["rows_checked"], 4)
    assert format_hash(result.last_hash) == ROWS[-1]["hash"]
    report = standalone_verify.verify(str(path))
    assert (report["ok"], report["rows_checked"], report["head_hash"]) == (True, 4, ROWS[-1]["hash"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_verifiers_name_the_same_break(tmp_path, name):
    case = CASES[name]
    path = build(tmp_path / "vectors.db", case)
    if case["finding"] is None:
        assert (library(path).ok, standalone_verify.verify(str(path))["ok"]) == (True, True)
        return
    expect = (case["finding"]["kind"], case["finding"]["seq"])
    result = library(path)
    assert (result.ok, result.finding.kind, result.finding.seq) == (False, *expect)
    report = standalone_verify.verify(str(path))
    assert (report["ok"], report["finding"]["kind"], report["finding"]["seq"]) == (False, *expect)
