"""OpenHands hooks (.openhands/hooks.json, Claude Code-compatible config).

Its stdin JSON names the event `event_type` and the directory `working_dir`,
and carries `tool_output` (a string) and `message` (the user prompt); the
Claude spellings are read too. No tool-call id: FIFO pairing.
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style, first_text, prompt_digest, put

KINDS = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "Stop": "stop",
    "Notification": "notification",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "terminal": "shell", "execute_bash": "shell", "bash": "shell",
    "file_editor": "edit", "str_replace_editor": "edit", "apply_patch": "edit",
    "browser": "web", "browser_use": "web", "fetch": "web",
    "glob": "search", "grep": "search",
    "delegate": "agent", "task": "agent",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    fields = claude_style(
        payload, event_hint, kinds=KINDS, categories=CATEGORIES,
        event_keys=("hook_event_name", "event_type"),
    )
    if not isinstance(payload, dict):
        return fields
    if "cwd" not in fields:
        put(fields, "cwd", first_text(payload, "working_dir"))
    tool = fields.get("tool")
    if tool is not None and "response" not in tool and payload.get("tool_output") is not None:
        tool["response"] = payload["tool_output"]
    if "prompt" not in fields and fields["event"]["kind"] == "prompt":
        put(fields, "prompt", prompt_digest(payload.get("message")))
    return fields
