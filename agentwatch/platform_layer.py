"""What differs between the platforms agentwatch runs on, in one place.

Linux and macOS (and, for peer credentials, the BSDs) differ in four things the recorder's
promise depends on:

- **who is on the other end of the socket**: Linux answers `SO_PEERCRED` (struct ucred:
  pid, uid, gid); macOS and the BSDs answer `LOCAL_PEERCRED` at level `SOL_LOCAL` (struct
  xucred, sys/ucred.h) and macOS `LOCAL_PEERPID` (sys/un.h). A platform with neither is
  refused when the daemon starts, never answered `forbidden` per connection;
- **what "durable" means**: on macOS `fsync` does not flush the drive's cache; `F_FULLFSYNC`
  (sys/fcntl.h) does, and SQLite uses it when `PRAGMA fullfsync` and
  `PRAGMA checkpoint_fullfsync` are on;
- **where a private socket belongs**: `$XDG_RUNTIME_DIR` where it is set; on macOS, which
  sets none, the per-user temporary directory `confstr(_CS_DARWIN_USER_TEMP_DIR)`
  (unistd.h), which only the user can enter; elsewhere `/tmp/agentwatch-<uid>`, checked
  for its owner and mode before use;
- **where data lives by default**: XDG where its variables are set; otherwise
  `~/.local/share` and `~/.local/state` on Linux, `~/Library/Application Support` on macOS.

Only the standard library, and nothing at import beyond `sys` and `posix`: the hook client
imports this module on its hot path. Tests replace `SYSTEM` and the OS calls below to run
the macOS branches on Linux (tests/test_platform.py). No other module reads a
platform-specific constant (tests/test_platform.py checks that too).
"""

from __future__ import annotations

import errno as _errno
import struct
import sys

try:
    import posix as _os
except ImportError:  # pragma: no cover - not POSIX
    import os as _os  # type: ignore[no-redef]

SYSTEM = sys.platform  # "linux", "darwin", "freebsd14", ...

# Linux, socket(7): getsockopt(SOL_SOCKET, SO_PEERCRED) gives struct ucred {pid_t; uid_t; gid_t}
# (the option's number differs between architectures: the socket module knows it).
UCRED = struct.Struct("=iII")
# macOS, xnu bsd/sys/un.h: SOL_LOCAL 0, LOCAL_PEERCRED 0x001, LOCAL_PEERPID 0x002.
SOL_LOCAL = 0
LOCAL_PEERCRED = 0x001
LOCAL_PEERPID = 0x002
# xnu bsd/sys/ucred.h: struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups;
# gid_t cr_groups[NGROUPS]}, NGROUPS = NGROUPS_MAX = 16 (sys/param.h, sys/syslimits.h);
# XUCRED_VERSION 0. Native alignment pads the short to four bytes: 76 bytes in all.
XUCRED = struct.Struct("@IIh16I")
XUCRED_VERSION = 0
PID = struct.Struct("@i")
# xnu bsd/sys/fcntl.h: F_FULLFSYNC 51. unistd.h: _CS_DARWIN_USER_TEMP_DIR 65537.
F_FULLFSYNC = 51
CS_DARWIN_USER_TEMP_DIR = 65537


class PlatformUnsupported(Exception):
    """This platform lacks something the recorder's promise depends on."""


def is_macos() -> bool:
    return SYSTEM == "darwin"


def is_linux() -> bool:
    return SYSTEM.startswith("linux")


def _is_bsd_family() -> bool:
    return SYSTEM == "darwin" or SYSTEM.startswith(("freebsd", "openbsd", "netbsd", "dragonfly"))


# -- peer credentials ---------------------------------------------------------------------


def peer_credentials_supported() -> bool:
    return SYSTEM.startswith("linux") or _is_bsd_family()


def require_peer_credentials() -> None:
    """Raise PlatformUnsupported, naming the platform, when the daemon could not learn who connects."""
    if not peer_credentials_supported():
        raise PlatformUnsupported(
            f"this platform ({SYSTEM}) offers no way to learn a Unix-socket peer's uid "
            "(SO_PEERCRED or LOCAL_PEERCRED); the daemon refuses to run rather than accept "
            "records from anyone or refuse everyone"
        )


def _getsockopt(sock, level: int, option: int, size: int) -> bytes:
    return sock.getsockopt(level, option, size)


def peer_credentials(sock) -> tuple[int | None, int | None]:
    """(pid, uid) of the process at the other end of a connected Unix socket.

    uid is None when the kernel would not say (the caller refuses such a peer); pid is None
    where the platform does not report it.
    """
    try:
        if SYSTEM.startswith("linux"):
            import socket

            pid, uid, _gid = UCRED.unpack(_getsockopt(sock, socket.SOL_SOCKET, socket.SO_PEERCRED, UCRED.size))
            return pid, uid
        if _is_bsd_family():
            version, uid, _ngroups, *_groups = XUCRED.unpack(_getsockopt(sock, SOL_LOCAL, LOCAL_PEERCRED, XUCRED.size))
            if version != XUCRED_VERSION:
                return None, None
            pid = None
            if SYSTEM == "darwin":
                try:
                    (pid,) = PID.unpack(_getsockopt(sock, SOL_LOCAL, LOCAL_PEERPID, PID.size))
                except OSError:
                    pid = None
            return pid, uid
    except (OSError, struct.error):
        pass
    return None, None


# -- durability ----------------------------------------------------------------------------


# The pragmas that decide how durable a SQLite commit is, as `health` reports them.
SYNC_PRAGMAS = ("synchronous", "fullfsync", "checkpoint_fullfsync")


def sqlite_durability_pragmas() -> tuple[tuple[str, bool], ...]:
    """Pragmas that make SQLite's syncs reach the disk itself (macOS: F_FULLFSYNC)."""
    if is_macos():
        return (("fullfsync", True), ("checkpoint_fullfsync", True))
    return ()


def full_fsync(fd: int) -> None:
    """Flush a file or directory to stable storage, the drive's cache included."""
    if is_macos():
        import fcntl

        try:
            fcntl.fcntl(fd, F_FULLFSYNC)
            return
        except OSError:
            pass  # a file system without F_FULLFSYNC (some network mounts): the best it offers
    _os.fsync(fd)


# -- the store's writer lock -----------------------------------------------------------------

# An open-file-description lock (Linux 3.15+) on one byte of the store file far beyond any
# SQLite uses (its lock bytes sit at 1 GiB): held by the descriptor, not the process, so
# SQLite closing its own descriptors never drops it, and no unlink of any other file removes
# it. macOS and the BSDs have no such lock; there the lock file beside the store is the guard.
WRITER_LOCK_OFFSET = 1 << 62
# fcntl(2): struct flock {short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid},
# 32 bytes with native alignment on 64-bit Linux.
_FLOCK = struct.Struct("@hhqqi4x")


def writer_lock_supported() -> bool:
    import fcntl

    return is_linux() and hasattr(fcntl, "F_OFD_SETLK")


def writer_lock(fd: int) -> bool:
    """Take the writer lock on the store file open at `fd` (read-write); False when another holds it."""
    import fcntl

    request = _FLOCK.pack(fcntl.F_WRLCK, 0, WRITER_LOCK_OFFSET, 1, 0)
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, request)
    except OSError as exc:
        if exc.errno in (_errno.EAGAIN, _errno.EACCES):
            return False
        raise
    return True


def writer_lock_held(fd: int) -> bool:
    """Whether any open file description holds the writer lock on the file open at `fd` (any mode)."""
    import fcntl

    request = _FLOCK.pack(fcntl.F_WRLCK, 0, WRITER_LOCK_OFFSET, 1, 0)
    got = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, request)
    return _FLOCK.unpack(got)[0] != fcntl.F_UNLCK


# -- paths -----------------------------------------------------------------------------------


def private_temp_dir() -> str | None:
    """macOS's per-user temporary directory (`confstr`), or None where there is none."""
    if not is_macos():
        return None
    try:
        value = _os.confstr(CS_DARWIN_USER_TEMP_DIR)
    except (OSError, ValueError):
        return None
    return value.rstrip("/") if value and value.startswith("/") else None


def fallback_runtime_dir(uid: int, app: str = "agentwatch") -> str:
    """Where the socket goes when XDG_RUNTIME_DIR is unset."""
    private = private_temp_dir()
    if private:
        return f"{private}/{app}"
    return f"/tmp/{app}-{uid}"


def fallback_data_dir(home: str, app: str = "agentwatch") -> str:
    """Where data (store, spool) goes when XDG_DATA_HOME is unset."""
    if is_macos():
        return f"{home}/Library/Application Support/{app}"
    return f"{home}/.local/share/{app}"


def fallback_state_dir(home: str, app: str = "agentwatch") -> str:
    """Where state (anchors, keys, witness copies) goes when XDG_STATE_HOME is unset."""
    if is_macos():
        return f"{home}/Library/Application Support/{app}/state"
    return f"{home}/.local/state/{app}"
