"""Retention and legal hold: payloads leave the store on a schedule, the chain keeps proving (docs/retention.md).

A **retention pass** removes the payloads of event and gap rows older than the policy's
cutoff, in transactions of at most `max_rows` rows: each appends one `retention` attestation
at the head (the range it covers, how many rows, the bytes freed, the policy and its digest),
then sets each retained row's payload to `null` and keeps the SHA-256 of its document in
`records.kept_sha256`, which migration 0007's trigger allows only while that retention row is
the head. The row hash covers the kept digest, so verifiers hash a retained row with it and
report it as `retained`; the Merkle tree and every proof stay as they were.

A **legal hold** is a chained `hold` attestation naming a session, a harness or a time range,
with a reason and who placed it; a `hold_release` attestation ends it. Rows a hold in force
covers are skipped by retention, and `erase` refuses them unless told to override the hold,
which the erasure row then records.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple, Sequence

import apsw

from agentwatch import __version__
from agentwatch.errors import UsageError
from agentwatch.store import packing
from agentwatch.store.actors import actor, check_reason
from agentwatch.store.append import Append, Appended, Store
from agentwatch.store.chain import canonical_json, format_hash

RETENTION_TYPE = "retention"
HOLD_TYPE = "hold"
RELEASE_TYPE = "hold_release"
RETAINABLE_KINDS = ("event", "gap")
MAX_ROWS = 200  # rows one retention transaction retains at most: the writer is held that long
NS_PER_DAY = 86_400 * 1_000_000_000


@dataclass(frozen=True, slots=True)
class Policy:
    """What retention removes: payloads of rows recorded more than `payload_days` ago (0: none)."""

    payload_days: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"payload_days": self.payload_days, "kinds": list(RETAINABLE_KINDS)}

    @property
    def digest(self) -> str:
        return format_hash(hashlib.sha256(canonical_json(self.to_json())).digest())

    def cutoff_ns(self, now_ns: int) -> int | None:
        """Rows recorded before this are retained; None when the policy keeps everything."""
        if self.payload_days <= 0:
            return None
        return now_ns - int(self.payload_days * NS_PER_DAY)


# --- holds -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hold:
    """A hold in force (or released): what it covers, why, and who placed it."""

    hold_id: str
    seq: int
    scope: dict[str, Any]
    reason: str
    actor: dict[str, Any]
    released_by_seq: int | None = None
    release: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.released_by_seq is None

    def covers(self, harness: str | None, session_id: str | None, recorded_at_ns: int) -> bool:
        scope = self.scope
        if "session_id" in scope and scope["session_id"] != session_id:
            return False
        if "harness" in scope and scope["harness"] != harness:
            return False
        if "since_ns" in scope and recorded_at_ns < scope["since_ns"]:
            return False
        if "until_ns" in scope and recorded_at_ns > scope["until_ns"]:
            return False
        return True

    def to_json(self) -> dict[str, Any]:
        return {"hold_id": self.hold_id, "seq": self.seq, "scope": self.scope, "reason": self.reason,
                "actor": self.actor, "active": self.active, "released_by_seq": self.released_by_seq,
                **({"release": self.release} if self.release else {})}


def check_scope(scope: dict[str, Any]) -> dict[str, Any]:
    """A hold's scope: a session, a harness, and/or a time range; at least one of them."""
    out = {k: v for k, v in scope.items() if v is not None}
    if not out:
        raise UsageError("a hold needs --session, --harness, or --since/--until")
    for key in ("since_ns", "until_ns"):
        if key in out and (type(out[key]) is not int or out[key] < 0):
            option = "--since" if key == "since_ns" else "--until"
            raise UsageError(f"{option} ({key}) must be a time at or after 1970-01-01 UTC")
    if "since_ns" in out and "until_ns" in out and out["since_ns"] > out["until_ns"]:
        raise UsageError("--since is after --until")
    for key in ("session_id", "harness"):
        if key in out and (not isinstance(out[key], str) or not out[key]):
            raise UsageError(f"{key} must be a non-empty name")
    return out


def hold_row(scope: dict[str, Any], reason: str, who: dict[str, Any]) -> tuple[str, Append]:
    """(the new hold's id, its attestation row)."""
    hold_id = "hold-" + os.urandom(6).hex()
    doc = {"schema": 1, "type": HOLD_TYPE, "hold_id": hold_id, "scope": check_scope(scope),
           "reason": check_reason(reason), "actor": who, "version": __version__}
    return hold_id, Append(f"attest-{hold_id}", "attestation", canonical_json(doc))


def release_row(hold: Hold, reason: str, who: dict[str, Any]) -> Append:
    doc = {"schema": 1, "type": RELEASE_TYPE, "hold_id": hold.hold_id, "hold_seq": hold.seq,
           "reason": check_reason(reason), "actor": who, "version": __version__}
    return Append(f"attest-release-{hold.hold_id}", "attestation", canonical_json(doc))


ARCHIVED_TYPE = "archived"


def archived_row(archive: Any, reason: str, who: dict[str, Any]) -> Append:
    """The row recording that an archive was written: its digest, size and range (evidence/archive.py)."""
    if not isinstance(archive, dict):
        raise UsageError("archive must be an object")
    keep = {k: archive.get(k) for k in ("sha256", "bytes", "rows", "first_seq", "last_seq", "tree_size")}
    if not isinstance(keep["sha256"], str) or type(keep["rows"]) is not int:
        raise UsageError("archive needs its sha256 and rows")
    doc = {"schema": 1, "type": ARCHIVED_TYPE, "archive": keep, "reason": check_reason(reason), "actor": who,
           "version": __version__}
    return Append(f"attest-archived-{os.urandom(8).hex()}", "attestation", canonical_json(doc))


# Reads the partial index records_by_hold_id (migration 0007), which holds hold and release rows only.
_HOLDS_SQL = "SELECT seq, CAST(payload AS BLOB) FROM records WHERE hold_id IS NOT NULL ORDER BY seq"


def holds(conn: apsw.Connection) -> list[Hold]:
    """Every hold recorded in the store, oldest first, each with its release if it has one."""
    found: dict[str, Hold] = {}
    try:
        rows: list[Any] = conn.execute(_HOLDS_SQL).fetchall()
    except apsw.SQLError:
        return []  # a store from before migration 0007 holds no holds
    for seq, payload in rows:
        try:
            doc = json.loads(payload)
        except ValueError:
            continue
        hold_id = doc.get("hold_id")
        if not isinstance(hold_id, str):
            continue
        if doc.get("type") == HOLD_TYPE and hold_id not in found and isinstance(doc.get("scope"), dict):
            found[hold_id] = Hold(hold_id, seq, doc["scope"], str(doc.get("reason", "")), doc.get("actor") or {})
        elif doc.get("type") == RELEASE_TYPE and hold_id in found and found[hold_id].active:
            h = found[hold_id]
            found[hold_id] = Hold(h.hold_id, h.seq, h.scope, h.reason, h.actor, seq,
                                  {"reason": doc.get("reason"), "actor": doc.get("actor")})
    return list(found.values())


def holding(active: Sequence[Hold], harness: str | None, session_id: str | None, recorded_at_ns: int) -> list[str]:
    """The ids of the holds in `active` that cover a row with these fields."""
    return [h.hold_id for h in active if h.active and h.covers(harness, session_id, recorded_at_ns)]


def find_hold(conn: apsw.Connection, hold_id: str) -> Hold:
    for h in holds(conn):
        if h.hold_id == hold_id:
            return h
    raise UsageError(f"no hold {hold_id!r} in this store (see `agentwatch hold list`)")


# --- retention passes ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pass:
    """One retention transaction: the retention row and the rows it retained."""

    retention_seq: int
    first_seq: int
    last_seq: int
    rows: int
    bytes_freed: int
    held: int

    def to_json(self) -> dict[str, Any]:
        return {"retention_seq": self.retention_seq, "first_seq": self.first_seq, "last_seq": self.last_seq,
                "rows": self.rows, "bytes_freed": self.bytes_freed, "held": self.held}


_SCAN_SQL = (
    "SELECT seq, kind, record_id, harness, session_id, recorded_at_ns, CASE typeof(payload) WHEN 'text' THEN CAST(payload AS BLOB)"
    " END, payload_dict, payload_z FROM records WHERE seq > ? ORDER BY seq LIMIT ?"
)


class Step(NamedTuple):
    """One call of retain_once: the pass (None when nothing was retained), the seq the next call
    resumes after, whether the scan reached a row too new to retain (or the head), and the
    retention row with what the store said of it (for the daemon's writer)."""

    done: Pass | None
    resume: int
    finished: bool
    appended: list[tuple[Append, Appended]]


def retain_once(store: Store, policy: Policy, now_ns: int, *, after_seq: int = 0, max_rows: int = MAX_ROWS,
                who: dict[str, Any] | None = None, active: Sequence[Hold] | None = None) -> Step:
    """Retain at most `max_rows` rows past `after_seq` in one transaction.

    Rows are scanned in seq order and the scan stops at the first row recorded at or after the
    cutoff, so a row whose clock stepped back is found by a later pass, never skipped. A row a
    hold in force covers is skipped (and counted), never retained. `active` is the holds in
    force (read from the store when None).
    """
    cutoff = policy.cutoff_ns(now_ns)
    if cutoff is None:
        return Step(None, after_seq, True, [])
    conn = store.conn
    if active is None:
        active = [h for h in holds(conn) if h.active]
    dictionaries = packing.Dictionaries(conn)
    chosen: list[tuple[int, bytes, int]] = []  # (seq, document digest, stored bytes freed)
    held = 0
    resume = after_seq
    finished = False
    window = max(4 * max_rows, 1000)
    while len(chosen) < max_rows and not finished:
        rows: list[Any] = conn.execute(_SCAN_SQL, (resume, window)).fetchall()
        if not rows:
            finished = True  # past the head
            break
        for seq, kind, record_id, harness, session_id, at, payload, dict_id, z in rows:
            if type(at) is not int or at >= cutoff:
                finished = True
                break
            resume = seq
            if kind not in RETAINABLE_KINDS or payload is None or payload == b"null":
                continue
            if kind == "gap" and isinstance(record_id, str) and record_id.startswith("gap-foreign-"):
                continue  # a gap row naming a finding (rows written outside the recorder's writer) is evidence
            if holding(active, harness, session_id, at):
                held += 1
                continue
            document = payload
            if z is not None:
                document = packing.unpacked(payload, dictionaries.get(dict_id), z) or payload
            chosen.append((seq, hashlib.sha256(document).digest(), len(payload) + (len(z) if z is not None else 0)))
            if len(chosen) == max_rows:
                break
        else:
            finished = len(rows) < window  # the whole window was read: the head was in it, or read on
    if not chosen:
        return Step(None, resume, finished, [])
    freed = sum(c[2] for c in chosen)
    doc = {
        "schema": 1, "type": RETENTION_TYPE, "first_seq": chosen[0][0], "last_seq": chosen[-1][0],
        "seqs": runs([seq for seq, _, _ in chosen]),
        "rows": len(chosen), "held": held, "bytes_freed": freed, "cutoff_ns": cutoff, "scanned_to": resume,
        "policy": policy.to_json(), "policy_digest": policy.digest, "actor": who or actor(), "version": __version__,
    }
    row = Append(f"attest-retention-{os.urandom(8).hex()}", "attestation", canonical_json(doc))

    def clear(conn: apsw.Connection, appended) -> None:
        # The trigger lets exactly this through while the retention row is the head. A row in
        # the range that was not chosen (held, or not retainable) is left as it is.
        conn.executemany(
            "UPDATE records SET payload = 'null', payload_dict = NULL, payload_z = NULL, kept_sha256 = ? WHERE seq = ?",
            [(digest, seq) for seq, digest, _ in chosen])

    conn.pragma("secure_delete", True)  # freed cells and pages are overwritten with zeros
    (appended,) = store.append([row], before_commit=clear)
    return Step(Pass(appended.seq, chosen[0][0], chosen[-1][0], len(chosen), freed, held), resume, finished,
                [(row, appended)])


def runs(seqs: list[int]) -> list[list[int]]:
    """Ascending seqs as [first, last] runs: what a retention row lists (the fleet server clears
    exactly those rows; the ones a hold kept inside the range are not among them)."""
    out: list[list[int]] = []
    for seq in seqs:
        if out and out[-1][1] == seq - 1:
            out[-1][1] = seq
        else:
            out.append([seq, seq])
    return out


def frontier(conn: apsw.Connection) -> int:
    """Where a pass may start: below it every row is retained, held, not retainable or erased.

    The `scanned_to` of the newest retention row, unless a hold was released after it (the
    rows it held are below), then 0.
    """
    try:
        newest = conn.execute("SELECT seq, CAST(payload AS BLOB) FROM records WHERE retained_last IS NOT NULL "
                              "ORDER BY seq DESC LIMIT 1").fetchone()
    except apsw.SQLError:
        return 0
    if newest is None:
        return 0
    released = conn.execute("SELECT 1 FROM records WHERE hold_id IS NOT NULL AND seq > ? AND "
                            "json_extract(payload, '$.type') = 'hold_release' LIMIT 1", (newest[0],)).fetchone()
    if released is not None:
        return 0
    try:
        scanned = json.loads(newest[1]).get("scanned_to")
    except (ValueError, AttributeError):
        return 0
    return scanned if type(scanned) is int and 0 <= scanned < newest[0] else 0


def retain(store: Store, policy: Policy, now_ns: int | None = None, *, max_rows: int = MAX_ROWS,
           who: dict[str, Any] | None = None, shrink: bool = True) -> list[Pass]:
    """Retention passes until nothing older than the cutoff is left; then the file shrinks."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    passes: list[Pass] = []
    after = frontier(store.conn)
    active = [h for h in holds(store.conn) if h.active]
    while True:
        step = retain_once(store, policy, now_ns, after_seq=after, max_rows=max_rows, who=who, active=active)
        if step.done is not None:
            passes.append(step.done)
        after = step.resume
        if step.finished:
            break
    if passes and shrink:
        release_space(store)
    return passes


def release_space(store: Store) -> None:
    """Give freed pages back: an incremental vacuum where the store allows it, and the WAL emptied."""
    conn = store.conn
    if conn.pragma("auto_vacuum") == 2:  # incremental
        conn.execute("PRAGMA incremental_vacuum")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def retained_ranges(conn: apsw.Connection) -> RetentionRanges:
    """(first, last, retention seq) of every retention row, by first seq (empty before migration 0007)."""
    try:
        rows: list[Any] = conn.execute(
            "SELECT retained_first, retained_last, seq FROM records WHERE retained_last IS NOT NULL").fetchall()
    except apsw.SQLError:
        return RetentionRanges([])
    out: list[tuple[int, int, int]] = []
    for first, last, seq in rows:
        if type(first) is int and type(last) is int and type(seq) is int and first <= last < seq:
            out.append((first, last, seq))
    return RetentionRanges(out)


class RetentionRanges(list):
    """Retention rows' (first, last, seq), sorted by first seq, with what `covered` needs to find
    the one covering a seq without reading them all: ranges may overlap (a pass after a hold was
    released retains rows inside an earlier pass's range)."""

    def __init__(self, ranges: Iterable[tuple[int, int, int]]):
        super().__init__(sorted(ranges))
        self.firsts = [r[0] for r in self]
        self.reach: list[int] = []  # the highest last seq among ranges[0..i]
        top = -1
        for _, last, _ in self:
            top = max(top, last)
            self.reach.append(top)

    def covering(self, seq: int) -> int | None:
        i = bisect.bisect_right(self.firsts, seq) - 1
        while i >= 0 and self.reach[i] >= seq:
            first, last, by = self[i]
            if first <= seq <= last:
                return by
            i -= 1
        return None


def covered(ranges: Sequence[tuple[int, int, int]], seq: int) -> int | None:
    """The retention row that covers `seq`, or None."""
    if not isinstance(ranges, RetentionRanges):
        ranges = RetentionRanges(ranges)
    return ranges.covering(seq)
