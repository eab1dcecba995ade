"""Who acts on recorded rows, and why: the `actor` and `reason` of erasure, hold, release and
archive rows (store/erasure.py, store/retention.py). One module both import, so the two agree
on what a name and a reason may be (erasure imports retention for holds: neither can import
the other for these)."""

from __future__ import annotations

import os
from typing import Any

from agentwatch.errors import UsageError

MAX_REASON_CHARS = 1000
MAX_BY_CHARS = 200


def actor(by: str | None = None) -> dict[str, Any]:
    """Who acts: the kernel's uid, its login name when it has one, this pid, and the name given with --by."""
    uid = os.getuid()
    who: dict[str, Any] = {"uid": uid, "pid": os.getpid()}
    try:
        import pwd

        who["user"] = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        pass
    if by is not None:
        by = by.strip()
        if not by or len(by) > MAX_BY_CHARS or not by.isprintable():
            raise UsageError(f"--by must be a printable name of at most {MAX_BY_CHARS} characters")
        who["by"] = by
    return who


def check_reason(reason: str, why: str = "") -> str:
    """The reason stored in clear in the row: said, on one printable line, at most MAX_REASON_CHARS.
    `why`: what it must explain, for the error (" the payload is erased")."""
    reason = reason.strip()
    if not reason:
        raise UsageError(f"--reason must say why{why}")
    if len(reason) > MAX_REASON_CHARS:
        raise UsageError(f"--reason is longer than {MAX_REASON_CHARS} characters")
    if not reason.isprintable():
        raise UsageError("--reason must be printable text on one line")
    return reason
