"""What every installer shares: errors, planned file changes, and writing them safely.

An install or uninstall is planned first, as a list of FileChange (bytes
before, bytes after), and only then applied. Planning reads and never writes,
so `--dry-run` is the plan rendered as a unified diff. Applying a change
keeps a backup of the original bytes, writes a temporary file in the same
directory and renames it over the original (same mode; a new file is 0600),
after checking that nobody changed the file since it was read. A config
directory that another user owns or can write is refused (safefs).
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentwatch import platform_layer, safefs
from agentwatch.errors import EXIT_UNREACHABLE, EXIT_USAGE, AgentwatchError

BACKUP_INFIX = ".agentwatch-backup-"


class InstallError(AgentwatchError):
    """A usage or configuration problem: an unknown harness or scope, a malformed config."""

    exit_code = EXIT_USAGE


class ConfigMalformed(InstallError):
    """The harness's config exists but is not something agentwatch can merge into."""

    def __init__(self, path: Path, problem: str):
        super().__init__(f"{path}: {problem}; left unchanged")
        self.path = path
        self.problem = problem


class ConfigUnwritable(AgentwatchError):
    """The config location cannot be read or written (permissions, a file where a directory should be)."""

    exit_code = EXIT_UNREACHABLE


@dataclass
class FileChange:
    """One file as it is (`before`, None when absent) and as it should be (`after`, None to delete)."""

    path: Path
    before: bytes | None
    after: bytes | None
    mode: int | None = None  # for a new file; an existing one keeps its own
    backup: Path | None = None

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "created"
        if self.after is None:
            return "deleted"
        return "modified"

    def diff(self) -> str:
        if self.before == self.after:
            return ""
        old = _text(self.before).splitlines(keepends=True)
        new = _text(self.after).splitlines(keepends=True)
        lines = difflib.unified_diff(
            old,
            new,
            fromfile="/dev/null" if self.before is None else str(self.path),
            tofile="/dev/null" if self.after is None else str(self.path),
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)

    def to_json(self) -> dict:
        return {"path": str(self.path), "action": self.action, "backup": str(self.backup) if self.backup else None}


@dataclass
class Result:
    """What `install` or `uninstall` did (or, with dry_run, would do)."""

    harness: str
    scope: str
    operation: str  # install | uninstall
    status: str  # installed | updated | already_installed | uninstalled | not_installed
    dry_run: bool
    files: list[FileChange]
    events: list[str]
    command: str
    notes: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # a re-install: events it registers anew
    removed: list[str] = field(default_factory=list)  # and events of ours it takes out

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files)

    def to_json(self) -> dict:
        data = {
            "harness": self.harness,
            "scope": self.scope,
            "operation": self.operation,
            "status": self.status,
            "dry_run": self.dry_run,
            "files": [f.to_json() for f in self.files],
            "events": self.events,
            "command": self.command,
            "notes": self.notes,
            "added": self.added,
            "removed": self.removed,
        }
        if self.dry_run:
            data["diff"] = self.diff()
        return data


@dataclass
class Listing:
    """Whether agentwatch is installed for one harness in one scope, and how."""

    harness: str
    scope: str
    path: str
    state: str  # installed | outdated | not_installed | error
    events: list[str]
    commands: list[str]
    error: str | None = None
    # What the daemon's watch would name here (coverage/hookconfig.py): a remembered install
    # that was removed, edited, narrowed, redirected or disabled since.
    findings: list[dict] = field(default_factory=list)
    # The other harnesses installed in the same file (copilot and vscode share one: sharing.py).
    shared_with: list[str] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return self.state in ("installed", "outdated")

    def to_json(self) -> dict:
        return {
            "harness": self.harness,
            "scope": self.scope,
            "installed": self.installed,
            "state": self.state,
            "path": self.path,
            "events": self.events,
            "commands": self.commands,
            "error": self.error,
            "findings": self.findings,
            "shared_with": self.shared_with,
        }


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


# ---------------------------------------------------------------- reading


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist. Unreadable: ConfigUnwritable."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigMalformed(path, "is a directory, expected a file") from None
    except NotADirectoryError:
        raise ConfigUnwritable(f"cannot read {path}: a parent of it is not a directory") from None
    except OSError as exc:
        raise ConfigUnwritable(f"cannot read {path}: {exc.strerror or exc}") from None


def real_path(path: Path) -> Path:
    """Where the bytes live: a symlinked config (dotfile managers) is edited in place, not replaced by a file."""
    try:
        return Path(os.path.realpath(path)) if path.is_symlink() else path
    except OSError:
        return path


# ---------------------------------------------------------------- writing


def apply(change: FileChange) -> None:
    """Make `change` real: backup, then atomic write (or delete). Unwritable: ConfigUnwritable."""
    if change.action == "unchanged":
        return
    target = real_path(change.path)
    # Whoever can write the config's directory can swap the file and inject hooks into the agent:
    # such a directory is refused, a missing one is made 0700 (parents included).
    safefs.private_dir(target.parent, "harness config directory")
    if read_bytes(target) != change.before:
        raise ConfigUnwritable(f"{change.path} changed while agentwatch was editing it; nothing written, run again")
    try:
        if change.before is not None:
            change.backup = _backup(target, change.before)
        if change.after is None:
            os.unlink(target)
            _fsync_dir(target.parent)
        else:
            _atomic_write(target, change.after, change.mode)
    except OSError as exc:
        raise ConfigUnwritable(f"cannot write {change.path}: {exc.strerror or exc}") from None


def _backup(path: Path, data: bytes) -> Path:
    """Copy `data` to <path>.agentwatch-backup-<UTC time>, 0600 (configs hold secrets), never overwriting."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(1000):
        candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        try:
            _write_all(fd, data)
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        return candidate
    raise OSError(errno.EEXIST, "too many backups with the same timestamp")


def _atomic_write(path: Path, data: bytes, new_mode: int | None) -> None:
    try:
        st = os.stat(path)
        mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
    except FileNotFoundError:
        mode, owner = (new_mode if new_mode is not None else safefs.FILE_MODE), None
    tmp = path.with_name(f".{path.name}.agentwatch-tmp-{os.getpid()}-{time.monotonic_ns()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            if owner is not None and owner != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fd, *owner)
                except OSError:
                    pass  # not ours to give away; the mode is still the original's
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        platform_layer.full_fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
