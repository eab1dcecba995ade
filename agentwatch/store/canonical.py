"""Canonical JSON at compiled speed, byte for byte the form docs/chain.md defines.

orjson writes the canonical form for almost every value: sorted keys (UTF-8 byte
order is code point order), no blanks, UTF-8, the same string escapes. Where it
would not, the reference encoder (`chain.reference_canonical_json`) answers:

- integers beyond 64 bits, lone surrogates, non-string keys, subclasses, values
  nested deeper than orjson goes: orjson refuses them;
- NaN and the infinities, which orjson writes as `null` (the reference refuses
  them): when `null` is in the output, it is read back and compared;
- floats whose shortest form orjson writes differently from Python's `repr`
  (`1e-07` / `1e-7`, `1e-05` / `0.00001`): when the output holds such a number.

The values are those of the JSON data model (what `json.loads` returns, and
tuples); tests compare both encoders on generated values of it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

try:
    import orjson
except ImportError:  # the reference encoder alone
    orjson = None  # type: ignore[assignment]

# Where orjson's float text differs from repr: a one-digit negative exponent (repr pads it to
# two), or a small number written out in full.
_FLOAT_TEXT = re.compile(rb"[0-9]e-[0-9](?![0-9])|0\.0000")
_BIG_INT = re.compile(r"[0-9]{19}")  # orjson reads integers beyond 64 bits as floats


def fast_encoder(reference: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """`reference`'s bytes, from orjson where that gives them (see the module doc)."""
    if orjson is None:
        return reference
    dumps, loads, error = orjson.dumps, orjson.loads, orjson.JSONEncodeError
    options = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
               | orjson.OPT_PASSTHROUGH_DATETIME)

    def encode(value: Any) -> bytes:
        try:
            out = dumps(value, option=options)
        except (TypeError, error):
            return reference(value)
        if b"null" in out and loads(out) != value:
            return reference(value)  # NaN or an infinity became null
        if (b"e-" in out or b"0.0000" in out) and _FLOAT_TEXT.search(out):
            return reference(value)
        return out

    return encode


def loads(text: str | bytes) -> Any:
    """json.loads, from orjson where it gives the same value (it refuses NaN, reads big integers as floats)."""
    if orjson is not None and not _BIG_INT.search(text if isinstance(text, str) else text.decode("latin-1")):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # NaN, Infinity, lone surrogates, nesting deeper than orjson reads: json.loads decides
    return json.loads(text)


def compiled() -> bool:
    """Is the compiled codec in use?"""
    return orjson is not None
