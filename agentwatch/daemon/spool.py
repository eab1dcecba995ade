"""The spool, daemon side: envelopes that hooks could not get acknowledged.

Layout under the spool root (the `spool` setting, default
`$XDG_DATA_HOME/agentwatch/spool`), every directory 0700 and every file 0600:

    tmp/<record_id>.json   being written by a hook (fsync, then renamed)
    new/<record_id>.json   complete, waiting for the drainer
    bad/<name>             could not become a record; kept byte for byte,
    bad/<name>.reason      with a one-line reason beside it

A drainer pass, in the order that loses nothing and stores nothing twice:

    spool = Spool(root)
    spool.adopt_stale_tmp()
    for path in spool.ready(limit=512):
        item = spool.read(path)                 # None: it vanished, skip
        if item.ok:   append to_append(item.envelope); commit; spool.mark_done(path)
        else:         append gap_append(item.gap_record_id, "spool_unparsable",
                                        item.gap_detail()); commit;
                      spool.quarantine(path, item.error)

A crash between commit and `mark_done` replays the file next pass: its
record_id is acknowledged as a duplicate. A crash between the gap commit and
`quarantine` reads the same bytes again and derives the same gap record_id,
so the gap is not stored twice either.

Files are drained oldest first by name: record ids are UUIDv7, whose text
sorts in creation order, so no stat per file is needed. Names a hook writes
(`<UUIDv7>.json`, or an adopted `<UUIDv7>.json.<ns>`) come before any other
name, so junk named to sort first cannot keep real records waiting.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from agentwatch import safefs

# A hook's envelope line is at most 1 MiB; a file far larger is not one of
# ours (reading it whole would only cost memory).
MAX_FILE = 4 << 20
# A hook finishes within a second or so; a tmp file this old was left by one
# that was killed or lost power between writing and renaming.
STALE_TMP_S = 60.0
REASON_SUFFIX = ".reason"
# What a hook names its spool file: its record id, a UUIDv7 (hookclient.uuid7), then `.json`.
HOOK_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json(\.[0-9]+)?")

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class SpoolFile:
    """One file from new/: its envelope, or why there is none."""

    path: Path
    size: int
    sha256: str  # "sha256:<hex>" of the file's bytes
    envelope: Optional[dict]
    error: Optional[str]  # None exactly when envelope is a dict
    uid: Optional[int]  # the file's owner, when known
    # For the gap row that records an unusable file: derived from name and
    # content, so recording the same file twice is acknowledged as a duplicate.
    gap_record_id: str

    @property
    def ok(self) -> bool:
        return self.error is None

    def gap_detail(self, reason: Optional[str] = None) -> dict:
        """The fields of the `gap` row that records this file (see normalize.gap_append)."""
        return {
            "file": self.path.name,
            "error": reason or self.error,
            "size": self.size,
            "sha256": self.sha256,
            "quarantined_to": f"bad/{self.path.name}",
        }


@dataclass(frozen=True)
class Quarantined:
    path: Path  # where the bytes are now, under bad/
    size: int
    sha256: str
    reason: str


@dataclass(frozen=True)
class SpoolStats:
    backlog: int  # files in new/
    backlog_bytes: int
    oldest_age_s: Optional[float]  # age of the oldest file in new/ (mtime), None when empty
    tmp: int  # files in tmp/ (being written, or abandoned)
    bad: int  # quarantined files in bad/

    def as_dict(self) -> dict:
        return {
            "backlog": self.backlog,
            "backlog_bytes": self.backlog_bytes,
            "oldest_age_s": self.oldest_age_s,
            "tmp": self.tmp,
            "bad": self.bad,
        }


class Spool:
    def __init__(self, root: PathLike):
        self.root = Path(root)
        self.tmp = self.root / "tmp"
        self.new = self.root / "new"
        self.bad = self.root / "bad"

    def prepare(self) -> None:
        """Create the root, tmp/, new/ and bad/ 0700 if missing; refuse a symlink or a directory not ours alone.

        A symlink planted at the root or at a subdirectory would make the drainer read,
        delete and move files wherever it points; a directory others can write lets
        them do the same by renaming. The root is judged first, so nothing is made
        inside a root that is not ours.
        """
        for directory in (self.root, self.tmp, self.new, self.bad):
            safefs.private_dir(directory, "spool directory")

    def ready(self, limit: Optional[int] = None, skip: frozenset = frozenset()) -> list[Path]:
        """Files waiting in new/, oldest first (by name), at most `limit`, names in `skip` left out."""
        try:
            names = sorted((name for name in os.listdir(self.new) if name not in skip),
                           key=lambda name: (HOOK_NAME.fullmatch(name) is None, name))
        except FileNotFoundError:
            return []
        if limit is not None:
            names = names[:limit]
        return [self.new / name for name in names]

    def read(self, path: PathLike) -> Optional[SpoolFile]:
        """Read and parse one spool file; None if it is gone. Never raises for bad content."""
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:  # a symlink (ELOOP), a fifo or an unreadable entry
            return _file(path, b"", None, None, f"cannot open: {exc.strerror}")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return _file(path, b"", st.st_uid, None, "not a regular file")
            data = _read_upto(fd, MAX_FILE + 1)
        finally:
            os.close(fd)
        if st.st_uid != os.getuid():
            return _file(path, data, st.st_uid, None, f"owned by uid {st.st_uid}, not by the daemon's uid")
        if not data:
            return _file(path, data, st.st_uid, None, "empty file (its hook stopped before writing)")
        if len(data) > MAX_FILE:
            return _file(path, data, st.st_uid, None, f"larger than {MAX_FILE} bytes, not an envelope")
        try:
            envelope = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            return _file(path, data, st.st_uid, None, "not valid UTF-8")
        except (ValueError, RecursionError) as exc:
            return _file(path, data, st.st_uid, None, f"not valid JSON (a partial write?): {exc}")
        if not isinstance(envelope, dict):
            return _file(path, data, st.st_uid, None, "not a JSON object")
        if envelope.get("op", "append") != "append":
            return _file(path, data, st.st_uid, None, f"not an append envelope (op {envelope.get('op')!r})")
        return _file(path, data, st.st_uid, envelope, None)

    def mark_done(self, path: PathLike) -> bool:
        """Delete a file whose record is committed. False if it was already gone.

        No directory fsync: if the unlink is lost in a crash, the file is
        replayed and acknowledged as a duplicate.
        """
        try:
            os.unlink(path)
            return True
        except FileNotFoundError:
            return False

    def quarantine(self, path: PathLike, reason: str) -> Quarantined:
        """Move a file that cannot become a record to bad/, bytes intact, with its reason beside it.

        Returns where it went, its size and sha256 (for the gap row). Raises
        FileNotFoundError if the file is gone.
        """
        path = Path(path)
        try:
            data = _read_all(path)
        except FileNotFoundError:
            raise
        except OSError:
            data = b""  # a symlink or unreadable entry: move the entry itself
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        safefs.private_dir(self.bad, "spool directory")
        target = self.bad / path.name
        if os.path.lexists(target) or target.name.endswith(REASON_SUFFIX):
            target = self.bad / f"{path.name}.{time.time_ns()}"
        os.rename(path, target)
        note = {"reason": reason, "size": len(data), "sha256": digest, "from": f"new/{path.name}"}
        try:
            fd = os.open(
                str(target) + REASON_SUFFIX, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
            )
            try:
                os.write(fd, json.dumps(note, sort_keys=True).encode("utf-8", "backslashreplace") + b"\n")
            finally:
                os.close(fd)
        except OSError:
            pass  # the reason is in the gap row; the note is a courtesy for someone browsing bad/
        return Quarantined(target, len(data), digest, reason)

    def adopt_stale_tmp(self, older_than_s: float = STALE_TMP_S, now: Optional[float] = None) -> list[Path]:
        """Move tmp/ files older than `older_than_s` into new/; returns their new paths.

        Such a file was never acknowledged and its hook is gone, so nobody
        else will rename it. It may be complete (killed between fsync and
        rename) or partial (killed mid-write). Deleting it could lose a
        record silently; in new/ a complete one is stored (a duplicate if the
        daemon had it after all) and a partial one becomes a gap row with its
        bytes kept in bad/.
        """
        try:
            names = os.listdir(self.tmp)
        except FileNotFoundError:
            return []
        cutoff = (time.time() if now is None else now) - older_than_s
        adopted = []
        if names:
            safefs.private_dir(self.new, "spool directory")
        for name in sorted(names):
            src = self.tmp / name
            dst = self.new / name
            try:
                if os.lstat(src).st_mtime >= cutoff:
                    continue
                if os.path.lexists(dst):
                    dst = self.new / f"{name}.{time.time_ns()}"
                os.rename(src, dst)
            except OSError:
                continue  # gone meanwhile, or new/ missing: next pass
            adopted.append(dst)
        return adopted

    def stats(self, now: Optional[float] = None) -> SpoolStats:
        """Backlog size and the age of its oldest file, for health."""
        now = time.time() if now is None else now
        backlog = size = 0
        oldest: Optional[float] = None
        for entry in _scan(self.new):
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            backlog += 1
            size += st.st_size
            oldest = st.st_mtime if oldest is None else min(oldest, st.st_mtime)
        tmp = sum(1 for _ in _scan(self.tmp))
        bad = sum(1 for e in _scan(self.bad) if not e.name.endswith(REASON_SUFFIX))
        age = None if oldest is None else max(0.0, now - oldest)
        return SpoolStats(backlog, size, age, tmp, bad)


def _file(path: Path, data: bytes, uid: Optional[int], envelope: Optional[dict], error: Optional[str]) -> SpoolFile:
    ident = hashlib.sha256(path.name.encode("utf-8", "surrogateescape") + b"\0" + data).hexdigest()
    return SpoolFile(
        path=path,
        size=len(data),
        sha256="sha256:" + hashlib.sha256(data).hexdigest(),
        envelope=envelope,
        error=error,
        uid=uid,
        gap_record_id="gap-spool-" + ident,
    )


def _read_upto(fd: int, limit: int) -> bytes:
    chunks = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(1 << 20, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_all(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return _read_upto(fd, 1 << 62)
    finally:
        os.close(fd)


def _scan(directory: Path):
    try:
        with os.scandir(directory) as it:
            yield from it
    except FileNotFoundError:
        return


__all__ = ["MAX_FILE", "STALE_TMP_S", "Quarantined", "Spool", "SpoolFile", "SpoolStats"]
