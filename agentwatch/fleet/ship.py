"""Shipping a store's records to the fleet server, in seq order, verified on arrival.

The shipper is a durable consumer whose acknowledged position lives on the
server: it asks `agentwatch.head(store_id)` where the central copy ends and
sends the rows after it, in batches, through `agentwatch.ingest` (one call per
batch, the rows as arrays in binary). A batch either extends the central chain
or is refused there, with a finding; a batch whose outcome is unknown (the
connection broke during the call) is simply sent again, since the server skips
rows it already holds identically. So shipping is idempotent by
(store_id, seq) and resumes, after any crash of either side, from the server's
own head.

It only reads the store (a read-only connection, one short statement per
read, so it never pins the WAL or waits on the writer); while following, a
batch smaller than `batch_rows` is followed by a pause of `linger_s` (0.2 s),
so a busy recorder's rows travel in full batches rather than a few per call;
and it backs off on errors (0.5 s doubling to 30 s; a refusal is retried every 60 s, recording
nothing new: the server keeps one finding per refusal). Status is a
`ShipStatus`, handed to `on_status` as it changes: the daemon's health shows it.

After the rows, it sends the store's signed checkpoint (the signer's record,
agentwatch.evidence.checkpoints) through `agentwatch.ingest_checkpoint` once the
server holds the rows it covers: the server keeps it only when its own rows
reproduce the root, so it witnesses that each checkpoint extends the one before.
Sending a held checkpoint again is accepted as such; a refused one is a finding
on the server and `checkpoint_refused` here, and the rows go on shipping.

An erased row (docs/erasure.md) is sent as it is stored, `null`, with the digest
its erasure row names and that row's seq: the server checks its hash with that
digest, and erases its own copy of a row when the erasure row arrives. A row
retained before it shipped (docs/retention.md) goes the same way, with the
digest kept in the row and its retention row's seq; one retained after it
shipped keeps its payload on the server. While
caught up, the shipper still calls ingest with no rows every `report_every_s`
(60 s), so the server knows the source is alive (docs/fleet.md, "Silence").
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import apsw

from agentwatch.evidence import checkpoints
from agentwatch.evidence.note import Checkpoint, NoteError, split_note
from agentwatch.fleet.connect import FleetUnreachable, check_target, connect, first_line, redact
from agentwatch.store import db
from agentwatch.store.erasure import ERASED_PAYLOAD, erasure_named
from agentwatch.store.packing import Dictionaries
from agentwatch.store.retention import covered, retained_ranges

BATCH_ROWS = 1000
MAX_BATCH_ROWS = 10_000  # the ingest function's own limit per call
BACKOFF_MIN_S = 0.5
BACKOFF_MAX_S = 30.0
REFUSED_RETRY_S = 60.0
LINGER_S = 0.2  # after a partial batch, while following: rows gather this long before the next
_IDLE_MIN_S = 0.005
_IDLE_MAX_S = 0.25
_STATUS_EVERY_S = 0.5  # at most this often while shipping, and at every change of state

_READ = ("SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict, payload_z"
         " FROM records WHERE seq > ? ORDER BY seq LIMIT ?")
_INGEST = ("SELECT accepted, duplicates, head_seq, refused, refused_seq, detail FROM agentwatch.ingest_rows("
           "%b, %b, %b, %b, %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bytea[], %b::bytea[], %b::bytea[],"
           " %b::bytea[], %b::bigint[])")
REPORT_EVERY_S = 60.0  # while caught up, the shipper still tells the server its head this often (docs/fleet.md)
_INGEST_CHECKPOINT = "SELECT accepted, refused, detail FROM agentwatch.ingest_checkpoint(%s, %s, %s, %s, %s, %s)"


def default_host() -> str:
    return socket.gethostname() or "unknown"


@dataclass
class ShipStatus:
    state: str = "starting"  # starting | shipping | caught_up | backoff | refused | stopped
    target: str = ""
    store_id: str = ""
    host: str = ""
    local_head_seq: int = 0
    central_head_seq: Optional[int] = None
    lag_rows: Optional[int] = None
    lag_s: Optional[float] = None  # age of the oldest row not yet on the server (0 when caught up)
    rows_shipped: int = 0  # rows this shipper stored centrally
    duplicates: int = 0  # rows the server already held (a batch sent again)
    batches: int = 0
    connects: int = 0
    last_error: Optional[str] = None
    last_error_at_ns: Optional[int] = None
    failing_since_ns: Optional[int] = None  # set while the last attempt failed
    refused: Optional[dict] = None  # {kind, seq, detail} while the server refuses the next row
    checkpoint_size: Optional[int] = None  # the size of the last signed checkpoint the server holds
    checkpoints_sent: int = 0  # checkpoints the server accepted from this shipper (held ones included)
    checkpoint_refused: Optional[dict] = None  # {kind, size, detail}: the server refused the last one
    updated_at_ns: int = 0

    def to_json(self) -> dict:
        return asdict(self)


class Shipper:
    def __init__(
        self,
        store: Path | str,
        target: str,
        *,
        host: Optional[str] = None,
        batch_rows: int = BATCH_ROWS,
        linger_s: float = LINGER_S,
        on_status: Optional[Callable[[ShipStatus], None]] = None,
        state_dir: Optional[Path | str] = None,
    ):
        if not 1 <= batch_rows <= MAX_BATCH_ROWS:
            raise ValueError(f"batch_rows must be 1..{MAX_BATCH_ROWS}")
        self.store = Path(store)
        self.target = check_target(target)
        self.batch_rows = batch_rows
        self.linger_s = linger_s
        self.on_status = on_status
        self.status = ShipStatus(target=redact(target), host=host or default_host())
        self._last_emit = 0.0
        self._conn: Any = None  # a psycopg connection while connected
        self._overlap = False
        self._reported_at = 0.0  # monotonic time of the last call that told the server this store's head
        self.report_every_s = REPORT_EVERY_S
        self.state_dir = Path(state_dir) if state_dir is not None else None  # where the signer's record lives
        self._checkpoint_stat: Optional[tuple] = None  # the signer's record as last read
        self._checkpoint_done: Optional[str] = None  # the note the server last answered for (held or refused)

    # -- the loop ---------------------------------------------------------------------

    def run(self, stop: Optional[threading.Event] = None, *, follow: bool = True, flush_s: float = 0.0) -> ShipStatus:
        """Ship until `stop` is set; without `follow`, until caught up (or refused, or an error).

        With `flush_s`, once stopped it goes on shipping what the store holds for up to
        that many seconds (the daemon's last rows, such as its stop attestation).
        Raises StoreUnreachable/SchemaError when the store cannot be read at all;
        everything else is a status, retried with backoff.
        """
        stop = stop or threading.Event()
        reader = db.open_reader(self.store)
        try:
            self.status.store_id = db.store_id(reader).hex()
            backoff = BACKOFF_MIN_S
            waiter = db.CommitWaiter(reader, _IDLE_MIN_S, _IDLE_MAX_S)
            while not stop.is_set():
                try:
                    shipped = self._step(reader)
                except _Retry as exc:
                    self._failed(str(exc))
                    if not follow:
                        break
                    stop.wait(backoff * random.uniform(0.8, 1.2))
                    backoff = min(backoff * 2, BACKOFF_MAX_S)
                    continue
                backoff = BACKOFF_MIN_S
                if self.status.refused is not None:
                    if not follow:
                        break
                    stop.wait(REFUSED_RETRY_S)
                    continue
                if shipped:
                    waiter.reset()
                    if shipped < self.batch_rows and follow:
                        # A partial batch: let rows gather for a moment rather than send (and make
                        # the server commit) a few at a time while the recorder is busy.
                        stop.wait(self.linger_s)
                    continue
                if not follow:
                    break
                # Caught up: wait until another connection commits to the store, a new
                # checkpoint is signed, or the idle report is due.
                waiter.wait_for_commit(stop, also=lambda: self._checkpoint_changed()
                                       or time.monotonic() - self._reported_at >= self.report_every_s)
            if flush_s > 0:
                self._flush(reader, time.monotonic() + flush_s)
                try:
                    self._send_checkpoint()  # the daemon signs its last checkpoint at stop
                except _Retry as exc:
                    self._failed(str(exc))
        finally:
            reader.close()
            self._disconnect()
            self.status.state = "stopped"
            self._emit(force=True)
        return self.status

    def _flush(self, reader: apsw.Connection, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                if not self._step(reader) or self.status.refused is not None:
                    return
            except _Retry as exc:
                self._failed(str(exc))
                return

    def _step(self, reader: apsw.Connection) -> int:
        """One round: make sure of the connection and the central head, ship one batch. Rows shipped."""
        import psycopg

        status = self.status
        try:
            if self._conn is None:
                self._conn = connect(self.target, application="agentwatch ship")
                status.connects += 1
                status.central_head_seq = self._conn.execute(
                    "SELECT seq FROM agentwatch.head(%s)", (status.store_id,)).fetchone()[0]
                # The first batch on a connection starts with the row the server holds last,
                # so the server compares it with this store's (and finds a rewrite or rollback).
                self._overlap = status.central_head_seq > 0
            central = status.central_head_seq or 0  # set just above on a new connection
            after = central - 1 if self._overlap else central
            document = Dictionaries.of(reader).document  # the server hashes a packed row's document
            rows = [(*r[:4], document(r[4], r[7], r[8]), r[5], r[6])
                    for r in reader.execute(_READ, (after, self.batch_rows))]
            head = reader.execute("SELECT seq, recorded_at_ns FROM records ORDER BY seq DESC LIMIT 1").fetchone()
            local_seq, local_ns = head if head else (0, 0)
            status.local_head_seq = local_seq
            due = time.monotonic() - self._reported_at >= self.report_every_s and central > 0
            if not rows and not self._overlap and not due:
                self._send_checkpoint()
                self._settle(reader, "caught_up")
                return 0
            columns = [list(c) for c in zip(*rows)] if rows else [[]] * 7
            columns += _erased_columns(reader, rows)
            accepted, duplicates, central, refused, refused_seq, detail = self._conn.execute(
                _INGEST, (status.store_id, status.host, local_seq, local_ns, *columns)).fetchone()
        except psycopg.Error as exc:
            self._disconnect()
            raise _Retry(f"{status.target}: {first_line(exc)}") from None
        except apsw.Error as exc:
            raise _Retry(f"{self.store}: reading the store failed: {exc}") from None
        except OSError as exc:
            self._disconnect()
            raise _Retry(f"{status.target}: {exc}") from None
        except FleetUnreachable as exc:
            raise _Retry(str(exc)) from None
        self._overlap = False
        self._reported_at = time.monotonic()
        status.central_head_seq = central
        status.rows_shipped += accepted
        status.duplicates += duplicates
        status.batches += 1
        if refused is not None:
            status.refused = {"kind": refused, "seq": refused_seq, "detail": detail}
            what = f"seq {refused_seq}" if refused_seq is not None else "this store"
            self._failed(f"the fleet server refused {what}: {refused}: {detail}", state="refused")
            # The next attempt starts over (head, overlap row), so it meets the same refusal
            # rather than finding nothing new to send and calling that caught up.
            self._disconnect()
            return 0
        status.refused = None
        status.failing_since_ns = None
        self._send_checkpoint()
        self._settle(reader, "shipping" if rows else "caught_up")
        return accepted

    # -- checkpoints ------------------------------------------------------------------

    def _record_path(self) -> Path:
        return checkpoints.state_path(bytes.fromhex(self.status.store_id), self.state_dir)

    def _checkpoint_changed(self) -> bool:
        try:
            st = os.stat(self._record_path())
            current: Optional[tuple] = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            current = None
        return current != self._checkpoint_stat

    def _send_checkpoint(self) -> None:
        """Send the last signed checkpoint if the server holds its rows and has not answered for it yet.

        The signer's record keeps the latest checkpoint only, so one signed and
        replaced before the shipper saw it is not sent: the next one covers its rows.
        """
        import psycopg

        status = self.status
        try:
            st = os.stat(self._record_path())
            self._checkpoint_stat = (st.st_ino, st.st_mtime_ns, st.st_size)
            record = checkpoints.read_state(bytes.fromhex(status.store_id), self.state_dir)
        except FileNotFoundError:
            self._checkpoint_stat = None
            return
        except (OSError, checkpoints.CheckpointError) as exc:
            status.last_error, status.last_error_at_ns = f"the signed checkpoint cannot be read: {exc}", time.time_ns()
            return
        if record is None or record.note == self._checkpoint_done or self._conn is None:
            return
        try:
            checkpoint = Checkpoint.parse(split_note(record.note)[0])
        except NoteError as exc:
            status.last_error = f"{self._record_path()}: not a signed checkpoint: {exc}"
            status.last_error_at_ns = time.time_ns()
            return
        if checkpoint.size < 1 or checkpoint.size > (status.central_head_seq or 0):
            return  # the rows first: the server checks the root against its own copy
        try:
            accepted, refused, detail = self._conn.execute(_INGEST_CHECKPOINT, (
                status.store_id, status.host, checkpoint.origin, checkpoint.size, checkpoint.root,
                record.note)).fetchone()
        except psycopg.Error as exc:
            self._disconnect()
            self._checkpoint_stat = None  # read it again on the next attempt
            raise _Retry(f"{status.target}: {first_line(exc)}") from None
        if refused == "not_yet":
            return
        self._checkpoint_done = record.note
        if accepted:
            status.checkpoint_size = checkpoint.size
            status.checkpoints_sent += 1
            status.checkpoint_refused = None
        else:
            # Recorded by the server as a finding; the rows go on shipping, the operator is told.
            status.checkpoint_refused = {"kind": refused, "size": checkpoint.size, "detail": detail}
            status.last_error = f"the fleet server refused checkpoint {checkpoint.size}: {refused}: {detail}"
            status.last_error_at_ns = time.time_ns()
        self._emit(force=True)

    # -- status -----------------------------------------------------------------------

    def _settle(self, reader: apsw.Connection, state: str) -> None:
        status = self.status
        status.failing_since_ns = None
        central = status.central_head_seq or 0
        status.lag_rows = max(status.local_head_seq - central, 0)
        if status.lag_rows:
            row = reader.execute("SELECT recorded_at_ns FROM records WHERE seq = ?", (central + 1,)).fetchone()
            status.lag_s = round(max(time.time_ns() - row[0], 0) / 1e9, 3) if row else None
        else:
            status.lag_s = 0.0
        changed = status.state != state
        status.state = state
        self._emit(force=changed)

    def _failed(self, message: str, state: str = "backoff") -> None:
        status = self.status
        now = time.time_ns()
        changed = status.state != state or status.last_error != message
        status.state = state
        status.last_error = message
        status.last_error_at_ns = now
        if status.failing_since_ns is None:
            status.failing_since_ns = now
        self._emit(force=changed)

    def _emit(self, force: bool = False) -> None:
        if self.on_status is None:
            return
        now = time.monotonic()
        if force or now - self._last_emit >= _STATUS_EVERY_S:
            self._last_emit = now
            self.status.updated_at_ns = time.time_ns()
            self.on_status(self.status)

    def _disconnect(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass  # a broken connection closes anyway
            self._conn = None


def _erased_columns(reader: apsw.Connection, rows: list[tuple]) -> list[list]:
    """For each row whose payload was removed, the digest its hash covers and the seq of the row that
    accounts for it; None, None for any other row.

    An erased row holds `null` and verifies with the digest its erasure row names
    (docs/erasure.md); a retained one with the digest kept in the row, under the
    retention row whose range holds it (docs/retention.md). The server needs the
    digest to check the row's hash.
    """
    digests: list = [None] * len(rows)
    erasures: list = [None] * len(rows)
    ranges: Optional[list] = None
    for i, row in enumerate(rows):
        if row[4] != ERASED_PAYLOAD or row[2] == "attestation":
            continue
        named = erasure_named(reader, row[0])
        if named is not None:
            digests[i], erasures[i] = named.payload_sha256, named.erasure_seq
            continue
        try:
            kept = reader.execute("SELECT kept_sha256 FROM records WHERE seq = ?", (row[0],)).fetchone()
        except apsw.SQLError:
            continue  # a store from before retention (migration 0007)
        if kept is not None and isinstance(kept[0], bytes):
            if ranges is None:
                ranges = retained_ranges(reader)
            by = covered(ranges, row[0])
            if by is not None:
                digests[i], erasures[i] = kept[0], by
    return [digests, erasures]


class _Retry(Exception):
    """An attempt failed in a way a later attempt may not: back off and try again."""
