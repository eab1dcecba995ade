"""Naming the first break in a chain (docs/chain.md): the verifier's slow path.

The walk (agentwatch.verify.walk) only knows that the row after the last intact
position does not follow from it. This module looks around once, at that row,
the next one, a lookup by hash and nearby positions, and names what happened:
one of FINDING_KINDS. It also checks a remembered position (an anchor, or where
the previous chunk ended) before a walk resumes from it, and tells an erased
row (docs/erasure.md) from a changed one: `erased_next`, `check_erasure`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import apsw

from agentwatch.store.chain import GENESIS, KINDS, row_hash_framed
from agentwatch.store.erasure import ERASED_PAYLOAD, erasable, erasure_named
from agentwatch.store.packing import Dictionaries, unpacked
from agentwatch.store.retention import covered, retained_ranges

# How far from its position a displaced row is looked for when classifying a break.
MAX_SHIFT = 4096

FINDING_KINDS = {
    "payload_edited": "the row's content changed; its stored hash is still the original",
    "hash_edited": "the row's stored hash changed; its content is still the original",
    "edited": "the row changed, and the chain cannot tell whether content, hash or both",
    "missing": "rows are absent: a seq gap, or rows deleted and later rows renumbered",
    "reordered": "a row sits at the wrong position (rows moved or contents swapped)",
    "inserted": "a row that was never recorded sits in the chain; later rows were renumbered",
    "truncated": "the store ends below the seq an earlier verify reached (the anchor), or the daemon committed",
    "rewritten": "the anchored row has a different, self-consistent hash: the chain was rewritten",
    "bad_genesis": "seq 1 does not start from the all-zero previous hash",
    "malformed": "a value has the wrong type or size",
    "store_id_changed": "every row links to the one before it, but none hashes under this store_id",
    # About the store as a whole (verify/identity.py), beside the chain's first break:
    "replaced": "the path holds another store (or none) than the one remembered there",
    "rolled_back": "the store ends below a head seen earlier at this path",
    "schema_changed": "a table, index, trigger or view differs from what the migrations create",
    "foreign_rows": "rows the recorder's writer did not write: named by a gap row, or past its last head",
    # Found by the running daemon's signer (evidence/checkpoints.py): its record outside the store changed.
    "checkpoint_lost": "the signer's checkpoint record went missing or backwards while the daemon ran",
    "witness_lost": "a witness's accepted size in the signer's record fell while the daemon ran",
}

# Text columns come back as their stored UTF-8 bytes (NULL when the value is not text),
# so the hash covers exactly what is stored and odd types fall to the slow path.
_COLUMNS = (
    "seq,"
    " CASE typeof(record_id) WHEN 'text' THEN CAST(record_id AS BLOB) END,"
    " CASE typeof(kind) WHEN 'text' THEN CAST(kind AS BLOB) END,"
    " recorded_at_ns,"
    " CASE typeof(payload) WHEN 'text' THEN CAST(payload AS BLOB) END,"
    " prev_hash, hash, {packed}, {kept}"
)
_ROW_SQL = f"SELECT {_COLUMNS} FROM records WHERE seq = ?"
_NEXT_SQL = f"SELECT {_COLUMNS} FROM records WHERE seq > ? ORDER BY seq LIMIT 1"
_OWNER_SQL = "SELECT seq FROM records WHERE hash = ? ORDER BY seq LIMIT 1"
HEAD_SQL = "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"

_sha256 = hashlib.sha256
_U64 = 1 << 64
_KIND_BYTES = frozenset(k.encode() for k in KINDS)

# A row as _row returns it: (seq, record_id, kind, recorded_at_ns, payload digest, prev_hash, hash),
# the digest None when the payload is not text.
Row = tuple


class ErasedDigest(bytes):
    """An erased row's payload digest, as the erasure row at `erasure_seq` names it."""

    erasure_seq: int


@dataclass(frozen=True, slots=True)
class Finding:
    """The first break: where, which kind (FINDING_KINDS), and what was seen."""

    seq: int
    kind: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind, "detail": self.detail}


def _hash_at(prefix: bytes, row: Row, seq: int, prev: bytes | None = None) -> bytes:
    """The row's hash as if it sat at `seq` (and, if given, after `prev`)."""
    _, rid, kind, at, digest, own_prev, _ = row
    kind_id = len(kind).to_bytes(4, "big") + kind + len(rid).to_bytes(4, "big") + rid  # both stored bytes
    return row_hash_framed(prefix, seq, at, kind_id, own_prev if prev is None else prev, digest)


def _malformed(row: Row) -> str | None:
    seq, rid, kind, at, payload, prev, stored = row
    if type(seq) is not int or seq < 1:
        return f"seq {seq!r} is not a positive integer"
    if rid is None:
        return "record_id is not text"
    try:
        rid.decode("utf-8")
    except UnicodeDecodeError:
        return "record_id is not valid UTF-8"
    if kind not in _KIND_BYTES:
        return f"kind {kind!r} is not one of {', '.join(KINDS)}"
    if type(at) is not int or not 0 <= at < _U64:
        return f"recorded_at_ns {at!r} is not a non-negative 64-bit integer"
    if payload is None:
        return "payload is not text"
    for name, value in (("prev_hash", prev), ("hash", stored)):
        if not isinstance(value, bytes) or len(value) != 32:
            return f"{name} is not a 32-byte blob"
    return None


def _row(conn: apsw.Connection, sql: str, seq: int) -> Row | None:
    """The row with its payload's digest in place of the payload: for an erased row, the named one.

    A packed row's digest is its document's (store/packing.py), or the stored bytes' when they
    do not unpack to a document whose projection they are.
    """
    dictionaries = Dictionaries.of(conn)
    found = conn.execute(sql.format(packed=dictionaries.columns, kept=dictionaries.kept_column), (seq,)).fetchone()
    if found is None:
        return None
    row, (dict_id, z, kept) = found[:7], found[7:]
    if row[4] is None:
        return row
    payload = row[4]
    if kept is not None and payload == ERASED_PAYLOAD and erasable(row[2], row[1]):
        return (*row[:4], kept, *row[5:])  # a retained row: its kept digest (docs/retention.md)
    if z is not None:
        return (*row[:4], _sha256(unpacked(payload, dictionaries.get(dict_id), z) or payload).digest(), *row[5:])
    if payload == ERASED_PAYLOAD and type(row[0]) is int and erasable(row[2], row[1]):
        named = erasure_named(conn, row[0])
        if named is not None:
            digest = ErasedDigest(named.payload_sha256)
            digest.erasure_seq = named.erasure_seq
            return (*row[:4], digest, *row[5:])
    return (*row[:4], _sha256(payload).digest(), *row[5:])


def _erasure_note(conn: apsw.Connection, row: Row) -> str:
    """What a finding on a row whose payload is null should add."""
    if isinstance(row[4], ErasedDigest):
        return f" (erased; the digest erasure seq {row[4].erasure_seq} names does not reproduce its hash)"
    stored = conn.execute("SELECT payload IS 'null' FROM records WHERE seq = ?", (row[0],)).fetchone()
    if stored is not None and stored[0]:
        return " (its payload is null, and no erasure row names it)"
    return ""


def erased_next(conn: apsw.Connection, prefix: bytes, last_seq: int, last_hash: bytes) -> tuple[int, bytes, int] | None:
    """(seq, hash, erasure seq) when the row after `last_seq` is an intact erased row, else None.

    Intact erased: it follows on (seq and prev_hash), its payload is null, an erasure row
    names it, and the digest that row names reproduces its stored hash.
    """
    row = _row(conn, _NEXT_SQL, last_seq)
    if row is None or not isinstance(row[4], ErasedDigest) or row[0] != last_seq + 1 or row[5] != last_hash:
        return None
    if _malformed(row) is not None or _hash_at(prefix, row, row[0]) != row[6]:
        return None
    return row[0], row[6], row[4].erasure_seq


_ERASURES_SQL = "SELECT seq, erased_seq FROM records WHERE erased_seq IS NOT NULL"


def erasures_between(conn: apsw.Connection, after_seq: int, last_seq: int) -> list[tuple[int, int]]:
    """(erasure seq, erased seq) of the erasure rows with after_seq < seq <= last_seq, in seq order.

    Reads the partial index records_by_erased_seq, which holds erasure rows only.
    """
    if last_seq <= after_seq:
        return []
    try:
        rows = conn.execute(_ERASURES_SQL).fetchall()
    except apsw.SQLError:
        return []  # a records table from before erasure
    return sorted((e, t) for e, t in rows if type(e) is int and type(t) is int and after_seq < e <= last_seq)


def check_erasure(conn: apsw.Connection, prefix: bytes, erased_seq: int) -> Finding | bool:
    """The row an erasure row names: True when it is erased and intact, False when it is not erased.

    A Finding when it is erased but its hash does not verify with the digest it is erased under.
    """
    row = _row(conn, _ROW_SQL, erased_seq)
    if row is None or not isinstance(row[4], ErasedDigest):
        return False  # not erased (yet): the walk checks it as any other row
    if _malformed(row) is None and _hash_at(prefix, row, erased_seq) == row[6]:
        return True
    return Finding(erased_seq, "payload_edited", f"seq {erased_seq} no longer matches its stored hash"
                   + _erasure_note(conn, row))


def check_retained(conn: apsw.Connection, seqs: list[int]) -> Finding | None:
    """The first of `seqs` (rows the walk hashed with their kept digest) that no retention row covers.

    A kept digest is authenticated by the row hash it reproduced; what it may not do is stand
    in for a payload nobody retained: a retention row after the row must name a range holding it.
    """
    ranges = retained_ranges(conn)
    for seq in seqs:
        if covered(ranges, seq) is None:
            return Finding(seq, "payload_edited",
                           f"seq {seq}'s payload is null with a kept digest, and no retention row covers it")
    return None


def _owner(conn: apsw.Connection, digest: bytes) -> int | None:
    row = conn.execute(_OWNER_SQL, (digest,)).fetchone()
    return row[0] if row else None


def _fits(prefix: bytes, row: Row | None, seq: int) -> bool:
    return row is not None and _malformed(row) is None and _hash_at(prefix, row, seq) == row[6]


def _home(conn: apsw.Connection, prefix: bytes, row: Row, owner: int | None) -> int | None:
    """The seq at which the row's own hash verifies, searched near where it sits."""
    seq = row[0]
    candidates = [seq - 1, seq + 1]
    if owner is not None:
        candidates.append(owner + 1)
    for shift in range(2, MAX_SHIFT + 1):
        candidates += (seq - shift, seq + shift)
    for place in candidates:
        if place >= 1 and place != seq and _hash_at(prefix, row, place) == row[6]:
            return place
    return None


def classify_break(conn: apsw.Connection, prefix: bytes, last_seq: int, last_hash: bytes) -> Finding:
    """Name the first break, given the last intact position: the row after it failed."""
    row = _row(conn, _NEXT_SQL, last_seq)
    assert row is not None, "classify_break is called for a row after last_seq that failed"
    s = last_seq + 1
    seq = row[0]
    if type(seq) is int and seq > s:
        gap = f"seq {s}" if seq == s + 1 else f"seqs {s}..{seq - 1}"
        return Finding(s, "missing", f"{gap} absent: the row after seq {last_seq} is seq {seq}")
    problem = _malformed(row)
    if problem:
        return Finding(s, "malformed", problem)
    stored, prev = row[6], row[5]
    recomputed = _hash_at(prefix, row, s)
    linked, fits = prev == last_hash, recomputed == stored
    after = _row(conn, _NEXT_SQL, s)
    after_ok = after is not None and _malformed(after) is None

    if linked:  # changed in place: the link to the previous row is intact
        if after_ok and _fits(prefix, after, s):
            return Finding(s, "inserted", f"seq {s} was never recorded: the next row verifies at seq {s}")
        if after is not None and after_ok and _hash_at(prefix, row, s + 1, after[5]) == after[6]:
            return Finding(s, "reordered", f"seq {s} holds the content recorded at seq {s + 1}")
        if after is not None and after_ok and after[5] == stored and not _fits(prefix, after, s + 1):
            head = conn.execute(HEAD_SQL).fetchone()
            last = _row(conn, _ROW_SQL, head[0]) if head else None
            if head is not None and last is not None and not _fits(prefix, last, head[0]):
                return Finding(s, "store_id_changed", f"seq {s}, seq {s + 1} and the head link to their predecessors, "
                               "but none hashes under this store_id: the store_id changed")
        note = _erasure_note(conn, row)
        if after is not None and after[5] == stored:
            return Finding(
                s, "payload_edited", f"seq {s} no longer matches its stored hash; seq {s + 1} links to it{note}"
            )
        if after is not None and after[5] == recomputed:
            return Finding(s, "hash_edited", f"seq {s}'s stored hash changed; seq {s + 1} links to the recomputed one")
        return Finding(
            s, "edited", f"seq {s} no longer matches its stored hash (no later row tells content from hash){note}"
        )
    if fits:  # self-consistent, but not linked to the previous row
        if s == 1:
            return Finding(1, "bad_genesis", "seq 1 verifies, but its prev_hash is not all zeros")
        if after is not None and after[5] != stored:
            return Finding(s, "edited", f"seq {s} was rehashed; neither seq {s - 1} nor seq {s + 1} links to it")
        return Finding(
            s - 1, "edited", f"seq {s - 1}'s content and hash were replaced; seq {s} still links to the original hash"
        )
    owner = _owner(conn, prev)
    home = _home(conn, prefix, row, owner)
    if home is not None and home < s:
        return Finding(home, "inserted", f"seqs {home}..{s - 1} were never recorded: seq {s} verifies at seq {home}")
    if home is not None:
        if owner is not None:
            return Finding(s, "reordered", f"the row at seq {s} was recorded at seq {home}")
        return Finding(s, "missing", f"{home - s} row(s) deleted before seq {s}: its row was recorded at seq {home}")
    if s == 1 and prev != GENESIS:
        return Finding(1, "bad_genesis", "seq 1's prev_hash is not all zeros")
    if after is not None and after[5] == stored:
        return Finding(s, "payload_edited", f"seq {s}'s content and link changed; seq {s + 1} links to its stored hash")
    return Finding(s, "edited", f"seq {s} neither links to seq {s - 1} nor matches its stored hash")


def check_position(conn: apsw.Connection, prefix: bytes, seq: int, expected: bytes) -> Finding | None:
    """Does the row at `seq` still carry `expected`, and verify? (An anchor, or the last chunk's end.)"""
    row = _row(conn, _ROW_SQL, seq)
    if row is None:
        head = conn.execute(HEAD_SQL).fetchone()
        head_seq = head[0] if head else 0
        if head_seq < seq:
            return Finding(
                head_seq + 1, "truncated", f"the store ends at seq {head_seq}, but seq {seq} was verified earlier"
            )
        return Finding(seq, "missing", f"seq {seq}, verified earlier, is absent")
    problem = _malformed(row)
    if problem:
        return Finding(seq, "malformed", problem)
    recomputed = _hash_at(prefix, row, seq)
    if row[6] == expected:
        if recomputed == expected:
            return None
        return Finding(
            seq, "payload_edited", f"seq {seq} no longer matches the hash verified earlier{_erasure_note(conn, row)}"
        )
    if recomputed == row[6]:
        return Finding(
            seq, "rewritten", f"seq {seq} verifies, but with a different hash than verified earlier: "
            f"the chain was rewritten at or before seq {seq}"
        )
    if recomputed == expected:
        return Finding(seq, "hash_edited", f"seq {seq}'s stored hash changed; its content has the hash verified earlier")
    return Finding(seq, "edited", f"seq {seq} changed since it was verified")
