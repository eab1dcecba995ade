"""Chain verification: re-derive every row hash from the stored bytes (docs/chain.md).

The primitives that agentwatch.evidence.audit (`agentwatch verify`) and the daemon's sweeper
build on:

``verify_range(conn, store_id, after_seq, after_hash, limit)``
    The incremental primitive, for the daemon's sweeper on its own read-only
    connection (db.open_reader). In one short read transaction it checks that
    the row at ``after_seq`` still has ``after_hash`` (``after_seq=0`` and
    ``after_hash=chain.GENESIS`` to start at the beginning), then verifies at
    most ``limit`` rows after it. It returns a RangeResult; a sweeper keeps
    ``(last_seq, last_hash)`` and calls again, and has caught up when
    ``rows < limit``. Memory is flat and no transaction outlives one call, so
    the WAL can always be checkpointed between calls.

The walk reads bounded chunks (``WHERE seq > ? ORDER BY seq LIMIT ?``) and
hashes the stored bytes, never a re-serialised object. Only when a row fails
does the verifier look around (the next row, a lookup by hash, nearby
positions) to name the first break: agentwatch.verify.findings.

An erased row (docs/erasure.md) fails the hot loop, which hashes its stored
`null`; the walk then checks it against the digest its erasure row names, and
an intact one is counted, listed in ``erased`` and walked past. Each erasure
row the walk passes also has its target checked, so an incremental verify
reports an erasure of a row it verified before.

A retained row (docs/retention.md) is hashed in the hot loop with the digest it kept; the
walk then checks that a retention row after it covers its seq, and names it otherwise.
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass

import apsw

from agentwatch.errors import SchemaError
from agentwatch.store.chain import CHAIN_VERSION, DOMAIN_TAG, GENESIS, KINDS
from agentwatch.store.packing import Dictionaries, unpacked
from agentwatch.verify.findings import (
    Finding,
    check_erasure,
    check_position,
    check_retained,
    classify_break,
    erased_next,
    erasures_between,
)

CHUNK_ROWS = 20_000

# The hot path lets the driver decode record_id and kind (a non-text value, or text
# that is not UTF-8, stops the walk and the slow path re-reads the row as bytes).
_CHUNK_SQL = (
    "SELECT seq, record_id, kind, recorded_at_ns,"
    " CASE typeof(payload) WHEN 'text' THEN CAST(payload AS BLOB) END, prev_hash, hash, {packed}, {kept}"
    " FROM records WHERE seq > ? ORDER BY seq LIMIT ?"
)
_BELOW_ONE_SQL = "SELECT seq FROM records WHERE seq < 1 ORDER BY seq LIMIT 1"

_sha256 = hashlib.sha256
# Per kind: (kind length, kind bytes, packer of seq, recorded_at_ns, kind length, kind, record_id length).
_FRAMES = {k: (len(k), k.encode(), struct.Struct(f">QQI{len(k)}sI").pack) for k in KINDS}


@dataclass(frozen=True, slots=True)
class RangeResult:
    """What verify_range established.

    ``rows`` rows after ``after_seq`` verified intact, ending at
    (``last_seq``, ``last_hash``); on a finding, the position stops before it.
    ``erased`` lists (seq, erasure seq) of the intact erased rows it met: rows
    it walked, and rows named by erasure rows it walked.
    """

    last_seq: int
    last_hash: bytes
    rows: int
    finding: Finding | None
    erased: tuple[tuple[int, int], ...] = ()

    @property
    def ok(self) -> bool:
        return self.finding is None


# --- the store's identity -------------------------------------------------------------


def read_store_id(conn: apsw.Connection) -> bytes:
    """The 16-byte store_id from _agentwatch_meta, after checking chain version and encoding."""
    try:
        meta = dict(conn.execute("SELECT key, value FROM _agentwatch_meta WHERE key IN ('store_id', 'chain_version')"))
        encoding = conn.pragma("encoding")
    except apsw.SQLError as exc:
        raise SchemaError(f"{conn.filename}: cannot read store metadata ({exc})") from None
    version = meta.get("chain_version")
    if version != str(CHAIN_VERSION):
        raise SchemaError(f"{conn.filename}: chain version {version!r} is not one this verifier knows (1)")
    if encoding != "UTF-8":
        raise SchemaError(f"{conn.filename}: database text encoding is {encoding}, chain v1 needs UTF-8")
    store_id = meta.get("store_id")
    if not isinstance(store_id, str) or not re.fullmatch(r"[0-9a-f]{32}", store_id):
        raise SchemaError(f"{conn.filename}: store_id {store_id!r} is not 32 lowercase hex digits")
    return bytes.fromhex(store_id)


# --- the walk -----------------------------------------------------------------------------


def _walk(rows, prefix: bytes, seq: int, last: bytes, dictionaries: Dictionaries,
          retained: list[int]) -> tuple[int, int, bytes, bool]:
    """The hot loop: link and hash each row. Returns (rows ok, last seq, last hash, broke).

    A packed row (store/packing.py) is hashed as its document, when it inflates to one whose
    projection is the stored payload; otherwise as what is stored, which breaks. A retained
    row (payload `null`, a kept digest: docs/retention.md) is hashed with its kept digest and
    its seq added to `retained`, for the caller to check that a retention row covers it.
    """
    sha = _sha256
    join = b"".join
    frames = _FRAMES
    expect = seq + 1
    count = 0
    try:
        for seq_, rid, kind, at, payload, prev, stored, dict_id, z, kept in rows:
            if seq_ != expect or prev != last:
                return count, expect - 1, last, True
            if z is not None:
                payload = unpacked(payload, dictionaries.get(dict_id), z) or payload
            if kept is not None and payload == b"null":
                digest = kept
                retained.append(seq_)
            else:
                digest = sha(payload).digest()
            rid = rid.encode()
            klen, kbytes, pack = frames[kind]
            framed = join((prefix, pack(seq_, at, klen, kbytes, len(rid)), rid, prev, digest))
            if sha(framed).digest() != stored:
                return count, expect - 1, last, True
            last = stored
            expect += 1
            count += 1
    except (AttributeError, KeyError, TypeError, struct.error, UnicodeDecodeError):
        # A value of the wrong type or encoding: the slow path names it.
        return count, expect - 1, last, True
    return count, expect - 1, last, False


def verify_range(conn: apsw.Connection, store_id: bytes, after_seq: int, after_hash: bytes, limit: int) -> RangeResult:
    """Verify at most `limit` rows after (after_seq, after_hash), in one short read transaction."""
    if after_seq < 0 or limit < 0:
        raise ValueError("after_seq and limit must be >= 0")
    if after_seq == 0 and after_hash != GENESIS:
        raise ValueError("the position before seq 1 is the all-zero genesis hash")
    prefix = DOMAIN_TAG + store_id
    conn.execute("BEGIN")
    try:
        # A row below seq 1 would be visible to SQL but outside the chain.
        below = conn.execute(_BELOW_ONE_SQL).fetchone()
        if below is not None:
            outside = Finding(below[0], "malformed", f"seq {below[0]} is below 1, outside the chain")
            return RangeResult(after_seq, after_hash, 0, outside)
        if after_seq:
            finding = check_position(conn, prefix, after_seq, after_hash)
            if finding is not None:
                return RangeResult(after_seq, after_hash, 0, finding)
        count, last_seq, last_hash, finding = 0, after_seq, after_hash, None
        erased: dict[int, int] = {}
        retained: list[int] = []
        dictionaries = Dictionaries.of(conn)
        chunk_sql = _CHUNK_SQL.format(packed=dictionaries.columns, kept=dictionaries.kept_column)
        while count < limit:
            cursor = conn.execute(chunk_sql, (last_seq, limit - count))
            try:
                walked, last_seq, last_hash, broke = _walk(cursor, prefix, last_seq, last_hash, dictionaries,
                                                           retained)
            finally:
                cursor.close()
            count += walked
            if not broke:
                break
            skip = erased_next(conn, prefix, last_seq, last_hash)
            if skip is None:
                finding = classify_break(conn, prefix, last_seq, last_hash)
                break
            last_seq, last_hash, erased_by = skip
            erased[last_seq] = erased_by
            count += 1
        if retained:
            uncovered = check_retained(conn, retained)
            if uncovered is not None and (finding is None or uncovered.seq < finding.seq):
                finding = uncovered
        for erasure_seq, target in erasures_between(conn, after_seq, last_seq):
            if target in erased:
                continue
            checked = check_erasure(conn, prefix, target)
            if checked is True:
                erased[target] = erasure_seq
            elif isinstance(checked, Finding) and (finding is None or checked.seq < finding.seq):
                finding = checked
        return RangeResult(last_seq, last_hash, count, finding, tuple(sorted(erased.items())))
    except apsw.CorruptError as exc:
        corrupt = Finding(after_seq + 1, "malformed", f"SQLite reports corruption: {exc}")
        return RangeResult(after_seq, after_hash, 0, corrupt)
    finally:
        conn.execute("COMMIT")  # a read transaction: this only releases the snapshot


Segment = tuple  # (rows ok, last seq, last hash, finding, erased: tuple of (seq, erasure seq))


def walk_segment(conn, store_id: bytes, after_seq: int, after_hash: bytes, end_seq: int, chunk_rows: int,
                 progress=None, total: int = 0, done: int = 0) -> Segment:
    """Verify rows after_seq+1..end_seq in short chunks; returns (rows ok, last seq, last hash, finding, erased)."""
    last_seq, last_hash, rows, finding = after_seq, after_hash, 0, None
    erased: list[tuple[int, int]] = []
    while finding is None:
        # At least one call, even with nothing to walk: it checks the starting row (an anchor
        # beyond a truncated head, or a rewritten anchored row, is found there).
        limit = max(min(chunk_rows, end_seq - last_seq), 0)
        part = verify_range(conn, store_id, last_seq, last_hash, limit)
        rows += part.rows
        last_seq, last_hash, finding = part.last_seq, part.last_hash, part.finding
        erased.extend(part.erased)
        if progress:
            progress(done + rows, total)
        if finding is None and last_seq < end_seq and part.rows < limit:
            finding = Finding(
                last_seq + 1, "truncated", f"the store ended at seq {last_seq} while verifying up to seq {end_seq}"
            )
        if last_seq >= end_seq:
            break
    return rows, last_seq, last_hash, finding, tuple(erased)


def verify_segment(conn, store_id: bytes, after_seq: int, end_seq: int, chunk_rows: int) -> Segment:
    """Verify rows after_seq+1..end_seq from the stored hash of the row at after_seq (a parallel segment)."""
    row = conn.execute("SELECT hash FROM records WHERE seq = ?", (after_seq,)).fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) != 32:
        # The walk of the segment before this one names what is wrong with that row.
        return 0, after_seq, GENESIS, Finding(after_seq, "missing", "segment start row is absent"), ()
    return walk_segment(conn, store_id, after_seq, row[0], end_seq, chunk_rows)
