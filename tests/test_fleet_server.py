"""The fleet server verifies and does not trust: schema, roles, chain v1 in SQL, and the attacks.

Every test runs against a real PostgreSQL started from the machine's server
binaries (tests/support/postgres.py), in a database of its own.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import psycopg
import pytest
from support import chain_tamper
from support.postgres import wait_for

from agentwatch.fleet import schema
from agentwatch.fleet.connect import FleetSchemaError
from agentwatch.fleet.ship import Shipper
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

VECTORS = Path(__file__).parent / "vectors" / "chain_v1.json"
INGEST = ("SELECT accepted, duplicates, head_seq, refused, refused_seq FROM agentwatch.ingest("
          "%b, %b, %b, %b, %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bytea[], %b::bytea[], %b::bytea[])")


def event(i: int, tag: str = "ev") -> Append:
    doc = {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
           "tool": {"name": "Bash", "call_id": f"call-{tag}-{i}", "input": {"command": f"terraform plan {i}"}}}
    return Append(f"{tag}-{i}", "event", canonical_json(doc))


def fill(path: Path, count: int, tag: str = "ev", start: int = 0) -> None:
    with Store(path) as store:
        store.append([event(start + i, tag) for i in range(count)])


def local_rows(path: Path, first: int = 1, last: int | None = None) -> list[tuple]:
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash FROM records"
            " WHERE seq >= ? AND seq <= ? ORDER BY seq", (first, last if last is not None else 1 << 62)).fetchall()
    finally:
        con.close()


def ingest(conn, store_id: str, host: str, rows: list[tuple], local_head: int | None = None):
    columns = [list(c) for c in zip(*rows)] if rows else [[]] * 7
    head = local_head if local_head is not None else (rows[-1][0] if rows else 0)
    return conn.execute(INGEST, (store_id, host, head, time.time_ns(), *columns)).fetchone()


def findings(fleet, store_id: str | None = None) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT kind, seq, role, host FROM agentwatch.findings"
                            " WHERE %s::text IS NULL OR store_id = %s ORDER BY id", (store_id, store_id)).fetchall()


def central(fleet, store_id: str) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash"
                            " FROM agentwatch.records WHERE store_id = %s ORDER BY seq", (store_id,)).fetchall()


def ship_all(fleet, store: Path, host: str = "laptop-1", url: str | None = None):
    return Shipper(store, url or fleet.ship_url, host=host, batch_rows=50).run(follow=False)


# -- the recipe ---------------------------------------------------------------------------

def test_chain_v1_hash_in_sql_reproduces_every_vector(fleet):
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    store_id = bytes.fromhex(vectors["store_id"])
    with fleet.reader() as conn:
        for row in vectors["rows"]:
            digest = conn.execute(
                "SELECT agentwatch.chain_v1_hash(%b, %b, %b, %b, %b, %b, %b)",
                (store_id, row["seq"], row["recorded_at_ns"], row["kind"], row["record_id"],
                 bytes.fromhex(row["prev_hash"].removeprefix("sha256:")), bytes.fromhex(row["payload_hex"]))).fetchone()[0]
            assert "sha256:" + digest.hex() == row["hash"], row["seq"]


def test_the_vectors_ship_as_one_chain_and_verify_in_sql(fleet):
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    rows = [(r["seq"], r["record_id"], r["kind"], r["recorded_at_ns"], bytes.fromhex(r["payload_hex"]),
             bytes.fromhex(r["prev_hash"].removeprefix("sha256:")), bytes.fromhex(r["hash"].removeprefix("sha256:")))
            for r in vectors["rows"]]
    with fleet.shipper() as conn:
        assert ingest(conn, vectors["store_id"], "vectors", rows) == (4, 0, 4, None, None)
    with fleet.reader() as conn:
        assert conn.execute("SELECT rows_checked, head_seq, bad_seq, problem FROM agentwatch.verify_chain(%s)",
                            (vectors["store_id"],)).fetchone() == (4, 4, None, None)
        # Row 4's payload is `{}`; row 2's record_id is not ASCII: both stored as shipped.
        assert conn.execute("SELECT record_id, doc FROM agentwatch.records WHERE seq IN (2, 4) ORDER BY seq"
                            ).fetchall() == [("attest-é-雪", json.loads(vectors["rows"][1]["payload"])), ("r", {})]


# -- schema and roles ---------------------------------------------------------------------

def test_init_is_versioned_and_applies_only_what_is_pending(fleet):
    again = schema.init(fleet.admin_url)
    assert again.applied == [] and again.roles_created == []
    assert again.version == len(schema.fleet_migrations()) == 6
    with fleet.admin() as conn:
        assert conn.execute("SELECT number, name FROM agentwatch._migrations ORDER BY number").fetchall() == [
            (1, "0001_fleet"), (2, "0002_tool_calls_outcomes"), (3, "0003_witness"), (4, "0004_erasure_claims"),
            (5, "0005_tool_calls_gemini_order"), (6, "0006_retention_central")]
        owners = conn.execute("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'agentwatch'").fetchall()
        assert owners == [("agentwatch_owner",)]
        conn.execute("UPDATE agentwatch._migrations SET digest = 'sha256:00' WHERE number = 1")
    with pytest.raises(FleetSchemaError, match="0001_fleet differs from the shipped file"):
        schema.init(fleet.admin_url)


def test_a_shipping_role_may_only_execute_ingest_and_head(fleet):
    with fleet.admin() as conn:
        tables = [t for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'agentwatch'")]
        assert sorted(tables) == ["_log_positions", "_migrations", "checkpoints", "claim_changes", "findings",
                                  "records", "source_claims", "source_reports"]
        for table in tables:
            for privilege in ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE"):
                assert conn.execute("SELECT has_table_privilege(%s, %s, %s)",
                                    (fleet.ship.name, f"agentwatch.{table}", privilege)).fetchone() == (False,)
        executable = conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'agentwatch' AND has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 1",
            (fleet.ship.name,)).fetchall()
        assert executable == [("head",), ("held_checkpoint",), ("ingest",), ("ingest_checkpoint",), ("ingest_rows",)]
        definer = conn.execute("SELECT proname, prosecdef FROM pg_proc WHERE proname IN ('ingest', 'ingest_rows')"
                               " ORDER BY 1").fetchall()
        assert definer == [("ingest", True), ("ingest_rows", True)]


# -- the attacks --------------------------------------------------------------------------

def test_a_rewritten_suffix_shipped_again_is_refused_and_recorded(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 40)
    assert ship_all(fleet, store).central_head_seq == 40
    store_id = chain_tamper.store_id(store).hex()
    before = central(fleet, store_id)
    # The attacker edits seq 25 and recomputes every hash from there: a valid local chain.
    with chain_tamper.tamper(store) as con:
        chain_tamper.set_payload(con, 25, canonical_json({"harness": "claude-code", "note": "nothing happened"}))
        chain_tamper.rehash_from(con, chain_tamper.store_id(store), 25)
    status = ship_all(fleet, store)
    assert status.refused["kind"] == "rewrite" and status.refused["seq"] == 40
    # ... and sent straight to the function, from the first edited row on.
    with fleet.shipper() as conn:
        assert ingest(conn, store_id, "laptop-1", local_rows(store, 25)) == (0, 0, 40, "rewrite", 25)
    assert findings(fleet, store_id) == [("rewrite", 40, fleet.ship.name, "laptop-1"),
                                         ("rewrite", 25, fleet.ship.name, "laptop-1")]
    assert central(fleet, store_id) == before


def test_a_rolled_back_source_shipping_a_different_record_at_a_stored_seq_is_refused(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 30)
    backup = tmp_path / "backup.db"
    shutil.copyfile(store, backup)  # the store at seq 30
    fill(store, 20, start=30)
    assert ship_all(fleet, store).central_head_seq == 50
    store_id = chain_tamper.store_id(store).hex()
    before = central(fleet, store_id)
    # Restored from the backup, the recorder goes on: seq 31.. now hold other records.
    shutil.copyfile(backup, store)
    fill(store, 5, tag="after-restore")
    status = ship_all(fleet, store)
    assert status.refused["kind"] == "rollback" and status.central_head_seq == 50
    with fleet.shipper() as conn:  # the different record at seq 31, shipped as if it were new
        assert ingest(conn, store_id, "laptop-1", local_rows(store, 31, 31), local_head=60) == (0, 0, 50, "rewrite", 31)
    assert findings(fleet, store_id) == [("rollback", 35, fleet.ship.name, "laptop-1"),
                                         ("rewrite", 31, fleet.ship.name, "laptop-1")]
    assert central(fleet, store_id) == before


def test_two_machines_claiming_one_store_id_are_refused(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 10)
    assert ship_all(fleet, store).central_head_seq == 10
    store_id = chain_tamper.store_id(store).hex()
    twin = tmp_path / "twin.db"
    shutil.copyfile(store, twin)  # a copied store: the same store_id on another machine
    fill(twin, 3, tag="twin")
    other = fleet.another_shipper(tmp_path)
    status = ship_all(fleet, twin, host="laptop-2", url=fleet.server.url(other.name, fleet.dbname))
    assert status.refused["kind"] == "fork" and status.rows_shipped == 0
    # The same login from another host is another machine too.
    assert ship_all(fleet, twin, host="laptop-3").refused["kind"] == "fork"
    assert findings(fleet, store_id) == [("fork", None, other.name, "laptop-2"),
                                         ("fork", None, fleet.ship.name, "laptop-3")]
    assert len(central(fleet, store_id)) == 10


@pytest.mark.parametrize("statement", [
    "INSERT INTO agentwatch.records (store_id, seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash)"
    " VALUES ('{sid}', 999, 'forged', 'event', 1, '\\x7b7d', '\\x00', '\\x00')",
    "UPDATE agentwatch.records SET payload = '\\x7b7d' WHERE store_id = '{sid}' AND seq = 3",
    "DELETE FROM agentwatch.records WHERE store_id = '{sid}'",
], ids=["insert", "update", "delete"])
def test_a_shipping_role_writing_the_tables_directly_is_refused_and_recorded(fleet, tmp_path, statement):
    store = tmp_path / "store.db"
    fill(store, 5)
    ship_all(fleet, store)
    store_id = chain_tamper.store_id(store).hex()
    before = central(fleet, store_id)
    with fleet.shipper() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table records"):
            conn.execute(statement.format(sid=store_id))
    verb = statement.split()[0]

    def denied():
        with fleet.reader() as conn:
            conn.execute("SELECT agentwatch.collect_denials()")
            return conn.execute("SELECT kind, store_id, role, detail FROM agentwatch.findings").fetchall()

    # The server log is written by its collector process; poll until the line is there.
    found = wait_for(denied, timeout=30)
    assert len(found) == 1
    kind, sid, role, detail = found[0]
    assert (kind, sid, role) == ("denied", store_id, fleet.ship.name)
    assert detail.startswith(f"permission denied for table records: {verb} ")
    assert central(fleet, store_id) == before


def test_even_the_owner_cannot_change_the_central_copy(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 3)
    ship_all(fleet, store)
    with fleet.admin() as conn:
        conn.execute("SET ROLE agentwatch_owner")
        for sql in ("UPDATE agentwatch.records SET kind = 'gap'", "DELETE FROM agentwatch.records",
                    "TRUNCATE agentwatch.records", "TRUNCATE agentwatch.findings", "DELETE FROM agentwatch.source_claims"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="the central copy is append-only"):
                conn.execute(sql)


def test_a_row_that_does_not_link_or_recompute_is_refused_and_the_rows_before_it_stored(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 10)
    store_id = chain_tamper.store_id(store).hex()
    rows = local_rows(store)
    forged = list(rows[6])
    forged[3] += 1  # recorded_at_ns changed, hash kept
    with fleet.shipper() as conn:
        assert ingest(conn, store_id, "laptop-1", rows[:6] + [tuple(forged)] + rows[7:]) == (6, 0, 6, "bad_hash", 7)
        assert ingest(conn, store_id, "laptop-1", rows[7:]) == (0, 0, 6, "bad_link", 8)  # seq 7 skipped
        assert ingest(conn, store_id, "laptop-1", rows[4:]) == (4, 2, 10, None, None)  # overlap, then on
        assert ingest(conn, store_id, "laptop-1", rows) == (0, 10, 10, None, None)  # all again: idempotent
    assert findings(fleet, store_id) == [("bad_hash", 7, fleet.ship.name, "laptop-1"),
                                         ("bad_link", 8, fleet.ship.name, "laptop-1")]
    assert central(fleet, store_id) == rows


def test_a_refusal_retried_is_one_finding(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 4)
    store_id = chain_tamper.store_id(store).hex()
    rows = local_rows(store)
    with fleet.shipper() as conn:
        for _ in range(3):
            assert ingest(conn, store_id, "laptop-1", rows[1:]) == (0, 0, 0, "bad_link", 2)
    assert findings(fleet, store_id) == [("bad_link", 2, fleet.ship.name, "laptop-1")]


# -- checkpoints: the server as the source's witness ----------------------------------------

RFC6962 = Path(__file__).parent / "vectors" / "rfc6962_roots.json"
CHECKPOINT = ("SELECT accepted, refused FROM agentwatch.ingest_checkpoint(%s, %s, %s, %s, %s, %s)")


def test_merkle_root_in_sql_reproduces_the_rfc6962_roots(fleet):
    vectors = json.loads(RFC6962.read_text(encoding="utf-8"))
    leaves = [bytes.fromhex(x) for x in vectors["leaves_hex"]]
    with fleet.reader() as conn:
        for size, root in vectors["roots_hex"].items():
            got = conn.execute("SELECT agentwatch.merkle_root(%b::bytea[])", (leaves[: int(size)],)).fetchone()[0]
            assert got.hex() == root, size


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 section 2.1, written from the RFC's definition for this test."""
    import hashlib

    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _mth(leaves[:split]) + _mth(leaves[split:])).digest()


def test_a_checkpoint_is_held_only_when_the_servers_rows_reproduce_its_root(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 12)
    ship_all(fleet, store)
    store_id = chain_tamper.store_id(store).hex()
    hashes = [row[6] for row in local_rows(store)]
    origin = f"agentwatch.invalid/{store_id}"

    def send(size, root, origin=origin, conn=None):
        return conn.execute(CHECKPOINT, (store_id, "laptop-1", origin, size, root, f"{origin}\n{size}\n")).fetchone()

    with fleet.shipper() as conn:
        assert send(7, _mth(hashes[:7]), conn=conn) == (True, None)
        assert send(7, _mth(hashes[:7]), conn=conn) == (True, None)  # again: already held
        assert send(12, _mth(hashes), conn=conn) == (True, None)
        assert send(12, _mth(hashes[:11]), conn=conn) == (False, "checkpoint_inconsistent")  # a second root
        assert send(9, _mth(hashes[1:10]), conn=conn) == (False, "checkpoint_inconsistent")  # not these rows
        assert send(13, _mth(hashes), conn=conn) == (False, "not_yet")  # rows first
        assert send(5, _mth(hashes[:5]), origin="agentwatch.invalid/other", conn=conn) == (False, "malformed")
    assert findings(fleet, store_id) == [("checkpoint_inconsistent", 12, fleet.ship.name, "laptop-1"),
                                         ("checkpoint_inconsistent", 9, fleet.ship.name, "laptop-1"),
                                         ("malformed", 5, fleet.ship.name, "laptop-1")]
    with fleet.reader() as conn:
        assert conn.execute("SELECT tree_size FROM agentwatch.checkpoints ORDER BY 1").fetchall() == [(7,), (12,)]
        assert conn.execute("SELECT checkpoint_size FROM agentwatch.sources").fetchone() == (12,)


def test_missing_server_binaries_fail_under_ci_and_skip_elsewhere(monkeypatch):
    from support import postgres

    monkeypatch.setattr(postgres, "find_binaries", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no PostgreSQL server binaries .*; CI runs the fleet tests"):
        postgres.require_binaries()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="the fleet tests need a real PostgreSQL"):
        postgres.require_binaries()
