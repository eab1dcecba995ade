"""Canonical JSON at compiled speed, byte for byte the form docs/chain.md defines.

orjson writes the canonical form for almost every value: sorted keys (UTF-8 byte
order is code point order), no blanks, UTF-8, the same string escapes. Where it
would not, the reference encoder (`chain.reference_canonical_json`) answers:

- integers beyond 64 bits, lone surrogates, non-string keys, values nested
  deeper than orjson goes: orjson refuses them;
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
from itertools import accumulate
from typing import Any, Callable

try:
    import orjson
except ImportError:  # the reference encoder alone
    orjson = None  # type: ignore[assignment]

# Where orjson's float text differs from repr: a one-digit negative exponent (repr pads it to
# two), or a small number written out in full. The pattern starts with a literal, which the
# regex engine finds at memchr speed; the digit before "e-" is checked per match.
_SHORT_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")
_MANTISSA = frozenset(b"0123456789.")
# orjson reads integers beyond 64 bits as floats: a text with 19 digits in a row goes to json.loads.
_DIGIT_SHAPE = bytes(100 if 48 <= c <= 57 else 32 for c in range(256))  # digits -> "d", the rest -> " "
_NINETEEN_DIGITS = b"d" * 19


def _float_text_differs(out: bytes) -> bool:
    """Does a number in this JSON text (not a string's content) have a form repr writes otherwise?"""
    for m in _SHORT_EXPONENT.finditer(out):
        if _number_before(out, m.start()):
            return True
    i = out.find(b"0.0000")
    while i >= 0:
        if _number_before(out, i + 1):
            return True
        i = out.find(b"0.0000", i + 1)
    return False


def _number_before(out: bytes, end: int) -> bool:
    """Is out[:end] ending in the digits of a number that starts the text or follows `:`, `,` or `[`?"""
    i = end
    while i and out[i - 1] in _MANTISSA:
        i -= 1
    if i and out[i - 1] == 45:  # "-"
        i -= 1
    return i < end and (i == 0 or out[i - 1] in b":,[")


def fast_encoder(reference: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """`reference`'s bytes, from orjson where that gives them (see the module doc)."""
    if orjson is None:
        return reference
    dumps, loads, error = orjson.dumps, orjson.loads, orjson.JSONEncodeError
    # datetimes and dataclasses are not JSON values: orjson hands them on, and the reference refuses them
    options = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

    def encode(value: Any) -> bytes:
        try:
            out = dumps(value, option=options)
        except (TypeError, error):
            return reference(value)
        if b"null" in out and loads(out) != value:
            return reference(value)  # NaN or an infinity became null
        if (b"e-" in out or b"0.0000" in out) and _float_text_differs(out):
            return reference(value)
        return out

    return encode


def loads(text: str | bytes) -> Any:
    """json.loads, from orjson where it gives the same value (it refuses NaN, reads big integers as floats)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if orjson is not None and _NINETEEN_DIGITS not in data.translate(_DIGIT_SHAPE):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # NaN, Infinity, lone surrogates, nesting deeper than orjson reads: json.loads decides
    return json.loads(text)


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_nesting_exceeds(data: bytes, limit: int) -> bool:
    """Whether JSON text nests arrays and objects more than `limit` deep (strings ignored)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False  # the common case: too few brackets to nest that deep
    brackets = _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", data))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def compiled() -> bool:
    """Is the compiled codec in use?"""
    return orjson is not None
