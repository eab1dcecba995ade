"""Verify an agentwatch store's hash chain with nothing but the Python standard library.

    python -I -S standalone_verify.py STORE.db [--json] [--anchor ANCHOR.json]
    python -I -S standalone_verify.py --bundle BUNDLE.json --key KEY [--witness-key KEY ...] [--json]

An auditor's second opinion: this file is written from docs/chain.md alone and
shares no code with the agentwatch package, so a bug in one is unlikely to
hide in the other. Copy it anywhere and run it. It opens the store read-only,
walks the whole chain from genesis and names the first break by the rules in
docs/chain.md. An erased row (docs/erasure.md) verifies through the payload
digest its erasure row names and is reported as erased, not as a break. With
--anchor it also checks a (seq, hash) recorded earlier, which is what reveals
truncation and whole-chain rewrites. With --bundle it checks a proof bundle
instead (docs/chain.md, "Proof bundles"): the checkpoint's Ed25519 signature
(RFC 8032, implemented below), the record's row hash and the RFC 6962 inclusion
or consistency proof.

Exit status: 0 intact, 1 a problem was found, 2 usage error, 3 the store
cannot be opened or is not an agentwatch store.
"""

import argparse
import hashlib
import json
import os
import sqlite3
import struct
import sys
import urllib.parse
import zlib

TAG = b"agentwatch/chain/v1\x00"
ZERO_HASH = bytes(32)
KINDS = (b"event", b"attestation", b"gap")
APPLICATION_ID = 0x41475731
BATCH = 5000
SEARCH = 4096
# What an erased row's payload holds (docs/erasure.md): the JSON text null.
ERASED = b"null"

# Each column comes back as bytes/int of the expected type, or None when the stored
# value has another type; `text_factory = bytes` keeps undecodable text readable.
SELECT = (
    "SELECT seq,"
    " CASE WHEN typeof(record_id) = 'text' THEN CAST(record_id AS BLOB) END,"
    " CASE WHEN typeof(kind) = 'text' THEN CAST(kind AS BLOB) END,"
    " CASE WHEN typeof(recorded_at_ns) = 'integer' THEN recorded_at_ns END,"
    " CASE WHEN typeof(payload) = 'text' THEN CAST(payload AS BLOB) END,"
    " CASE WHEN typeof(prev_hash) = 'blob' THEN prev_hash END,"
    " CASE WHEN typeof(hash) = 'blob' THEN hash END,"
    " {packed}"
    " FROM records"
)
# A packed row (docs/chain.md, "Packed payloads"): its dictionary's id and its deflated document.
PACKED_COLUMNS = "payload_dict, payload_z"
NOT_PACKED = "NULL, NULL"  # a store from before packing has no such columns
# A retained row (docs/retention.md): the SHA-256 of the document it held, kept in its place.
KEPT_COLUMN = ", CASE WHEN typeof(kept_sha256) = 'blob' AND length(kept_sha256) = 32 THEN kept_sha256 END"
NOT_KEPT = ", NULL"  # a store from before retention
# The paths of an event document that a packed row's payload holds, as docs/chain.md lists them.
PROJECTED = """
    client.delivery client.pid client.ts_observed_ns cwd decision.value event.kind event.name harness
    interrupt model schema session_id tool.call_id tool.category tool.duration_ms tool.input_sha256
    tool.is_error tool.mcp_server tool.name tool.outcome turn_id
""".split()
MAX_DOCUMENT = 16 << 20


class Unreachable(Exception):
    """The store cannot be opened, or is not an agentwatch chain v1 store."""


def row_hash(store_id, seq, recorded_at_ns, kind, record_id, prev_hash, payload):
    """SHA-256 of the framed row (docs/chain.md, "The row hash"). kind and record_id are UTF-8 bytes."""
    return row_hash_of_digest(store_id, seq, recorded_at_ns, kind, record_id, prev_hash, hashlib.sha256(payload).digest())


def row_hash_of_digest(store_id, seq, recorded_at_ns, kind, record_id, prev_hash, payload_sha256):
    """The same recipe, given SHA-256(payload) rather than the payload (an erased row keeps only that)."""
    preimage = b"".join(
        [
            TAG,
            store_id,
            struct.pack(">Q", seq),
            struct.pack(">Q", recorded_at_ns),
            struct.pack(">I", len(kind)),
            kind,
            struct.pack(">I", len(record_id)),
            record_id,
            prev_hash,
            payload_sha256,
        ]
    )
    return hashlib.sha256(preimage).digest()


def show(digest):
    return "sha256:" + digest.hex()


# --- reading ----------------------------------------------------------------------------


class Store(sqlite3.Connection):
    """A read-only connection to the store, which knows how to read its packed rows."""

    select = SELECT.format(packed=NOT_PACKED + NOT_KEPT)
    dictionaries: "dict | None" = None

    def dictionary(self, dict_id):
        """The preset dictionary stored under `dict_id`, or None."""
        if self.dictionaries is None:
            self.dictionaries = {}
        if dict_id not in self.dictionaries:
            found = self.execute(
                "SELECT data FROM _agentwatch_dictionaries WHERE id = ? AND typeof(data) = 'blob'", (dict_id,)
            ).fetchone()
            self.dictionaries[dict_id] = found[0] if found and 0 < len(found[0]) <= 32768 else None
        return self.dictionaries[dict_id]


def connect(path):
    if not os.path.isfile(path):
        raise Unreachable(f"{path}: no such store file")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, factory=Store)
        conn.text_factory = bytes
        columns = {r[1] for r in conn.execute("PRAGMA table_info(records)")}
        conn.select = SELECT.format(packed=(PACKED_COLUMNS if b"payload_z" in columns else NOT_PACKED)
                                    + (KEPT_COLUMN if b"kept_sha256" in columns else NOT_KEPT))
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        encoding = conn.execute("PRAGMA encoding").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise Unreachable(f"{path}: not an agentwatch store (application_id {app_id:#x})")
        meta = dict(conn.execute("SELECT key, value FROM _agentwatch_meta"))
    except sqlite3.DatabaseError as exc:
        raise Unreachable(f"{path}: cannot read the store ({exc})") from None
    if encoding != b"UTF-8":
        raise Unreachable(f"{path}: text encoding {encoding.decode()}, chain v1 needs UTF-8")
    if meta.get(b"chain_version") != b"1":
        raise Unreachable(f"{path}: chain version {meta.get(b'chain_version')!r} is not 1")
    hex_id = meta.get(b"store_id", b"").decode("ascii", "replace")
    if len(hex_id) != 32 or any(c not in "0123456789abcdef" for c in hex_id):
        raise Unreachable(f"{path}: store_id {hex_id!r} is not 32 lowercase hex digits")
    return conn, bytes.fromhex(hex_id)


class Erased(bytes):
    """An erased row's stored payload (ERASED), carrying the digest and seq of the erasure row that names it."""

    retained = False
    sha256: bytes
    erasure_seq: int

    def __new__(cls, sha256, erasure_seq):
        payload = super().__new__(cls, ERASED)
        payload.sha256, payload.erasure_seq = sha256, erasure_seq
        return payload


class Retained(Erased):
    """A retained row's stored payload (ERASED), carrying the digest it kept and the seq of the
    retention row whose range holds it (docs/retention.md)."""

    retained = True


def retention_of(conn, seq):
    """The seq of a retention row after `seq` whose range holds it, or None.

    A retention row is an `attestation` whose payload is a JSON object with "type":
    "retention", "first_seq" and "last_seq"; the generated column `retained_last` indexes them.
    """
    try:
        found = conn.execute(
            "SELECT seq, CAST(kind AS BLOB), CAST(payload AS BLOB) FROM records"
            " WHERE retained_last >= ? AND seq > ? ORDER BY seq", (seq, seq)).fetchall()
    except sqlite3.OperationalError:
        return None
    for retention_seq, kind, payload in found:
        if kind != b"attestation":
            continue
        try:
            doc = json.loads(payload)
        except (ValueError, TypeError):
            continue
        if not isinstance(doc, dict) or doc.get("type") != "retention":
            continue
        first, last = doc.get("first_seq"), doc.get("last_seq")
        if isinstance(first, int) and isinstance(last, int) and first <= seq <= last:
            return retention_seq
    return None


def erasure_of(conn, seq):
    """(sha256 of the removed payload, erasure row's seq) that an erasure row names for `seq`, or None.

    An erasure row is an `attestation` after `seq` whose payload is a JSON object with
    "type": "erasure", "erased_seq": seq and "payload_sha256": "sha256:<64 hex>"; the
    store's generated column `records.erased_seq` indexes them. The first such row counts.
    """
    try:
        found = conn.execute(
            "SELECT seq, CAST(kind AS BLOB), CAST(payload AS BLOB) FROM records WHERE erased_seq = ? ORDER BY seq",
            (seq,),
        ).fetchall()
    except sqlite3.OperationalError:
        return None  # a store from before erasure existed: nothing in it can be erased
    for erasure_seq, kind, payload in found:
        if kind != b"attestation" or not isinstance(erasure_seq, int) or erasure_seq <= seq:
            continue
        try:
            doc = json.loads(payload)
        except (ValueError, TypeError):
            continue
        if not isinstance(doc, dict) or doc.get("type") != "erasure" or doc.get("erased_seq") != seq:
            continue
        text = doc.get("payload_sha256")
        if isinstance(text, str) and len(text) == 71 and text.startswith("sha256:"):
            hexpart = text[7:]
            if all(c in "0123456789abcdef" for c in hexpart):
                return bytes.fromhex(hexpart), erasure_seq
    return None


def document_of(conn, stored, dict_id, packed):
    """A packed row's document: `packed` inflated with its dictionary, when `stored` is its projection.

    None when it is not: the row is then hashed as stored, which does not verify.
    """
    data = conn.dictionary(dict_id) if isinstance(dict_id, int) else None
    if data is None or not isinstance(packed, bytes) or stored is None:
        return None
    inflater = zlib.decompressobj(-15, zdict=data)
    try:
        document = inflater.decompress(packed, MAX_DOCUMENT)
    except zlib.error:
        return None
    if not inflater.eof or inflater.unused_data or inflater.unconsumed_tail:
        return None
    try:
        doc = json.loads(document)
    except (ValueError, RecursionError):
        return None  # the recorder packs no document nested deeper than 100 levels
    if not isinstance(doc, dict):
        return None
    projection: dict = {}
    for path in PROJECTED:
        *parents, leaf = path.split(".")
        source: "dict | None" = doc
        for name in parents:
            source = source.get(name) if isinstance(source, dict) else None
        if isinstance(source, dict) and leaf in source:
            target = projection
            for name in parents:
                target = target.setdefault(name, {})
            target[leaf] = source[leaf]
    try:
        canonical = json.dumps(projection, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return document if canonical.encode("utf-8") == stored else None
    except (ValueError, RecursionError, UnicodeEncodeError):
        return None


def erasable(kind, record_id):
    """docs/erasure.md: only an event row, or a gap row that names no finding (its record_id does not
    start with gap-foreign-), can be erased; an erasure naming any other row is not honoured."""
    if kind == b"event":
        return True
    return kind == b"gap" and isinstance(record_id, bytes) and not record_id.startswith(b"gap-foreign-")


def with_erasure(conn, row):
    """The row as read (its document in place for a packed row), its payload an Erased when it is
    ERASED and an erasure row names the row."""
    if row is None:
        return None
    row, (dict_id, packed, kept) = row[:7], row[7:]
    if kept is not None and row[4] == ERASED and isinstance(row[0], int) and erasable(row[2], row[1]):
        by = retention_of(conn, row[0])
        if by is not None:
            return row[:4] + (Retained(kept, by),) + row[5:]
    if packed is not None or dict_id is not None:
        document = document_of(conn, row[4], dict_id, packed)
        if document is not None:
            row = row[:4] + (document,) + row[5:]
        return row
    if row[4] != ERASED or not isinstance(row[0], int) or not erasable(row[2], row[1]):
        return row
    named = erasure_of(conn, row[0])
    if named is None:
        return row
    return row[:4] + (Erased(*named),) + row[5:]


def row_at(conn, seq):
    return with_erasure(conn, conn.execute(conn.select + " WHERE seq = ?", (seq,)).fetchone())


def row_after(conn, seq):
    return with_erasure(conn, conn.execute(conn.select + " WHERE seq > ? ORDER BY seq LIMIT 1", (seq,)).fetchone())


def seq_of_hash(conn, digest):
    found = conn.execute("SELECT seq FROM records WHERE hash = ? ORDER BY seq LIMIT 1", (digest,)).fetchone()
    return None if found is None else found[0]


def head_of(conn):
    found = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
    return (0, None) if found is None else found


# --- checking one row ---------------------------------------------------------------------


def problem_with(row):
    """Why the row cannot be hashed (wrong type or size), or None."""
    seq, record_id, kind, at, payload, prev_hash, digest = row
    if not isinstance(seq, int) or seq < 1:
        return f"seq {seq!r} is not a positive integer"
    if record_id is None:
        return "record_id is not text"
    try:
        record_id.decode("utf-8")
    except UnicodeDecodeError:
        return "record_id is not valid UTF-8"
    if kind not in KINDS:
        return f"kind {kind!r} is not event, attestation or gap"
    if at is None or not 0 <= at < 2**64:
        return "recorded_at_ns is not a non-negative 64-bit integer"
    if payload is None:
        return "payload is not text"
    if prev_hash is None or len(prev_hash) != 32:
        return "prev_hash is not a 32-byte blob"
    if digest is None or len(digest) != 32:
        return "hash is not a 32-byte blob"
    return None


def hash_as(store_id, row, seq, prev_hash=None):
    """The row's hash if it sat at `seq` (after `prev_hash`, if given); an erased row hashes with its named digest."""
    _, record_id, kind, at, payload, own_prev, _ = row
    digest = payload.sha256 if isinstance(payload, Erased) else hashlib.sha256(payload).digest()
    return row_hash_of_digest(store_id, seq, at, kind, record_id, own_prev if prev_hash is None else prev_hash, digest)


def erasure_note(row):
    """What a reader of a finding should know about an erased-looking payload."""
    if isinstance(row[4], Retained):
        return f" (retained by seq {row[4].erasure_seq}; the digest it kept does not reproduce it)"
    if isinstance(row[4], Erased):
        return f" (erased; the digest erasure seq {row[4].erasure_seq} names does not reproduce it)"
    if row[4] == ERASED:
        return " (its payload is null, and no erasure or retention row names it)"
    return ""


def fits(store_id, row, seq):
    return row is not None and problem_with(row) is None and hash_as(store_id, row, seq) == row[6]


def finding(seq, kind, detail):
    return {"seq": seq, "kind": kind, "detail": detail}


def name_break(conn, store_id, good_seq, good_hash, row):
    """Rules 1-5 of docs/chain.md, "Naming the first break"."""
    s = good_seq + 1
    if isinstance(row[0], int) and row[0] > s:
        return finding(s, "missing", f"seq {s} is absent; the next row is seq {row[0]}")
    problem = problem_with(row)
    if problem is not None:
        return finding(s, "malformed", problem)
    prev_hash, digest = row[5], row[6]
    at_s = hash_as(store_id, row, s)
    nxt = row_after(conn, s)
    nxt_ok = nxt is not None and problem_with(nxt) is None
    links, self_ok = prev_hash == good_hash, at_s == digest

    if links and not self_ok:
        if nxt_ok and fits(store_id, nxt, s):
            return finding(s, "inserted", f"the row after seq {s} verifies at seq {s}")
        if nxt_ok and hash_as(store_id, row, s + 1, nxt[5]) == nxt[6]:
            return finding(s, "reordered", f"seq {s} carries the content of seq {s + 1}")
        if nxt_ok and nxt[5] == digest and not fits(store_id, nxt, s + 1):
            last = row_at(conn, head_of(conn)[0])
            if last is not None and not fits(store_id, last, last[0]):
                return finding(s, "store_id_changed",
                               f"seq {s}, seq {s + 1} and the head link to their predecessors, but none hashes under "
                               "this store_id: the store_id changed")
        note = erasure_note(row)
        if nxt is not None and nxt[5] == digest:
            return finding(
                s, "payload_edited", f"seq {s} does not match its stored hash, which seq {s + 1} links to{note}"
            )
        if nxt is not None and nxt[5] == at_s:
            return finding(s, "hash_edited", f"seq {s + 1} links to seq {s}'s recomputed hash, not the stored one")
        return finding(s, "edited", f"seq {s} does not match its stored hash{note}")
    if self_ok:
        if s == 1:
            return finding(1, "bad_genesis", "seq 1 does not link to the all-zero hash")
        if nxt is not None and nxt[5] != digest:
            return finding(s, "edited", f"seq {s} was rehashed; it links to neither neighbour")
        return finding(s - 1, "edited", f"seq {s} links to a hash seq {s - 1} no longer has")

    owner = seq_of_hash(conn, prev_hash)
    places = [s - 1, s + 1] + ([owner + 1] if owner is not None else [])
    for step in range(2, SEARCH + 1):
        places += [s - step, s + step]
    home = next((p for p in places if p >= 1 and p != s and hash_as(store_id, row, p) == digest), None)
    if home is not None and home < s:
        return finding(home, "inserted", f"the row at seq {s} verifies at seq {home}")
    if home is not None and owner is not None:
        return finding(s, "reordered", f"the row at seq {s} belongs at seq {home}")
    if home is not None:
        return finding(s, "missing", f"the row at seq {s} belongs at seq {home}; its predecessor is gone")
    if s == 1 and prev_hash != ZERO_HASH:
        return finding(1, "bad_genesis", "seq 1 does not link to the all-zero hash")
    if nxt is not None and nxt[5] == digest:
        return finding(s, "payload_edited", f"seq {s} changed (content and link); seq {s + 1} links to its stored hash")
    return finding(s, "edited", f"seq {s} neither links back nor matches its hash")


def check_anchor(conn, store_id, seq, expected):
    """The anchored row: still present, same hash, still verifies (docs/chain.md)."""
    row = row_at(conn, seq)
    if row is None:
        head = head_of(conn)[0]
        if head < seq:
            return finding(head + 1, "truncated", f"the store ends at seq {head}; the anchor is at seq {seq}")
        return finding(seq, "missing", f"the anchored seq {seq} is absent")
    problem = problem_with(row)
    if problem is not None:
        return finding(seq, "malformed", problem)
    recomputed = hash_as(store_id, row, seq)
    if row[6] == expected:
        if recomputed == expected:
            return None
        return finding(seq, "payload_edited", "the anchored row changed" + erasure_note(row))
    if recomputed == row[6]:
        return finding(seq, "rewritten", f"seq {seq} verifies with a hash other than the anchored one")
    if recomputed == expected:
        return finding(seq, "hash_edited", "the anchored row's stored hash changed")
    return finding(seq, "edited", "the anchored row changed")


# --- the walk ----------------------------------------------------------------------------


class AnchorMismatch(ValueError):
    """The anchor was recorded for another store."""


def verify(path, anchor=None):
    """Walk the whole chain. anchor: optional (store_id hex, seq, hash bytes). Returns the report dict."""
    conn, store_id = connect(path)
    try:
        if anchor is not None and anchor[0] != store_id.hex():
            raise AnchorMismatch(f"the anchor is for store {anchor[0]}, not {store_id.hex()}")
        head_seq, head_hash = head_of(conn)
        below = conn.execute("SELECT seq FROM records WHERE seq < 1 ORDER BY seq LIMIT 1").fetchone()
        broken = finding(below[0], "malformed", f"seq {below[0]} is below 1") if below else None
        good_seq, good_hash, checked, erased, retained = 0, ZERO_HASH, 0, [], 0
        while broken is None and good_seq < head_seq:
            rows = conn.execute(
                conn.select + " WHERE seq > ? ORDER BY seq LIMIT ?", (good_seq, min(BATCH, head_seq - good_seq))
            ).fetchall()
            if not rows:
                broken = finding(good_seq + 1, "truncated", f"rows after seq {good_seq} vanished while verifying")
            for row in rows:
                row = with_erasure(conn, row)
                seq, _, _, _, payload, prev_hash, digest = row
                if (
                    seq != good_seq + 1
                    or prev_hash != good_hash
                    or problem_with(row) is not None
                    or hash_as(store_id, row, seq) != digest
                ):
                    broken = name_break(conn, store_id, good_seq, good_hash, row)
                    break
                good_seq, good_hash, checked = seq, digest, checked + 1
                if isinstance(payload, Retained):
                    retained += 1
                elif isinstance(payload, Erased):
                    erased.append({"seq": seq, "erasure_seq": payload.erasure_seq})
        if anchor is not None:
            at_anchor = check_anchor(conn, store_id, anchor[1], anchor[2])
            if at_anchor is not None and (broken is None or at_anchor["seq"] <= broken["seq"]):
                broken = at_anchor
    finally:
        conn.close()
    return {
        "ok": broken is None,
        "verifier": "standalone",
        "store": path,
        "store_id": store_id.hex(),
        "chain_version": 1,
        "rows_checked": checked,
        "erased": erased,
        "retained": retained,
        "head_seq": head_seq,
        "head_hash": show(head_hash) if isinstance(head_hash, bytes) and len(head_hash) == 32 else None,
        "verified_through": good_seq if broken is None else min(good_seq, max(broken["seq"] - 1, 0)),
        "finding": broken,
        "anchor": None if anchor is None else {"seq": anchor[1], "hash": show(anchor[2])},
    }


def read_anchor(path):
    """(store_id hex, seq, hash) from an anchor file (docs/chain.md, "The anchor")."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    text = doc["hash"]
    if doc.get("format") != "agentwatch-anchor/1" or not text.startswith("sha256:") or len(text) != 71:
        raise ValueError("not an agentwatch-anchor/1 document")
    if not isinstance(doc["seq"], int) or doc["seq"] < 1:
        raise ValueError("seq must be a positive integer")
    return doc["store_id"], doc["seq"], bytes.fromhex(text[7:])


# --- Ed25519 signature check (RFC 8032 section 5.1.7), standard library only ------------------
#
# Verification only, on public data, so constant time does not matter. Points are kept in
# extended coordinates (X, Y, Z, T) with x = X/Z, y = Y/Z, x*y = T/Z on -x^2 + y^2 = 1 + d x^2 y^2.


ED_P = 2**255 - 19
ED_L = 2**252 + 27742317777372353535851937790883648493
ED_D = -121665 * pow(121666, ED_P - 2, ED_P) % ED_P
ED_SQRT_M1 = pow(2, (ED_P - 1) // 4, ED_P)


def ed_add(P, Q):
    x1, y1, z1, t1 = P
    x2, y2, z2, t2 = Q
    a = (y1 - x1) * (y2 - x2) % ED_P
    b = (y1 + x1) * (y2 + x2) % ED_P
    c = 2 * ED_D * t1 * t2 % ED_P
    dd = 2 * z1 * z2 % ED_P
    e, f, g, h = b - a, dd - c, dd + c, b + a
    return (e * f % ED_P, g * h % ED_P, f * g % ED_P, e * h % ED_P)


def ed_mul(k, P):
    R = (0, 1, 1, 0)
    while k:
        if k & 1:
            R = ed_add(R, P)
        P = ed_add(P, P)
        k >>= 1
    return R


def ed_decode(data):
    """The point a 32-byte encoding names, or None if it names none."""
    if len(data) != 32:
        return None
    n = int.from_bytes(data, "little")
    sign, y = n >> 255, n & ((1 << 255) - 1)
    if y >= ED_P:
        return None
    u, v = (y * y - 1) % ED_P, (ED_D * y * y + 1) % ED_P
    x2 = u * pow(v, ED_P - 2, ED_P) % ED_P
    x = pow(x2, (ED_P + 3) // 8, ED_P)
    if (x * x - x2) % ED_P:
        x = x * ED_SQRT_M1 % ED_P
    if (x * x - x2) % ED_P:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = ED_P - x
    return (x, y, 1, x * y % ED_P)


def ed_same(P, Q):
    return (P[0] * Q[2] - Q[0] * P[2]) % ED_P == 0 and (P[1] * Q[2] - Q[1] * P[2]) % ED_P == 0


_ED_BY = 4 * pow(5, ED_P - 2, ED_P) % ED_P
ED_BASE = ed_decode(_ED_BY.to_bytes(32, "little"))


def ed25519_verify(public_key, message, signature):
    """True if `signature` (64 bytes) is `public_key`'s (32 bytes) Ed25519 signature of `message`."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    A = ed_decode(public_key)
    R = ed_decode(signature[:32])
    if A is None or R is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= ED_L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % ED_L
    return ed_same(ed_mul(s, ED_BASE), ed_add(R, ed_mul(k, A)))


# --- proof bundles (docs/chain.md, "Proof bundles") ----------------------------------------------


class BadBundle(Exception):
    """The bundle does not verify; the message says why."""


def b64(text, what):
    import base64
    import binascii

    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, AttributeError):
        raise BadBundle(f"{what} is not base64") from None


def parse_vkey(text):
    """(name, key id, public key) from a note verifier key <name>+<hex id>+<base64(0x01 || key)>."""
    parts = text.strip().split("+", 2)  # base64 may hold '+'; the name and the hex ID do not
    if len(parts) != 3 or not parts[0]:
        raise BadBundle("the key is not <name>+<hex key id>+<base64 key>")
    raw = b64(parts[2], "the key")
    if len(raw) != 33 or raw[0] != 1:
        raise BadBundle("the key is not an Ed25519 note key")
    kid = hashlib.sha256(parts[0].encode() + b"\n" + raw).digest()[:4]
    if parts[1] != kid.hex():
        raise BadBundle("the key's ID does not match its name and public key")
    return parts[0], kid, raw[1:]


def open_signed_checkpoint(note, vkey):
    """(origin, size, root) of a checkpoint note signed by vkey (C2SP signed-note, tlog-checkpoint)."""
    name, kid, public = vkey
    if not isinstance(note, str) or not note.endswith("\n") or "\n\n" not in note:
        raise BadBundle("the checkpoint is not a signed note")
    cut = note.rindex("\n\n")
    text, lines = note[: cut + 1], note[cut + 2 : -1].split("\n")
    if any(ord(c) < 32 and c != "\n" for c in note):
        raise BadBundle("the checkpoint contains control characters")
    good = 0
    for line in lines:
        if not line.startswith("\u2014 "):
            raise BadBundle("a signature line does not start with an em dash")
        fields = line[2:].split(" ")
        if len(fields) != 2:
            raise BadBundle("a signature line is not '\u2014 <name> <signature>'")
        raw = b64(fields[1], "a signature")
        if fields[0] != name or raw[:4] != kid:
            continue  # another key's signature (a witness's cosignature): not ours to check
        if not ed25519_verify(public, text.encode("utf-8"), raw[4:]):
            raise BadBundle("the checkpoint's signature does not verify")
        good += 1
    if not good:
        raise BadBundle("the checkpoint carries no signature by the key")
    body = text.split("\n")
    if len(body) < 4 or not all(body[:3]):
        raise BadBundle("the checkpoint is not origin, size, root")
    if body[0] != name:
        raise BadBundle("the checkpoint's origin is not the key's name")
    if not body[1].isdigit() or (body[1].startswith("0") and body[1] != "0"):
        raise BadBundle("the checkpoint's size is not a decimal number")
    root = b64(body[2], "the root")
    if len(root) != 32:
        raise BadBundle("the root is not 32 bytes")
    return body[0], int(body[1]), root


def tree_node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def inclusion_root(index, size, leaf, path):
    """Walk an RFC 6962 inclusion path from the leaf up (RFC 9162 section 2.1.3.2)."""
    if not 0 <= index < size:
        raise BadBundle("the leaf index is outside the tree")
    node, last, acc = index, size - 1, leaf
    for sibling in path:
        if len(sibling) != 32:
            raise BadBundle("a proof hash is not 32 bytes")
        if last == 0:
            raise BadBundle("the inclusion proof is too long")
        if node % 2 == 1 or node == last:
            acc = tree_node(sibling, acc)
            while node % 2 == 0 and node != 0:
                node, last = node // 2, last // 2
        else:
            acc = tree_node(acc, sibling)
        node, last = node // 2, last // 2
    if last != 0:
        raise BadBundle("the inclusion proof is too short")
    return acc


def consistency_roots(old, new, old_root, path):
    """The (old, new) roots an RFC 6962 consistency proof leads to (RFC 9162 section 2.1.4.2)."""
    if not 0 < old < new or not path:
        raise BadBundle("a consistency proof needs 0 < old size < new size and at least one hash")
    if any(len(p) != 32 for p in path):
        raise BadBundle("a proof hash is not 32 bytes")
    if old & (old - 1) == 0:
        path = [old_root] + list(path)
    node, last = old - 1, new - 1
    while node % 2 == 1:
        node, last = node // 2, last // 2
    a = b = path[0]
    for c in path[1:]:
        if last == 0:
            raise BadBundle("the consistency proof is too long")
        if node % 2 == 1 or node == last:
            a, b = tree_node(c, a), tree_node(c, b)
            while node % 2 == 0 and node != 0:
                node, last = node // 2, last // 2
        else:
            b = tree_node(b, c)
        node, last = node // 2, last // 2
    if last != 0:
        raise BadBundle("the consistency proof is too short")
    return a, b


def check_cosignature(note, cosigner_vkey_text):
    """The timestamp of a valid C2SP tlog-cosignature/v1 (Ed25519, type 0x04) on the note; raises BadBundle."""
    parts = cosigner_vkey_text.strip().split("+", 2)
    if len(parts) != 3 or not parts[0]:
        raise BadBundle("the witness key is not <name>+<hex key id>+<base64 key>")
    raw = b64(parts[2], "the witness key")
    if len(raw) != 33 or raw[0] != 4:
        raise BadBundle("the witness key is not an Ed25519 cosigner key (type 0x04)")
    kid = hashlib.sha256(parts[0].encode() + b"\n" + raw).digest()[:4]
    if parts[1] != kid.hex():
        raise BadBundle("the witness key's ID does not match its name and public key")
    cut = note.rindex("\n\n")
    text, lines = note[: cut + 1], note[cut + 2 : -1].split("\n")
    for line in lines:
        fields = line[2:].split(" ")
        if len(fields) != 2 or fields[0] != parts[0]:
            continue
        sig = b64(fields[1], "a cosignature")
        if sig[:4] != kid:
            continue
        if len(sig) != 4 + 8 + 64:
            raise BadBundle("a cosignature is not a key ID, a timestamp and a signature")
        timestamp = int.from_bytes(sig[4:12], "big")
        signed = b"cosignature/v1\ntime %d\n" % timestamp + text.encode("utf-8")
        if not ed25519_verify(raw[1:], signed, sig[12:]):
            raise BadBundle(f"the cosignature by {parts[0]} does not verify")
        return timestamp
    raise BadBundle(f"the checkpoint carries no cosignature by {parts[0]}")


def check_inclusion(rec, leaf_index, proof, store_hex, size, root):
    """One record's inclusion in the signed tree (a bundle's, or an archive row's); its seq."""
    seq = rec["seq"]
    if not isinstance(seq, int) or leaf_index != seq - 1:
        raise BadBundle("leaf_index is not seq - 1")
    path = [b64(p, "a proof hash") for p in proof or []]
    digest = bytes.fromhex(rec["payload_sha256"][7:])
    if "payload" in rec and hashlib.sha256(rec["payload"].encode("utf-8")).digest() != digest:
        raise BadBundle("the payload does not hash to payload_sha256")
    kind, rid = rec["kind"].encode(), rec["record_id"].encode()
    framed = b"".join([TAG, bytes.fromhex(store_hex), struct.pack(">QQ", seq, rec["recorded_at_ns"]),
                       struct.pack(">I", len(kind)), kind, struct.pack(">I", len(rid)), rid,
                       bytes.fromhex(rec["prev_hash"][7:]), digest])
    row = hashlib.sha256(framed).digest()
    if show(row) != rec["hash"]:
        raise BadBundle("the record does not hash to its row hash")
    if inclusion_root(seq - 1, size, hashlib.sha256(b"\x00" + row).digest(), path) != root:
        raise BadBundle("the inclusion proof leads to another root than the signed checkpoint's")
    return seq


def check_bundle(doc, vkey_text, witness_keys=()):
    """Check an agentwatch-proof/1 bundle or an agentwatch-archive/1 archive; a one-line verdict, or BadBundle."""
    if not isinstance(doc, dict) or (doc.get("format"), doc.get("type") == "archive") not in (
            ("agentwatch-proof/1", False), ("agentwatch-archive/1", True)):
        raise BadBundle("not an agentwatch-proof/1 bundle or agentwatch-archive/1 archive")
    vkey = parse_vkey(vkey_text)
    origin, size, root = open_signed_checkpoint(doc.get("checkpoint"), vkey)
    for witness_key in witness_keys:
        check_cosignature(doc["checkpoint"], witness_key)
    store_hex = doc.get("store_id")
    if origin != "agentwatch.invalid/" + str(store_hex) or len(str(store_hex)) != 32:
        raise BadBundle("the checkpoint is not for the bundle's store")
    if doc.get("tree_size") != size:
        raise BadBundle("tree_size is not the checkpoint's size")
    if doc.get("type") == "inclusion":
        seq = check_inclusion(doc["record"], doc.get("leaf_index"), doc.get("inclusion_proof"), store_hex, size, root)
        return f"seq {seq} is in the signed tree of {size} rows"
    if doc.get("type") == "archive":
        last = 0
        for entry in doc.get("records") or []:
            seq = check_inclusion(entry, entry.get("leaf_index"), entry.get("inclusion_proof"), store_hex, size, root)
            if seq <= last:
                raise BadBundle("archive rows are not in increasing seq order")
            last = seq
        return f"{len(doc.get('records') or [])} archived rows are in the signed tree of {size} rows"
    path = [b64(p, "a proof hash") for p in doc.get("consistency_proof") or []]
    if doc.get("type") == "consistency":
        old = doc["old_size"]
        old_root = b64(doc["old_root"], "old_root")
        if not isinstance(old, int) or len(old_root) != 32:
            raise BadBundle("old_size or old_root is malformed")
        if old == size:
            if path or old_root != root:
                raise BadBundle("equal sizes need an empty proof and equal roots")
        elif consistency_roots(old, size, old_root, path) != (old_root, root):
            raise BadBundle("the consistency proof does not lead to both roots")
        return f"the signed tree of {size} rows extends the tree of {old} rows"
    raise BadBundle("unknown bundle type")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Verify an agentwatch store's hash chain (chain v1), "
                                     "or a proof bundle with --bundle FILE --key KEY.")
    parser.add_argument("store", nargs="?", help="path to the store (SQLite file)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--anchor", metavar="FILE", help="an anchor file recorded by an earlier verify")
    parser.add_argument("--bundle", metavar="FILE", help="a proof bundle written by `agentwatch prove`")
    parser.add_argument("--key", metavar="KEY", help="the log's note verifier key (text, or a file holding it)")
    parser.add_argument("--witness-key", metavar="KEY", action="append", default=[],
                        help="a witness's cosigner key (text, or a file); the checkpoint must carry its cosignature")
    args = parser.parse_args(argv)
    if args.bundle is not None:
        return main_bundle(args)
    if args.store is None:
        parser.error("give a STORE, or --bundle FILE --key KEY")

    anchor = None
    if args.anchor:
        try:
            anchor = read_anchor(args.anchor)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"{args.anchor}: cannot use anchor ({exc})", file=sys.stderr)
            return 2
    try:
        report = verify(args.store, anchor)
    except Unreachable as exc:
        print(str(exc), file=sys.stderr)
        return 3
    except AnchorMismatch as exc:
        print(f"{args.anchor}: {exc}", file=sys.stderr)
        return 2

    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    elif report["ok"]:
        head = report["head_hash"] or "(empty)"
        erased = f" ({len(report['erased'])} erased)" if report["erased"] else ""
        erased += f" ({report['retained']} retained)" if report.get("retained") else ""
        print(f"ok: {report['rows_checked']} rows intact{erased}, head seq {report['head_seq']} {head}")
    else:
        f = report["finding"]
        print(f"BROKEN at seq {f['seq']}: {f['kind']}: {f['detail']}")
        print(f"chain intact through seq {report['verified_through']} of {report['head_seq']}")
    return 0 if report["ok"] else 1


def main_bundle(args):
    if not args.key:
        print("--bundle needs --key (the verifier key `agentwatch key` prints)", file=sys.stderr)
        return 2
    key = args.key
    if os.path.isfile(key):
        with open(key, encoding="ascii") as f:
            key = f.read()
    try:
        with open(args.bundle, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        print(f"{args.bundle}: cannot read the bundle ({exc})", file=sys.stderr)
        return 2
    witness_keys = []
    for witness_key in args.witness_key:
        if os.path.isfile(witness_key):
            with open(witness_key, encoding="ascii") as f:
                witness_key = f.read()
        witness_keys.append(witness_key)
    try:
        verdict, ok = check_bundle(doc, key, witness_keys), True
    except BadBundle as exc:
        verdict, ok = str(exc), False
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        verdict, ok = f"the bundle is incomplete or malformed ({type(exc).__name__}: {exc})", False
    if args.json:
        print(json.dumps({"ok": ok, "verifier": "standalone", "bundle": args.bundle, "detail": verdict}))
    else:
        print(("ok: " if ok else "INVALID: ") + verdict)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
