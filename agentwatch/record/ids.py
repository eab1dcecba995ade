"""Record ids: UUIDv7, so ids made later sort later and the UNIQUE index grows at its end."""

from __future__ import annotations

import os
import time


def new_record_id() -> str:
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62 & 0xFFF) << 64 | 0b10 << 62 | rand & ((1 << 62) - 1)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# The recorder's own rows (attestations, gaps, erasure rows) take ids with these prefixes. Socket, spool and
# import clients may not: an id a client took first would make the recorder's row look like a
# duplicate of it (docs/protocol.md, "Record ids").
DAEMON_ID_PREFIXES = ("attest-", "gap-", "erasure-")


def is_daemon_id(record_id: str) -> bool:
    """Whether `record_id` lies in the recorder's own namespace."""
    return record_id.startswith(DAEMON_ID_PREFIXES)


def derived_record_id(*parts: bytes) -> str:
    """A record id that is a function of `parts`: a UUIDv8 (RFC 9562, custom) over their SHA-256.

    `import` gives a bare payload the id of (harness, line number, line bytes), so importing the
    same input again is acknowledged as duplicates instead of stored twice (docs/protocol.md,
    "Record ids"). Each part is length-prefixed, so no two lists of parts share an id."""
    import hashlib

    digest = hashlib.sha256()
    digest.update(b"agentwatch-derived-id-v1\0")
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    value = int.from_bytes(digest.digest()[:16], "big")
    value = value & ~(0xF << 76) | 0x8 << 76  # version 8
    value = value & ~(0b11 << 62) | 0b10 << 62  # the RFC 9562 variant
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
