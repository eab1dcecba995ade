"""Record schema 2: each piece of a harness payload stored once (docs/record.md).

An adapter copies values out of the harness payload into the normalized fields
(`session_id`, `cwd`, `tool.input`, `tool.response`, ...). Schema 1 kept every
one of them twice: normalized, and again under `raw`. Schema 2 keeps `raw` for
what normalization did not take: a top-level value of the payload that a
normalized field holds as the very same object (or an equal scalar of the same
type) leaves `raw`, and `raw_moved` names where it lives instead:

    "raw": {"user_email": "dev@example.com"},
    "raw_moved": {"session_id": "session_id", "tool_input": "tool.input", ...}

`harness_payload(doc)` puts the payload back together, for either schema. This
runs before redaction, so what the store keeps is what schema 1 kept, once:
redaction treats each moved value where it now lives, and a value that stays
under `raw` is redacted as part of `raw`.
"""

from __future__ import annotations

from typing import Any

RECORD_SCHEMA = 2
# Where normalized fields live: top-level keys, and one level into these objects.
_NESTED = ("event", "tool", "prompt", "decision", "agent", "hook")
_SKIP = frozenset({"schema", "raw", "raw_b64", "raw_moved", "client"})
MIN_SAVING = 16  # a string moves only when it is this much longer than its path: the map costs bytes too


def _homes(doc: dict) -> tuple[dict[int, tuple], dict[str, tuple]]:
    """Where the normalized fields' values live, as key tuples: objects and lists by identity,
    strings by value (only those at least MIN_SAVING characters longer than their path)."""
    by_id: dict[int, tuple] = {}
    by_text: dict[str, tuple] = {}
    for key, value in doc.items():
        if key in _SKIP:
            continue
        kind = type(value)
        if kind is dict:
            if key in _NESTED:
                floor = len(key) + 1 + MIN_SAVING
                for inner, v in value.items():
                    k = type(v)
                    if k is dict or k is list:
                        if v:
                            by_id.setdefault(id(v), (key, inner))
                    elif k is str and len(v) >= floor + len(inner):
                        by_text.setdefault(v, (key, inner))
            elif value:
                by_id.setdefault(id(value), (key,))
        elif kind is list:
            if value:
                by_id.setdefault(id(value), (key,))
        elif kind is str and len(value) >= len(key) + MIN_SAVING:
            by_text.setdefault(value, (key,))
    return by_id, by_text


def move_shared(doc: dict) -> dict:
    """Take out of `doc["raw"]` what a normalized field of `doc` holds; the document, changed in place.

    Objects and lists move when the field holds the very object (adapters pass them on
    as they are); strings when the field holds an equal string longer than its path.
    """
    raw = doc.get("raw")
    if type(raw) is not dict or not raw:
        return doc
    by_id, by_text = _homes(doc)
    moved = {}
    for key, value in raw.items():
        kind = type(value)
        home = by_id.get(id(value)) if kind is dict or kind is list else by_text.get(value) if kind is str else None
        if home is not None:
            moved[key] = ".".join(home)
    if moved:
        doc["raw"] = {k: v for k, v in raw.items() if k not in moved}
        doc["raw_moved"] = moved
    return doc


def harness_payload(doc: Any) -> Any:
    """The harness payload a record document was made from (schema 1 or 2), as stored (redacted)."""
    if type(doc) is not dict:
        return None
    raw = doc.get("raw")
    moved = doc.get("raw_moved")
    if type(moved) is not dict or type(raw) is not dict:
        return raw
    payload = dict(raw)
    for key, path in moved.items():
        value: Any = doc
        for part in str(path).split("."):
            value = value.get(part) if type(value) is dict else None
        payload[key] = value
    return payload
