"""Fallback adapter: reads the Claude-style field names many harnesses share."""

from __future__ import annotations

from typing import Any


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    if not isinstance(payload, dict):
        return {"event": {"name": event_hint, "kind": "other"}}
    name = event_hint or _first_str(payload, "hook_event_name", "hookEventName", "event")
    fields: dict = {"event": {"name": name, "kind": "other"}}
    session = _first_str(payload, "session_id", "sessionId", "conversation_id", "taskId")
    if session is not None:
        fields["session_id"] = session
    for key in ("cwd", "model", "transcript_path"):
        if isinstance(payload.get(key), str):
            fields[key] = payload[key]
    tool = _first_str(payload, "tool_name", "toolName")
    if tool is not None:
        fields["tool"] = {"name": tool, "category": "other"}
    return fields


def _first_str(payload: dict, *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str):
            return value
    return None
