"""The Linux kernel interfaces the process witness reads (docs/reliability.md, "The process witness").

Standard library only: `socket` for the proc connector (netlink, NETLINK_CONNECTOR) and
`ctypes` for fanotify, so installing agentwatch needs no compiled extension, no kernel module
and no eBPF toolchain, and the two sources are a few hundred lines anyone can read against
the kernel headers (include/uapi/linux/connector.h, cn_proc.h, fanotify.h).

- `ProcConnector`: every fork, exec and exit on the machine, each stamped by the kernel with
  the CPU it ran on, a per-CPU sequence number and a monotonic time. A sequence number that
  skips is an event the kernel sent and this socket never received (a full receive buffer,
  `ENOBUFS`): `lost` counts them exactly. Needs CAP_NET_ADMIN.
- `ExecOpens`: fanotify `FAN_OPEN_EXEC` marks on every mounted file system: each file opened
  for execution (the program, a script's interpreter, the ELF loader), with an open
  descriptor, so the path is known even when the process exited before anyone read /proc.
  Needs CAP_SYS_ADMIN.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import struct
from dataclasses import dataclass
from typing import Iterator, Optional

# include/uapi/linux/capability.h
CAP_NET_ADMIN = 12
CAP_SYS_PTRACE = 19
CAP_SYS_ADMIN = 21

# include/uapi/linux/netlink.h, connector.h, cn_proc.h
NETLINK_CONNECTOR = 11
NLMSG_DONE = 3
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_CN_MCAST_IGNORE = 2
PROC_EVENT_NONE = 0
PROC_EVENT_FORK = 0x1
PROC_EVENT_EXEC = 0x2
PROC_EVENT_EXIT = 0x80000000

_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_CN_MSG = struct.Struct("=IIIIHH")  # idx, val, seq, ack, len, flags
_EVENT_HEAD = struct.Struct("=IIQ")  # what, cpu, timestamp_ns
_HEAD = _NLMSGHDR.size + _CN_MSG.size  # where struct proc_event starts
_FORK = struct.Struct("=IIII")  # parent_pid, parent_tgid, child_pid, child_tgid
_EXEC = struct.Struct("=II")  # process_pid, process_tgid
_EXIT = struct.Struct("=IIII")  # process_pid, process_tgid, exit_code, exit_signal

# include/uapi/linux/fanotify.h
FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_CLASS_NOTIF = 0x0
FAN_MARK_ADD = 0x1
FAN_MARK_MOUNT = 0x10
FAN_MARK_FILESYSTEM = 0x100
FAN_OPEN_EXEC = 0x1000
FAN_Q_OVERFLOW = 0x4000
FAN_NOFD = -1
FANOTIFY_METADATA_VERSION = 3
_FAN_META = struct.Struct("=IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
AT_FDCWD = -100

# File systems that hold no programs (or cannot be marked): not worth a mark.
_PSEUDO_FS = frozenset({
    "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs", "securityfs", "pstore",
    "bpf", "configfs", "fusectl", "binfmt_misc", "autofs", "hugetlbfs", "rpc_pipefs", "nsfs", "efivarfs",
    "selinuxfs",
})


class Unavailable(Exception):
    """A source cannot run here; the message says why (a missing capability, an old kernel)."""


def supported() -> bool:
    """Whether this platform has the proc connector's socket family at all (Linux)."""
    return hasattr(socket, "AF_NETLINK")


def effective_capabilities(pid: int | str = "self") -> int:
    """The CapEff bit set of a process, from /proc/<pid>/status (0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def missing_capabilities(caps: int) -> list[str]:
    """Which of the capabilities the witness needs a CapEff set lacks, named."""
    need = (("CAP_NET_ADMIN", CAP_NET_ADMIN, "the proc connector"), ("CAP_SYS_ADMIN", CAP_SYS_ADMIN, "fanotify"))
    return [f"{name} ({what})" for name, bit, what in need if not caps >> bit & 1]


@dataclass(frozen=True)
class ProcEvent:
    what: int  # PROC_EVENT_FORK / EXEC / EXIT
    cpu: int
    seq: int
    ts_ns: int  # CLOCK_MONOTONIC, from the kernel
    pid: int  # the process (tgid): the child of a fork
    tid: int  # the thread: equal to pid for a process, not a thread
    ppid: int = 0  # fork: the parent's tgid
    status: int = 0  # exit: the wait status


class ProcConnector:
    """A netlink socket subscribed to the kernel's process events (cn_proc)."""

    def __init__(self, rcvbuf: int):
        if not hasattr(socket, "AF_NETLINK"):
            raise Unavailable("no netlink sockets on this platform")
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        except OSError as exc:
            raise Unavailable(f"cannot open a NETLINK_CONNECTOR socket ({exc.strerror})") from None
        try:
            # SO_RCVBUFFORCE goes past net.core.rmem_max (it needs CAP_NET_ADMIN, as the listen does).
            try:
                sock.setsockopt(socket.SOL_SOCKET, 33, rcvbuf)  # SO_RCVBUFFORCE
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.bind((0, CN_IDX_PROC))
            self._control(sock, PROC_CN_MCAST_LISTEN)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise Unavailable(f"the proc connector refused to listen ({exc.strerror}; it needs CAP_NET_ADMIN)") from None
        self.sock = sock
        self.rcvbuf = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self.next_seq: dict[int, int] = {}  # cpu -> the sequence number expected next
        self.lost = 0  # events the kernel sent that never arrived (sequence numbers skipped)
        self.enobufs = 0  # times the socket reported an overrun
        self.received = 0
        self._buf = bytearray(4096)

    @staticmethod
    def _control(sock: socket.socket, op: int) -> None:
        body = _CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, 4, 0) + struct.pack("=I", op)
        sock.send(_NLMSGHDR.pack(_NLMSGHDR.size + len(body), NLMSG_DONE, 0, 0, 0) + body)

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> Iterator[ProcEvent]:
        """Every event waiting on the socket, in arrival order; returns when none is left."""
        sock, buf, view = self.sock, self._buf, memoryview(self._buf)
        next_seq = self.next_seq
        while True:
            try:
                n = sock.recv_into(buf)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:
                    self.enobufs += 1  # the count of what was lost comes from the sequence numbers
                    continue
                raise
            if n < _HEAD + _EVENT_HEAD.size:
                continue
            seq = _CN_MSG.unpack_from(view, _NLMSGHDR.size)[2]
            what, cpu, ts = _EVENT_HEAD.unpack_from(view, _HEAD)
            if what == PROC_EVENT_NONE:
                continue  # the answer to our listen request
            self.received += 1
            expected = next_seq.get(cpu)
            if expected is not None and seq != expected:
                self.lost += (seq - expected) & 0xFFFFFFFF
            next_seq[cpu] = (seq + 1) & 0xFFFFFFFF
            body = _HEAD + _EVENT_HEAD.size
            if what == PROC_EVENT_FORK:
                _, ppid, tid, pid = _FORK.unpack_from(view, body)
                yield ProcEvent(what, cpu, seq, ts, pid, tid, ppid=ppid)
            elif what == PROC_EVENT_EXEC:
                tid, pid = _EXEC.unpack_from(view, body)
                yield ProcEvent(what, cpu, seq, ts, pid, tid)
            elif what == PROC_EVENT_EXIT:
                tid, pid, status, _ = _EXIT.unpack_from(view, body)
                yield ProcEvent(what, cpu, seq, ts, pid, tid, status=status)

    def close(self) -> None:
        try:
            self._control(self.sock, PROC_CN_MCAST_IGNORE)
        except OSError:
            pass
        self.sock.close()


_libc: Optional[ctypes.CDLL] = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.fanotify_init.argtypes = (ctypes.c_uint, ctypes.c_uint)
        _libc.fanotify_mark.argtypes = (ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p)
    return _libc


def mount_points() -> list[str]:
    """Every mounted file system that can hold programs, from /proc/self/mountinfo."""
    points = []
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            for line in f:
                fields = line.split()
                sep = fields.index(b"-")
                fstype = fields[sep + 1].decode("utf-8", "replace")
                if fstype in _PSEUDO_FS:
                    continue
                point = fields[4].decode("utf-8", "surrogateescape")
                # mountinfo escapes space, tab, newline and backslash as octal
                for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
                    point = point.replace(code, char)
                points.append(point)
    except (OSError, ValueError):
        pass
    return list(dict.fromkeys(points))


@dataclass(frozen=True)
class ExecOpen:
    pid: int
    path: str
    interp: tuple[str, ...]  # what this file asks the kernel to open next (a script's interpreter, ELF's PT_INTERP)


class ExecOpens:
    """fanotify FAN_OPEN_EXEC on every mount: the files the kernel opened to execute them."""

    def __init__(self) -> None:
        if not hasattr(ctypes, "CDLL"):
            raise Unavailable("no ctypes")
        try:
            libc = _c()
            init = libc.fanotify_init
        except (OSError, AttributeError):
            raise Unavailable("the C library has no fanotify") from None
        fd = init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise Unavailable(f"fanotify_init failed ({os.strerror(err)}; it needs CAP_SYS_ADMIN)")
        self.fd = fd
        self.marked: list[str] = []
        self.unmarked: list[str] = []
        # A file system mark covers every mount of the file system, in every mount namespace (the
        # service's ProtectSystem= view of / is another mount of the same file system than the
        # agent's); a kernel that refuses one gets a mark on the mount itself.
        for point in mount_points():
            path = os.fsencode(point)
            if libc.fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_EXEC, AT_FDCWD, path) == 0 \
                    or libc.fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC, AT_FDCWD, path) == 0:
                self.marked.append(point)
            else:
                self.unmarked.append(point)
        if not self.marked:
            os.close(fd)
            raise Unavailable("fanotify could mark no mount (FAN_OPEN_EXEC needs Linux 5.0)")
        self.overflows = 0
        self.received = 0
        self._interp_cache: dict[tuple[int, int, int], tuple[str, ...]] = {}
        self._real: dict[str, str] = {}

    def fileno(self) -> int:
        return self.fd

    def read(self) -> list[ExecOpen]:
        out: list[ExecOpen] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            except InterruptedError:
                continue
            if not data:
                return out
            off = 0
            while off + _FAN_META.size <= len(data):
                length, vers, _, _, mask, fd, pid = _FAN_META.unpack_from(data, off)
                if length < _FAN_META.size or vers != FANOTIFY_METADATA_VERSION:
                    break
                off += length
                if mask & FAN_Q_OVERFLOW:
                    self.overflows += 1
                if fd == FAN_NOFD or fd < 0:
                    continue
                try:
                    self.received += 1
                    path = os.readlink(f"/proc/self/fd/{fd}")
                    out.append(ExecOpen(pid, path, self._next_opens(fd)))
                except OSError:
                    pass
                finally:
                    os.close(fd)

    def _next_opens(self, fd: int) -> tuple[str, ...]:
        """What the kernel opens after this file in the same exec: a script's interpreter, an ELF's loader."""
        try:
            st = os.fstat(fd)
        except OSError:
            return ()
        key = (st.st_dev, st.st_ino, st.st_mtime_ns)
        found = self._interp_cache.get(key)
        if found is None:
            found = tuple(self._real_path(p) for p in _interpreters(fd))
            if len(self._interp_cache) > 4096:
                self._interp_cache.clear()
            self._interp_cache[key] = found
        return found

    def _real_path(self, path: str) -> str:
        real = self._real.get(path)
        if real is None:
            real = self._real[path] = os.path.realpath(path)
        return real

    def close(self) -> None:
        os.close(self.fd)


def _interpreters(fd: int) -> list[str]:
    try:
        head = os.pread(fd, 256, 0)
    except OSError:
        return []
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].strip()
        return [os.fsdecode(line.split()[0])] if line else []
    if head[:4] != b"\x7fELF" or len(head) < 64 or head[4] != 2 or head[5] != 1:
        return []  # only 64-bit little-endian ELF is read; others just go without a loader hint
    phoff, = struct.unpack_from("<Q", head, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
    if phentsize < 56 or phnum > 256:
        return []
    try:
        table = os.pread(fd, phentsize * phnum, phoff)
    except OSError:
        return []
    for i in range(len(table) // phentsize):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type == 3 and 0 < p_filesz < 4096:  # PT_INTERP
            try:
                return [os.fsdecode(os.pread(fd, p_filesz, p_offset).rstrip(b"\0"))]
            except OSError:
                return []
    return []
