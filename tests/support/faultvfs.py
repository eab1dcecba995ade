"""A SQLite VFS that simulates power loss, I/O errors and a full disk (docs/reliability.md).

``FaultVFS`` is an apsw VFS shim over the default ("unix") VFS. Every file
still lives in the real file system, so while the "machine" runs, SQLite sees
what a process sees through the OS page cache: its own writes, at once. Beside
that, the shim keeps a model of the *disk* for each durable file (the database,
its -wal and its rollback journal):

* ``xWrite`` and ``xTruncate`` reach the real file (the page cache) and are
  queued as *unsynced* operations of that file;
* ``xSync`` of a file moves its queued operations into its disk image;
* ``xDelete`` is durable at once (see "What this model does not do" in
  docs/reliability.md);
* a file exists on disk once it has been synced at least once (a new file's
  directory entry is assumed to be made durable with its first fsync, as
  SQLite asks for -wal and journals and as journaling file systems do).

A power loss (``crash()``, or ``arm_crash(n)``: the operation after the n-th
write, sync, truncate or delete fails and so does every I/O after it) freezes
the disk. ``reboot()``, once every connection through this VFS is closed,
rewrites each real file as the disk held it, plus, depending on the mode, some
of its unsynced operations:

``drop``    none of them;
``prefix``  the first k, in order (in-order writeback that stopped);
``torn``    each ``sector``-sized, sector-aligned piece of each write and each
            truncate independently kept or lost (out-of-order writeback). Bytes
            outside a write's range are never touched, which is the
            powersafe-overwrite promise the unix VFS makes to SQLite.

The -shm file is not durable state: after a reboot SQLite rebuilds the WAL
index from the -wal, so reboot() deletes it, keeps it stale, or fills it with
garbage, at random.

I/O faults: ``arm_fault(kind, nth, error, persist)`` makes the nth read, write,
sync or truncate (counted from arming) fail with SQLITE_IOERR_* or, for
writes, SQLITE_FULL; ``persist`` keeps failing every later one of that kind
until ``clear_faults()``. A failed write changes nothing. A failed sync either
keeps its file's unsynced writes queued (``sync_failure="keep"``: a later sync
can still make them durable) or drops them from the disk model while the page
cache keeps showing them (``"drop"``: what Linux does after a failed fsync; a
later fsync reports success without writing them).

Single process only: the disk model is this object's memory.
"""

from __future__ import annotations

import itertools
import os
import random
from dataclasses import dataclass
from typing import Optional

import apsw

# The files whose contents must survive a power loss. Temporary files, subjournals
# and the -shm (which apsw passes straight to the base VFS) are not modelled.
_DURABLE = (
    apsw.SQLITE_OPEN_MAIN_DB | apsw.SQLITE_OPEN_MAIN_JOURNAL | apsw.SQLITE_OPEN_WAL | apsw.SQLITE_OPEN_SUPER_JOURNAL
)
_IOERR = {
    "read": apsw.SQLITE_IOERR_READ,
    "write": apsw.SQLITE_IOERR_WRITE,
    "sync": apsw.SQLITE_IOERR_FSYNC,
    "truncate": apsw.SQLITE_IOERR_TRUNCATE,
    "delete": apsw.SQLITE_IOERR_DELETE,
}
KINDS = ("read", "write", "sync", "truncate")
REBOOT_MODES = ("drop", "prefix", "torn")
_names = itertools.count(1)


@dataclass(frozen=True)
class Fault:
    kind: str  # read, write, sync or truncate
    nth: int  # 1-based, counted from arm_fault
    error: str = "ioerr"  # or "full" (writes only)
    persist: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {KINDS}")
        if self.error not in ("ioerr", "full") or (self.error == "full" and self.kind != "write"):
            raise ValueError("error is 'ioerr', or 'full' for writes")
        if self.nth < 1:
            raise ValueError("nth counts from 1")


@dataclass
class RebootReport:
    mode: str
    files: int = 0  # durable files rewritten from the disk model
    unsynced_ops: int = 0  # operations that had not been synced when the power went
    kept_ops: int = 0  # of those, how many (whole or in part) reached the disk anyway
    shm: str = ""  # what happened to -shm files: deleted, stale or garbage


class _Disk:
    """One durable file: its image on disk and the operations not synced yet."""

    __slots__ = ("image", "pending")

    def __init__(self, image: Optional[bytearray]):
        self.image = image  # None: the file would not exist after a power loss
        self.pending: list[tuple] = []  # ("w", offset, bytes) | ("t", size)

    def sync(self) -> None:
        image = self.image if self.image is not None else bytearray()
        for op in self.pending:
            _apply(image, op)
        self.image = image
        self.pending = []


def _apply(image: bytearray, op: tuple) -> None:
    if op[0] == "w":
        _, offset, data = op
        if len(image) < offset:
            image.extend(bytes(offset - len(image)))
        image[offset : offset + len(data)] = data
    else:
        size = op[1]
        if size < len(image):
            del image[size:]
        else:
            image.extend(bytes(size - len(image)))


def _torn(op: tuple, sector: int, rng: random.Random) -> list[tuple]:
    """The pieces of one unsynced operation that a power loss let through."""
    if op[0] == "t":
        return [op] if rng.random() < 0.5 else []
    _, offset, data = op
    kept = []
    start = offset
    end = offset + len(data)
    while start < end:
        stop = min(end, (start // sector + 1) * sector)
        if rng.random() < 0.5:
            kept.append(("w", start, data[start - offset : stop - offset]))
        start = stop
    return kept


class FaultVFS(apsw.VFS):
    """See the module docstring. Open connections with ``vfs=fault.name``."""

    def __init__(
        self, name: Optional[str] = None, base: str = "", *, sync_failure: str = "keep", real_sync: bool = False
    ):
        if sync_failure not in ("keep", "drop"):
            raise ValueError("sync_failure is 'keep' or 'drop'")
        self.name = name or f"agentwatch-fault-{os.getpid()}-{next(_names)}"
        self.base = base or apsw.vfs_names()[0]
        super().__init__(self.name, self.base)
        self.sync_failure = sync_failure
        # The disk model decides what survives, so the real fsync only costs time.
        self.real_sync = real_sync
        self.disks: dict[str, _Disk] = {}
        self.open_files = 0
        self.crashed = False
        self.crash_point = ""  # the operation the power went before: "sync wal", "write db", "idle"...
        self.crash_after: Optional[int] = None
        self.ops = 0  # writes, syncs, truncates and deletes since arm_crash
        self.counts = dict.fromkeys(KINDS, 0)  # per kind, since arm_fault / reset_counts
        self.faults: list[Fault] = []
        self.injected: list[tuple[str, int, str]] = []  # (kind, n, error) of each fault raised

    # -- arming ------------------------------------------------------------------------

    def arm_crash(self, after_ops: Optional[int]) -> None:
        """Lose power right after the `after_ops`-th mutating operation from now (None: never)."""
        self.ops = 0
        self.crash_after = after_ops

    def crash(self) -> None:
        """Lose power now: the disk is frozen and every later I/O fails until reboot()."""
        self.crashed = True
        self.crash_point = "idle"

    def arm_fault(self, kind: str, nth: int, error: str = "ioerr", persist: bool = False) -> Fault:
        fault = Fault(kind, nth, error, persist)
        self.counts = dict.fromkeys(KINDS, 0)
        self.faults = [fault]
        return fault

    def clear_faults(self) -> None:
        self.faults = []

    def reset_counts(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)
        self.ops = 0

    def unsynced(self) -> int:
        return sum(len(d.pending) for d in self.disks.values())

    # -- power loss ----------------------------------------------------------------------

    def reboot(self, rng: Optional[random.Random] = None, mode: str = "drop", sector: int = 512) -> RebootReport:
        """Replace every durable file by what the disk held when the power went.

        Every connection through this VFS must be closed first (the unix VFS
        must not keep a descriptor or lock on a file being rewritten).
        """
        if mode not in REBOOT_MODES:
            raise ValueError(f"mode must be one of {REBOOT_MODES}")
        if self.open_files:
            raise RuntimeError(f"{self.open_files} file(s) still open through {self.name}; close connections first")
        rng = rng or random.Random(0)
        report = RebootReport(mode)
        for path, disk in self.disks.items():
            report.unsynced_ops += len(disk.pending)
            kept: list[tuple] = []
            if mode == "prefix":
                kept = disk.pending[: rng.randint(0, len(disk.pending))]
                report.kept_ops += len(kept)
            elif mode == "torn":
                for op in disk.pending:
                    pieces = _torn(op, sector, rng)
                    report.kept_ops += bool(pieces)
                    kept += pieces
            if kept:
                disk.pending = kept
                disk.sync()
            disk.pending = []
            _rewrite(path, disk.image)
            report.files += 1
        shm_modes = []
        for path in self.disks:
            shm = path + "-shm"
            if not os.path.exists(shm):
                continue
            what = rng.choice(("deleted", "stale", "garbage"))
            if what == "deleted":
                os.unlink(shm)
            elif what == "garbage":
                size = os.path.getsize(shm) or 32768
                with open(shm, "r+b") as f:
                    f.write(rng.randbytes(size))
            shm_modes.append(what)
        report.shm = ",".join(shm_modes)
        self.crashed = False
        self.crash_after = None
        self.faults = []
        self.reset_counts()
        return report

    def forget(self) -> None:
        """Drop the disk model (the files stay); the next open reads them as durable."""
        self.disks.clear()

    def close(self) -> None:
        self.unregister()

    # -- the VFS ---------------------------------------------------------------------------

    def xOpen(self, name, flags):
        path = name.filename() if isinstance(name, apsw.URIFilename) else name
        disk = None
        if path is not None and flags[0] & _DURABLE:
            path = os.path.abspath(path)
            disk = self.disks.get(path)
            if disk is None:
                existing = bytearray(_read(path)) if os.path.exists(path) else None
                disk = self.disks[path] = _Disk(existing)
        if self.crashed:
            raise apsw.exception_for(apsw.SQLITE_IOERR)
        f = _File(self, self.base, name, flags, path, disk)
        self.open_files += 1
        return f

    def xDelete(self, filename, syncdir):
        self._before("delete", filename)
        super().xDelete(filename, syncdir)
        disk = self.disks.get(os.path.abspath(filename))
        if disk is not None:
            disk.image = None
            disk.pending = []

    def _before(self, kind: str, path: str) -> None:
        """Count one operation; raise the error SQLite should see, if any."""
        if self.crashed:
            raise apsw.exception_for(_IOERR[kind])
        if kind != "read":
            self.ops += 1
            if self.crash_after is not None and self.ops > self.crash_after:
                self.crashed = True
                self.crash_point = f"{kind} {_role(path)}"
                raise apsw.exception_for(_IOERR[kind])
        if kind == "delete":
            return
        n = self.counts[kind] = self.counts[kind] + 1
        for fault in self.faults:
            if fault.kind == kind and (n == fault.nth or (fault.persist and n > fault.nth)):
                self.injected.append((kind, n, fault.error))
                raise apsw.exception_for(apsw.SQLITE_FULL if fault.error == "full" else _IOERR[kind])


class _File(apsw.VFSFile):
    def __init__(self, vfs: FaultVFS, base: str, name, flags, path: Optional[str], disk: Optional[_Disk]):
        super().__init__(base, name, flags)
        self._vfs = vfs
        self._disk = disk
        self._path = path
        self._closed = False

    def xRead(self, amount, offset):
        if self._disk is not None:
            self._vfs._before("read", self._path)
        return super().xRead(amount, offset)

    def xWrite(self, data, offset):
        disk = self._disk
        if disk is not None:
            self._vfs._before("write", self._path)
        super().xWrite(data, offset)
        if disk is not None:
            disk.pending.append(("w", offset, bytes(data)))

    def xTruncate(self, newsize):
        disk = self._disk
        if disk is not None:
            self._vfs._before("truncate", self._path)
        super().xTruncate(newsize)
        if disk is not None:
            disk.pending.append(("t", newsize))

    def xSync(self, flags):
        disk = self._disk
        if disk is None:
            return super().xSync(flags)
        try:
            self._vfs._before("sync", self._path)
        except apsw.IOError:
            if self._vfs.sync_failure == "drop" and not self._vfs.crashed:
                disk.pending = []  # written back and lost, or never: either way not on disk
            raise
        if self._vfs.real_sync:
            super().xSync(flags)
        disk.sync()

    def xClose(self):
        if not self._closed:
            self._closed = True
            self._vfs.open_files -= 1
        super().xClose()


def _role(path: str) -> str:
    for suffix in ("-wal", "-journal", "-shm"):
        if path.endswith(suffix):
            return suffix[1:]
    return "db"


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _rewrite(path: str, image: Optional[bytearray]) -> None:
    if image is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    if os.path.exists(path) and _read(path) == image:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(image)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(image))
    finally:
        os.close(fd)


__all__ = ["Fault", "FaultVFS", "KINDS", "REBOOT_MODES", "RebootReport"]
