"""Large blobs inside recorded text, found in linear time and kept away from the rules.

A tool response can carry a megabyte of base64 (an image Read returned) or of binary bytes
(a payload that is not UTF-8, stored as `raw_b64`). Running every rule over every byte of
such a value costs hundreds of milliseconds and finds nothing a rule could act on: no rule
masks a run longer than the entropy rule's `max_len`, and no credential is a megabyte long.
So the work on one value is bounded here (docs/redaction.md, "Large blobs"):

- A run of at least BLOB_RUN characters of the base64 alphabet is a blob. The rules see its
  first and last EDGE characters with a filler of low entropy between them, so the run stays
  one run of the same kind (longer than any rule takes) and every rule still sees the text
  around it; the blob's middle goes back into the result untouched. Finding the runs is one
  translate and one literal search, both in C.
- A value that is mostly not text (binary bytes read as Latin-1: many control characters) is
  redacted run by run of printable ASCII (as `strings(1)` reads a binary): a secret in a
  binary is a printable run; what lies between runs is left as it is.
"""

from __future__ import annotations

import re
import secrets
from typing import Callable

BLOB_RUN = 4096  # characters of [A-Za-z0-9+/=_-] in one run: data, not a credential
EDGE = 256  # characters at each end of a blob that the rules still see
BINARY_MIN = 4096  # a value shorter than this is redacted whole, whatever its bytes
BINARY_SHARE = 0.1  # more than this share of control characters: binary
PRINTABLE_RUN = 8  # a shorter run of printable characters inside binary is noise

_RUN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_RUN_SHAPE = bytes(120 if c in _RUN_CHARS else 32 for c in range(256))  # run characters -> "x"
_BLOB_RE = re.compile(b"x" * BLOB_RUN + b"x*")  # a literal prefix: searched at C speed, linear
# Control characters (C0 but tab, newline, carriage return; DEL; C1): rare in any text, a quarter of random bytes.
_CONTROL = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
# Inside binary, printable ASCII: a quarter of random bytes are controls and half are past ASCII,
# so runs of 8 are rare there (about one in 2,000 positions), and secrets are ASCII.
_PRINTABLE = re.compile("[\t\n\r\x20-\x7e]{%d,}" % PRINTABLE_RUN)

Redact = Callable[[str], str]
Masker = Callable[[str, str], str]


def blob_spans(s: str) -> list[tuple[int, int]]:
    """The (start, end) character offsets of every blob in s, in order."""
    if len(s) < BLOB_RUN:
        return []
    # One byte per character (anything outside ASCII becomes "?"), so byte offsets are character offsets.
    shape = s.encode("ascii", "replace").translate(_RUN_SHAPE)
    return [m.span() for m in _BLOB_RE.finditer(shape)]


def redact_around_blobs(s: str, spans: list[tuple[int, int]], redact: Callable[[str, Masker], str],
                        mask: Masker, full: Redact) -> str:
    """Redact s with each blob's middle replaced by a filler, then put the middles back.

    A mask that covers a filler is computed over the original text (the masker gets the value
    with the middle restored), so it is the mask a scan of the whole value would write. Should
    a rule change part of a filler and not all of it, the whole value is scanned (`full`).
    """
    token = secrets.token_hex(8)
    filler_len = BLOB_RUN - 2 * EDGE  # with both edges, a run as long as the shortest blob: still a blob to every rule
    parts: list[str] = []
    restore: list[tuple[str, str]] = []
    last = 0
    for n, (start, end) in enumerate(spans):
        filler = (f"{token}{n:x}" * (filler_len // 16 + 1))[:filler_len]
        middle = s[start + EDGE:end - EDGE]
        parts += [s[last:start + EDGE], filler]
        restore.append((filler, middle))
        last = end - EDGE
    parts.append(s[last:])

    def unfill(text: str) -> str:
        for filler, middle in restore:
            if filler in text:
                text = text.replace(filler, middle)
        return text

    out = redact("".join(parts), lambda kind, secret: mask(kind, unfill(secret)))
    pieces: list[str] = []
    pos = 0
    for filler, middle in restore:
        at = out.find(filler, pos)
        if at < 0:
            continue  # inside a mask: the mask already stands for the original text
        pieces += [out[pos:at], middle]
        pos = at + len(filler)
    pieces.append(out[pos:])
    if any(token in piece for piece in pieces[::2]):
        return full(s)  # a rule took part of a filler and not all of it: judge the real text instead
    return "".join(pieces)


def looks_binary(s: str) -> bool:
    """Mostly not printable text: bytes read as Latin-1, not a document."""
    if len(s) < BINARY_MIN:
        return False
    data = s.encode("latin-1", "replace")  # one byte per character; beyond Latin-1 is "?", text
    return len(data) - len(data.translate(None, _CONTROL)) > BINARY_SHARE * len(data)


def redact_printable_runs(s: str, redact: Redact) -> str:
    """Redact each run of printable text in binary s on its own; the bytes between stay."""
    out: list[str] = []
    last = 0
    for m in _PRINTABLE.finditer(s):
        run = m.group()
        done = redact(run)
        if done is not run and done != run:
            out += [s[last:m.start()], done]
            last = m.end()
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)
