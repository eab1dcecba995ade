"""Replacing a small file so that a reader sees the old or the new content, never a mix, even after a crash."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agentwatch import platform_layer, safefs


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
