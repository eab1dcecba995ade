"""One client connection of the daemon: framing, request handling, ordered replies.

Lines are split out of the byte stream here. A short line is parsed on the event loop
(pings, health and subscriptions are answered here); an append, and any line longer than
INLINE_MAX, is normalized in a worker process (workers.py), so no work on the loop grows
with a payload. Rows reach the writer in request order, and replies leave in request order
even when requests are pipelined: every request takes a slot in `pending`, and slots are
written out from the front as they are filled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import deque
from typing import Any, Callable, Optional, Protocol

from agentwatch import __version__, platform_layer
from agentwatch.daemon import subscriptions
from agentwatch.daemon.admission import Admission
from agentwatch.daemon.retention import operator_request
from agentwatch.daemon.settings import Counters, ServeConfig
from agentwatch.daemon.workers import Outcome
from agentwatch.daemon.writer import Job, Refusal
from agentwatch.store import canonical
from agentwatch.store.append import Append, Appended

log = logging.getLogger(__name__)

class Host(Protocol):
    """What a connection, and the spool drainer, need from the daemon (daemon.server.Server)."""

    uid: int
    pid: int
    config: ServeConfig
    counters: Counters
    admission: Admission
    conns: set
    last_data: float
    subscriptions: Any
    normalize: Callable[..., Append]
    recorder_watch: Any  # daemon.recorder_watch.RecorderWatch: the `coverage` op

    def health(self) -> dict: ...

    def mark_dirty(self, conn: "Connection") -> None: ...


_TRUE_FALSE = (b"false", b"true")
INLINE_MAX = 8192  # bytes of a line parsed on the loop; a longer one is parsed in a worker


def _json_str(text: str) -> bytes:
    """A JSON string literal; the common case (a UUID) skips json.dumps."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return b'"' + text.encode("ascii") + b'"'
    return json.dumps(text).encode("ascii")


def error_line(error: str, message: str) -> bytes:
    return json.dumps({"ok": False, "error": error, "message": message}).encode("utf-8") + b"\n"


class Slot:
    """A reply owed to a client, in request order."""

    __slots__ = ("conn", "reply")

    def __init__(self, conn: "Connection", reply: Optional[bytes] = None):
        self.conn = conn
        self.reply = reply

    def done(self, result: Optional[Appended], error: Optional[Refusal]) -> None:
        """Called on the event loop by Admission.settle."""
        conn = self.conn
        counters = conn.server.counters
        if result is not None:
            if result.duplicate:
                counters.duplicates += 1
            else:
                counters.accepted += 1
            self.reply = b'{"ok":true,"seq":%d,"record_id":%s,"duplicate":%s}\n' % (
                result.seq,
                _json_str(result.record_id),
                _TRUE_FALSE[result.duplicate],
            )
        else:
            assert error is not None, "Admission.settle passes a result or an error"
            if error.code in counters.rejected:  # bad_request, or what a worker found in a long line
                counters.rejected[error.code] += 1
            else:
                counters.unavailable += 1
            self.reply = error_line(error.code, error.message)
        conn.server.mark_dirty(conn)


class Connection(asyncio.Protocol):
    # Set by connection_made, which the event loop calls before anything else reaches the protocol.
    transport: asyncio.Transport

    def __init__(self, server: Host):
        self.server = server
        self.buf = bytearray()
        self.pending: deque[Slot] = deque()
        self.discarding = False  # inside a line longer than max_line: drop bytes up to its newline
        self.paused = False  # waiting for in-flight capacity
        self.write_paused = False  # the peer is not reading its replies fast enough
        self.reading_stopped = False  # the daemon is stopping
        self.reading = True
        self.eof = False
        self.closed = False
        self.last_line = time.monotonic()
        self.peer_pid: Optional[int] = None
        self.peer_uid: Optional[int] = None
        self.peer: tuple = (None, None)  # (uid, pid): whose share of capacity this connection uses
        self.normalizing: deque[Job] = deque()  # appends in a worker or waiting for those before them
        # After a `subscribe` request the connection only carries pushes (subscriptions.py):
        # the request, then the live Subscriber once earlier replies are out.
        self.subscribe_request: Optional[dict] = None
        self.subscription: Optional[subscriptions.Subscriber] = None

    # -- asyncio callbacks ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        server = self.server
        server.counters.connections += 1
        sock = transport.get_extra_info("socket")
        pid, uid = platform_layer.peer_credentials(sock) if sock is not None else (None, None)
        # Owner only, unless a socket group is configured: then the socket's permissions decide who
        # connects (the group's members), and the kernel's uid of each peer is recorded.
        if uid is None or (uid != server.uid and not server.config.socket_group):
            server.counters.peers_refused += 1
            self.transport.write(error_line("forbidden", f"peer uid {uid} is not the daemon's uid {server.uid}"))
            self.transport.close()
            self.closed = True
            return
        self.peer_pid, self.peer_uid = pid, uid
        self.peer = (uid, pid)
        server.conns.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closed or self.subscribe_request is not None:
            return  # a subscriber's further input is ignored (its EOF still closes it)
        self.server.last_data = time.monotonic()
        if self.discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return
            self.discarding = False
            data = data[newline + 1 :]
        self.buf += data
        self._process()

    def eof_received(self) -> bool:
        self.eof = True
        # Be lenient with a last request that lacks its newline.
        if self.buf and not self.discarding:
            self.buf += b"\n"
        self._process()
        self._finish_if_done()
        return True  # keep the transport open until our replies are written

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.closed = True
        if self.subscription is not None:
            self.subscription.close()
        self.buf.clear()
        self.server.conns.discard(self)

    def pause_writing(self) -> None:
        self.write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.subscription is not None:
            self.subscription.writable()
        self._update_reading()
        self._process()

    # -- framing and requests -------------------------------------------------------

    def _process(self) -> None:
        buf = self.buf
        server = self.server
        config = server.config
        max_line = config.max_line
        jobs: list[Job] = []
        pos = 0
        try:
            # Once reading stopped for exit, the buffered input is finite: answer all of it
            # even if the peer is slow to read.
            while not self.closed and self.subscribe_request is None and (not self.write_paused or self.reading_stopped):
                newline = buf.find(b"\n", pos)
                if newline < 0:
                    if len(buf) - pos > max_line:
                        self._reject("too_large", f"line exceeds {max_line} bytes; discarded up to its newline")
                        self.discarding = True
                        pos = len(buf)
                    break
                if newline - pos > max_line:
                    self._reject("too_large", f"line exceeds {max_line} bytes; discarded")
                    pos = newline + 1
                    continue
                if len(self.pending) >= config.max_inflight_per_connection:
                    self.flush()  # ready replies (errors, pings) must not count against the bound
                if (not server.admission.has_capacity(self.peer)
                        or len(self.pending) >= config.max_inflight_per_connection):
                    self._wait_for_capacity()  # resumed by Admission.wake_waiting
                    break
                line = buf[pos:newline]
                pos = newline + 1
                self._handle(line, jobs)
        finally:
            if pos:
                self.last_line = time.monotonic()
                del buf[:pos]
            if jobs:
                server.admission.submit(jobs)
            self.flush()

    def _handle(self, line: bytearray, jobs: list[Job]) -> None:
        pool = getattr(self.server, "pool", None)
        if pool is not None and len(line) > INLINE_MAX:
            return self._to_worker(pool, line)
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._reject("bad_utf8", f"line is not valid UTF-8 (byte {exc.start})")
        try:
            request = canonical.loads(text)
        except (ValueError, RecursionError) as exc:
            return self._reject("bad_json", f"line is not valid JSON: {exc}")
        if type(request) is not dict:
            return self._reject("bad_json", "line is not a JSON object")
        op = request.get("op")
        if op == "append":
            if request.get("v", 1) != 1:
                return self._reject("bad_request", f"protocol version {request.get('v')!r} is not spoken here (v1)")
            if pool is not None:
                return self._to_worker(pool, line)
            request.setdefault("delivery", "socket")
            try:
                row = self.server.normalize(request, uid=self.peer_uid, peer_pid=self.peer_pid)
            except (ValueError, RecursionError) as exc:  # BadEnvelope is a ValueError
                return self._reject("bad_request", str(exc))
            except Exception as exc:  # a bug must cost one request, not the connection
                log.exception("normalizing a request failed: %r", exc)
                return self._reject("bad_request", f"could not normalize the request ({type(exc).__name__})")
            slot = Slot(self)
            self.pending.append(slot)
            jobs.append(Job(row, slot.done, self.peer))
        elif op == "ping":
            reply = {"ok": True, "op": "ping", "version": __version__, "pid": self.server.pid}
            self.pending.append(Slot(self, json.dumps(reply).encode("utf-8") + b"\n"))
        elif op == "health":
            self.pending.append(Slot(self, json.dumps(self.server.health()).encode("utf-8") + b"\n"))
        elif op == "coverage":
            try:
                self.server.recorder_watch.supplied(request, self.peer_uid, self.peer_pid)
            except ValueError as exc:
                return self._reject("bad_request", str(exc))
            reply = {"ok": True, "op": "coverage", "accepted": True}
            self.pending.append(Slot(self, json.dumps(reply).encode("utf-8") + b"\n"))
        elif op == "retention":  # a legal hold placed or released, an archive written (docs/retention.md)
            try:
                row = operator_request(request, store_path=self.server.config.store, own_uid=os.getuid(),
                                   peer_uid=self.peer_uid)
            except ValueError as exc:
                return self._reject("bad_request", str(exc))
            slot = Slot(self)
            self.pending.append(slot)
            jobs.append(Job(row, slot.done))
        elif op == "subscribe":
            try:
                subscriptions.parse_request(request)
            except ValueError as exc:
                return self._reject("bad_request", str(exc))
            self.subscribe_request = request  # starts in flush(), after the replies owed before it
        else:
            self._reject("unknown_op", f"unknown op {op!r} (append, ping, health, subscribe, retention, coverage)")

    def _to_worker(self, pool, line: bytearray) -> None:
        """Count the record in and have a worker parse and normalize it."""
        slot = Slot(self)
        self.pending.append(slot)
        job = Job(None, slot.done, self.peer)  # type: ignore[arg-type]  # the row comes from the worker
        self.server.admission.hold(job)
        self.normalizing.append(job)
        pool.normalize_line(self.peer, line, self.peer_uid, self.peer_pid,
                            lambda outcome: self._normalized(job, outcome))

    def _normalized(self, job: Job, outcome: Outcome) -> None:
        """On the loop: a worker's answer. Rows go to the writer in request order."""
        if isinstance(outcome, Append):
            job.row = outcome
            witness = getattr(self.server, "witness", None)  # the process witness learns its harness roots
            if witness is not None:
                witness.note(outcome, self.peer_uid, self.peer_pid)
        else:
            job.row = Refusal(outcome[1], outcome[2])  # type: ignore[assignment]
        queue = self.normalizing
        admission = self.server.admission
        ready: list[Job] = []
        while queue and queue[0].row is not None:
            ready.append(queue.popleft())
        refused = [(j, None, j.row) for j in ready if isinstance(j.row, Refusal)]
        if refused:
            admission.settle(refused)
        admission.submit([j for j in ready if not isinstance(j.row, Refusal)], held=True)
        if refused:
            self.flush()
            admission.wake_waiting()

    def _reject(self, reason: str, message: str) -> None:
        self.server.counters.rejected[reason] += 1
        self.pending.append(Slot(self, error_line(reason, message)))

    # -- replies ------------------------------------------------------------------------

    def flush(self) -> None:
        """Write every reply that is ready at the front of the queue."""
        pending = self.pending
        if pending and pending[0].reply is not None:
            out: list[bytes] = []
            while pending and (reply := pending[0].reply) is not None:
                pending.popleft()
                out.append(reply)
            if not self.closed:
                self.transport.write(b"".join(out))
        if self.subscribe_request is not None and self.subscription is None and not pending and not self.closed:
            from_seq, kinds = subscriptions.parse_request(self.subscribe_request)
            self.subscription = subscriptions.Subscriber(self.server.subscriptions, self, from_seq, kinds)
            self.subscription.start()
        self._finish_if_done()

    def _finish_if_done(self) -> None:
        if self.eof and not self.closed and not self.pending and (b"\n" not in self.buf or self.subscribe_request):
            self.close()

    # -- flow control -------------------------------------------------------------------

    def _wait_for_capacity(self) -> None:
        if not self.paused:
            self.paused = True
            self.server.admission.waiting.append(self)
            self._update_reading()

    def resume(self) -> None:
        """Capacity freed up (called by the server)."""
        self.paused = False
        if self.closed:
            return
        self._update_reading()
        self._process()

    def stop_reading(self) -> None:
        """Drain for exit: read nothing more; what is buffered is still answered."""
        self.reading_stopped = True
        self._update_reading()
        if not self.paused:
            self._process()

    def _update_reading(self) -> None:
        want = not (self.paused or self.write_paused or self.reading_stopped or self.closed or self.eof)
        if want != self.reading and not self.closed:
            self.reading = want
            if want:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    # -- state for the server -----------------------------------------------------------

    def has_work(self) -> bool:
        """Requests read but not answered yet (buffered complete lines or pending slots)."""
        return not self.closed and (bool(self.pending) or (b"\n" in self.buf and not self.discarding))

    def is_idle(self) -> bool:
        return not self.pending and not self.paused and self.subscribe_request is None

    def time_out(self, timeout: float) -> None:
        if not self.closed:
            self.transport.write(error_line("timeout", f"no complete request line in {timeout:g} s; closing"))
            self.close()

    def close(self) -> None:
        # Stays in server.conns until connection_lost, so the stop can wait for the last writes.
        if not self.closed:
            self.closed = True
            self.transport.close()  # writes what is buffered first

    def abort(self) -> None:
        self.closed = True
        self.server.conns.discard(self)
        if hasattr(self, "transport"):
            self.transport.abort()
