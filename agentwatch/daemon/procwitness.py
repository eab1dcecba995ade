"""The process witness: what the kernel saw the harnesses' processes run (docs/reliability.md).

Hooks and transcripts are written by the harness, in the agent's reach; the kernel is not.
With CAP_NET_ADMIN and CAP_SYS_ADMIN (the service deployment grants them) this thread follows
the process trees of the harnesses and records, through the daemon's one writer:

- an `attestation` row of type `process_root` when a harness process becomes a root: the first
  non-shell ancestor of a hook client that sent a record (the kernel's peer pid of its
  connection), once per harness process and session;
- an `attestation` row of type `process`, `event: exec`, for every exec under a root: pid,
  ppid, uid, the kernel's start time, the program's path (fanotify), argv and cwd (from /proc
  while the process lives), and `tree_pid`, the root's child the process descends from;
- a `process` row with `event: exit` (the wait status) for every process that had an exec row;
- a `gap` row (`process_witness_lost`) with the count of kernel events that never arrived.

The row documents go through the daemon's redaction policy like events. Without the
capabilities the witness does not start and `health` says why; nothing else changes.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from agentwatch.daemon import kernel
from agentwatch.daemon.writer import Job, Refusal
from agentwatch.record import redact
from agentwatch.record.normalize import gap_append
from agentwatch.store import canonical
from agentwatch.store.append import Append, Appended
from agentwatch.store.chain import canonical_json

log = logging.getLogger(__name__)

SCHEMA = 1
DEFAULT_BUFFER = 8 << 20  # the proc connector's receive buffer: a 2,000-exec burst fits (docs/benchmarks.md)
RETAIN_NS = 10_000_000_000  # exited processes and unclaimed execs are remembered this long
BACKLOG_MAX = 20_000  # execs not (yet) under a root, kept for a root that names them late
COALESCE_S = 0.002  # after a wake-up, wait this long for the rest of a process's events
FLUSH_ROWS = 1000  # rows handed to the writer at once at most; fewer after flush_interval
# Processes between a hook client and the harness that started it: the root is above them.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "busybox"})


def _read(path: str, limit: int = 65536) -> Optional[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat_ppid(pid: int) -> Optional[int]:
    data = _read(f"/proc/{pid}/stat", 4096)
    if not data:
        return None
    try:
        return int(data[data.rindex(b")") + 2:].split()[1])
    except (ValueError, IndexError):
        return None


def _comm(pid: int) -> str:
    data = _read(f"/proc/{pid}/comm", 64)
    return data.decode("utf-8", "replace").strip() if data else ""


def _readlink(path: str) -> Optional[str]:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _uid(pid: int) -> Optional[int]:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _argv(pid: int) -> Optional[list[str]]:
    data = _read(f"/proc/{pid}/cmdline", 1 << 17)
    if not data:
        return None
    return [a.decode("utf-8", "surrogateescape") for a in data.rstrip(b"\0").split(b"\0")]


@dataclass
class _Opens:
    """The files the kernel opened for one exec of a pid (fanotify), before its exec event."""

    path: str
    expect: set
    mono_ns: int
    files: list = field(default_factory=list)  # every file of the exec: the program, its interpreter, its loader


@dataclass
class _Pending:
    """An exec not under any root yet: kept for a while in case a root claims it."""

    mono_ns: int
    pid: int
    ppid: Optional[int]
    start_ns: int
    path: Optional[str]


@dataclass
class Stats:
    execs_recorded: int = 0
    exits_recorded: int = 0
    roots: int = 0
    lost_events: int = 0  # proc connector events that never arrived, reported in gap rows
    fanotify_overflows: int = 0
    rows_unstored: int = 0  # rows the writer did not commit (reported in a gap row once it does)
    last_error: Optional[str] = None
    cpu_s: float = 0.0  # the witness thread's own CPU time


@dataclass
class _Root:
    pid: int
    sessions: set = field(default_factory=set)


class ProcessWitness:
    def __init__(self, policy: Optional[redact.Policy] = None, buffer_bytes: int = DEFAULT_BUFFER,
                 flush_interval: float = 0.25):
        self.policy = policy or redact.default_policy()
        self._rules = redactor(self.policy)
        self.buffer_bytes = buffer_bytes
        self.flush_interval = flush_interval
        self.state = "starting"
        self.reason: Optional[str] = None
        self.stats = Stats()
        self.procs: Optional[kernel.ProcConnector] = None
        self.opens_src: Optional[kernel.ExecOpens] = None
        self.paths_reason: Optional[str] = None  # why exec paths come from /proc only (no fanotify)
        self._peers: queue.SimpleQueue = queue.SimpleQueue()
        self._wake_r, self._wake_w = -1, -1
        self._thread: Optional[threading.Thread] = None
        self._stopping = False
        self._submit: Optional[Callable[[list[Job]], Any]] = None
        # The tree: every live process's parent, the processes under a root, what was recorded.
        self.parent: dict[int, int] = {}
        self.tracked: dict[int, tuple[int, int]] = {}  # pid -> (root pid, the root's child it descends from)
        self.roots: dict[int, _Root] = {}
        self.recorded: set[int] = set()
        self.exited: deque[tuple[int, int]] = deque()  # (monotonic ns, pid), purged after RETAIN_NS
        self.gone: set[int] = set()  # exited, still remembered as a parent
        self.names: dict[int, str] = {}  # pid -> the file name of the program its last exec ran
        self.opens: dict[int, deque[_Opens]] = {}
        self.backlog: deque[_Pending] = deque()
        self._rows: list[Append] = []
        self._last_flush = 0
        # Row ids: one random part per run and a counter (a uuid4 per row cost more than the row's hash).
        self._id_prefix = f"attest-process-{uuid.uuid4().hex[:16]}-"
        self._next_id = 0
        self._unstored_reported = 0
        self._lost_reported = 0
        self._overflows_reported = 0
        self._offset_ns = time.time_ns() - time.monotonic_ns()

    # -- lifecycle (the daemon's loop) ------------------------------------------------

    def open(self) -> bool:
        """Open the kernel sources; False (and `reason`) when this process may not.

        The proc connector is the witness; without it nothing runs. fanotify only names the
        program of an exec whose process is gone before /proc is read: without it the witness
        runs and says so (`exec_paths`).
        """
        if not kernel.supported():
            return self._unavailable("no netlink sockets on this platform (the process witness is Linux-only)")
        caps = kernel.effective_capabilities()
        missing = kernel.missing_capabilities(caps)
        if not caps >> kernel.CAP_NET_ADMIN & 1:
            return self._unavailable("missing " + ", ".join(missing))
        try:
            self.procs = kernel.ProcConnector(self.buffer_bytes)
        except kernel.Unavailable as exc:
            return self._unavailable(str(exc))
        if missing:
            self.paths_reason = "missing " + ", ".join(missing)
        else:
            try:
                self.opens_src = kernel.ExecOpens()
            except kernel.Unavailable as exc:
                self.paths_reason = str(exc)
        if self.paths_reason:
            log.warning("process witness: exec paths from /proc only (%s)", self.paths_reason)
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._scan_proc()
        self.state = "running"
        return True

    def _unavailable(self, reason: str) -> bool:
        self.state, self.reason = "unavailable", reason
        log.warning("process witness: unavailable (%s)", reason)
        return False

    def start(self, submit: Callable[[list[Job]], Any]) -> None:
        """Run the reading thread; `submit` hands jobs to the writer (any thread; the daemon hops to its loop)."""
        if self.state != "running":
            return
        self._submit = submit
        self._thread = threading.Thread(target=self._run, name="agentwatch-procwitness", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Read what the kernel already reported, hand the last rows over, and close the sources."""
        self._stopping = True
        self._wake()
        if self._thread is not None:
            self._thread.join()
        for src in (self.procs, self.opens_src):
            if src is not None:
                src.close()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1
        if self.state == "running":
            self.state = "stopped"

    def observe(self, normalize: Callable[..., Append]) -> Callable[..., Append]:
        """Wrap the daemon's normalizer: each record a connected client sends names its peer pid."""

        def observed(env: Any, *args: Any, **kw: Any) -> Append:
            row = normalize(env, *args, **kw)
            self.note(row, kw.get("uid"), kw.get("peer_pid"))
            return row

        return observed

    def note(self, row: Append, uid: Any, peer_pid: Any) -> None:
        """A record a connected client sent, normalized (on the loop or in a worker process): its
        peer pid names a harness process to follow."""
        if peer_pid and self.state == "running":
            self._peers.put((peer_pid, uid, row.payload))
            self._wake()

    def health(self) -> dict:
        s = self.stats
        doc: dict[str, Any] = {"state": self.state, "reason": self.reason}
        if self.procs is not None:
            doc.update({
                "roots": len(self.roots), "tracked": len(self.tracked), "execs_recorded": s.execs_recorded,
                "exits_recorded": s.exits_recorded, "lost_events": self.procs.lost,
                "enobufs": self.procs.enobufs, "fanotify_overflows": s.fanotify_overflows,
                "rows_unstored": s.rows_unstored, "receive_buffer_bytes": self.procs.rcvbuf,
                "exec_paths": "fanotify" if self.opens_src else f"/proc only ({self.paths_reason})",
                "marked_mounts": len(self.opens_src.marked) if self.opens_src else 0,
                "cpu_s": round(s.cpu_s, 3), "last_error": s.last_error,
            })
        return doc

    def _wake(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"\0")
            except (BlockingIOError, OSError):
                pass

    def _stored(self, result: Optional[Appended], error: Optional[Refusal]) -> None:
        if error is not None:  # on the loop: the row is gone; a gap row says how many
            self.stats.rows_unstored += 1

    # -- the reading thread -------------------------------------------------------------

    def _run(self) -> None:
        assert self.procs is not None
        proc_fd, wake_fd = self.procs.fileno(), self._wake_r
        opens_fd = self.opens_src.fileno() if self.opens_src is not None else -1
        fds = [proc_fd, wake_fd] + ([opens_fd] if opens_fd >= 0 else [])
        cpu0 = time.thread_time()
        last_purge = time.monotonic_ns()
        while True:
            stopping = self._stopping
            try:
                ready = set(select.select(fds, [], [], self.flush_interval if not stopping else 0)[0])
                if ready and not stopping:
                    time.sleep(COALESCE_S)  # a fork, its exec and often its exit, read in one go
                if stopping:
                    ready = set(fds)
                if wake_fd in ready:
                    self._drain_wake()
                self._step(proc_fd in ready, opens_fd in ready)
            except Exception as exc:  # a bad event costs that event, never the witness or the daemon
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("process witness")
            now = time.monotonic_ns()
            if now - last_purge > 1_000_000_000 or stopping:
                self._purge(now)
                self._note_loss()
                last_purge = now
                self.stats.cpu_s = time.thread_time() - cpu0
            if stopping or len(self._rows) >= FLUSH_ROWS or now - self._last_flush >= self.flush_interval * 1e9:
                self._flush()
                self._last_flush = now
            if stopping:
                return

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _step(self, events_ready: bool = True, opens_ready: bool = True) -> None:
        assert self.procs is not None
        events = self._read(events_ready, opens_ready)
        if not self._peers.empty():
            # A hook's exec precedes its record: read once more, so the programs of the hook's
            # shell and its client are known before its harness is looked for. What ran under
            # the harness before it was known waits in the backlog to be claimed.
            events += self._read(True, True)
            while not self._peers.empty():
                self._peer(*self._peers.get_nowait())
        if events:
            self._note_loss()

    def _read(self, events_ready: bool, opens_ready: bool) -> list[kernel.ProcEvent]:
        """Read and apply what the kernel reported: the events first, then the opens (a process's
        exec event follows the opens of its exec, so every exec in hand has its files queued)."""
        assert self.procs is not None
        events = list(self.procs.read()) if events_ready else []
        if self.opens_src is not None and (opens_ready or events):
            self._take_opens(self.opens_src.read())
            self.stats.fanotify_overflows = self.opens_src.overflows
        last_exec = {ev.pid: i for i, ev in enumerate(events) if ev.what == kernel.PROC_EVENT_EXEC}
        for i, ev in enumerate(events):
            if ev.what == kernel.PROC_EVENT_FORK:
                self._fork(ev)
            elif ev.what == kernel.PROC_EVENT_EXEC:
                self._exec(ev, superseded=last_exec[ev.pid] != i)
            elif ev.what == kernel.PROC_EVENT_EXIT:
                self._exit(ev)
        return events

    def _take_opens(self, opened: list[kernel.ExecOpen]) -> None:
        now = time.monotonic_ns()
        for o in opened:
            groups = self.opens.get(o.pid)
            if groups is None:
                groups = self.opens[o.pid] = deque()
            last = groups[-1] if groups else None
            if last is not None and o.path in last.expect:
                last.expect = set(o.interp)  # the interpreter or loader of the exec in progress
                last.files.append(o.path)
            else:
                groups.append(_Opens(o.path, set(o.interp), now, [o.path]))

    # -- the tree ---------------------------------------------------------------------------

    def _scan_proc(self) -> None:
        """Every process alive when the witness starts; forks keep the map current after."""
        for name in os.listdir("/proc"):
            if name.isdigit():
                ppid = _stat_ppid(int(name))
                if ppid is not None:
                    self.parent[int(name)] = ppid

    def _ppid(self, pid: int) -> Optional[int]:
        ppid = self.parent.get(pid)
        if ppid is None:
            ppid = _stat_ppid(pid)
            if ppid is not None:
                self.parent[pid] = ppid
        return ppid

    def _under(self, pid: int, root: int) -> Optional[int]:
        """The root's child that `pid` descends from, None when it is not under `root`."""
        child, p, steps = pid, self._ppid(pid), 0
        while p is not None and p > 1 and steps < 64:
            if p == root:
                return child
            child, p, steps = p, self._ppid(p), steps + 1
        return None

    def _name(self, pid: int) -> str:
        """The program a process runs: from its exec, as recorded (it may have exited), else /proc."""
        name = self.names.get(pid)
        return name if name is not None else _comm(pid)

    def _root_of(self, peer: int, uid: Optional[int]) -> Optional[int]:
        pid = self._ppid(peer)
        while pid is not None and pid > 1 and self._name(pid) in SHELLS:
            pid = self._ppid(pid)
        if pid is None or pid <= 1 or pid == os.getpid():
            return None
        # A harness runs as the user its hooks run as (the kernel's uid of the connection): an
        # ancestor of another account (sshd, a root shell, a daemon) is not the harness.
        if uid is not None and _uid(pid) != uid:
            return None
        return pid

    def _peer(self, peer: int, uid: Optional[int], payload: bytes) -> None:
        tracked = self.tracked.get(peer)
        root = tracked[0] if tracked else self._root_of(peer, uid)
        if root is None:
            return
        try:
            doc = canonical.loads(payload)
            session = doc.get("session_id") if isinstance(doc, dict) else None
            harness = doc.get("harness") if isinstance(doc, dict) else None
        except ValueError:
            session = harness = None
        known = self.roots.get(root)
        if known is not None and session in known.sessions:
            return
        if known is None:
            known = self.roots[root] = _Root(root)
            self.stats.roots += 1
            self.tracked[root] = (root, 0)
            for pid in list(self.parent):
                if pid not in self.tracked and pid not in self.gone:
                    top = self._under(pid, root)
                    if top is not None:
                        self.tracked[pid] = (root, top)
            self._claim_backlog(root)
        known.sessions.add(session)
        self._emit({"schema": SCHEMA, "type": "process_root", "root_pid": root, "peer_pid": peer,
                    "harness": harness, "session_id": session, "uid": _uid(root),
                    "path": _readlink(f"/proc/{root}/exe"), "argv": _argv(root)})

    def _claim_backlog(self, root: int) -> None:
        """Execs seen before their harness was known (the first hook's own, a command before it)."""
        keep: deque[_Pending] = deque()
        for p in self.backlog:
            top = self._under(p.pid, root)
            if top is None:
                keep.append(p)
                continue
            alive = p.pid not in self.gone
            if alive:
                self.tracked[p.pid] = (root, top)
            self._exec_row(p.pid, p.ppid, p.start_ns, p.path, "fanotify" if p.path else None,
                           alive=alive, where=(root, top))
        self.backlog = keep

    def _fork(self, ev: kernel.ProcEvent) -> None:
        if ev.tid != ev.pid:
            return  # a new thread, not a process
        self.parent[ev.pid] = ev.ppid
        self.gone.discard(ev.pid)
        self.names.pop(ev.pid, None)  # a new process: its program is known from its exec
        entry = self.tracked.get(ev.ppid)
        if entry is not None:
            root, top = entry
            self.tracked[ev.pid] = (root, top or ev.pid)

    def _exec(self, ev: kernel.ProcEvent, superseded: bool = False) -> None:
        pid = ev.pid
        groups = self.opens.get(pid)
        opened = groups.popleft() if groups else None
        path = opened.path if opened is not None else None
        name = path or _readlink(f"/proc/{pid}/exe")
        if name:
            self.names[pid] = name.rpartition("/")[2]
        start_ns = ev.ts_ns + self._offset_ns
        if pid in self.tracked:
            # An exec followed by another of the same process in hand: /proc already shows the next one.
            self._exec_row(pid, self.parent.get(pid), start_ns, path, "fanotify" if path else None,
                           alive=not superseded, files=opened.files if opened is not None else None)
        else:
            self.backlog.append(_Pending(time.monotonic_ns(), pid, self.parent.get(pid), start_ns, path))
            if len(self.backlog) > BACKLOG_MAX:
                self.backlog.popleft()

    def _exec_row(self, pid: int, ppid: Optional[int], start_ns: int, path: Optional[str],
                  path_from: Optional[str], alive: bool, where: Optional[tuple[int, int]] = None,
                  files: Optional[list] = None) -> None:
        root, top = where or self.tracked[pid]
        doc: dict[str, Any] = {"schema": SCHEMA, "type": "process", "event": "exec", "pid": pid, "ppid": ppid,
                               "root_pid": root, "tree_pid": top or pid, "start_ns": start_ns}
        argv = cwd = uid = None
        if alive:
            # /proc shows the process as it is now: if it has exec'd again since (bash -c runs its
            # last command in its own process), its argv belongs to the next exec, not this one.
            # cmdline before exe: an exec between the two shows as an exe not of this exec, and
            # the argv is dropped rather than given to the wrong program.
            argv, cwd, uid = _argv(pid), _readlink(f"/proc/{pid}/cwd"), _uid(pid)
            exe = _readlink(f"/proc/{pid}/exe")
            if exe is None or (files is not None and exe not in files):
                argv = cwd = uid = None
            if path is None and exe is not None:
                path, path_from = exe, "proc"
        doc.update({"path": path, "path_from": path_from, "argv": argv, "cwd": cwd, "uid": uid})
        self.recorded.add(pid)
        self.stats.execs_recorded += 1
        self._emit(doc)

    def _exit(self, ev: kernel.ProcEvent) -> None:
        pid = ev.pid
        if ev.tid != pid:
            return  # a thread ended; the process goes on
        entry = self.tracked.pop(pid, None)
        if pid in self.recorded and entry is not None:
            self.recorded.discard(pid)
            status = ev.status
            doc: dict[str, Any] = {"schema": SCHEMA, "type": "process", "event": "exit", "pid": pid,
                                   "root_pid": entry[0], "tree_pid": entry[1] or pid,
                                   "exit_ns": ev.ts_ns + self._offset_ns, "status": status}
            if status & 0x7F:
                doc["signal"] = status & 0x7F
            else:
                doc["exit_code"] = status >> 8 & 0xFF
            self.stats.exits_recorded += 1
            self._emit(doc, plain=True)
        self.recorded.discard(pid)
        self.roots.pop(pid, None)
        self.exited.append((time.monotonic_ns(), pid))
        self.gone.add(pid)

    def _purge(self, now: int) -> None:
        horizon = now - RETAIN_NS
        while self.exited and self.exited[0][0] < horizon:
            _, pid = self.exited.popleft()
            if pid in self.gone:  # a pid reused meanwhile stays
                self.gone.discard(pid)
                self.parent.pop(pid, None)
                self.names.pop(pid, None)
        while self.backlog and self.backlog[0].mono_ns < horizon:
            self.backlog.popleft()
        for pid in [p for p, g in self.opens.items() if not g or g[-1].mono_ns < horizon]:
            del self.opens[pid]
        self._offset_ns = time.time_ns() - time.monotonic_ns()

    # -- rows -------------------------------------------------------------------------------

    def _note_loss(self) -> None:
        assert self.procs is not None
        lost = self.procs.lost - self._lost_reported
        overflows = self.stats.fanotify_overflows - self._overflows_reported
        if lost or overflows:
            self._lost_reported += lost
            self._overflows_reported += overflows
            self.stats.lost_events = self._lost_reported
            self._rows.append(gap_append(f"gap-{uuid.uuid4()}", "process_witness_lost", {
                "source": "proc_connector" if lost else "fanotify", "lost_events": lost,
                "fanotify_overflows": overflows, "enobufs": self.procs.enobufs,
                "receive_buffer_bytes": self.procs.rcvbuf, "noticed_ns": time.time_ns(),
            }))
        unstored = self.stats.rows_unstored - self._unstored_reported
        if unstored:
            self._unstored_reported += unstored
            self._rows.append(gap_append(f"gap-{uuid.uuid4()}", "process_witness_unstored",
                                         {"rows": unstored, "noticed_ns": time.time_ns()}))

    def _emit(self, doc: dict, plain: bool = False) -> None:
        """Queue a row; `plain`: the document holds only numbers and fixed words (an exit), nothing to redact."""
        self._next_id += 1
        payload = canonical_json(doc) if plain else encode(doc, self.policy, self._rules)
        self._rows.append(Append(f"{self._id_prefix}{self._next_id}", "attestation", payload))

    def _flush(self) -> None:
        if self._rows and self._submit is not None:
            rows, self._rows = self._rows, []
            self._submit([Job(row, self._stored) for row in rows])


def redactor(policy: redact.Policy) -> redact.Policy:
    """The policy whose rules mask secrets in process documents: the daemon's, in the `redacted` mode
    unless privacy is `full` (`hashed` and `metadata-only` restrict the document first, in `encode`)."""
    if policy.mode in (redact.FULL, redact.REDACTED):
        return policy
    return redact.Policy(redact.REDACTED, policy.salt, policy.extra_patterns)


def encode(doc: dict, policy: redact.Policy, rules: Optional[redact.Policy] = None) -> bytes:
    """A process document as the privacy mode lets it be stored (docs/redaction.md).

    The redaction rules run over every string (a token in argv is masked as in a tool call's
    command); `hashed` keys argv, cwd and paths; `metadata-only` keeps the path and the
    numbers and drops argv and cwd.
    """
    if policy.mode == redact.METADATA_ONLY:
        doc = dict(doc)
        argv = doc.pop("argv", None)
        doc.pop("cwd", None)
        doc["argc"] = len(argv) if isinstance(argv, list) else None
    elif policy.mode == redact.HASHED:
        doc = dict(doc)
        for key in ("argv", "cwd", "path"):
            value = doc.get(key)
            if isinstance(value, list):
                doc[key] = [policy.keyed(v) for v in value]
            elif isinstance(value, str):
                doc[key] = policy.keyed(value)
    return (rules or redactor(policy)).encode(doc)
