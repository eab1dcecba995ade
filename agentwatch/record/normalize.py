"""From an append envelope (wire v1, spool file or import line) to the stored record.

The record document (schema 2) is what an `event` row's payload holds:
normalized fields from the harness adapter, the client's metadata, and what of
the raw harness payload normalization did not take (agentwatch.record.compact).
Its canonical JSON bytes are what the chain hashes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from agentwatch.record import redact
from agentwatch.record.adapters import adapter_for
from agentwatch.record.adapters.sender import sender, via_config
from agentwatch.record.compact import RECORD_SCHEMA, move_shared
from agentwatch.record.ids import DAEMON_ID_PREFIXES, is_daemon_id
from agentwatch.store import canonical
from agentwatch.store.append import Append, json_nesting_exceeds
from agentwatch.store.chain import MAX_RECORD_ID_BYTES, canonical_json

SCHEMA_VERSION = 1  # of gap rows' documents; event documents are RECORD_SCHEMA
# A payload nested deeper is stored as the text it came as, unparsed: normalizing
# and redacting walk every level, and the store's JSON functions stop at 1000.
MAX_PAYLOAD_DEPTH = 256
_TOO_DEEP = f"payload is nested more than {MAX_PAYLOAD_DEPTH} levels deep; stored as text, not parsed"
_CLIENT_FIELDS = ("pid", "ppid", "uid", "ts_observed_ns", "ts_mono_ns", "delivery")


class BadEnvelope(ValueError):
    """The envelope itself is unusable (no record_id, wrong types): rejected, not stored."""


def check_envelope(env: Any) -> dict:
    if not isinstance(env, dict):
        raise BadEnvelope("append request must be a JSON object")
    rid = env.get("record_id")
    if not isinstance(rid, str) or not rid or not rid.isprintable():
        raise BadEnvelope("record_id must be a non-empty printable string")
    if len(rid.encode("utf-8", "surrogatepass")) > MAX_RECORD_ID_BYTES:
        raise BadEnvelope(f"record_id longer than {MAX_RECORD_ID_BYTES} bytes")
    if is_daemon_id(rid):
        raise BadEnvelope(f"record_id {rid[:40]!r} is in the recorder's own namespace "
                          f"({', '.join(p + '…' for p in DAEMON_ID_PREFIXES)}); choose another")
    if not isinstance(env.get("harness"), str) or not env["harness"]:
        raise BadEnvelope("harness must be a non-empty string")
    carried = [k for k in ("payload", "payload_text", "payload_b64") if k in env]
    if len(carried) != 1:
        raise BadEnvelope("exactly one of payload, payload_text, payload_b64 is required")
    for key in ("payload_text", "payload_b64"):
        if key in env and not isinstance(env[key], str):
            raise BadEnvelope(f"{key} must be a string")
    if env.get("event") is not None and not isinstance(env["event"], str):
        raise BadEnvelope("event must be a string")
    return env


def decode_payload(env: dict) -> tuple[Any, str | None, bytes | None]:
    """The harness payload as a JSON value, a parse error if any, and its raw bytes."""
    if "payload" in env:
        return env["payload"], None, None
    if "payload_b64" in env:
        try:
            raw = base64.b64decode(env["payload_b64"], validate=True)
        except (binascii.Error, ValueError):
            return env["payload_b64"], "payload_b64 is not valid base64", None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None, "payload is not valid UTF-8", raw
    else:
        text = env["payload_text"]
        raw = None
    try:
        value = canonical.loads(text)
    except RecursionError:  # deeper than the parser goes
        return text, _TOO_DEEP, raw
    except ValueError as exc:
        return text, f"payload is not valid JSON: {exc}", raw
    if _too_deep(text):
        return text, _TOO_DEEP, raw
    return value, None, raw


def _too_deep(text: str) -> bool:
    if text.count("[") + text.count("{") <= MAX_PAYLOAD_DEPTH:
        return False
    return json_nesting_exceeds(text.encode("utf-8", "surrogatepass"), MAX_PAYLOAD_DEPTH)


def record_document(
    env: dict, *, uid: int | None = None, peer_pid: int | None = None, client: dict | None = None
) -> dict:
    """Normalize one checked envelope into the record document (schema 2).

    `client`, when given, is what the recorder itself knows about where the
    record came from (an import); the envelope's own client fields are then
    only claims, kept under `client_claimed`.
    """
    payload, error, raw_bytes = decode_payload(env)
    if raw_bytes is None and (payload is None or _blank(payload)):
        payload, error = _argv_payload(env, payload, error)
        if error is not None and _blank(payload):
            error = _no_input(env)
    installed_for = env["harness"]
    # The harness that sent the event, from the payload's shape; the hook's own name and
    # config file become `via` (docs/record.md, "Sender and via").
    harness = sender(installed_for, payload) if error is None else installed_for
    hint = env.get("event") if harness == installed_for else None
    if error is None:
        fields = _adapter_fields(harness, payload, hint)
    else:
        fields = {"event": _unparsed_event(env.get("event"))}
    doc: dict[str, Any] = {"schema": RECORD_SCHEMA, "harness": harness}
    doc.update(fields)
    config = via_config(env.get("argv"))
    if config is not None or harness != installed_for:
        doc["via"] = {"harness": installed_for, **({"config": config} if config is not None else {})}
    claimed = {k: env[k] for k in _CLIENT_FIELDS if k in env}
    if client is None:
        client = dict(claimed)
        # What the kernel says about the sender (SO_PEERCRED) overrides what it claims.
        if uid is not None:
            client["uid"] = uid
        if peer_pid is not None:
            client["peer_pid"] = peer_pid
        origin = client
    else:
        client = dict(client)
        origin = claimed  # the session the input names, not the importing process
        if claimed:
            doc["client_claimed"] = claimed
    doc["client"] = client
    if "session_id" not in doc and isinstance(origin.get("ppid"), int):
        doc["session_id"] = synthesized_session_id(harness, origin.get("uid"), origin["ppid"], doc.get("cwd"))
        doc["session_synthesized"] = True
    if error is not None:
        doc["payload_error"] = error
    if raw_bytes is not None and error is not None:
        doc["raw_b64"] = base64.b64encode(raw_bytes).decode("ascii")
    else:
        doc["raw"] = payload
        move_shared(doc)
    for key in ("orig_bytes", "truncated", "raw_sha256", "argv", "stdin_incomplete", "cut_fields",
                "redirect_refused"):
        if key in env:
            doc[key] = env[key]
    return doc


def synthesized_session_id(harness: str, uid: Any, ppid: int, cwd: Any) -> str:
    """A stable session id for harnesses that send none (docs/record.md).

    The hook's parent process is the harness process for the life of a session,
    so (harness, uid, ppid, cwd) names the session; the digest keeps it opaque.
    """
    parts = (harness, str(uid) if isinstance(uid, int) else "", str(ppid), cwd if isinstance(cwd, str) else "")
    return "synth:" + hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _adapter_fields(harness: str, payload: Any, hint: str | None) -> dict:
    """The adapter's fields; a bug in one never costs the record (it is stored as `other`)."""
    try:
        fields = adapter_for(harness).normalize(payload, hint)
        if isinstance(fields, dict) and isinstance(fields.get("event"), dict):
            return fields
        problem = "adapter returned no event"
    except Exception as exc:  # noqa: BLE001 - the raw payload is still stored
        problem = f"adapter failed: {type(exc).__name__}"
    return {"event": _unparsed_event(hint), "normalize_error": problem}


def _unparsed_event(hint: Any) -> dict:
    return {"name": hint, "kind": "other"} if isinstance(hint, str) and hint else {"kind": "other"}


def _no_input(env: dict) -> str:
    """Why a hook that ran has no payload: the harness closed stdin empty, or never wrote."""
    if env.get("stdin_incomplete") is True:
        return "no input: stdin stayed open and nothing arrived within the hook's budget"
    return "no input: stdin was closed empty"


def _blank(payload: Any) -> bool:
    return isinstance(payload, str) and not payload.strip()


def _argv_payload(env: dict, payload: Any, error: str | None) -> tuple[Any, str | None]:
    """Codex's legacy `notify` passes its JSON as the last argument, not on stdin."""
    argv = env.get("argv")
    if isinstance(argv, list) and argv and isinstance(argv[-1], str):
        try:
            value = json.loads(argv[-1])
        except (ValueError, RecursionError):
            return payload, error
        if isinstance(value, dict) and not _too_deep(argv[-1]):
            return value, None
    return payload, error


def to_append(
    env: dict,
    *,
    uid: int | None = None,
    peer_pid: int | None = None,
    policy: redact.Policy | None = None,
    client: dict | None = None,
) -> Append:
    """Check, normalize, redact and serialize one envelope. Raises BadEnvelope or ValueError.

    `policy` decides what the stored document may keep (docs/redaction.md); by
    default the `redacted` mode with the per-install salt, so no path to the
    store skips redaction.
    """
    check_envelope(env)
    doc = record_document(env, uid=uid, peer_pid=peer_pid, client=client)
    if policy is None:
        policy = redact.default_policy()
    try:
        payload = _encode(doc, policy, env.get("payload_text"))
    except RecursionError:
        # Deeper than the JSON encoder's recursion limit (about 1000 levels): a rejection, not a crash.
        raise ValueError("a value in the envelope is nested too deeply to store") from None
    return Append(env["record_id"], "event", payload)


def _encode(doc: dict, policy: redact.Policy, text: str | None = None) -> bytes:
    try:
        return policy.encode(doc)
    except ValueError:
        # A value JSON cannot carry exactly (lone surrogate, NaN, a number beyond a double's
        # range such as 1e999999, read as infinity): keep the payload as the text it came as
        # when there is one, else escaped, so what is stored never claims a value nobody sent.
        raw = doc.get("raw")
        if isinstance(text, str) and _encodable(text):
            doc["raw"] = text
        else:
            doc["raw"] = json.dumps(raw, ensure_ascii=True, allow_nan=True)
        doc["payload_error"] = "payload has values JSON cannot carry exactly; stored as text"
        return policy.encode(_scrub(doc))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only the escaped form can carry it
        return False
    return True


def _scrub(value: Any) -> Any:
    """Replace what canonical JSON refuses (lone surrogates, NaN) in the normalized fields."""
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value


def gap_append(record_id: str, reason: str, detail: dict) -> Append:
    """A `gap` row: loss or rejection the recorder knows about, with the reason."""
    return Append(record_id, "gap", canonical_json({"schema": SCHEMA_VERSION, "reason": reason, **detail}))


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
