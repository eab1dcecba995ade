"""Claude Code hooks: the reference shape (session_id, hook_event_name, tool_use_id …).

Every tool event carries `tool_use_id`, so calls pair by id. A call ends with
PostToolUse (ok), PostToolUseFailure (`error`; `is_interrupt: true` when the
user interrupted it) or PermissionDenied (the auto-mode classifier refused
it; the tool never ran).
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style, decision

KINDS = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "prompt",
    "UserPromptExpansion": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "PostToolUseFailure": "tool_error",
    "PermissionRequest": "permission",
    "PermissionDenied": "tool_error",
    "Stop": "stop",
    "StopFailure": "stop",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_end",
    "PreCompact": "compact",
    "PostCompact": "compact",
    "Notification": "notification",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "todowrite": "other",
    "exitplanmode": "other",
    "bashoutput": "shell",
    "killshell": "shell",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    fields = claude_style(payload, event_hint, kinds=KINDS, categories=CATEGORIES)
    if fields["event"].get("name") == "PermissionDenied" and isinstance(payload, dict):
        fields["decision"] = decision("deny", reason=payload.get("reason"))
        tool = fields.get("tool")
        if tool is not None:
            tool["outcome"] = "denied"
    return fields
