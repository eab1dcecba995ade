"""Live-tail subscriptions on the daemon's socket: catch-up from the store, then live pushes.

A subscriber's position `pos` is a seq: every committed row up to it has been
written to its socket (or skipped by its kind filter). It is in one of two modes:

- **catch-up**: a task reads rows in `(pos, hub.head]` on the subscriber's own
  read-only connection, in short chunks on a worker thread (one statement each,
  so the WAL is never pinned), and writes them while the socket's outbound
  buffer has room. It never touches the writer.
- **live**: the writer's commit callback, hopped onto the event loop after the
  acks, hands every committed row to `Hub.publish`, which writes it out.

The switch from catch-up to live happens on the event loop, where `publish`
also runs: when `pos == hub.head` the subscriber joins `hub.live` in the same
step. Rows at or below `hub.head` were published before that step, so they are
in the store and catch-up read them; rows above it are published after it, so
the subscriber gets them live. No gap, no duplicate.

A slow subscriber never holds up the writer: `publish` only appends to a
bounded buffer. When a live push would take the buffer past `max_buffer`, the
subscriber leaves `live` and goes back to catch-up from `pos`, reading the store
as fast as its socket drains. It is never skipped: the store has every row.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence

import apsw

from agentwatch.store import db
from agentwatch.store.chain import KINDS
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries

if TYPE_CHECKING:
    from agentwatch.store.rows import TailRecord


class Peer(Protocol):
    """The side of a connection a subscription writes to (daemon.connection.Connection)."""

    transport: Any
    write_paused: bool

    def close(self) -> None: ...

DEFAULT_MAX_BUFFER = 1 << 20  # bytes a subscriber may have unsent before it falls back to catch-up
CHUNK_ROWS = 500
CHUNK_BYTES = 256 << 10


def encode(seq: int, record_id: str, kind: str, recorded_at_ns: int, hash: bytes, payload: bytes) -> bytes:
    """One pushed record as a JSON line; the stored payload bytes (canonical JSON) go in as they are."""
    return b'{"seq":%d,"record_id":%s,"kind":"%s","recorded_at_ns":%d,"hash":"sha256:%s","payload":%s}\n' % (
        seq, json.dumps(record_id).encode("ascii"), kind.encode("ascii"), recorded_at_ns, hash.hex().encode("ascii"),
        payload,
    )  # fmt: skip


def parse_request(request: dict) -> tuple[Optional[int], Optional[list[str]]]:
    """(from_seq or None for "head", kinds or None). Raises ValueError with a message for the client."""
    from_seq = request.get("from_seq")
    if from_seq is not None:
        if type(from_seq) is not int or from_seq < 1:
            raise ValueError("from_seq must be an integer >= 1")
    elif request.get("from", "head") != "head":
        raise ValueError('give "from_seq": N (N >= 1) or "from": "head"')
    kinds = request.get("kinds")
    if kinds is not None:
        if not isinstance(kinds, list) or not kinds or any(k not in KINDS for k in kinds):
            raise ValueError(f"kinds must be a non-empty list of {', '.join(KINDS)}")
        kinds = sorted(set(kinds))
    return from_seq, kinds


def read_chunk(conn, after: int, upto: int, kinds: Optional[Sequence[str]]) -> tuple[list[bytes], int]:
    """Encoded rows in (after, upto], at most CHUNK_ROWS and about CHUNK_BYTES; and the seq scanned to."""
    sql = (f"SELECT seq, record_id, kind, recorded_at_ns, hash, {DOCUMENT_COLUMNS} FROM records"
           " WHERE seq > ? AND seq <= ?")
    args: list = [after, upto]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        args.extend(kinds)
    sql += " ORDER BY seq LIMIT ?"
    args.append(CHUNK_ROWS)
    lines: list[bytes] = []
    size = last = 0
    cursor = conn.execute(sql, args)
    try:
        document = Dictionaries.of(conn).document
        for seq, record_id, kind, at, digest, payload, dict_id, z in cursor:
            line = encode(seq, record_id, kind, at, digest, document(payload, dict_id, z))
            lines.append(line)
            last = seq
            size += len(line)
            if size >= CHUNK_BYTES:
                return lines, last
    finally:
        cursor.close()  # ends the read transaction now, not when the cursor is collected
    return lines, (last if len(lines) == CHUNK_ROWS else upto)


class Hub:
    """Every subscription of one daemon. Lives on the event loop."""

    def __init__(self, store_path, store_id: bytes, head_seq: int, *, max_buffer: int = DEFAULT_MAX_BUFFER):
        self.store_path = store_path
        self.store_id = store_id
        self.head = head_seq  # the last seq published (committed and handed to the loop)
        self.max_buffer = max_buffer
        self.subscriptions: set[Subscriber] = set()
        self.live: set[Subscriber] = set()
        self.started = 0
        self.fallbacks = 0  # live subscribers sent back to catch-up because they fell behind
        self.rows_pushed = 0

    def publish(self, records: "Sequence[TailRecord]") -> None:
        """Called on the loop after the acks of the commit that stored `records` (seq order)."""
        if not records:
            return
        self.head = records[-1].seq
        if not self.live:
            return
        lines = [encode(r.seq, r.record_id, r.kind, r.recorded_at_ns, r.hash, r.payload) for r in records]
        for sub in list(self.live):
            sub.push(records, lines)

    def health(self) -> dict:
        return {
            "open": len(self.subscriptions),
            "live": len(self.live),
            "started": self.started,
            "fallbacks_to_catch_up": self.fallbacks,
            "rows_pushed": self.rows_pushed,
            "max_buffer_bytes": self.max_buffer,
        }


class Subscriber:
    def __init__(self, hub: Hub, conn: Peer, from_seq: Optional[int], kinds: Optional[list[str]]):
        self.hub = hub
        self.conn = conn
        self.kinds = kinds
        self.pos = hub.head if from_seq is None else from_seq - 1
        self.closed = False
        self._task: Optional[asyncio.Task] = None
        self._writable = asyncio.Event()
        self._reader: Optional[apsw.Connection] = None

    def start(self) -> None:
        hub = self.hub
        hub.subscriptions.add(self)
        hub.started += 1
        transport = self.conn.transport
        # pause_writing fires past the bound, resume_writing once a quarter of it is left.
        transport.set_write_buffer_limits(high=hub.max_buffer, low=hub.max_buffer // 4)
        reply = {"ok": True, "op": "subscribe", "from_seq": self.pos + 1, "head_seq": hub.head,
                 "store_id": hub.store_id.hex(), "kinds": self.kinds}
        transport.write(json.dumps(reply).encode("utf-8") + b"\n")
        self._catch_up()

    def _catch_up(self) -> None:
        self.hub.live.discard(self)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run_catch_up())

    async def _run_catch_up(self) -> None:
        hub = self.hub
        try:
            while not self.closed:
                if self.pos >= hub.head:
                    # Caught up, in the same loop step as the check: nothing can be published between.
                    hub.live.add(self)
                    self.conn.transport.write(b'{"op":"live","seq":%d}\n' % self.pos)
                    return
                if self.conn.write_paused:
                    self._writable.clear()
                    await self._writable.wait()
                    continue
                lines, scanned = await asyncio.to_thread(self._read, self.pos, hub.head)
                if self.closed:
                    return
                if lines:
                    self.conn.transport.write(b"".join(lines))
                    hub.rows_pushed += len(lines)
                self.pos = scanned
        except Exception as exc:  # a store read that failed: end this subscription, say why
            if not self.closed:
                self.conn.transport.write(json.dumps(
                    {"ok": False, "op": "subscribe", "error": "unavailable", "message": f"reading the store failed: {exc}"}
                ).encode("utf-8") + b"\n")
                self.conn.close()
        finally:
            if self.closed:
                self._close_reader()

    def _read(self, after: int, upto: int) -> tuple[list[bytes], int]:
        if self._reader is None:
            self._reader = db.open_reader(self.hub.store_path)
        return read_chunk(self._reader, after, upto, self.kinds)

    def _close_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def push(self, records: "Sequence[TailRecord]", lines: list[bytes]) -> None:
        """Live: write the rows of one commit, or fall back to catch-up if the buffer is full."""
        if records[0].seq != self.pos + 1:  # cannot happen while the writer is the only writer
            return self._catch_up()
        kinds = self.kinds
        out = lines if kinds is None else [line for r, line in zip(records, lines) if r.kind in kinds]
        transport = self.conn.transport
        size = sum(map(len, out))
        if self.conn.write_paused or transport.get_write_buffer_size() + size > self.hub.max_buffer:
            self.hub.fallbacks += 1
            return self._catch_up()
        if out:
            transport.write(b"".join(out))
            self.hub.rows_pushed += len(out)
        self.pos = records[-1].seq

    def writable(self) -> None:
        self._writable.set()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.hub.live.discard(self)
        self.hub.subscriptions.discard(self)
        self._writable.set()
        if self._task is None or self._task.done():
            self._close_reader()
