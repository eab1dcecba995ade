"""The Python binary that hooks and services run: the one agentwatch runs under, never a shim.

A venv's python is fine; a pyenv/asdf shim is not (a shell script that costs tens of
milliseconds and can resolve to another Python later). When sys.executable is a shim, the
real binary behind it is used. `install` writes this binary into harness hooks and
`service print` into the service definition, so both run the same interpreter.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentwatch.errors import UsageError


class InterpreterNotFound(UsageError):
    """No real Python binary can be found behind sys.executable."""


def is_shim(path: str) -> bool:
    """True when `path` is not a real interpreter binary: a script (pyenv/asdf shims are) or under a shims dir."""
    if "shims" in Path(path).parts:
        return True
    real = os.path.realpath(path)
    if "shims" in Path(real).parts:
        return True
    try:
        with open(real, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return True  # missing or unreadable: unusable either way


def _stable_name(path: str) -> str:
    """`python3` (or `python`) beside `path` when it is the same binary: the same command however agentwatch ran."""
    real = os.path.realpath(path)
    for name in ("python3", "python"):
        sibling = os.path.join(os.path.dirname(path), name)
        if os.path.realpath(sibling) == real and os.access(sibling, os.X_OK):
            return sibling
    return path


def python_binary() -> str:
    """Absolute path of a real Python binary: this interpreter, or the one behind its shim."""
    candidates = [sys.executable, getattr(sys, "_base_executable", None)]
    for candidate in candidates:
        if not candidate:
            continue
        path = os.path.abspath(candidate)
        if os.access(path, os.X_OK) and not is_shim(path):
            return _stable_name(path)
        real = os.path.realpath(path)
        if os.access(real, os.X_OK) and not is_shim(real):
            return _stable_name(real)
    base = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
    if os.access(base, os.X_OK) and not is_shim(base):
        return _stable_name(base)
    raise InterpreterNotFound(
        f"cannot find a real Python binary behind {sys.executable!r} (a shim?); "
        "run agentwatch from an interpreter installed by absolute path or from a venv"
    )
