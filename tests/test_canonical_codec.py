"""The compiled JSON codec gives the reference encoder's bytes (docs/chain.md), or defers to it."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentwatch.store import canonical
from agentwatch.store.chain import canonical_json, reference_canonical_json

# Floats of every magnitude (subnormals, exponents either side of Python's switch to e-notation),
# integers either side of 64 bits, any text (lone surrogates, controls, U+2028), nesting.
scalars = (
    st.none() | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e-7, 1e-5, 1.5e-5, 0.0001, 1e16, 1e15, 1e22, 5e-324, -0.0, 2.0**63, 2**63, -(2**63) - 1])
    | st.text()
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    | st.lists(children, max_size=3).map(tuple),
    max_leaves=25,
)


def both(value):
    """(bytes or the ValueError message class) of each encoder."""
    out = []
    for encode in (canonical_json, reference_canonical_json):
        try:
            out.append(encode(value))
        except ValueError:
            out.append(ValueError)
    return out


@settings(max_examples=300, deadline=None)
@given(values)
@example({"a": float("nan")})
@example([float("inf"), None])
@example({"x": 1e-07, "y": 1e-05, "z": 1e16})
@example(2**64)
@example({"k": "\ud800"})
@example({"é": 1, "a": 2, "\U0001f600": 3, "\uffff": 4})
@example("\x00\x1f\x7f\u2028\u2029\"\\")
@example(1e-07)  # a bare number: no ":", "," or "[" before it
@example(-1.5e-05)
def test_compiled_codec_gives_the_reference_bytes(value):
    fast, reference = both(value)
    assert fast == reference


def test_what_orjson_cannot_express_takes_the_reference_path():
    deep: list = []
    node = deep
    for _ in range(300):  # deeper than orjson's limit, shallower than the reference's
        node.append([])
        node = node[0]
    assert canonical_json(deep) == reference_canonical_json(deep)
    assert canonical_json({1: "a"}) == reference_canonical_json({1: "a"}) == b'{"1":"a"}'
    assert canonical_json([2**64, -(2**63) - 1]) == b"[18446744073709551616,-9223372036854775809]"
    assert canonical_json([1e-07, 1.5e-05]) == b"[1e-07,1.5e-05]"
    with pytest.raises(ValueError):
        canonical_json({"a": [math.nan]})
    with pytest.raises(ValueError):
        canonical_json("\udc80")


def test_without_orjson_the_reference_encoder_is_used(monkeypatch):
    monkeypatch.setattr(canonical, "orjson", None)
    encode = canonical.fast_encoder(reference_canonical_json)
    assert encode is reference_canonical_json
    assert canonical.loads('{"a": NaN}')["a"] != canonical.loads('{"a": NaN}')["a"]


@settings(max_examples=400, deadline=None)
@given(values)
@example('{"a": 123456789012345678901234567890}')
@example("[NaN, Infinity, -Infinity]")
@example('"\\ud800"')
@example("[1e400]")
def test_loads_gives_json_loads_values(value):
    text = value if isinstance(value, str) and value[:1] in "[{\"" else json.dumps(value)
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            canonical.loads(text)
        return
    got = canonical.loads(text)
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert type(got) is type(expected)


def test_the_compiled_codec_is_installed():
    assert canonical.compiled()  # orjson is a declared dependency
