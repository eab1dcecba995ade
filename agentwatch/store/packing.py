"""Packed payloads: an event's document stored deflated, with a dictionary trained on the store's records.

A packed row (docs/chain.md, "Packed rows") keeps three things:

- `payload_z`: the canonical JSON document, raw DEFLATE with a preset dictionary;
- `payload_dict`: the id of that dictionary in `_agentwatch_dictionaries`;
- `payload`: the document's *projection*, the fields at PROJECTION's paths, as canonical
  JSON. The generated forensic columns and the views read it exactly as they read a whole
  document, so SQL over the store works the same on packed and plain rows.

The chain covers the document, as it always has: a verifier inflates `payload_z`, hashes
that, and checks that `payload` is exactly the document's projection. Plain rows (small
payloads, attestations, gaps, rows from before packing) are unchanged.

The standard library's zlib reads and writes the format, so the standalone verifier
stays stdlib-only. Dictionaries are trained from the store's own recent documents
(`train`): records of one harness repeat their keys and much of their values, which a
dictionary lets even a single small document refer to.
"""

from __future__ import annotations

import weakref
import zlib
from typing import Any, Iterable

import apsw

try:
    import orjson
except ImportError:  # the reference codec alone
    orjson = None  # type: ignore[assignment]

from agentwatch.store.canonical import json_nesting_exceeds, loads
from agentwatch.store.chain import canonical_json

# The fields the schema's generated columns, its views and agentwatch's readers read from an
# event's payload. A new path here needs a new migration only if SQL reads it; the list is
# part of the chain's contract (docs/chain.md), so both verifiers carry it.
PROJECTION: tuple[tuple[str, ...], ...] = (
    ("client", "delivery"),
    ("client", "pid"),
    ("client", "ts_observed_ns"),
    ("cwd",),
    ("decision", "value"),
    ("event", "kind"),
    ("event", "name"),
    ("harness",),
    ("interrupt",),
    ("model",),
    ("schema",),
    ("session_id",),
    ("tool", "call_id"),
    ("tool", "category"),
    ("tool", "duration_ms"),
    ("tool", "input_sha256"),
    ("tool", "is_error"),
    ("tool", "mcp_server"),
    ("tool", "name"),
    ("tool", "outcome"),
    ("turn_id",),
)

DICT_BYTES = 32768  # DEFLATE's window: a dictionary is at most this long
LEVEL = 4  # measured: within 6 % of level 9's size at a fifth of its time per event
MEM_LEVEL = 6
WBITS = -15  # raw DEFLATE, 32 KiB window: no zlib header or checksum (the chain is the checksum)
PACK_MIN_BYTES = 512  # below this a document, its projection and the row's own cost leave little to win
PACK_MAX_DEPTH = 100  # deeper documents stay plain: every verifier parses a packed one without deep recursion
# An inflated document beyond this is refused, never built (a crafted stream), and a larger one is
# never packed. A record is built from a request line of at most 1 MiB (4 MiB for a spool file),
# so no document the recorder writes comes near it; it bounds what any reader holds per row.
MAX_DOCUMENT_BYTES = 16 << 20
TRAIN_SAMPLES = 256  # documents seen before the first dictionary is trained
SAMPLE_MAX_BYTES = 16384  # larger documents are packed but not kept as samples (bounds the writer's memory)
RETRAIN_ROWS = 16384  # packed rows between two trials of a fresher dictionary
RETRAIN_GAIN = 0.9  # a new dictionary is kept when it packs the recent documents to this share or less


# PROJECTION as the two loops of `projection` walk it: top-level fields, then (parent, fields).
_TOP = tuple(path[0] for path in PROJECTION if len(path) == 1)
_NESTED = tuple((parent, tuple(p[1] for p in PROJECTION if len(p) == 2 and p[0] == parent))
                for parent in dict.fromkeys(p[0] for p in PROJECTION if len(p) == 2))
assert all(len(path) <= 2 for path in PROJECTION)


def projection(doc: dict) -> dict:
    """The fields of `doc` at PROJECTION's paths, at the same paths, values as they are."""
    out = {key: doc[key] for key in _TOP if key in doc}
    for parent, keys in _NESTED:
        node = doc.get(parent)
        if isinstance(node, dict):
            inner = {key: node[key] for key in keys if key in node}
            if inner:
                out[parent] = inner
    return out


def projected(document: bytes) -> bytes | None:
    """The canonical JSON of `document`'s projection; None when it is not a JSON object.

    orjson parses and encodes where that gives the reference's bytes: it reads an integer
    beyond 64 bits as a float, and its float text can differ from the canonical one, so a
    projection holding a float (rare: a duration) goes through the reference codec.
    """
    if orjson is not None:
        try:
            doc = orjson.loads(document)
        except orjson.JSONDecodeError:
            doc = None  # NaN, lone surrogates, deep nesting, not JSON: the reference decides
        if isinstance(doc, dict):
            proj = projection(doc)
            try:
                exact = not _has_float(proj)
            except RecursionError:
                exact = False
            if exact:
                try:
                    return orjson.dumps(proj, option=orjson.OPT_SORT_KEYS)
                except orjson.JSONEncodeError:
                    pass
    try:
        doc = loads(document)  # json.loads's values
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    try:
        return canonical_json(projection(doc))
    except (ValueError, RecursionError):
        return None


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


class Dictionary:
    """One preset dictionary, with its compressor and decompressor primed once and copied per document."""

    __slots__ = ("id", "data", "_deflate", "_inflate")

    def __init__(self, data: bytes, id: int | None = None):
        if not 0 < len(data) <= DICT_BYTES:
            raise ValueError(f"a dictionary holds 1..{DICT_BYTES} bytes, not {len(data)}")
        self.id = id
        self.data = data
        self._deflate = zlib.compressobj(LEVEL, zlib.DEFLATED, WBITS, MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, data)
        self._inflate = zlib.decompressobj(WBITS, data)

    def pack(self, document: bytes) -> bytes:
        c = self._deflate.copy()
        return c.compress(document) + c.flush()

    def unpack(self, z: bytes) -> bytes | None:
        """The document `z` inflates to; None when `z` is not exactly one complete stream."""
        d = self._inflate.copy()
        try:
            out = d.decompress(z, MAX_DOCUMENT_BYTES)
        except zlib.error:
            return None
        if not d.eof or d.unused_data or d.unconsumed_tail:
            return None
        return out


def unpacked(stored: bytes | None, dictionary: Dictionary | None, z: Any) -> bytes | None:
    """A packed row's document, when `z` inflates with `dictionary` and `stored` is its projection.

    None otherwise: the verifiers then hash what is stored, which matches the row's hash only
    when the stored payload is the document itself.
    """
    if dictionary is None or not isinstance(z, bytes) or stored is None:
        return None
    document = dictionary.unpack(z)
    if document is None or projected(document) != stored:
        return None
    return document


# What a reader selects for a row's document: the stored payload and, for a packed row, the rest.
DOCUMENT_COLUMNS = "CAST(payload AS BLOB), payload_dict, payload_z"

_BY_CONNECTION: "weakref.WeakKeyDictionary[apsw.Connection, Dictionaries]" = weakref.WeakKeyDictionary()


class Dictionaries:
    """The dictionaries of one store, read on first use (they never change once written)."""

    def __init__(self, conn: apsw.Connection):
        self.conn = conn
        self._known: dict[int, Dictionary | None] = {}
        self._columns: str | None = None
        self._kept: str | None = None

    @property
    def kept_column(self) -> str:
        """`kept_sha256`, or `NULL` for a records table without it (a store from before migration 0007):
        the digest a retained row keeps in place of its payload (docs/retention.md)."""
        if self._kept is None:
            names = {row[1] for row in self.conn.execute("PRAGMA table_info(records)")}
            self._kept = "kept_sha256" if "kept_sha256" in names else "NULL"
        return self._kept

    @property
    def columns(self) -> str:
        """`payload_dict, payload_z`, or `NULL, NULL` for a records table without them (a chain v1
        table as docs/chain.md defines it need not have them: a store from before migration 0006)."""
        if self._columns is None:
            names = {row[1] for row in self.conn.execute("PRAGMA table_info(records)")}
            self._columns = "payload_dict, payload_z" if "payload_z" in names else "NULL, NULL"
        return self._columns

    @classmethod
    def of(cls, conn: apsw.Connection) -> "Dictionaries":
        """The one set of dictionaries kept for `conn` (for as long as the connection lives)."""
        found = _BY_CONNECTION.get(conn)
        if found is None:
            found = _BY_CONNECTION[conn] = cls(conn)
        return found

    def get(self, id: Any) -> Dictionary | None:
        if type(id) is not int:
            return None
        if id not in self._known:
            row = self.conn.execute("SELECT data FROM _agentwatch_dictionaries WHERE id = ?", (id,)).fetchone()
            try:
                self._known[id] = Dictionary(row[0], id) if row and isinstance(row[0], bytes) else None
            except ValueError:
                self._known[id] = None
        return self._known[id]

    def document(self, payload: bytes, id: Any, z: Any) -> bytes:
        """What a reader shows for a row: the document of a packed row, `payload` of a plain one.

        A packed row that does not unpack to a document matching its projection reads as its
        stored projection (`verify` names the row as changed).
        """
        if z is None:
            return payload
        return unpacked(payload, self.get(id), z) or payload


def train(documents: Iterable[bytes]) -> bytes:
    """A preset dictionary from sample documents: one of each distinct shape, the most recent last.

    DEFLATE reaches back at most DICT_BYTES and codes near matches in fewer bits, so the
    dictionary is the newest documents, one per (harness, event kind) first so that every
    kind of record the store sees has an example, then the rest, newest nearest the end.
    """
    docs = [d for d in documents if d]
    shapes: dict[tuple, bytes] = {}
    for d in docs:
        shapes[_shape(d)] = d  # the newest of each shape
    taken = set(shapes.values())
    chosen: list[bytes] = []
    size = 0
    for d in reversed(docs):  # newest first, skipping the shape examples (added last)
        if size >= DICT_BYTES:
            break
        if d in taken:
            continue
        taken.add(d)
        chosen.append(d)
        size += len(d)
    examples = sorted(shapes.values(), key=len)
    tail = b"".join(reversed(chosen)) + b"".join(examples)
    return tail[-DICT_BYTES:] if tail else b""


def _shape(document: bytes) -> tuple:
    try:
        doc = loads(document)
    except (ValueError, RecursionError):
        return ("", "")
    event = doc.get("event") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(event, dict):
        return ("", "")
    return (str(doc.get("harness")), str(event.get("kind")))


class Packer:
    """The writer's side: which documents to pack, with which dictionary, and when to train one.

    It keeps recent documents as training samples. The first dictionary is trained after
    TRAIN_SAMPLES documents; every RETRAIN_ROWS packed rows a fresher one is trained and
    kept when it packs the recent documents to RETRAIN_GAIN of the current size or less.
    A batch is packed with one dictionary; a new one is written in the same transaction
    as the first batch packed with it (`pending`).
    """

    def __init__(self, conn: apsw.Connection):
        row = conn.execute("SELECT id, data FROM _agentwatch_dictionaries ORDER BY id DESC LIMIT 1").fetchone()
        self.current: Dictionary | None = None
        if row is not None and isinstance(row[1], bytes):
            try:
                self.current = Dictionary(row[1], row[0])
            except ValueError:
                pass  # not a dictionary (a changed store; verify names its rows): train a new one
        self.samples: list[bytes] = []
        self.since_trained = 0

    @property
    def pending(self) -> Dictionary | None:
        """The current dictionary when it is not yet in the store."""
        return self.current if self.current is not None and self.current.id is None else None

    def pack_batch(self, documents: list[bytes | None]) -> list[tuple[bytes, bytes] | None]:
        """For each document (None: not an event), (projection, packed document) when packing pays.

        Afterwards the documents join the training samples, which may train the dictionary
        the next batch is packed with.
        """
        current = self.current
        out: list[tuple[bytes, bytes] | None] = []
        for document in documents:
            out.append(None if current is None or document is None else self._pack(current, document))
        for document in documents:
            if document is not None and PACK_MIN_BYTES <= len(document) <= SAMPLE_MAX_BYTES:
                self._sample(document)
        return out

    def _pack(self, current: Dictionary, document: bytes) -> tuple[bytes, bytes] | None:
        if len(document) < PACK_MIN_BYTES or len(document) > MAX_DOCUMENT_BYTES:
            return None
        if json_nesting_exceeds(document, PACK_MAX_DEPTH):
            return None
        proj = projected(document)
        if proj is None:
            return None
        z = current.pack(document)
        if len(z) + len(proj) + 4 >= len(document):
            return None
        self.since_trained += 1
        return proj, z

    def _sample(self, document: bytes) -> None:
        self.samples.append(document)
        if len(self.samples) > 2 * TRAIN_SAMPLES:
            del self.samples[:TRAIN_SAMPLES]
        if self.current is None:
            if len(self.samples) >= TRAIN_SAMPLES:
                self._adopt(self.samples)
        elif self.since_trained >= RETRAIN_ROWS and self.pending is None:
            self.since_trained = 0
            held_out = TRAIN_SAMPLES // 4
            self._adopt(self.samples[:-held_out], trial=self.samples[-held_out:])

    def _adopt(self, training: list[bytes], trial: list[bytes] | None = None) -> None:
        data = train(training)
        if not data:
            return
        candidate = Dictionary(data)
        if trial is not None and self.current is not None:
            now = sum(len(self.current.pack(d)) for d in trial)
            new = sum(len(candidate.pack(d)) for d in trial)
            if new > now * RETRAIN_GAIN:
                return
        self.current = candidate
