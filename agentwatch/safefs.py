"""Directories that nobody but their owner can change.

The recorded agent runs as this user, but other local users must not be able
to move a store aside, swap a spool for a symlink or plant a socket. So every
directory agentwatch creates, parents included, is made exactly 0700 whatever
the umask (files are created 0600 by their writers: a umask can only narrow
that mode), and a directory that already exists is used only when it is a
real directory (not a symlink), owned by this user, that no one else can
write. Others may read or enter it (a project's .claude/, say), and group
write is fine when the group is the user's own private group. Its parents,
which agentwatch did not make, may belong to root or to this user and may be
writable by others only with the sticky bit (as /tmp is).

The hook client (hookclient.py, standard library only) keeps its own small
copy of the socket and spool checks, stricter: no group write at all.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Union

from agentwatch.errors import UsageError

PathLike = Union[str, "os.PathLike[str]"]

DIR_MODE = 0o700


def share_with_group() -> None:
    """The service deployment (docs/deployment.md): directories made from now on are 0750, so the
    socket group can reach the store and the public evidence; nobody but the owner writes them.
    Files keep their own modes (secrets stay 0600)."""
    global DIR_MODE
    DIR_MODE = 0o750
FILE_MODE = 0o600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(UsageError):
    """A directory or socket that another user controls, or could: refused, never repaired silently."""


def describe_mode(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"


def others_can_write(st: os.stat_result) -> bool:
    """World-writable, or group-writable by a group that is not this user's own private group.

    With user private groups (Debian, Ubuntu, Fedora: umask 002, a group per
    user named after it with no other members) group write lets nobody else in.
    """
    if st.st_mode & 0o002:
        return True
    return bool(st.st_mode & 0o020) and not _private_group(st.st_gid)


def _private_group(gid: int) -> bool:
    import grp
    import pwd

    try:
        me = pwd.getpwuid(os.geteuid())
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return gid == me.pw_gid and group.gr_name == me.pw_name and set(group.gr_mem) <= {me.pw_name}


def check_own_dir(path: PathLike, st: os.stat_result, what: str = "directory", private: bool = False) -> None:
    """Raise UnsafePath unless `st` (from lstat) is a directory of ours that others cannot write.

    `private` also refuses any access for group and others (the socket directory).
    """
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"{path}: {what} is a symlink, not a directory; refusing to follow it")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path}: {what} is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafePath(
            f"{path}: {what} is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}); "
            "another user controls it: remove it or choose another location"
        )
    if (st.st_mode & 0o077) if private else others_can_write(st):
        wanted = "0700" if private else "not writable by group or others"
        raise UnsafePath(
            f"{path}: {what} has mode {describe_mode(st.st_mode)}, must be {wanted}; "
            f"other users could change what is in it (chmod 700 {path}, or choose another location)"
        )


def check_parent(path: PathLike, st: os.stat_result) -> None:
    """An existing parent we did not create: root's or ours, and writable by others only if sticky."""
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path}: is not a directory")
    if st.st_uid not in (0, os.geteuid()):
        raise UnsafePath(
            f"{path}: owned by uid {st.st_uid}, who could move anything below it; choose a location of your own"
        )
    if others_can_write(st) and not st.st_mode & stat.S_ISVTX:
        raise UnsafePath(
            f"{path}: mode {describe_mode(st.st_mode)} lets other users rename what is in it "
            f"(chmod go-w {path}, or choose another location)"
        )


def shared_file_mode() -> int:
    """The mode of public evidence (verifier keys, signed checkpoints, witness copies): the owner's,
    and the socket group's to read in the service deployment."""
    return 0o640 if DIR_MODE == 0o750 else 0o600


def private_dir(path: PathLike, what: str = "directory", *, private: bool = False) -> Path:
    """Make sure `path` is a directory of ours; create it and any missing parents 0700.

    Existing parents must pass check_parent, an existing `path` check_own_dir
    (`private`: no access at all for others), and each directory made here is
    set to exactly 0700. Returns the path, absolute. Raises UnsafePath.
    """
    path = Path(os.path.abspath(path))
    missing: list[Path] = []
    deepest = path
    while not os.path.lexists(deepest):
        missing.append(deepest)
        deepest = deepest.parent
    if not missing:
        check_own_dir(path, _lstat(path), what, private)
    for parent in ([deepest, *deepest.parents] if missing else list(path.parents)):
        try:
            st = os.stat(parent)  # a symlinked parent (a home on another disk): judged by where it leads
        except OSError as exc:
            raise UnsafePath(f"{parent}: cannot inspect ({exc.strerror})") from None
        check_parent(parent, st)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)  # opened up to DIR_MODE below, once judged
        except FileExistsError:
            pass  # made by someone else meanwhile: judged below like any other
        except OSError as exc:
            raise UnsafePath(f"{directory}: cannot create directory ({exc.strerror})") from None
        try:
            fd = os.open(directory, _DIR_FLAGS)
        except OSError as exc:
            raise UnsafePath(f"{directory}: cannot open {what} ({exc.strerror}); a symlink is not followed") from None
        try:
            st = os.fstat(fd)
            check_own_dir(directory, st, what, private and directory == path)
            mode = 0o700 if private and directory == path else DIR_MODE
            if stat.S_IMODE(st.st_mode) != mode:
                os.fchmod(fd, mode)  # the umask may have taken bits the owner needs
        finally:
            os.close(fd)
    return path


def _lstat(path: Path) -> os.stat_result:
    try:
        return os.lstat(path)
    except OSError as exc:
        raise UnsafePath(f"{path}: cannot inspect ({exc.strerror})") from None


def check_socket(path: PathLike, *, configured: bool = False) -> None:
    """Raise UnsafePath unless the socket and its directory are ours and nobody else can write them.

    lstat, so no symlink is followed; FileNotFoundError when either is missing.
    Whoever controls the socket could answer in the daemon's place. A socket the
    user named (`configured`: a flag, AGENTWATCH_SOCKET or the config file; the
    service deployment's, owned by the service account, docs/deployment.md) may
    belong to another account, but neither it nor its directory may be writable
    by everyone, nor the directory by its group. The hook client keeps its own
    copy of this check (it imports nothing from the package).
    """
    path = Path(path)
    for where, is_kind, what, forbidden in ((path.parent, stat.S_ISDIR, "directory", 0o022),
                                            (path, stat.S_ISSOCK, "socket", 0o002)):
        st = os.lstat(where)
        if not is_kind(st.st_mode):
            raise UnsafePath(f"{where}: is not a {what}")
        if configured:
            if st.st_mode & forbidden:
                raise UnsafePath(f"{where}: has mode {describe_mode(st.st_mode)}, writable by others")
            continue
        if st.st_uid != os.geteuid():
            raise UnsafePath(f"{where}: is owned by uid {st.st_uid}, not by this user")
        if others_can_write(st):
            raise UnsafePath(f"{where}: has mode {describe_mode(st.st_mode)}, writable by others")


__all__ = [
    "DIR_MODE", "FILE_MODE", "UnsafePath", "check_own_dir", "check_parent", "check_socket", "others_can_write",
    "private_dir",
]
