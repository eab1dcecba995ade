"""Codex CLI: Claude-compatible hooks (plus turn_id, model) and the legacy `notify`.

PreToolUse and PostToolUse carry `tool_use_id` (codex-rs/hooks/src/schema.rs),
so calls pair by id. Codex has no failure event: a call that a hook or the
user refuses never gets its PostToolUse and stays open, and the `Interrupt`
event (an interrupted turn) marks the record `interrupt: true`, which makes
the calls of that turn that never ended `interrupted` in tool_calls.

The legacy `notify` program gets its JSON as the last argv word and fires
only for `agent-turn-complete`:
{"type", "thread-id", "turn-id", "cwd", "client", "input-messages", "last-assistant-message"}.
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style, event, first_text, put

KINDS = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "PermissionRequest": "permission",
    "PreCompact": "compact",
    "PostCompact": "compact",
    "Stop": "stop",
    "StopFailure": "stop",
    "Interrupt": "stop",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_end",
    "agent-turn-complete": "stop",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "exec_command": "shell",
    "local_shell": "shell",
    "unified_exec": "shell",
    "write_stdin": "shell",
    "apply_patch": "edit",
    "view_image": "read",
    "web_search": "web",
    "networkaccess": "web",
    "spawn_agent": "agent",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    if isinstance(payload, dict) and "hook_event_name" not in payload and isinstance(payload.get("type"), str):
        return _legacy_notify(payload)
    fields = claude_style(payload, event_hint, kinds=KINDS, categories=CATEGORIES)
    if fields["event"].get("name") == "Interrupt":
        fields["interrupt"] = True
    return fields


def _legacy_notify(p: dict) -> dict:
    name = p["type"]
    fields: dict[str, Any] = {"event": event(name, KINDS.get(name, "other"))}
    put(fields, "session_id", first_text(p, "thread-id", "thread_id"))
    put(fields, "turn_id", first_text(p, "turn-id", "turn_id"))
    put(fields, "cwd", first_text(p, "cwd"))
    return fields
