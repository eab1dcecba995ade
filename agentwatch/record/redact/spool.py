"""Redacting what the hook spools: its slow path, before the frame touches the disk.

A hook whose record is not acknowledged in time writes the append frame to the spool, and
the daemon stores it at the drain. The hook client (hookclient.py) is standard library only
and keeps its fast path free of this module: only on the slow path, just before it spools,
does it import this module and pass the frame line through `redact_line`.

The payload is masked with the policy the configuration asks for (privacy mode, salt,
extra patterns: `config.load().policy()`), so a mask made here is the mask the daemon
would make: the drain redacts the record again and masks are never masked again, so the
stored row is what it would have been. Where the configuration or the salt cannot be read,
a salt drawn for this record masks it (its masks then correlate with no other record's):
the frame is never spooled in clear because the configuration is broken. `privacy =
"full"` spools the frame as it is, as the store would keep it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

from agentwatch.record import redact


def _policy() -> redact.Policy:
    try:
        from agentwatch import config

        return config.load().policy()
    except Exception:
        return redact.Policy(redact.REDACTED, os.urandom(32))


def redact_line(line: bytes, policy: redact.Policy | None = None) -> bytes:
    """The spool line (one append frame and its newline) with its payload's secrets masked."""
    policy = policy or _policy()
    if policy.mode == redact.FULL:
        return line
    env = json.loads(line)
    changed = False
    if isinstance(env.get("payload_text"), str):
        text = env["payload_text"]
        try:
            payload: Any = json.loads(text)
        except (ValueError, RecursionError):
            out = policy.redact_text(text)
        else:
            masked = policy.apply({"raw": payload})["raw"]
            out = text if masked == payload else json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
        if out != text:
            env["payload_text"], changed = out, True
    elif isinstance(env.get("payload_b64"), str):
        try:
            raw = base64.b64decode(env["payload_b64"], validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw is not None:
            latin = raw.decode("latin-1")
            out = policy.redact_text(latin)
            if out != latin:
                env["payload_b64"], changed = base64.b64encode(out.encode("latin-1")).decode("ascii"), True
    if isinstance(env.get("argv"), list):
        argv = [policy.redact_text(a) if isinstance(a, str) else a for a in env["argv"]]
        if argv != env["argv"]:
            env["argv"], changed = argv, True
    if not changed:
        return line
    digest = env.get("raw_sha256")
    if isinstance(digest, str) and digest.startswith("sha256:"):
        env["raw_sha256"] = policy.keyed(digest)  # a plain digest of what was masked confirms guesses
    return json.dumps(env, separators=(",", ":")).encode("ascii") + b"\n"  # ASCII: lone surrogates stay escapes
