"""Fallback adapter for harnesses agentwatch does not know: kind `other` always,
plus the Claude-style field names many harnesses share, when they are there.
"""

from __future__ import annotations

from typing import Any

from ._common import event, first_text, put, tool

KINDS: dict[str, str] = {}
CATEGORIES: dict[str, str] = {}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    if not isinstance(payload, dict):
        return {"event": event(event_hint, "other")}
    name = event_hint or first_text(payload, "hook_event_name", "hookEventName", "event")
    fields: dict = {"event": event(name, "other")}
    put(fields, "session_id", first_text(payload, "session_id", "sessionId", "conversation_id", "taskId"))
    for key in ("cwd", "model", "transcript_path"):
        put(fields, key, first_text(payload, key))
    # No category for a harness we do not know: "other", never a guess.
    put(fields, "tool", tool(first_text(payload, "tool_name", "toolName"), CATEGORIES, category="other"))
    return fields
