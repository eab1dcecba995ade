"""Redacting a spooled append frame: its payload and argv masked under a policy.

The hook's slow path (daemon/spool_redact.py chooses the policy the configuration asks
for) passes the frame line through `redact_line` before it writes it to the spool, so a
secret never rests there. Masks are never masked again, so the drain, which redacts the
record as any other, stores the masks made here. `privacy = "full"` leaves the line as it is.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from agentwatch.record import redact


def redact_line(line: bytes, policy: redact.Policy) -> bytes:
    """The spool line (one append frame and its newline) with its payload's secrets masked."""
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
            masked = policy.apply(_with_tool(env, payload))["raw"]
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


def _with_tool(env: dict, payload: Any) -> dict:
    """The payload as a record holds it, with the call its harness's adapter reads from it: the
    policy masks the output of a command that prints a secret (commands.toml) by the call's command."""
    from agentwatch.record.adapters import adapter_for

    doc: dict[str, Any] = {"raw": payload}
    harness, event = env.get("harness"), env.get("event")
    try:
        fields = adapter_for(harness if isinstance(harness, str) else "").normalize(
            payload, event if isinstance(event, str) else None)
    except Exception:  # noqa: BLE001 - an adapter's bug costs only this reading: the payload is masked as it is
        return doc
    if isinstance(fields, dict) and isinstance(fields.get("tool"), dict):
        doc["tool"] = fields["tool"]
    return doc
