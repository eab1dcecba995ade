"""The daemon's files on disk: exclusive lock files and the private socket.

One daemon per store and one per socket: each is claimed with an flock on a
lock file beside it, held for the daemon's life. The socket lives in a
directory only the owner can enter, and a path already taken is reused only
when it is a socket nobody answers on; a regular file or a symlink there is
never followed or removed.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path
from typing import Callable

from agentwatch import safefs
from agentwatch.errors import UsageError
from agentwatch.store.writerlock import AlreadyServing, LockFile, lock_path

# The lock file and its error live with the store's writer lock (store/writerlock.py).
__all__ = ["AlreadyServing", "LockFile", "lock_path"]


def private_dir(directory: Path) -> None:
    """Create `directory` (and missing parents) 0700; refuse one that others can enter or that is not ours."""
    safefs.private_dir(directory, "socket directory", private=True)


def group_dir(directory: Path, gid: int) -> None:
    """Create `directory` 0750 with group `gid` if missing; refuse one others can enter or not ours.

    The service deployment: members of the socket group reach the socket, nobody else."""
    old = os.umask(0o027)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o750)
    except OSError as exc:
        raise UsageError(f"{directory}: cannot create directory ({exc.strerror})") from None
    finally:
        os.umask(old)
    st = os.stat(directory, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{directory}: not a directory")
    if st.st_uid != os.getuid():
        raise UsageError(f"{directory}: owned by uid {st.st_uid}, not by us; choose another socket directory")
    if st.st_gid != gid:
        os.chown(directory, -1, gid)
    if stat.S_IMODE(st.st_mode) & 0o027:
        os.chmod(directory, stat.S_IMODE(st.st_mode) & ~0o027)


def clear_socket_path(path: Path, answers: Callable[[Path], bool]) -> None:
    """Make `path` free for bind: remove a stale socket, refuse anything else.

    `answers(path)` returns True when a daemon answers a ping there.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{path}: is a symlink; refusing to follow or remove it")
    if not stat.S_ISSOCK(st.st_mode):
        raise UsageError(f"{path}: exists and is not a socket; refusing to remove it")
    if answers(path):
        raise AlreadyServing(f"socket {path} is already served by another agentwatch daemon")
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# Hooks connect with a deadline, i.e. non-blocking: a full backlog fails them at
# once (EAGAIN) and they spool. Make bursts of hooks fit.
BACKLOG = 4096


def bind_socket(path: Path, gid: int | None = None) -> socket.socket:
    """A listening Unix socket at `path`, mode 0600 from the start (bound under umask 0177);
    with `gid`, then 0660 and that group's (the service deployment's socket group).

    The socket is bound and listening under a temporary name beside `path` and only then linked
    to `path`, so the path never names a socket that refuses connections: a hook that connects
    the moment it appears is queued for the daemon, not refused into its spool. The link fails
    when something took the path meanwhile, as a bind would."""
    tmp = path.with_name(f".aw{os.getpid()}")  # short: AF_UNIX paths stop at 107 bytes
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        try:
            os.unlink(tmp)  # a leftover of a daemon with this pid that was killed
        except FileNotFoundError:
            pass
        sock.bind(str(tmp))
    except OSError as exc:
        sock.close()
        raise UsageError(f"{path}: cannot bind socket ({exc.strerror})") from None
    finally:
        os.umask(old)
    try:
        if gid is not None:
            os.chown(tmp, -1, gid)
            os.chmod(tmp, 0o660)
        else:
            os.chmod(tmp, 0o600)
        sock.listen(BACKLOG)
        sock.setblocking(False)
        try:
            os.link(tmp, path)
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EEXIST:
                raise AlreadyServing(f"socket {path} is in use") from None
            raise UsageError(f"{path}: cannot bind socket ({exc.strerror})") from None
    finally:
        os.unlink(tmp)
    return sock


def remove_socket(path: Path) -> None:
    """Unlink our socket file. The socket lock we hold makes the path ours; still, only a socket goes."""
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
