"""Normalization and redaction in worker processes, off the daemon's event loop.

The loop frames lines and answers pings; everything whose cost grows with a payload
(decoding, parsing, the adapter, redaction, canonical encoding: `normalize.to_append`) runs
in `python -m agentwatch.daemon.workers` children, so a megabyte in one hook's payload never
delays another hook's acknowledgement. Threads would not do: they share the GIL with the loop.

Each child is joined to the daemon by a socket pair and answers requests in frames of a
4-byte length and a pickle (parent and child only, same user):

- first, parent to child: ``(mode, salt, extra_patterns)``, the redaction policy;
- then ``(id, "line", line_bytes, uid, peer_pid)``: a request line not parsed on the loop, or
  ``(id, "envelope", envelope, uid, peer_pid)``: a parsed append request (a spool file's);
- answered by ``(id, "row", (record_id, kind, payload))`` or ``(id, "refused", (code, message))``.

Work is handed out fairly (fairness.RoundRobin, one item per peer in turn) and only a few
items at a time to each child, so a hook's record never queues behind a flood in a pipe.
A child that dies answers every record it held `unavailable` (its sender spools, and the
record is stored once later: records are idempotent by record_id) and is started again.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import signal
import socket
import struct
import subprocess
import sys
from typing import Any, Callable, Optional

from agentwatch.daemon.fairness import Peer, RoundRobin
from agentwatch.store.append import Append

log = logging.getLogger(__name__)

_LEN = struct.Struct(">I")
DEPTH = 16  # items one child holds at once: a hook's record waits behind at most this many ...
HELD_BYTES = 256 << 10  # ... and this many bytes of them, unless the child holds nothing
# Records normalized ahead of the writer (in children, or finished and waiting for it) beyond
# which only lone records are handed out: when the writer is the bottleneck, the children do
# not spend the cores on a flood's backlog that the writer and a hook's record need.
AHEAD = 128
FLUSH_BEFORE = 64 << 10  # a child sends its answers so far before it starts an item this large
RESTART_PAUSE_S = 0.2  # between a child's death and its replacement
START_TIMEOUT_S = 30.0  # a child that cannot answer in this long after start is not used

Outcome = Any  # Append, or ("refused", code, message)
Callback = Callable[[Outcome], None]


def refused(code: str, message: str) -> tuple:
    return ("refused", code, message)


class _Item:
    __slots__ = ("id", "kind", "data", "uid", "pid", "callback", "size", "peer", "lone")

    def __init__(self, id: int, kind: str, data: Any, uid: Optional[int], pid: Optional[int], callback: Callback,
                 peer: Peer = None):
        self.id, self.kind, self.data, self.uid, self.pid, self.callback = id, kind, data, uid, pid, callback
        self.size = len(data) if isinstance(data, (bytes, bytearray)) else 1024
        self.peer = peer
        self.lone = False  # its peer had nothing else queued or in a child: a hook's record


class _Child(asyncio.Protocol):
    """One worker process and the loop's end of its socket."""

    def __init__(self, pool: "Pool", index: int):
        self.pool = pool
        self.index = index
        self.proc: Optional[subprocess.Popen] = None
        self.sock: Optional[socket.socket] = None  # the parent's end, until the loop owns it
        self.transport: Optional[asyncio.Transport] = None
        self.held: dict[int, _Item] = {}
        self.held_bytes = 0
        self.buf = bytearray()
        self.alive = False
        self.answered = 0
        self.ready: Optional[asyncio.Future] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos = 0
        answers = []
        while len(buf) - pos >= 4:
            (n,) = _LEN.unpack_from(buf, pos)
            if len(buf) - pos - 4 < n:
                break
            answers.append(pickle.loads(buf[pos + 4:pos + 4 + n]))
            pos += 4 + n
        if pos:
            del buf[:pos]
        for answer in answers:
            self._answered(answer)
        if answers:
            self.pool._dispatch()

    def _answered(self, answer: tuple) -> None:
        id, status, value = answer
        if id == 0:  # "ready": the child compiled the rules and takes records now
            self.alive = True
            if self.ready is not None and not self.ready.done():
                self.ready.set_result(None)
            return
        item = self.held.pop(id, None)
        if item is None:
            return
        self.held_bytes -= item.size
        self.pool._out_of_child(item)
        self.answered += 1
        outcome: Outcome = Append(*value) if status == "row" else refused(*value)
        self.pool._settled(item, outcome)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self.ready is not None and not self.ready.done():
            self.ready.set_result(None)  # the start waits no longer; _died starts another
        self.pool._died(self)

    def takes(self, item: _Item) -> bool:
        return self.alive and (not self.held or (len(self.held) < DEPTH
                                                 and self.held_bytes + item.size <= HELD_BYTES))

    def frame(self, item: _Item) -> Optional[bytes]:
        """The item as a frame for the child, now held; None when it cannot be carried (it was answered)."""
        try:
            body = pickle.dumps((item.id, item.kind, item.data, item.uid, item.pid, item.lone), protocol=5)
        except RecursionError:  # a parsed envelope nested deeper than pickle goes: as to_append refuses it
            self.pool._settled(item, refused("bad_request", "a value in the envelope is nested too deeply to store"))
            return None
        self.held[item.id] = item
        self.held_bytes += item.size
        self.pool._in_children[item.peer] = self.pool._in_children.get(item.peer, 0) + 1
        return _LEN.pack(len(body)) + body


class Pool:
    """Worker processes normalizing records for the event loop; every method runs on the loop."""

    def __init__(self, policy: Any, size: int):
        self.size = max(1, size)
        self._policy = (policy.mode, policy.salt, tuple(policy.extra_patterns))
        self._queue: RoundRobin[_Item] = RoundRobin()
        self._in_children: dict[Peer, int] = {}  # items in a child's hands, per peer
        self.backlog: Callable[[], int] = lambda: 0  # finished records waiting for the writer (Admission.ready)
        self._children: list[_Child] = []
        self._next_id = 0
        self._stopping = False
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self.restarts = 0
        self.crashes = 0  # children that died while the daemon ran
        self.refused_by_crash = 0  # records answered `unavailable` because their child died

    # -- lifecycle ----------------------------------------------------------------------------

    def launch(self) -> None:
        """Start the children's processes, off the loop; `start()` waits until they are ready.

        The daemon calls it early in its startup, so the children import and compile the
        rules while the daemon runs its own self-test and opens the store. They take no
        record before `start()`, which the daemon awaits before it binds its socket.
        """
        if not self._children:
            self._children = [_Child(self, i) for i in range(self.size)]
            for child in self._children:
                self._launch(child)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.launch()
        await asyncio.gather(*(self._connect(child) for child in self._children))

    def _launch(self, child: _Child) -> None:
        parent, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            child.proc = subprocess.Popen(
                [sys.executable, "-m", "agentwatch.daemon.workers", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except BaseException:
            parent.close()
            raise
        finally:
            theirs.close()
        child.sock = parent
        body = pickle.dumps(self._policy, protocol=5)
        parent.sendall(_LEN.pack(len(body)) + body)  # before the loop owns the socket: a small write

    async def _spawn(self, child: _Child) -> None:
        self._launch(child)
        await self._connect(child)

    async def _connect(self, child: _Child) -> None:
        parent, child.sock = child.sock, None
        assert parent is not None and self._loop is not None
        parent.setblocking(False)
        child.buf.clear()
        child.ready = self._loop.create_future()
        await self._loop.create_unix_connection(lambda: child, sock=parent)
        try:
            await asyncio.wait_for(asyncio.shield(child.ready), START_TIMEOUT_S)
        except asyncio.TimeoutError:
            log.error("normalizing worker %d did not start within %g s", child.index, START_TIMEOUT_S)
        self._dispatch()

    async def stop(self) -> None:
        """End every child: close its socket (it exits on EOF), then wait for it."""
        self._stopping = True
        for child in self._children:
            if child.transport is not None:
                child.transport.close()
            if child.sock is not None:  # launched, never connected: a startup that failed in between
                child.sock.close()
                child.sock = None
        for child in self._children:
            if child.proc is not None:
                proc = child.proc
                try:
                    await asyncio.wait_for(asyncio.to_thread(proc.wait), 5.0)
                except asyncio.TimeoutError:
                    proc.kill()
                    await asyncio.to_thread(proc.wait)

    @property
    def stopping(self) -> bool:
        """stop() was called (the daemon's shutdown, or a startup that failed after start())."""
        return self._stopping

    def pids(self) -> list[int]:
        return [c.proc.pid for c in self._children if c.proc is not None and c.alive]

    def health(self) -> dict:
        return {"workers": self.size, "alive": sum(c.alive for c in self._children), "pids": self.pids(),
                "queued": len(self._queue),
                "held": sum(len(c.held) for c in self._children), "crashes": self.crashes,
                "records_refused_by_crash": self.refused_by_crash}

    # -- work -----------------------------------------------------------------------------------

    def normalize_line(self, peer: Peer, line: bytes, uid: Optional[int], pid: Optional[int],
                       callback: Callback) -> None:
        """A request line, parsed and normalized in a child; `callback(outcome)` on the loop."""
        self._put(peer, _Item(self._new_id(), "line", bytes(line), uid, pid, callback, peer))

    def normalize_envelope(self, peer: Peer, envelope: dict, uid: Optional[int], callback: Callback) -> None:
        """A parsed append envelope (a spool file's), normalized in a child."""
        self._put(peer, _Item(self._new_id(), "envelope", envelope, uid, None, callback, peer))

    def _out_of_child(self, item: _Item) -> None:
        n = self._in_children[item.peer] - 1
        if n:
            self._in_children[item.peer] = n
        else:
            del self._in_children[item.peer]

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def dispatch(self) -> None:
        """Hand out what waits, now that the writer has room (Admission.on_room)."""
        if self._children:
            self._dispatch()

    def _put(self, peer: Peer, item: _Item) -> None:
        if self._stopping:
            item.callback(refused("shutting_down", "the daemon is stopping; spool the record"))
            return
        self._queue.push(peer, item)
        self._dispatch()

    def _dispatch(self) -> None:
        queue = self._queue
        frames: dict[_Child, list[bytes]] = {}
        while len(queue):
            item = queue.peek()
            assert item is not None
            lone = item.peer not in self._in_children and queue.count(item.peer) == 1
            if not lone and sum(self._in_children.values()) + self.backlog() >= AHEAD:
                break  # the writer is behind: the backlog waits here, lone records still go
            ready = [c for c in self._children if c.takes(item)]
            if not ready:
                break
            child = min(ready, key=lambda c: (c.held_bytes, len(c.held)))
            queue.pop()
            item.lone = lone
            frame = child.frame(item)
            if frame is not None:
                frames.setdefault(child, []).append(frame)
        for child, out in frames.items():  # one write per child: the frames of a dispatch go together
            assert child.transport is not None
            child.transport.write(b"".join(out))

    def _settled(self, item: _Item, outcome: Outcome) -> None:
        try:
            item.callback(outcome)
        except Exception:
            log.exception("answering a normalized record failed")

    def _died(self, child: _Child) -> None:
        was_alive, child.alive = child.alive, False
        held = list(child.held.values())
        child.held.clear()
        for item in held:
            self._out_of_child(item)
        child.held_bytes = 0
        if child.transport is not None:
            child.transport = None
        if self._stopping:
            for item in held:
                self._settled(item, refused("shutting_down", "the daemon is stopping; spool the record"))
            return
        if was_alive:
            self.crashes += 1
            log.warning("normalizing worker %d (pid %s) ended with %d records; they are answered unavailable",
                        child.index, child.proc.pid if child.proc else None, len(held))
        self.refused_by_crash += len(held)
        for item in held:
            self._settled(item, refused("unavailable", "the normalizing worker ended; spool the record"))
        if child.proc is not None:
            try:
                child.proc.wait(timeout=0)
            except subprocess.TimeoutExpired:
                child.proc.kill()
                try:
                    child.proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
        assert self._loop is not None
        self._loop.call_later(RESTART_PAUSE_S, self._restart, child)
        self._dispatch()

    def _restart(self, child: _Child) -> None:
        if self._stopping:
            return
        self.restarts += 1
        task = asyncio.ensure_future(self._spawn(child))
        task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Future) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("could not restart a normalizing worker: %r", task.exception())


# -- the child ------------------------------------------------------------------------------------


def _handle(kind: str, data: Any, uid: Optional[int], pid: Optional[int], normalize: Callable[..., Append]) -> tuple:
    """One request: ("row", (record_id, kind, payload)) or ("refused", (code, message))."""
    from agentwatch.store import canonical

    if kind == "line":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return "refused", ("bad_utf8", f"line is not valid UTF-8 (byte {exc.start})")
        try:
            request = canonical.loads(text)
        except (ValueError, RecursionError) as exc:
            return "refused", ("bad_json", f"line is not valid JSON: {exc}")
        if type(request) is not dict:
            return "refused", ("bad_json", "line is not a JSON object")
        op = request.get("op")
        if op != "append":
            if op in ("ping", "health", "subscribe", "retention"):
                return "refused", ("bad_request", f"a {op} request line must be shorter than a record's")
            return "refused", ("unknown_op", f"unknown op {op!r} (append, ping, health, subscribe, retention)")
        if request.get("v", 1) != 1:
            return "refused", ("bad_request", f"protocol version {request.get('v')!r} is not spoken here (v1)")
        request.setdefault("delivery", "socket")
    else:
        request = data
    try:
        row = normalize(request, uid=uid, peer_pid=pid) if pid is not None else normalize(request, uid=uid)
    except (ValueError, RecursionError) as exc:  # BadEnvelope is a ValueError
        return "refused", ("bad_request", str(exc))
    except Exception as exc:  # a bug must cost one request, not the worker
        log.exception("normalizing a request failed: %r", exc)
        return "refused", ("bad_request", f"could not normalize the request ({type(exc).__name__})")
    return "row", (row.record_id, row.kind, row.payload)


def _read_exact(sock: socket.socket, n: int) -> Optional[bytes]:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def main(argv: list[str]) -> int:
    import functools

    from agentwatch.record import normalize, redact
    from agentwatch.record.redact import rules

    sock = socket.socket(fileno=int(argv[0]))
    head = _read_exact(sock, 4)
    if head is None:
        return 0
    (n,) = _LEN.unpack(head)
    mode, salt, extra = pickle.loads(_read_exact(sock, n) or b"")
    policy = redact.Policy(mode=mode, salt=salt, extra_patterns=extra)
    rules.compile_builtin()  # the rules compiled before the first record, not during it
    to_append = functools.partial(normalize.to_append, policy=policy)
    ready = pickle.dumps((0, "ready", None), protocol=5)
    sock.sendall(_LEN.pack(len(ready)) + ready)
    buf = bytearray()
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except InterruptedError:
            continue
        if not chunk:
            return 0
        buf += chunk
        pos = 0
        items = []
        while len(buf) - pos >= 4:
            (n,) = _LEN.unpack_from(buf, pos)
            if len(buf) - pos - 4 < n:
                break
            items.append(pickle.loads(buf[pos + 4:pos + 4 + n]))
            pos += 4 + n
        if pos:
            del buf[:pos]
        items.sort(key=lambda item: not item[5])  # a lone record (a hook's) before a flood's backlog
        out: list[bytes] = []
        for i, (id, kind, data, uid, pid, _lone) in enumerate(items):
            status, value = _handle(kind, data, uid, pid, to_append)
            body = pickle.dumps((id, status, value), protocol=5)
            out.append(_LEN.pack(len(body)) + body)
            following = items[i + 1] if i + 1 < len(items) else None
            if following is None or _lone or len(out) >= 64 or (
                    isinstance(following[2], (bytes, bytearray)) and len(following[2]) > FLUSH_BEFORE):
                sock.sendall(b"".join(out))  # a lone record's answer, and all before a large item, leave now
                out.clear()


if __name__ == "__main__":
    # The daemon ends its children by closing their sockets; a Ctrl-C meant for it is not theirs.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="agentwatch normalizing worker %(process)d: %(message)s")
    try:
        sys.exit(main(sys.argv[1:]))
    except (BrokenPipeError, ConnectionResetError):
        sys.exit(0)
