"""One writer per store, held so that deleting a file cannot take it away (docs/reliability.md, "One writer").

Every process that appends to a store (`serve`, `erase`, `import`, `init` creating one)
holds its `WriterLock` for as long as it writes. The lock has two parts:

- the **lock file** `<store>.lock` beside the store, flocked for the holder's life (the
  one lock every platform has; it also carries the holder's pid for messages);
- on Linux, an open-file-description lock on one byte of the **store file itself**
  (platform_layer.writer_lock). Unlinking or replacing the lock file leaves it held, so a
  second `serve` started after `rm store.db.lock` is refused all the same; and the store
  file cannot be swapped under a writer without the writer's own identity checks seeing it
  (store/append.py, `files_changed`).

`check()` runs before every commit group: when the lock file at the path is no longer the
one held (deleted, replaced), it is taken again; when another process holds the file now
at the path, a second writer runs, and the caller fails closed.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path
from typing import Optional

from agentwatch import platform_layer
from agentwatch.errors import AgentwatchError, StoreUnreachable, UsageError

log = logging.getLogger(__name__)


class AlreadyServing(AgentwatchError):
    """Another daemon (or another writer) serves this store or socket."""

    exit_code = 3


class LockFile:
    """An exclusive, non-blocking flock on `path`, holding our pid for messages."""

    def __init__(self, path: Path, what: str):
        self.path = Path(path)
        self.what = what
        self.fd: int | None = None

    def acquire(self) -> "LockFile":
        while True:
            old = os.umask(0o077)
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                raise UsageError(f"{self.path}: cannot open lock file ({exc.strerror})") from None
            finally:
                os.umask(old)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                who = f" (pid {holder})" if holder else ""
                raise AlreadyServing(f"{self.what} is already served by another agentwatch daemon{who}") from None
            # A previous holder may have unlinked the file between our open and
            # our flock; a lock on an unlinked inode guards nothing, so retry.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd
        return self

    def still_at_path(self) -> bool:
        """Whether the file at our path is the one we hold (not deleted, not replaced)."""
        if self.fd is None:
            return False
        try:
            return os.path.samestat(os.fstat(self.fd), os.stat(self.path, follow_symlinks=False))
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self.fd is None:
            return
        # Unlink while still holding the lock, so nobody locks the old inode after us; never
        # a file that replaced ours at the path (another process may hold that one).
        try:
            if self.still_at_path():
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


def lock_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + ".lock")


class WriterLock:
    """The store's single-writer guard: the lock file and, on Linux, the lock on the store file."""

    def __init__(self, store: Path | str, what: Optional[str] = None):
        self.store = Path(store)
        self.what = what or f"store {self.store}"
        self.file = LockFile(lock_path(self.store), self.what)
        self._store_fd: Optional[int] = None
        self.retaken = 0  # how often the lock file was found deleted or replaced and taken again

    def acquire(self) -> "WriterLock":
        """Take both parts; AlreadyServing when another writer holds either. The store file is
        locked now if it exists, else by `lock_store()` once it has been created."""
        self.file.acquire()
        try:
            if os.path.lexists(self.store):
                self.lock_store()
        except BaseException:
            self.file.release()
            raise
        return self

    def lock_store(self) -> None:
        """Lock the store file itself (Linux); AlreadyServing when another writer holds it."""
        if self._store_fd is not None or not platform_layer.writer_lock_supported():
            return
        try:
            fd = os.open(self.store, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreUnreachable(f"{self.store}: cannot open the store to lock it ({exc.strerror})") from None
        if not platform_layer.writer_lock(fd):
            os.close(fd)
            raise AlreadyServing(f"{self.what} is held by another writer (the lock on the store file itself; "
                                 "its lock file was deleted or replaced)")
        self._store_fd = fd

    def check(self) -> Optional[str]:
        """Before a commit group: None while this process is the one writer, else why not.

        A lock file deleted or replaced at the path is taken again (logged); one another
        process holds is a second writer."""
        if self.file.fd is None or self.file.still_at_path():
            return None
        fresh = LockFile(self.file.path, self.what)
        try:
            fresh.acquire()
        except AlreadyServing as exc:
            return f"second_writer: {exc} (the lock file this daemon held was deleted or replaced)"
        except UsageError as exc:
            return f"second_writer: the store's lock file cannot be taken again: {exc}"
        old, self.file = self.file, fresh
        if old.fd is not None:
            os.close(old.fd)
            old.fd = None
        self.retaken += 1
        log.warning(f"the store's lock file {self.file.path} was deleted or replaced; taken again")
        return None

    def release(self) -> None:
        if self._store_fd is not None:
            os.close(self._store_fd)  # ends the lock on the store file
            self._store_fd = None
        self.file.release()


def writer_holds(store: Path | str) -> bool:
    """Whether any process holds the store's writer lock (an unreadable lock file counts as held)."""
    store = Path(store)
    if platform_layer.writer_lock_supported():
        try:
            fd = os.open(store, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            fd = None
        if fd is not None:
            try:
                if platform_layer.writer_lock_held(fd):
                    return True
            finally:
                os.close(fd)
    try:
        fd = os.open(lock_path(store), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
