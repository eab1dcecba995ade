"""Erasure: the one change a stored row may undergo (docs/erasure.md).

A row's hash covers SHA-256 of its payload, not the payload itself, so the
payload can go while the digest stays. `erase_rows` does it for one row per
transaction, in two writes the schema's trigger allows only together
(migrations/0004_erasure.sql): an `attestation` row of type `erasure` is
appended at the head, naming the row, the digest of the payload it removes,
the reason and who erased it; then the row's payload becomes the JSON text
`null`. Freed space is overwritten (secure_delete) and, after the commits,
the WAL is checkpointed into the database file and truncated, so the bytes
leave the disk files, not only the chain.

Verifiers (agentwatch.verify and the standalone verifier) hash an erased row
with the digest its erasure row names (`erasure_named`) and report it as
erased; any other change is still a break.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import apsw

from agentwatch import __version__
from agentwatch.errors import EXIT_OK, EXIT_PROBLEM, AgentwatchError, UsageError
from agentwatch.store import db, packing
from agentwatch.store.actors import actor, check_reason
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import DOMAIN_TAG, canonical_json, format_hash, framed_kind_id, row_hash_framed

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")  # exactly the display form: lowercase, as docs/chain.md says
ERASED_PAYLOAD = b"null"  # an erased row's payload: valid JSON, so the generated columns read NULL
ERASURE_TYPE = "erasure"
WHY = " the payload is erased"  # what an erasure's --reason explains (store/actors.py)
QUOTE_CHARS = 12  # a reason may not repeat this many consecutive characters of the payload it erases

# Erasure rows naming a seq, oldest first (records.erased_seq is indexed where it is set).
_NAMED_SQL = "SELECT seq, kind, CAST(payload AS BLOB) FROM records WHERE erased_seq = ? ORDER BY seq"
_ROW_SQL = (
    "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), typeof(payload), prev_hash, hash,"
    " harness, session_id, event_name, tool_name, payload_dict, payload_z FROM records WHERE seq = ?"
)


# The gap rows that name a finding (rows written outside the recorder's writer) take ids with this
# prefix; the id is in the row's hash, so even an erased one shows what it was.
FINDING_GAP_PREFIX = "gap-foreign-"


def erasable(kind: str | bytes | None, record_id: str | bytes | None) -> bool:
    """Whether a row of this kind and record_id may be erased (docs/erasure.md): an `event`, or a
    `gap` row that names no finding. Verifiers honour an erasure of no other row."""
    if isinstance(kind, bytes):
        kind = kind.decode("utf-8", "replace")
    if isinstance(record_id, bytes):
        record_id = record_id.decode("utf-8", "replace")
    if kind == "event":
        return True
    return kind == "gap" and isinstance(record_id, str) and not record_id.startswith(FINDING_GAP_PREFIX)


def erasure_record_id(seq: int) -> str:
    """The erasure row's record_id: one per erased seq (record_id is UNIQUE)."""
    return f"erasure-{seq}"


@dataclass(frozen=True, slots=True)
class Named:
    """What an erasure row says: `erased_seq`'s payload had SHA-256 `payload_sha256`."""

    erasure_seq: int
    erased_seq: int
    payload_sha256: bytes


def parse_erasure(seq: Any, kind: Any, payload: Any) -> Named | None:
    """What the row at `seq` names as erased, or None when it is not a well-formed erasure row."""
    if type(seq) is not int or kind != "attestation" or not isinstance(payload, bytes):
        return None
    try:
        doc = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("type") != ERASURE_TYPE:
        return None
    target, digest = doc.get("erased_seq"), doc.get("payload_sha256")
    if type(target) is not int or not 1 <= target < seq or not isinstance(digest, str):
        return None
    if not _DIGEST.fullmatch(digest):
        return None
    return Named(seq, target, bytes.fromhex(digest[7:]))


def erasure_named(conn: apsw.Connection, seq: int) -> Named | None:
    """The first erasure row that names `seq`, or None (also on a store from before erasure)."""
    try:
        rows = conn.execute(_NAMED_SQL, (seq,)).fetchall()
    except apsw.SQLError:
        return None  # no erased_seq column: a records table from before migration 0004
    for erasure_seq, kind, payload in rows:
        named = parse_erasure(erasure_seq, kind, payload)
        if named is not None and named.erased_seq == seq:
            return named
    return None


def summary(conn: apsw.Connection) -> dict[str, Any]:
    """How many payloads the store's erasure rows erased, and the last erasure: its erased seq, its own
    seq and time, who and why (for `health`; docs/erasure.md)."""
    try:
        count = db.one(conn.execute("SELECT count(*) FROM records WHERE erased_seq IS NOT NULL"))[0]
        last = conn.execute("SELECT seq, recorded_at_ns, CAST(payload AS BLOB) FROM records "
                            "WHERE erased_seq IS NOT NULL ORDER BY seq DESC LIMIT 1").fetchone()
    except apsw.SQLError:
        return {"count": 0, "last": None}  # a store from before erasure
    if last is None:
        return {"count": count, "last": None}
    try:
        doc = json.loads(last[2])
    except (TypeError, ValueError):
        doc = {}
    who: dict = doc["actor"] if isinstance(doc, dict) and isinstance(doc.get("actor"), dict) else {}
    return {"count": count, "last": {
        "erased_seq": doc.get("erased_seq") if isinstance(doc, dict) else None, "erasure_seq": last[0],
        "at_ns": last[1], "by": who.get("by") or who.get("user") or who.get("uid"),
        "reason": doc.get("reason") if isinstance(doc, dict) else None}}


# --- erasing -------------------------------------------------------------------------------


class EraseRefused(AgentwatchError):
    """A row that does not verify, or that is null without an erasure row: erasing it would hide a break."""

    exit_code = EXIT_PROBLEM


@dataclass(frozen=True, slots=True)
class Erasure:
    """One erased row: `status` is `erased` (by this call) or `already_erased`."""

    seq: int
    record_id: str
    kind: str
    payload_sha256: bytes
    erasure_seq: int
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "record_id": self.record_id,
            "kind": self.kind,
            "payload_sha256": format_hash(self.payload_sha256),
            "erasure_seq": self.erasure_seq,
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class EraseResult:
    """What `erase_rows` did; `wal_truncated` is False when a reader kept the WAL from being emptied."""

    store: str
    erased: tuple[Erasure, ...]
    wal_truncated: bool
    wal_bytes: int

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.wal_truncated else EXIT_PROBLEM

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.wal_truncated,
            "store": self.store,
            "erased": [e.to_json() for e in self.erased],
            "wal_truncated": self.wal_truncated,
            "wal_bytes": self.wal_bytes,
        }


def _quotes(reason: str, payload: str) -> str | None:
    """A run of QUOTE_CHARS characters of `reason` that the payload contains (the reason is stored in clear)."""
    for i in range(len(reason) - QUOTE_CHARS + 1):
        window = reason[i : i + QUOTE_CHARS]
        if window in payload:
            return window
    return None


def erase_rows(
    store: Store, seqs: Iterable[int], reason: str, *, by: str | None = None, wal_wait_ms: int = db.BUSY_TIMEOUT_MS,
    override_hold: str | None = None,
) -> EraseResult:
    """Erase the payload of each row in `seqs`, one transaction per row, then empty the WAL.

    Before writing anything it refuses (UsageError) a seq the store does not hold and an
    attestation (the recorder's own statements, erasure rows among them), and
    (EraseRefused) a row that does not verify: erasing it would hide the break. A row
    erased earlier is reported `already_erased`; the WAL is emptied again. Emptying
    the WAL waits up to `wal_wait_ms` for readers of older snapshots. A row a legal hold
    covers (store/retention.py) is refused unless `override_hold` gives the reason to erase it
    anyway, which each of its erasure rows then records with the holds it overrode.
    """
    from agentwatch.store.retention import holding, holds

    reason = check_reason(reason, WHY)
    who = actor(by)
    if override_hold is not None:
        override_hold = check_reason(override_hold, WHY)
    conn = store.conn
    wanted = sorted(set(seqs))
    plans = [_plan(store, seq, reason) for seq in wanted]
    active = [h for h in holds(conn) if h.active]
    for plan in plans:
        if isinstance(plan, _Plan):
            held = holding(active, plan.described.get("harness"), plan.described.get("session_id"), plan.recorded_at_ns)
            if held and override_hold is None:
                raise UsageError(f"seq {plan.seq} is under legal hold ({', '.join(held)}): erasing it needs "
                                 "--override-hold REASON, which the erasure row records")
            if held:
                plan.overrides.extend(held)
    conn.pragma("secure_delete", True)  # freed cells and pages are overwritten with zeros
    done = []
    for plan in plans:
        if isinstance(plan, Erasure):
            done.append(plan)
            continue
        done.append(_erase_one(store, plan, reason, who, override_hold))
    truncated, wal_bytes = _empty_wal(store, wal_wait_ms)
    return EraseResult(str(store.path), tuple(done), truncated, wal_bytes)


@dataclass(frozen=True, slots=True)
class _Plan:
    seq: int
    record_id: str
    kind: str
    payload_sha256: bytes
    payload_bytes: int
    described: dict
    recorded_at_ns: int = 0
    overrides: list[str] = field(default_factory=list)  # holds this erasure overrides


def _plan(store: Store, seq: int, reason: str) -> _Plan | Erasure:
    row = store.conn.execute(_ROW_SQL, (seq,)).fetchone()
    if row is None:
        raise UsageError(f"seq {seq}: no such row in {store.path}")
    (_, record_id, kind, at, payload, payload_type, prev, stored, harness, session_id, event_name, tool_name,
     dict_id, z) = row
    if kind not in ("event", "gap"):
        raise UsageError(f"seq {seq} is an {kind} row: only event and gap payloads can be erased")
    if not erasable(kind, record_id):
        raise UsageError(f"seq {seq} is a gap row naming a finding (rows written outside the recorder): "
                         "it is evidence and cannot be erased")
    if payload_type != "text":
        raise EraseRefused(f"seq {seq}: payload is not text; run agentwatch verify")
    if payload == ERASED_PAYLOAD:
        named = erasure_named(store.conn, seq)
        if named is None:
            raise EraseRefused(f"seq {seq}: payload is null, but no erasure row names it; run agentwatch verify")
        return Erasure(seq, record_id, kind, named.payload_sha256, named.erasure_seq, "already_erased")
    if z is not None:  # a packed row: the chain covers its document (store/packing.py)
        payload = packing.unpacked(payload, packing.Dictionaries(store.conn).get(dict_id), z) or payload
    digest = hashlib.sha256(payload).digest()
    recomputed = row_hash_framed(DOMAIN_TAG + store.store_id, seq, at, framed_kind_id(kind, record_id), prev, digest)
    if recomputed != stored:
        raise EraseRefused(
            f"seq {seq} does not match its stored hash: erasing it would hide that; run agentwatch verify"
        )
    quoted = _quotes(reason, payload.decode("utf-8"))
    if quoted is not None:
        raise UsageError(f"--reason repeats {QUOTE_CHARS} characters of seq {seq}'s payload ({quoted!r}); "
                         "the reason is stored in clear, so say why without quoting it")
    described = {k: v for k, v in (("harness", harness), ("session_id", session_id), ("event_name", event_name),
                                   ("tool_name", tool_name)) if v is not None}
    return _Plan(seq, record_id, kind, digest, len(payload), described, at)


def _erase_one(store: Store, plan: _Plan, reason: str, who: dict, override_hold: str | None = None) -> Erasure:
    doc = {
        "schema": 1,
        "type": ERASURE_TYPE,
        "erased_seq": plan.seq,
        "erased_record_id": plan.record_id,
        "erased_kind": plan.kind,
        "payload_sha256": format_hash(plan.payload_sha256),
        "payload_bytes": plan.payload_bytes,
        "reason": reason,
        "actor": who,
        "version": __version__,
    }
    if plan.described:
        doc["described"] = plan.described
    if plan.overrides:
        doc["hold_override"] = {"holds": plan.overrides, "reason": override_hold}
    row = Append(erasure_record_id(plan.seq), "attestation", canonical_json(doc))

    def clear(conn: apsw.Connection, appended) -> None:
        if appended[0].duplicate:
            raise EraseRefused(f"seq {plan.seq}: an erasure row for it exists already (seq {appended[0].seq})")
        # The trigger lets exactly this through: the head is the erasure row naming this seq and digest.
        conn.execute("UPDATE records SET payload = 'null', payload_dict = NULL, payload_z = NULL WHERE seq = ?",
                     (plan.seq,))

    (appended,) = store.append([row], before_commit=clear)
    return Erasure(plan.seq, plan.record_id, plan.kind, plan.payload_sha256, appended.seq, "erased")


def _empty_wal(store: Store, wait_ms: int) -> tuple[bool, int]:
    """Copy the WAL into the database file and truncate it: old page images leave the disk.

    A reader holding an old snapshot keeps the WAL from being emptied (SQLite waits the
    busy timeout for it first); then the result says so, and erasing again finishes it.
    """
    store.conn.setbusytimeout(wait_ms)
    try:
        busy, _, _ = db.one(store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        store.conn.setbusytimeout(db.BUSY_TIMEOUT_MS)
    wal = Path(str(store.path) + "-wal")
    try:
        size = wal.stat().st_size
    except FileNotFoundError:
        size = 0
    return busy == 0 and size == 0, size
