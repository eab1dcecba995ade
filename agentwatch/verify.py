"""Chain verification: re-derive every row hash from the stored bytes (docs/chain.md).

Two entry points:

``verify_store(path, *, full=False, state_dir=None, progress=None, update_anchor=True)``
    What `agentwatch verify` calls. Opens the store read-only and by default
    verifies incrementally: it re-checks the row named by the store's anchor
    (how far an earlier verify got, kept outside the store: agentwatch.anchors),
    then only the rows after it, so the cost is proportional to the new rows.
    Without an anchor, or with ``full=True``, it walks from genesis and also
    compares the anchored row. A clean verify moves the anchor to the head.
    ``progress(done, total)`` runs between chunks. Returns a VerifyResult;
    ``to_json()`` is what `verify --json` prints and ``exit_code`` is 0 (intact)
    or 1 (a finding). Errors carry their own exit codes: UsageError 2 (e.g. an
    unreadable anchor file), StoreUnreachable and SchemaError 3.

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
positions) to name the first break: agentwatch.findings.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import apsw

from . import db
from .anchors import Anchor, anchor_path, read_anchor, write_anchor
from .chain import CHAIN_VERSION, DOMAIN_TAG, GENESIS, KINDS, format_hash
from .errors import EXIT_OK, EXIT_PROBLEM, SchemaError
from .findings import FINDING_KINDS, HEAD_SQL, Finding, check_position, classify_break

__all__ = ["FINDING_KINDS", "AnchorInfo", "Finding", "RangeResult", "VerifyResult", "read_store_id", "verify_range",
           "verify_segment", "verify_store"]

CHUNK_ROWS = 20_000

# The hot path lets the driver decode record_id and kind (a non-text value, or text
# that is not UTF-8, stops the walk and the slow path re-reads the row as bytes).
_CHUNK_SQL = (
    "SELECT seq, record_id, kind, recorded_at_ns,"
    " CASE typeof(payload) WHEN 'text' THEN CAST(payload AS BLOB) END, prev_hash, hash"
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
    """

    last_seq: int
    last_hash: bytes
    rows: int
    finding: Finding | None

    @property
    def ok(self) -> bool:
        return self.finding is None


@dataclass(frozen=True, slots=True)
class AnchorInfo:
    """The anchor before and after a verify.

    status: ``absent`` (none, none written), ``created``, ``advanced``,
    ``unchanged`` (already at the head), ``kept`` (not moved: the verify found
    a problem or update_anchor was off).
    """

    path: Path
    status: str
    before: Anchor | None
    after: Anchor | None

    def to_json(self) -> dict[str, Any]:
        def pos(a: Anchor | None) -> dict[str, Any] | None:
            if a is None:
                return None
            return {"seq": a.seq, "hash": format_hash(a.hash), "verified_at_ns": a.verified_at_ns}

        return {"path": str(self.path), "status": self.status, "before": pos(self.before), "after": pos(self.after)}


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The verdict of verify_store.

    mode is ``incremental`` when the walk started at the anchor, ``full`` when
    it started at genesis. rows_checked counts rows verified intact by this
    run; verified_through is the last seq of the intact chain (0 when an
    incremental verify could not trust its anchor).
    """

    ok: bool
    mode: str
    store: str
    store_id: str
    rows_checked: int
    first_seq_checked: int | None
    head_seq: int
    head_hash: str | None
    verified_through: int
    finding: Finding | None
    anchor: AnchorInfo
    chain_version: int = CHAIN_VERSION

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_PROBLEM

    def to_json(self) -> dict[str, Any]:
        """The stable `verify --json` document; fields are only ever added."""
        return {
            "ok": self.ok,
            "mode": self.mode,
            "store": self.store,
            "store_id": self.store_id,
            "chain_version": self.chain_version,
            "rows_checked": self.rows_checked,
            "first_seq_checked": self.first_seq_checked,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "verified_through": self.verified_through,
            "finding": None if self.finding is None else self.finding.to_json(),
            "anchor": self.anchor.to_json(),
        }


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


def _walk(rows, prefix: bytes, seq: int, last: bytes) -> tuple[int, int, bytes, bool]:
    """The hot loop: link and hash each row. Returns (rows ok, last seq, last hash, broke)."""
    sha = _sha256
    join = b"".join
    frames = _FRAMES
    expect = seq + 1
    count = 0
    try:
        for seq_, rid, kind, at, payload, prev, stored in rows:
            if seq_ != expect or prev != last:
                return count, expect - 1, last, True
            rid = rid.encode()
            klen, kbytes, pack = frames[kind]
            framed = join((prefix, pack(seq_, at, klen, kbytes, len(rid)), rid, prev, sha(payload).digest()))
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
        cursor = conn.execute(_CHUNK_SQL, (after_seq, limit))
        try:
            count, last_seq, last_hash, broke = _walk(cursor, prefix, after_seq, after_hash)
        finally:
            cursor.close()
        finding = None
        if broke:
            finding = classify_break(conn, prefix, last_seq, last_hash)
        return RangeResult(last_seq, last_hash, count, finding)
    except apsw.CorruptError as exc:
        corrupt = Finding(after_seq + 1, "malformed", f"SQLite reports corruption: {exc}")
        return RangeResult(after_seq, after_hash, 0, corrupt)
    finally:
        conn.execute("COMMIT")  # a read transaction: this only releases the snapshot


def verify_store(
    path: Path | str,
    *,
    full: bool = False,
    state_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    update_anchor: bool = True,
    chunk_rows: int = CHUNK_ROWS,
    jobs: int | None = None,
) -> VerifyResult:
    """Verify a store's chain; see the module docstring. progress(done, total) runs between chunks.

    `jobs` processes verify consecutive segments at once (None: one per CPU, at most
    PARALLEL_MAX, once there are PARALLEL_MIN_ROWS rows to check; 1: this process only).
    """
    path = Path(path)
    conn = db.open_reader(path)
    try:
        store_id = read_store_id(conn)
        apath = anchor_path(store_id, state_dir)
        before = read_anchor(apath, store_id)
        head = conn.execute(HEAD_SQL).fetchone()
        head_seq, head_hash = (head[0], head[1]) if head else (0, None)

        incremental = before is not None and not full
        start_seq, start_hash = (before.seq, before.hash) if incremental else (0, GENESIS)
        total = max(head_seq - start_seq, 0)
        if progress:
            progress(0, total)
        bounds = _segments(start_seq, head_seq, _jobs(jobs, total))
        if len(bounds) == 1:
            rows, last_seq, last_hash, finding = _verify_segment(conn, store_id, start_seq, start_hash, head_seq,
                                                                 chunk_rows, progress, total)
        else:
            rows, last_seq, last_hash, finding = _verify_parallel(conn, path, store_id, start_seq, start_hash,
                                                                  bounds, chunk_rows, progress, total)
        if before is not None and not incremental:
            finding = _earlier(finding, _anchor_finding(conn, store_id, before))
    finally:
        conn.close()

    ok = finding is None
    if ok:
        verified_through = last_seq
    else:
        verified_through = finding.seq - 1 if finding.seq > start_seq else 0
        verified_through = min(verified_through, last_seq)
    after, status = before, ("kept" if before else "absent")
    if ok and update_anchor and last_seq > 0:
        # Another verify may have moved the anchor meanwhile: never move it backwards.
        current = read_anchor(apath, store_id)
        if current is not None and current.seq >= last_seq:
            after, status = current, "unchanged"
        else:
            after = Anchor(store_id.hex(), last_seq, last_hash, time.time_ns(), os.path.abspath(path))
            write_anchor(apath, after)
            status = "advanced" if before else "created"
    return VerifyResult(
        ok=ok,
        mode="incremental" if incremental else "full",
        store=str(path),
        store_id=store_id.hex(),
        rows_checked=rows,
        first_seq_checked=start_seq + 1 if head_seq > start_seq else None,
        head_seq=head_seq,
        head_hash=format_hash(head_hash) if isinstance(head_hash, bytes) and len(head_hash) == 32 else None,
        verified_through=verified_through,
        finding=finding,
        anchor=AnchorInfo(apath, status, before, after),
    )


def _verify_segment(conn, store_id: bytes, after_seq: int, after_hash: bytes, end_seq: int, chunk_rows: int,
                    progress=None, total: int = 0, done: int = 0) -> tuple[int, int, bytes, Finding | None]:
    """Verify rows after_seq+1..end_seq in short chunks; returns (rows ok, last seq, last hash, finding)."""
    last_seq, last_hash, rows, finding = after_seq, after_hash, 0, None
    while finding is None:
        # At least one call, even with nothing to walk: it checks the starting row (an anchor
        # beyond a truncated head, or a rewritten anchored row, is found there).
        limit = max(min(chunk_rows, end_seq - last_seq), 0)
        part = verify_range(conn, store_id, last_seq, last_hash, limit)
        rows += part.rows
        last_seq, last_hash, finding = part.last_seq, part.last_hash, part.finding
        if progress:
            progress(done + rows, total)
        if finding is None and last_seq < end_seq and part.rows < limit:
            finding = Finding(
                last_seq + 1, "truncated", f"the store ended at seq {last_seq} while verifying up to seq {end_seq}"
            )
        if last_seq >= end_seq:
            break
    return rows, last_seq, last_hash, finding


# A full verify of a large store is split into consecutive segments verified at once, one
# process each: a segment starts from the stored hash of the row before it, and the segment
# before it proves that hash, so together they check exactly what one walk checks.
PARALLEL_MIN_ROWS = 200_000
PARALLEL_MAX = 2


def _jobs(jobs: int | None, total: int) -> int:
    if jobs is None:
        return min(os.cpu_count() or 1, PARALLEL_MAX) if total >= PARALLEL_MIN_ROWS else 1
    if jobs < 1:
        raise UsageError("jobs must be at least 1")
    return jobs


def _segments(start_seq: int, head_seq: int, jobs: int) -> list[tuple[int, int]]:
    """(after_seq, end_seq) per segment, consecutive, covering start_seq+1..head_seq."""
    total = head_seq - start_seq
    if jobs <= 1 or total < 2 * jobs:
        return [(start_seq, head_seq)]
    cuts = [start_seq + total * i // jobs for i in range(jobs + 1)]
    return list(zip(cuts, cuts[1:]))


def verify_segment(conn, store_id: bytes, after_seq: int, end_seq: int,
                   chunk_rows: int) -> tuple[int, int, bytes, Finding | None]:
    """Verify rows after_seq+1..end_seq from the stored hash of the row at after_seq (a parallel segment)."""
    row = conn.execute("SELECT hash FROM records WHERE seq = ?", (after_seq,)).fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) != 32:
        # The walk of the segment before this one names what is wrong with that row.
        return 0, after_seq, GENESIS, Finding(after_seq, "missing", "segment start row is absent")
    return _verify_segment(conn, store_id, after_seq, row[0], end_seq, chunk_rows)


def _verify_parallel(conn, path: Path, store_id: bytes, start_seq: int, start_hash: bytes,
                     bounds: list[tuple[int, int]], chunk_rows: int, progress, total: int):
    from .verify_worker import Worker, WorkerError

    workers = []
    try:
        for after_seq, end_seq in bounds[1:]:
            worker = Worker(path)
            workers.append(worker)
            try:
                worker.send("segment", store_id, after_seq, end_seq, chunk_rows)
            except (OSError, WorkerError):
                pass  # walked here below
        results = [_verify_segment(conn, store_id, start_seq, start_hash, bounds[0][1], chunk_rows, progress, total)]
        for (after_seq, end_seq), worker in zip(bounds[1:], workers):
            try:
                got = worker.receive()
            except WorkerError:
                # No process could verify it (none could start, it died, it failed): walk it here.
                got = verify_segment(conn, store_id, after_seq, end_seq, chunk_rows)
            results.append(got)
    finally:
        for worker in workers:
            worker.close()
    rows = 0
    for seg_rows, last_seq, last_hash, finding in results:
        rows += seg_rows
        if finding is not None:
            return rows, last_seq, last_hash, finding  # the first break; later segments do not count
    if progress:
        progress(rows, total)
    return rows, last_seq, last_hash, None


def _anchor_finding(conn: apsw.Connection, store_id: bytes, anchor: Anchor) -> Finding | None:
    conn.execute("BEGIN")
    try:
        return check_position(conn, DOMAIN_TAG + store_id, anchor.seq, anchor.hash)
    finally:
        conn.execute("COMMIT")


def _earlier(chain: Finding | None, anchored: Finding | None) -> Finding | None:
    """The first break wins; at the same seq the anchor's verdict is the sharper one."""
    if chain is None or anchored is None:
        return chain or anchored
    return chain if chain.seq < anchored.seq else anchored
