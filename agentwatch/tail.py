"""Reading committed records in seq order, and following new commits.

`follow_store` reads the store directly (no daemon needed): each read is one
short statement (`WHERE seq > ? ... LIMIT n`), so it never pins the WAL, and
when it has caught up it sleeps until `PRAGMA data_version` says another
connection committed, backing off from 2 ms to 100 ms while nothing happens.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import apsw

from . import db
from .chain import KINDS, format_hash
from .errors import UsageError

BATCH_ROWS = 1000
_MIN_WAIT_S = 0.002
_MAX_WAIT_S = 0.100


@dataclass(frozen=True, slots=True)
class TailRecord:
    seq: int
    record_id: str
    kind: str
    recorded_at_ns: int
    hash: bytes
    payload: bytes

    def to_json(self) -> dict:
        return {
            "seq": self.seq,
            "record_id": self.record_id,
            "kind": self.kind,
            "recorded_at_ns": self.recorded_at_ns,
            "hash": format_hash(self.hash),
            "payload": json.loads(self.payload),
        }


def check_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if not kinds:
        return None
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise UsageError(f"unknown kind {', '.join(unknown)} (expected {', '.join(KINDS)})")
    return sorted(set(kinds))


def read_after(conn: apsw.Connection, after_seq: int, limit: int, kinds: Sequence[str] | None = None) -> list[TailRecord]:
    sql = "SELECT seq, record_id, kind, recorded_at_ns, hash, CAST(payload AS BLOB) FROM records WHERE seq > ?"
    args: list = [after_seq]
    if kinds:
        sql += f" AND kind IN ({','.join('?' * len(kinds))})"
        args.extend(kinds)
    sql += " ORDER BY seq LIMIT ?"
    args.append(limit)
    return [TailRecord(*row) for row in conn.execute(sql, args)]


def head_seq(conn: apsw.Connection) -> int:
    row = conn.execute("SELECT max(seq) FROM records").fetchone()
    return row[0] or 0


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
    conn = db.open_reader(path)
    try:
        wait = _MIN_WAIT_S
        version = conn.pragma("data_version")
        while stop is None or not stop.is_set():
            batch = read_after(conn, after_seq, batch_rows, kinds)
            if batch:
                after_seq = batch[-1].seq
                wait = _MIN_WAIT_S
                yield batch
                continue
            if not follow:
                return
            while stop is None or not stop.is_set():
                current = conn.pragma("data_version")
                if current != version:
                    version = current
                    break
                if stop is not None:
                    stop.wait(wait)
                else:
                    time.sleep(wait)
                wait = min(wait * 2, _MAX_WAIT_S)
    finally:
        conn.close()


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
) -> None:
    """`agentwatch tail`: emit batches; with a named consumer, log and acknowledge each one.

    A batch is handed to `emit` first, then logged, then acknowledged: a crash
    between the steps re-delivers (at-least-once), never skips.
    """
    from .consumers import Consumer

    kinds = check_kinds(kinds)
    conn = db.open_reader(path)
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
    else:
        after = from_seq - 1 if from_seq is not None else max(head - last, 0)
    try:
        for batch in follow_store(path, after_seq=after, kinds=kinds, follow=follow, stop=stop):
            emit(batch)
            if named is not None:
                named.record_deliveries(r.seq for r in batch)
                named.ack(cursor, batch[-1].seq)
    finally:
        if named is not None:
            named.close()
