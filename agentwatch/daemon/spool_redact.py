"""What the hook's slow path runs before it spools: the frame masked under the configured policy.

The hook client (hookclient.py) is standard library only and keeps its fast path free of
this module; only when a record got no ack, just before it writes the frame to the spool,
does it import this module (docs/redaction.md, "Before the store"). The policy is the one
the configuration asks for (privacy mode, salt, extra patterns: `config.load().policy()`),
so the masks are the daemon's. Where the configuration or the salt cannot be read, a salt
drawn for this record masks it (its masks then correlate with no other record's): a broken
configuration never puts a frame on disk in clear.
"""

from __future__ import annotations

import os

from agentwatch import config
from agentwatch.record import redact
from agentwatch.record.redact.spool import redact_line


def policy() -> redact.Policy:
    try:
        return config.load().policy()
    except Exception:
        return redact.Policy(redact.REDACTED, os.urandom(32))


def redact_for_spool(line: bytes) -> bytes:
    """The frame line with its payload's secrets masked, under the configured policy."""
    return redact_line(line, policy())
