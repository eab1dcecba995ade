"""Erasure and the fleet tier (docs/fleet.md, "Erasure"; docs/erasure.md).

Against a real PostgreSQL (tests/support/postgres.py). A row erased before it
ships travels as `null` with the digest its erasure row names; a row erased
after it shipped is erased on the server when the erasure row arrives, and
`fleet purge` takes the bytes out of the server's files. The secret is a
GitHub token in the shape of gitleaks' `github-pat` rule (config/gitleaks.toml
in gitleaks/gitleaks: `ghp_` and 36 alphanumerics), random per test, and it is
looked for in every file of the server's data directory and in `pg_dump`.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import string
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.fleet.ship import Shipper
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import DOMAIN_TAG, GENESIS, canonical_json, framed_kind_id, row_hash_framed
from agentwatch.store.erasure import erase_rows

REASON = "a GitHub token in a curl header"
runner = CliRunner()
INGEST = ("SELECT accepted, duplicates, head_seq, refused, refused_seq FROM agentwatch.ingest_rows("
          "%b, %b, %b, %b, %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bytea[], %b::bytea[], %b::bytea[],"
          " %b::bytea[], %b::bigint[])")


def new_secret() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def event(i: int, secret: str | None = None) -> Append:
    command = f"curl -H 'Authorization: token {secret}' https://api.github.com/user" if secret else f"make test {i}"
    doc = {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
           "tool": {"name": "Bash", "call_id": f"c-{i}", "input": {"command": command}}}
    return Append(f"ev-{i}", "event", canonical_json(doc))


def build(path: Path, count: int, secrets_at: dict[int, str]) -> str:
    with Store(path) as store:
        store.append([event(i, secrets_at.get(i)) for i in range(1, count + 1)])
        return store.store_id.hex()


def erase(path: Path, *seqs: int) -> None:
    with Store(path) as store:
        erase_rows(store, seqs, REASON)


def ship(fleet, store: Path, batch_rows: int = 50):
    return Shipper(store, fleet.ship_url, host="laptop-1", batch_rows=batch_rows).run(follow=False)


def local_rows(path: Path) -> list[tuple]:
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute("SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash"
                           " FROM records ORDER BY seq").fetchall()
    finally:
        con.close()


def central(fleet, store_id: str) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash"
                            " FROM agentwatch.records WHERE store_id = %s ORDER BY seq", (store_id,)).fetchall()


def erased_on_server(fleet, store_id: str) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT seq, payload, doc, payload_sha256 IS NOT NULL, erasure_seq FROM agentwatch.records"
                            " WHERE store_id = %s AND payload_sha256 IS NOT NULL ORDER BY seq", (store_id,)).fetchall()


def verify_in_sql(fleet, store_id: str) -> tuple:
    with fleet.reader() as conn:
        return conn.execute("SELECT rows_checked, bad_seq, problem FROM agentwatch.verify_chain(%s)",
                            (store_id,)).fetchone()


def findings(fleet) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT kind, seq FROM agentwatch.findings ORDER BY id").fetchall()


def in_data_files(server, needle: str) -> list[str]:
    """Every file under the server's data directory that holds `needle`, after a checkpoint."""
    with psycopg.connect(server.admin_dsn(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    found = []
    for path in sorted(server.data.rglob("*")):
        if path.is_file():
            try:
                if needle.encode() in path.read_bytes():
                    found.append(str(path.relative_to(server.data)))
            except OSError:
                continue
    return found


def in_dump(fleet) -> bool:
    beside = fleet.server.bindir / "pg_dump"  # the server's own version first
    pg_dump = str(beside) if beside.exists() else shutil.which("pg_dump")
    assert pg_dump, "pg_dump is not installed (it comes with the PostgreSQL client package)"
    dump = subprocess.run([pg_dump, "--schema", "agentwatch",
                           fleet.server.admin_dsn(fleet.dbname)], capture_output=True, check=True)
    assert b"COPY agentwatch.records" in dump.stdout
    return b"ghp_" in dump.stdout


# -- erased before it ships -----------------------------------------------------------------

def test_a_row_erased_before_it_ships_travels_as_null_with_its_digest(fleet, tmp_path):
    secret = new_secret()
    store = tmp_path / "store.db"
    store_id = build(store, 12, {5: secret})
    # The first three rows are central already; row 5 is erased before its turn, and the
    # batches (2 rows) put the erased row and its erasure row in different calls.
    assert ship_n(fleet, store, 3) == 3
    erase(store, 5)
    status = ship(fleet, store, batch_rows=2)
    assert (status.refused, status.central_head_seq, status.rows_shipped) == (None, 13, 10)
    assert central(fleet, store_id) == local_rows(store)
    digest = hashlib.sha256(event(5, secret).payload).digest()
    with fleet.reader() as conn:
        assert conn.execute("SELECT payload, doc, payload_sha256, erasure_seq FROM agentwatch.records"
                            " WHERE store_id = %s AND seq = 5", (store_id,)).fetchone() == (b"null", None, digest, 13)
    assert verify_in_sql(fleet, store_id) == (13, None, None)
    assert findings(fleet) == []
    assert not in_dump(fleet)
    assert in_data_files(fleet.server, secret) == []


def ship_n(fleet, store: Path, rows: int) -> int:
    """Ship only the first `rows` rows: one batch of that size, then stop."""
    shipper = Shipper(store, fleet.ship_url, host="laptop-1", batch_rows=rows)
    from agentwatch.store import db

    reader = db.open_reader(store)
    try:
        shipper.status.store_id = db.store_id(reader).hex()
        shipper._step(reader)
    finally:
        reader.close()
        shipper._disconnect()
    return shipper.status.central_head_seq


# -- erased after it shipped ----------------------------------------------------------------

def test_a_row_erased_after_it_shipped_leaves_the_server_and_its_files(fleet, tmp_path):
    mid, head = new_secret(), new_secret()
    store = tmp_path / "store.db"
    store_id = build(store, 30, {12: mid, 30: head})
    assert ship(fleet, store).central_head_seq == 30
    # The control: the count can see both secrets where the server keeps them.
    assert in_data_files(fleet.server, mid) != [] and in_data_files(fleet.server, head) != []
    assert in_dump(fleet)

    erase(store, 12, 30)  # 30 is the central head: the next shipper's overlap row
    status = ship(fleet, store)
    assert (status.refused, status.central_head_seq, status.rows_shipped, status.duplicates) == (None, 32, 2, 1)
    assert central(fleet, store_id) == local_rows(store)
    assert [(seq, payload, doc, kept, erasure) for seq, payload, doc, kept, erasure in erased_on_server(
        fleet, store_id)] == [(12, b"null", None, True, 31), (30, b"null", None, True, 32)]
    assert verify_in_sql(fleet, store_id) == (32, None, None)
    assert findings(fleet) == []
    assert not in_dump(fleet)

    result = runner.invoke(app, ["fleet", "purge", fleet.admin_url, "--json"])
    assert result.exit_code == 0, result.output
    assert {k: v for k, v in json.loads(result.stdout).items() if k != "target"} == {
        "rewritten": True, "wal_ended": True, "notes": []}
    assert in_data_files(fleet.server, mid) == []
    assert in_data_files(fleet.server, head) == []
    assert verify_in_sql(fleet, store_id) == (32, None, None)
    # Shipping again changes nothing: every row is held, the erased ones as erased.
    again = ship(fleet, store)
    assert (again.refused, again.rows_shipped, again.duplicates) == (None, 0, 1)


def test_without_purge_the_old_row_version_is_still_in_the_files(fleet, tmp_path):
    """Why `fleet purge` exists: the server's UPDATE leaves the old row version in the heap."""
    secret = new_secret()
    store = tmp_path / "store.db"
    build(store, 4, {2: secret})
    ship(fleet, store)
    erase(store, 2)
    ship(fleet, store)
    assert not in_dump(fleet)
    assert in_data_files(fleet.server, secret) != []


# -- what the server refuses ----------------------------------------------------------------

def _chain(store_id: bytes, rows: list[tuple[str, str, bytes, bytes | None]]) -> list[tuple]:
    """(record_id, kind, payload, digest or None) -> ingest rows (seq, record_id, kind, ns, payload, prev, hash)."""
    out, prev = [], GENESIS
    for seq, (record_id, kind, payload, digest) in enumerate(rows, 1):
        ns = 1_700_000_000_000_000_000 + seq
        h = row_hash_framed(DOMAIN_TAG + store_id, seq, ns, framed_kind_id(kind, record_id), prev,
                            digest or hashlib.sha256(payload).digest())
        out.append((seq, record_id, kind, ns, payload, prev, h))
        prev = h
    return out


def _erasure(seq: int, digest: bytes) -> bytes:
    return canonical_json({"schema": 1, "type": "erasure", "erased_seq": seq, "payload_sha256": "sha256:" + digest.hex()})


def _ingest(conn, store_id: str, rows: list[tuple], digests: list, erasures: list):
    columns = [list(c) for c in zip(*rows)]
    return conn.execute(INGEST, (store_id, "laptop-1", rows[-1][0], time.time_ns(), *columns, digests,
                                 erasures)).fetchone()


def test_an_erasure_naming_the_wrong_digest_is_refused_and_the_payload_stays(fleet):
    sid = secrets.token_bytes(16)
    secret_payload = event(1, new_secret()).payload
    rows = _chain(sid, [("ev-1", "event", secret_payload, None),
                        ("erasure-1", "attestation", _erasure(1, b"\x07" * 32), None)])
    with fleet.shipper() as conn:
        assert _ingest(conn, sid.hex(), rows[:1], [None], [None]) == (1, 0, 1, None, None)
        assert _ingest(conn, sid.hex(), rows[1:], [None], [None]) == (0, 0, 1, "bad_erasure", 2)
    assert central(fleet, sid.hex())[0][4] == secret_payload
    assert findings(fleet) == [("bad_erasure", 2)]


def test_a_row_shipped_erased_must_be_named_by_its_erasure_row(fleet):
    sid = secrets.token_bytes(16)
    payload = event(1).payload
    digest = hashlib.sha256(payload).digest()
    # Row 1 shipped erased, claiming row 2 as its erasure; row 2 is a plain attestation.
    rows = _chain(sid, [("ev-1", "event", b"null", digest),
                        ("note-2", "attestation", canonical_json({"type": "note"}), None)])
    with fleet.shipper() as conn:
        assert _ingest(conn, sid.hex(), rows, [digest, None], [2, None]) == (1, 0, 1, "bad_erasure", 2)
        # A digest that is not the row's: the hash does not recompute.
        other = secrets.token_bytes(16)
        forged = _chain(other, [("ev-1", "event", b"null", digest)])
        assert _ingest(conn, other.hex(), forged, [b"\x01" * 32], [2]) == (0, 0, 0, "bad_hash", 1)
        # `null` with no digest at all is an ordinary payload that does not hash.
        assert _ingest(conn, other.hex(), forged, [None], [None]) == (0, 0, 0, "bad_hash", 1)
    assert findings(fleet) == [("bad_erasure", 2), ("bad_hash", 1)]
    assert verify_in_sql(fleet, sid.hex()) == (1, None, None)  # its erasure row is not on the server yet


def test_not_even_the_owner_clears_a_payload_without_an_erasure_row(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 3, {})
    ship(fleet, store)
    with fleet.admin() as conn:
        conn.execute("SET ROLE agentwatch_owner")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("UPDATE agentwatch.records SET payload = 'null', doc = NULL,"
                          " payload_sha256 = sha256(payload), erasure_seq = 3 WHERE store_id = %s AND seq = 1",
                          (store_id,))


# -- retention (docs/retention.md) ----------------------------------------------------------

def _retain(path: Path) -> int:
    from agentwatch.store.retention import Policy, retain

    with Store(path) as store:
        (done,) = retain(store, Policy(payload_days=1), now_ns=time.time_ns() + 3 * 86_400 * 10**9)
        return done.retention_seq


def test_a_row_retained_before_it_ships_travels_as_null_with_its_kept_digest(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 6, {})
    assert _retain(store) == 7
    status = ship(fleet, store, batch_rows=4)  # the retention row in a later call than most of its rows
    assert (status.refused, status.central_head_seq) == (None, 7)
    assert central(fleet, store_id) == local_rows(store)
    with fleet.reader() as conn:
        assert conn.execute("SELECT seq, payload_sha256, erasure_seq FROM agentwatch.records WHERE store_id = %s"
                            " AND payload_sha256 IS NOT NULL ORDER BY seq", (store_id,)).fetchall() == [
            (i, hashlib.sha256(event(i).payload).digest(), 7) for i in range(1, 7)]
    assert verify_in_sql(fleet, store_id) == (7, None, None)
    assert findings(fleet) == []


def test_a_row_retained_after_it_shipped_leaves_the_server_when_its_retention_row_arrives(fleet, tmp_path):
    from agentwatch.store.retention import actor, hold_row

    secret = new_secret()
    store = tmp_path / "store.db"
    store_id = build(store, 6, {2: secret})
    with Store(store) as s:  # seq 7: a hold on row 4's session would keep it; here it holds nothing shipped
        s.append([hold_row({"session_id": "nobody"}, "an unrelated matter", actor())[1]])
    ship(fleet, store)
    assert in_data_files(fleet.server, secret) != []  # the control: the count sees it
    assert _retain(store) == 8
    status = ship(fleet, store)  # the overlap row (7) and the retention row (8)
    assert (status.refused, status.central_head_seq, status.rows_shipped, status.duplicates) == (None, 8, 1, 1)
    assert central(fleet, store_id) == local_rows(store)
    assert [(seq, payload, doc, kept, erasure) for seq, payload, doc, kept, erasure in erased_on_server(
        fleet, store_id)] == [(i, b"null", None, True, 8) for i in range(1, 7)]
    assert verify_in_sql(fleet, store_id) == (8, None, None)
    assert findings(fleet) == []
    assert not in_dump(fleet)
    result = runner.invoke(app, ["fleet", "purge", fleet.admin_url, "--json"])
    assert result.exit_code == 0, result.output
    assert in_data_files(fleet.server, secret) == []


def test_rows_a_hold_kept_stay_on_the_server_when_the_rest_is_retained(fleet, tmp_path):
    from agentwatch.store.retention import Policy, actor, hold_row, retain

    def in_session(i: int) -> Append:
        doc = {"harness": "claude-code", "session_id": "held" if i % 2 else "other",
               "event": {"name": "PreToolUse", "kind": "tool_pre"},
               "tool": {"name": "Bash", "call_id": f"c-{i}", "input": {"command": f"make test {i}"}}}
        return Append(f"ev-{i}", "event", canonical_json(doc))

    store = tmp_path / "store.db"
    with Store(store) as s:
        s.append([in_session(i) for i in range(1, 7)])
        store_id = s.store_id.hex()
    ship(fleet, store)
    with Store(store) as s:
        s.append([hold_row({"session_id": "held"}, "litigation", actor())[1]])  # seq 7
        (done,) = retain(s, Policy(payload_days=1), now_ns=time.time_ns() + 3 * 86_400 * 10**9)
    assert (done.retention_seq, done.rows, done.held) == (8, 3, 3)
    status = ship(fleet, store)
    assert status.refused is None
    assert central(fleet, store_id) == local_rows(store)
    assert [seq for seq, *_ in erased_on_server(fleet, store_id)] == [2, 4, 6]  # the held rows 1, 3, 5 stay
    assert verify_in_sql(fleet, store_id) == (8, None, None)
    assert findings(fleet) == []
    from agentwatch.fleet.reconcile import reconcile

    (source,) = [s for s in reconcile(fleet.read_url).sources if s.store_id == store_id]
    assert (source.chain_ok, source.within_bounds) == (True, True)  # `reconcile --pg` on the retained copy
