"""Reading committed records in seq order, and following new commits.

Two sources, the same records:

- `follow_daemon` subscribes on the daemon's socket (`{"op":"subscribe"}`,
  docs/protocol.md): the daemon catches the subscriber up from the store and
  then pushes each commit as it happens (subscriptions.py).
- `follow_store` reads the store directly (no daemon needed): each read is one
  short statement (`WHERE seq > ? ... LIMIT n`), so it never pins the WAL, and
  when it has caught up it sleeps until `PRAGMA data_version` says another
  connection committed, backing off from 2 ms to 100 ms while nothing happens.

`follow_any` uses the daemon when one answers and the store otherwise; if the
daemon goes away mid-follow it reads the store until a daemon answers again.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

import apsw

from agentwatch import safefs
from agentwatch.errors import UsageError
from agentwatch.readers import schema_guard
from agentwatch.store import db
from agentwatch.store.chain import KINDS, canonical_json
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries
from agentwatch.store.rows import TailRecord

BATCH_ROWS = 1000
_MIN_WAIT_S = 0.002
_MAX_WAIT_S = 0.100


def check_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if not kinds:
        return None
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise UsageError(f"unknown kind {', '.join(unknown)} (expected {', '.join(KINDS)})")
    return sorted(set(kinds))


def read_after(conn: apsw.Connection, after_seq: int, limit: int, kinds: Sequence[str] | None = None) -> list[TailRecord]:
    sql = f"SELECT seq, record_id, kind, recorded_at_ns, hash, {DOCUMENT_COLUMNS} FROM records WHERE seq > ?"
    args: list = [after_seq]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        args.extend(kinds)
    sql += " ORDER BY seq LIMIT ?"
    args.append(limit)
    document = Dictionaries.of(conn).document
    return [TailRecord(seq, rid, kind, at, digest, document(payload, dict_id, z))
            for seq, rid, kind, at, digest, payload, dict_id, z in conn.execute(sql, args)]


def _before_last(path: Path, head: int, last: int, kinds: Sequence[str] | None) -> int:
    """The seq after which the last `last` records of `kinds` begin (of any kind: head - last)."""
    if not kinds:
        return max(head - last, 0)
    conn = schema_guard.open_reader(path)
    try:
        # Newest first, so only the rows it skips are read (the recorder's own rows can be most of an idle log).
        row = next(iter(conn.execute(
            f"SELECT seq FROM records WHERE kind IN ({','.join('?' * len(kinds))}) ORDER BY seq DESC LIMIT 1 OFFSET ?",
            [*kinds, last])), None)
    finally:
        conn.close()
    return row[0] if row else 0


def head_seq(conn: apsw.Connection) -> int:
    return db.one(conn.execute("SELECT max(seq) FROM records"))[0] or 0


def follow_store(
    path: Path,
    *,
    after_seq: int,
    kinds: Sequence[str] | None = None,
    follow: bool = True,
    stop: threading.Event | None = None,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[list[TailRecord]]:
    """Batches of records after `after_seq`; with `follow`, waits for new commits until `stop`."""
    conn = schema_guard.open_reader(path)
    try:
        waiter = db.CommitWaiter(conn, _MIN_WAIT_S, _MAX_WAIT_S)
        while stop is None or not stop.is_set():
            batch = read_after(conn, after_seq, batch_rows, kinds)
            if batch:
                after_seq = batch[-1].seq
                waiter.reset()
                yield batch
                continue
            if not follow or not waiter.wait_for_commit(stop):
                return
    finally:
        conn.close()


class DaemonGone(Exception):
    """The subscription's connection ended (the daemon stopped or was killed)."""


_RECV = 1 << 18
_POLL_S = 0.25  # how often a blocked read looks at `stop`
_RETRY_S = 0.5  # while the daemon is away: how often to look for it again


class LiveFeed:
    """A blocking client of the daemon's `subscribe` op."""

    def __init__(self, sock: socket.socket, ack: dict, buf: bytearray):
        self.sock = sock
        self.ack = ack
        self.store_id = bytes.fromhex(ack.get("store_id") or "")
        self._buf = buf

    @classmethod
    def open(cls, socket_path: Path, after_seq: int, kinds: Sequence[str] | None, timeout: float = 5.0) -> "LiveFeed | None":
        """Subscribe after `after_seq`; None when no daemon answers (or it does not speak `subscribe`)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            safefs.check_socket(socket_path)  # another user's socket could feed made-up records
            sock.connect(str(socket_path))
            request = {"op": "subscribe", "from_seq": after_seq + 1}
            if kinds:
                request["kinds"] = list(kinds)
            sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            buf = bytearray()
            while b"\n" not in buf:
                chunk = sock.recv(_RECV)
                if not chunk:
                    raise ConnectionError("closed")
                buf += chunk
        except (OSError, safefs.UnsafePath):
            sock.close()
            return None  # the store is read directly instead
        line, _, rest = bytes(buf).partition(b"\n")
        try:
            ack = json.loads(line)
        except ValueError:
            ack = None
        if not isinstance(ack, dict) or ack.get("ok") is not True or ack.get("op") != "subscribe":
            sock.close()
            if isinstance(ack, dict) and ack.get("error") == "bad_request":
                raise UsageError(f"{socket_path}: subscribe refused: {ack.get('message')}")
            return None  # not a daemon that serves subscriptions: read the store instead
        return cls(sock, ack, bytearray(rest))

    def batches(self, *, follow: bool, stop: threading.Event | None) -> Iterator[list[TailRecord]]:
        """What arrives, a batch per read. Without `follow`, ends once caught up (the `live` marker).

        Raises DaemonGone when the connection ends.
        """
        sock = self.sock
        sock.settimeout(_POLL_S)
        buf = self._buf
        while stop is None or not stop.is_set():
            batch: list[TailRecord] = []
            caught_up = False
            end = buf.rfind(b"\n") + 1
            if end:
                for line in bytes(buf[:end]).splitlines():
                    doc = json.loads(line)
                    if "seq" in doc and "op" not in doc:
                        batch.append(_from_wire(doc))
                    elif doc.get("op") == "live":
                        caught_up = True
                    elif doc.get("ok") is False:
                        raise DaemonGone(f"daemon: {doc.get('error')}: {doc.get('message')}")
                del buf[:end]
            if batch:
                yield batch
            if caught_up and not follow:
                return
            try:
                chunk = sock.recv(_RECV)
            except socket.timeout:
                continue
            except OSError as exc:
                raise DaemonGone(str(exc)) from None
            if not chunk:
                raise DaemonGone("the daemon closed the subscription")
            buf += chunk

    def close(self) -> None:
        self.sock.close()


def _from_wire(doc: dict) -> TailRecord:
    digest = doc["hash"]
    return TailRecord(doc["seq"], doc["record_id"], doc["kind"], doc["recorded_at_ns"],
                      bytes.fromhex(digest.removeprefix("sha256:")), canonical_json(doc["payload"]))


def follow_any(
    path: Path,
    socket_path: Path | None,
    *,
    after_seq: int,
    kinds: Sequence[str] | None = None,
    follow: bool = True,
    stop: threading.Event | None = None,
    store_id: bytes | None = None,
    on_source=None,
) -> Iterator[list[TailRecord]]:
    """Batches after `after_seq` from the daemon when one answers on `socket_path`, else from the store.

    `on_source(name)` is told "daemon" or "store" whenever the source changes.
    """
    sub = LiveFeed.open(socket_path, after_seq, kinds) if socket_path is not None else None
    if sub is None:
        if on_source:
            on_source("store")
        yield from follow_store(path, after_seq=after_seq, kinds=kinds, follow=follow, stop=stop)
        return
    while True:
        if store_id is not None and sub.store_id != store_id:
            sub.close()
            raise UsageError(f"the daemon on {socket_path} serves another store than {path}")
        if on_source:
            on_source("daemon")
        try:
            for batch in sub.batches(follow=follow, stop=stop):
                after_seq = batch[-1].seq
                yield batch
            return  # caught up (without follow), or stopped
        except DaemonGone:
            pass
        finally:
            sub.close()
        # The daemon went away (a restart, a crash): read what the store has, look for it again.
        if on_source:
            on_source("store")
        while True:
            for batch in follow_store(path, after_seq=after_seq, kinds=kinds, follow=False, stop=stop):
                after_seq = batch[-1].seq
                yield batch
            if not follow or (stop is not None and stop.is_set()):
                return
            if stop is not None:
                stop.wait(_RETRY_S)
            else:
                time.sleep(_RETRY_S)
            sub = LiveFeed.open(socket_path, after_seq, kinds) if socket_path is not None else None
            if sub is not None:
                break


def run_tail(
    path: Path,
    *,
    follow: bool,
    from_seq: int | None,
    consumer: str | None,
    kinds: Sequence[str] | None,
    emit,
    stop: threading.Event | None = None,
    last: int = 10,
    socket_path: Path | None = None,
    on_source=None,
    progress=None,
    limit: int | None = None,
) -> int | None:
    """`agentwatch tail`: emit batches; with a named consumer, log and acknowledge each one.

    `limit`: at most this many rows, then stop (a page: the next starts `--from` the last seq + 1);
    without `from_seq` or a consumer, the last `limit` rows. Returns where the next page starts
    when a page of `limit` rows ended with rows of `kinds` left after it, else None.

    The records come from the daemon's subscription when a daemon answers on
    `socket_path`, else from the store; the consumer logic is the same for both.
    A batch is handed to `emit` first, then logged, then acknowledged: a crash
    between the steps re-delivers (at-least-once), never skips.
    `progress(done, total)` follows the catch-up to the head seen at the start.
    """
    from agentwatch.readers.consumers import Consumer

    kinds = check_kinds(kinds)
    conn = schema_guard.open_reader(path)
    try:
        store_id = db.store_id(conn)
        head = head_seq(conn)
    finally:
        conn.close()
    named = None
    if consumer is not None:
        named = Consumer(consumer, store_id)
        cursor = named.load()
        if cursor is None:
            cursor = named.start(from_seq or 1, kinds)
        elif from_seq is not None:
            raise UsageError(f"consumer {consumer!r} resumes from its cursor (seq {cursor.acked_seq}); --from is not allowed")
        elif (cursor.kinds or None) != kinds:
            raise UsageError(f"consumer {consumer!r} consumes kinds {cursor.kinds or 'all'}; use the same --kind")
        after = cursor.acked_seq
    elif from_seq is not None:
        after = from_seq - 1
    else:
        after = _before_last(path, head, limit or last, kinds)
    try:
        source = follow_any(path, socket_path, after_seq=after, kinds=kinds, follow=follow, stop=stop,
                            store_id=store_id, on_source=on_source)
        behind = head - after
        catching_up = progress is not None and behind > 0
        left = limit
        last_seq = None
        for batch in source:
            if left is not None:
                batch = batch[:left]
                left -= len(batch)
                if not batch:
                    break
            emit(batch)
            last_seq = batch[-1].seq
            if named is not None and cursor is not None:
                named.record_deliveries(r.seq for r in batch)
                named.ack(cursor, batch[-1].seq)
            if catching_up:
                done = min(batch[-1].seq, head) - after
                progress(done, behind)
                catching_up = done < behind
            if left == 0:
                break
    finally:
        if named is not None:
            named.close()
    if left != 0 or last_seq is None:
        return None
    conn = schema_guard.open_reader(path)
    try:
        return last_seq + 1 if read_after(conn, last_seq, 1, kinds) else None
    finally:
        conn.close()
