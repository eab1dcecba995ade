"""Erasure vectors (tests/vectors/erasure_v1.json): both verifiers on a chain with an erased row.

The vector store is built from the JSON with the standard library's sqlite3, with the
records table reduced to what a verifier reads plus the `erased_seq` generated column and
index of the erasure migration (migrations/*_erasure.sql), so no agentwatch code writes it. The library walk
(verify_range) and the standalone verifier must both report seq 2 erased and the chain
intact, and name the same first break for every tampered case.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import apsw
import pytest

from agentwatch import standalone_verify
from agentwatch.store.chain import GENESIS, format_hash, parse_hash, row_hash
from agentwatch.store.migrations import APPLICATION_ID
from agentwatch.verify.walk import verify_range

VECTORS = json.loads((Path(__file__).parent / "vectors" / "erasure_v1.json").read_text(encoding="utf-8"))
STORE_ID = bytes.fromhex(VECTORS["store_id"])
ROWS = VECTORS["rows"]
CASES = {case["name"]: case for case in VECTORS["cases"]}
MIGRATION = next((Path(__file__).parent.parent / "migrations").glob("*_erasure.sql")).read_text(encoding="utf-8")


def test_vectors_hash_the_digest_the_erasure_row_names():
    erased = ROWS[1]
    assert (erased["seq"], erased["payload"]) == (2, "null")
    original = erased["erased_payload"].encode("utf-8")
    assert format_hash(hashlib.sha256(original).digest()) == erased["payload_sha256"]
    erasure = json.loads(ROWS[3]["payload"])
    assert (ROWS[3]["kind"], erasure["type"], erasure["erased_seq"]) == ("attestation", "erasure", 2)
    assert erasure["payload_sha256"] == erased["payload_sha256"]
    prev = GENESIS
    for v in ROWS:
        preimage = bytes.fromhex(v["preimage_hex"])
        assert preimage[-32:] == parse_hash(v["payload_sha256"])
        assert hashlib.sha256(preimage).digest() == parse_hash(v["hash"])
        assert parse_hash(v["prev_hash"]) == prev
        payload = original if v["seq"] == 2 else v["payload"].encode("utf-8")
        assert row_hash(STORE_ID, v["seq"], v["recorded_at_ns"], v["kind"], v["record_id"], prev, payload) == \
            parse_hash(v["hash"])
        prev = parse_hash(v["hash"])


def test_the_vector_schema_is_the_migrations():
    # The generated column and its index below are the ones the erasure migration adds.
    assert "CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN" in MIGRATION
    assert "CASE WHEN json_valid(payload) THEN" in MIGRATION
    assert "CASE WHEN json_extract(payload, '$.type') = 'erasure' THEN json_extract(payload, '$.erased_seq') END" \
        in MIGRATION
    assert "CREATE INDEX records_by_erased_seq ON records (erased_seq) WHERE erased_seq IS NOT NULL;" in MIGRATION


def build(path: Path, case: dict | None = None) -> Path:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("CREATE TABLE _agentwatch_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO _agentwatch_meta VALUES ('store_id', ?), ('chain_version', '1')", (VECTORS["store_id"],))
    con.execute(
        "CREATE TABLE records (seq INTEGER PRIMARY KEY, record_id TEXT, kind TEXT, recorded_at_ns INTEGER,"
        " payload TEXT, prev_hash BLOB, hash BLOB, erased_seq INTEGER GENERATED ALWAYS AS ("
        " CASE WHEN kind = 'attestation' AND typeof(payload) = 'text' THEN"
        " CASE WHEN json_valid(payload) THEN"
        " CASE WHEN json_extract(payload, '$.type') = 'erasure' THEN json_extract(payload, '$.erased_seq') END"
        " END END) VIRTUAL)"
    )
    con.execute("CREATE INDEX records_by_erased_seq ON records (erased_seq) WHERE erased_seq IS NOT NULL")
    for v in ROWS:
        con.execute(
            "INSERT INTO records (seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (v["seq"], v["record_id"], v["kind"], v["recorded_at_ns"], v["payload"], parse_hash(v["prev_hash"]),
             parse_hash(v["hash"])),
        )
    for change in (case or {}).get("set", []):
        assert change["column"] in ("payload", "kind")
        con.execute(f"UPDATE records SET {change['column']} = ? WHERE seq = ?", (change["value"], change["seq"]))
    for seq in (case or {}).get("delete", []):
        con.execute("DELETE FROM records WHERE seq = ?", (seq,))
    con.close()
    return path


def library(path: Path):
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return verify_range(conn, STORE_ID, 0, GENESIS, 100)
    finally:
        conn.close()


def test_both_verifiers_report_the_erased_row(tmp_path):
    path = build(tmp_path / "vectors.db")
    expect = VECTORS["expect"]
    erased = [(e["seq"], e["erasure_seq"]) for e in expect["erased"]]
    result = library(path)
    assert (result.ok, result.rows, result.last_seq, list(result.erased)) == (True, expect["rows_checked"], 5, erased)
    assert format_hash(result.last_hash) == ROWS[-1]["hash"]
    report = standalone_verify.verify(str(path))
    assert (report["ok"], report["rows_checked"], report["erased"]) == (True, expect["rows_checked"], expect["erased"])
    assert report["head_hash"] == ROWS[-1]["hash"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_any_other_change_is_a_break_in_both_verifiers(tmp_path, name):
    case = CASES[name]
    path = build(tmp_path / "vectors.db", case)
    expect = (case["finding"]["kind"], case["finding"]["seq"])
    result = library(path)
    assert (result.ok, result.finding.kind, result.finding.seq) == (False, *expect)
    assert [{"seq": s, "erasure_seq": e} for s, e in result.erased] == case["erased"]
    report = standalone_verify.verify(str(path))
    assert (report["ok"], report["finding"]["kind"], report["finding"]["seq"]) == (False, *expect)
    assert report["erased"] == case["erased"]
