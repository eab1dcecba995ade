"""Build small stores and tamper with them the way an attacker with file access would.

Tampering goes through the standard library's sqlite3 (no DEFENSIVE mode): it
drops the append-only triggers and the JSON-derived indexes, neutralises the
JSON-derived generated columns through writable_schema while it writes (so a
payload edit need not stay valid JSON), ignores CHECK constraints, and forges
hashes with the public recipe. Both verifiers are then run on the result.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import agentwatch
from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json, row_hash

STANDALONE = Path(agentwatch.__file__).parent / "standalone_verify.py"
KIND_CYCLE = ("event", "attestation", "gap")
ROWS = 12


def payload(i: int) -> bytes:
    return canonical_json(
        {
            "harness": "claude-code",
            "session_id": "sess-1",
            "event": {"name": "PreToolUse", "kind": "tool_pre"},
            "tool": {"name": "Bash", "input": {"command": f"echo {i}"}},
            "note": "naïve café ✓ 雪 😀",
            "n": i,
        }
    )


def appends(first: int, count: int, tag: str = "rec") -> list[Append]:
    return [Append(f"{tag}-{i:05d}", KIND_CYCLE[i % 3], payload(i)) for i in range(first, first + count)]


def build_store(path: Path, rows: int = ROWS) -> Path:
    with Store(path) as store:
        store.append(appends(1, rows))
    return path


def append_rows(path: Path, count: int, tag: str = "more") -> None:
    with Store(path) as store:
        head, _ = store.head()
        store.append(appends(head + 1, count, tag))


def copy_store(template: Path, dest: Path) -> Path:
    shutil.copyfile(template, dest)
    return dest


def store_id(path: Path) -> bytes:
    con = sqlite3.connect(path)
    try:
        return bytes.fromhex(con.execute("SELECT value FROM _agentwatch_meta WHERE key = 'store_id'").fetchone()[0])
    finally:
        con.close()


def _swap_records_sql(path: Path, change) -> str:
    """Rewrite the records table's schema text in place (writable_schema); returns the old text."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA writable_schema = ON")
        old = con.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'records'").fetchone()[0]
        con.execute("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'records'", (change(old),))
        return old
    finally:
        con.close()


_GUARDS = ("records_append_only_update", "records_append_only_delete", "records_contiguous_seq",
           "records_by_session", "records_by_tool", "records_by_event", "records_by_erased_seq")


@contextmanager
def tamper(path: Path):
    """A writable stdlib connection with the guards off, committed on exit.

    The triggers and indexes it drops are put back afterwards, with their exact text,
    as a careful attacker would (a changed schema is a finding of its own,
    store/schema_check.py); an index whose JSON the edit broke cannot be rebuilt and
    stays missing.
    """
    # SQLite computes the JSON-derived generated columns on every write, so an edit
    # that breaks the JSON would be refused: neutralise them for the duration.
    original = _swap_records_sql(path, lambda sql: re.sub(r"json_extract\(payload, '[^']*'\)", "NULL", sql))
    try:
        con = sqlite3.connect(path, isolation_level=None)
        try:
            marks = ",".join("?" * len(_GUARDS))
            guards = con.execute(f"SELECT type, name, sql FROM sqlite_schema WHERE name IN ({marks})", _GUARDS).fetchall()
            for kind, name, _ in guards:
                con.execute(f"DROP {kind.upper()} IF EXISTS {name}")
            con.execute("PRAGMA ignore_check_constraints = ON")
            con.execute("BEGIN")
            yield con
            con.execute("COMMIT")
        finally:
            con.close()
    finally:
        _swap_records_sql(path, lambda sql: original)
    con = sqlite3.connect(path, isolation_level=None)
    try:
        for _, _, sql in guards:
            try:
                con.execute(sql)
            except sqlite3.Error:
                pass  # e.g. an index over a payload that is no longer JSON
    finally:
        con.close()


def raw(con: sqlite3.Connection, seq: int) -> tuple:
    """(record_id, kind, recorded_at_ns, payload bytes, prev_hash, hash) of one row."""
    return con.execute(
        "SELECT record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash FROM records WHERE seq = ?",
        (seq,),
    ).fetchone()


def head(con: sqlite3.Connection) -> int:
    return con.execute("SELECT max(seq) FROM records").fetchone()[0] or 0


def set_payload(con, seq: int, data: bytes) -> None:
    con.execute("UPDATE records SET payload = CAST(? AS TEXT) WHERE seq = ?", (data, seq))


def flip_payload_byte(con, seq: int, index: int | None = None, new: int | None = None) -> None:
    """Change one byte of a row's payload: by default the first letter of a string at or after
    byte 10, so the payload stays JSON and the indexes over it can be rebuilt."""
    data = bytearray(raw(con, seq)[3])
    if index is None:
        index = next(i for i in range(10, len(data)) if data[i - 1] == ord('"') and chr(data[i]).isalpha())
    data[index] = new if new is not None else data[index] ^ 0x01
    set_payload(con, seq, bytes(data))


def set_hash(con, seq: int, digest: bytes) -> None:
    con.execute("UPDATE records SET hash = ? WHERE seq = ?", (digest, seq))


def move_seqs(con, first: int, delta: int) -> None:
    """Renumber every row with seq >= first by delta (two steps: seq is the primary key)."""
    con.execute("UPDATE records SET seq = -(seq + ?) WHERE seq >= ?", (delta, first))
    con.execute("UPDATE records SET seq = -seq WHERE seq < 0")


def delete_row(con, seq: int, renumber: bool = False) -> None:
    con.execute("DELETE FROM records WHERE seq = ?", (seq,))
    if renumber:
        move_seqs(con, seq + 1, -1)


def truncate(con, keep: int) -> None:
    con.execute("DELETE FROM records WHERE seq > ?", (keep,))


def swap_rows(con, a: int, b: int) -> None:
    """Exchange two whole rows' positions (each keeps its own prev_hash and hash)."""
    con.execute("UPDATE records SET seq = -1 WHERE seq = ?", (a,))
    con.execute("UPDATE records SET seq = ? WHERE seq = ?", (a, b))
    con.execute("UPDATE records SET seq = ? WHERE seq = -1", (b,))


def swap_contents(con, a: int, b: int) -> None:
    """Exchange two rows' contents; the seq, prev_hash and hash columns stay in place."""
    ra, rb = raw(con, a), raw(con, b)
    con.execute("UPDATE records SET record_id = record_id || '#' WHERE seq IN (?, ?)", (a, b))  # UNIQUE
    for seq, (rid, kind, at, data, _, _) in ((a, rb), (b, ra)):
        con.execute(
            "UPDATE records SET record_id = ?, kind = ?, recorded_at_ns = ?, payload = CAST(? AS TEXT) WHERE seq = ?",
            (rid, kind, at, data, seq),
        )


def forge(con, sid: bytes, seq: int, prev: bytes, rid: str = "forged-1", kind: str = "event") -> None:
    """Insert a row with a correctly computed hash at `seq`, after `prev`."""
    data = canonical_json({"harness": "claude-code", "forged": True})
    at = 1_700_000_000_000_000_000
    digest = row_hash(sid, seq, at, kind, rid, prev, data)
    con.execute(
        "INSERT INTO records (seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, CAST(? AS TEXT), ?, ?)",
        (seq, rid, kind, at, data, prev, digest),
    )


def insert_forged(con, sid: bytes, at_seq: int, rid: str = "forged-1") -> None:
    """Make room at at_seq (later rows renumbered up) and insert a forged row linked to at_seq - 1."""
    move_seqs(con, at_seq, +1)
    forge(con, sid, at_seq, raw(con, at_seq - 1)[5] if at_seq > 1 else bytes(32), rid)


def rehash_from(con, sid: bytes, first: int) -> None:
    """Recompute prev_hash and hash of rows first..head, as a whole-chain rewrite does."""
    prev = raw(con, first - 1)[5] if first > 1 else bytes(32)
    for seq in range(first, head(con) + 1):
        rid, kind, at, data, _, _ = raw(con, seq)
        digest = row_hash(sid, seq, at, kind, rid, prev, data)
        con.execute("UPDATE records SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, digest, seq))
        prev = digest


def standalone(path: Path, *args: str) -> tuple[int, dict | None, str]:
    """Run the standalone verifier as an auditor would: its own interpreter, -I -S, --json."""
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(STANDALONE), str(path), "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, report, proc.stderr


def verdict_of(report) -> tuple:
    """(ok, finding kind, finding seq) from a VerifyResult or a standalone report."""
    if isinstance(report, dict):
        f = report["finding"]
        return (report["ok"], f and f["kind"], f and f["seq"])
    f = report.finding
    return (report.ok, f and f.kind, f and f.seq)


def both_verdicts(path: Path, anchor: Path | None = None) -> tuple[tuple, tuple]:
    """The library's full verify and the standalone verifier's verdicts on the same store: the chain
    and the anchor (the standalone verifier does not read checkpoints; tests/test_evidence_tamper.py does)."""
    lib = verify_store(path, full=True, update_anchor=False, evidence=False)
    rc, report, err = standalone(path, *(["--anchor", str(anchor)] if anchor else []))
    assert rc == (0 if report and report["ok"] else 1), err
    return verdict_of(lib), verdict_of(report)
