"""The small JSON state files kept outside the store (anchors, remembered stores): replaced so that a
reader sees the old or the new content, never a mix, even after a crash, and read back with one
rule for what is missing, unreadable or invalid."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

from agentwatch import platform_layer, safefs
from agentwatch.errors import UsageError

T = TypeVar("T")


def read_json(path: Path, what: str, parse: Callable[[Any], T]) -> T | None:
    """`parse` of the JSON document at `path`; None when there is none.

    UsageError naming `what` when the file cannot be read, or is not JSON, or `parse` refuses
    it (ValueError, KeyError, TypeError, AttributeError): such a file is never overwritten
    silently, since it may be the only trace of what happened to a store.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    try:
        return parse(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{path}: not a valid {what} ({exc}); inspect it, and remove it only if you trust the store"
        ) from None


def write_json(path: Path, doc: Any, mode: int) -> None:
    """Replace `path` with `doc` as indented, key-sorted JSON (write_atomic)."""
    write_atomic(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(), mode)


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Replace `path` with `data`: temporary file, fsync, rename, fsync of the directory."""
    safefs.private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        try:
            os.fchmod(fd, mode)
            os.write(fd, data)
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        platform_layer.full_fsync(dir_fd)
    finally:
        os.close(dir_fd)
