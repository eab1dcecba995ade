"""Chain v1: canonical payload bytes and the row hash recipe (docs/chain.md).

This module is the recipe's implementation in the package (the verifier's hot
walk fuses the same framing into one struct per kind, for speed); the standalone
verifier (agentwatch/standalone_verify.py) re-derives it independently from the
document, and test vectors pin them all.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

from agentwatch.store.canonical import fast_encoder

CHAIN_VERSION = 1
DOMAIN_TAG = b"agentwatch/chain/v1\x00"
GENESIS = bytes(32)
KINDS = ("event", "attestation", "gap")
MAX_RECORD_ID_BYTES = 128

_sha256 = hashlib.sha256
_fixed = struct.Struct(">QQ")  # seq, recorded_at_ns
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The same settings, as one C encoder built once: JSONEncoder.encode builds a new one on every
# call, a cost comparable to encoding a small document. Without circular-reference
# markers it holds no state between calls (safe from any thread); a cyclic value, which
# parsed JSON never is, ends in RecursionError instead of ValueError.
_C_ENCODE = json.encoder.c_make_encoder and json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, _not_json, json.encoder.encode_basestring, None, ":", ",", True, False, False
)


def reference_canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value: sorted keys, no spaces, UTF-8, no NaN.

    Raises ValueError for values JSON cannot carry exactly (NaN, Infinity,
    lone surrogates, mixed key types that cannot be sorted). The reference
    encoder: `canonical_json` gives the same bytes, from a compiled codec where it can.
    """
    try:
        text = "".join(_C_ENCODE(value, 0)) if _C_ENCODE else _CANONICAL.encode(value)
    except TypeError as exc:
        raise ValueError(f"not representable as canonical JSON: {exc}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"not representable as UTF-8 JSON: {exc.reason}") from None


canonical_json = fast_encoder(reference_canonical_json)
canonical_json.__doc__ = reference_canonical_json.__doc__


def row_hash(
    store_id: bytes,
    seq: int,
    recorded_at_ns: int,
    kind: str,
    record_id: str,
    prev_hash: bytes,
    payload: bytes,
) -> bytes:
    """sha256 over the framed row: every field at a fixed width or length-prefixed."""
    return row_hash_framed(DOMAIN_TAG + store_id, seq, recorded_at_ns, framed_kind_id(kind, record_id),
                           prev_hash, _sha256(payload).digest())


def framed_kind_id(kind: str, record_id: str) -> bytes:
    """A row's kind and record_id as the recipe frames them: each UTF-8, after its 4-byte length."""
    kind_b = kind.encode("utf-8")
    rid_b = record_id.encode("utf-8")
    return len(kind_b).to_bytes(4, "big") + kind_b + len(rid_b).to_bytes(4, "big") + rid_b


def row_hash_framed(
    prefix: bytes, seq: int, recorded_at_ns: int, kind_id: bytes, prev_hash: bytes, payload_sha256: bytes
) -> bytes:
    """The recipe from its parts: `prefix` is DOMAIN_TAG + store_id, `kind_id` framed_kind_id(kind, record_id).

    The writer's loop: the parts that do not depend on the row's place in the chain
    are framed once, before the queue.
    """
    return _sha256(b"".join((prefix, _fixed.pack(seq, recorded_at_ns), kind_id, prev_hash, payload_sha256))).digest()


def format_hash(digest: bytes) -> str:
    return "sha256:" + digest.hex()


def parse_hash(text: str) -> bytes:
    prefix, _, hexpart = text.partition(":")
    if prefix != "sha256" or len(hexpart) != 64:
        raise ValueError(f"not a sha256:<64 hex> hash: {text!r}")
    return bytes.fromhex(hexpart)
