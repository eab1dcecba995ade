"""OpenHands hooks (.openhands/hooks.json, Claude Code-compatible config).

Its stdin JSON is the SDK's HookEvent (openhands-sdk/openhands/sdk/hooks/
types.py): `event_type` names the event, `working_dir` the directory,
`tool_response` (an object, the observation) follows a tool, `message` holds
the user prompt. A `tool_response` whose `is_error` is true (the SDK's
Observation.is_error, openhands-sdk/openhands/sdk/tool/schema.py) makes the
record a tool_error. No tool-call id:
calls pair FIFO on tool name and input, which PreToolUse and PostToolUse take
from the same action. A call a PreToolUse hook blocks gets no PostToolUse and
stays open.
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style, first_text, obj, prompt_digest, put

KINDS = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "Stop": "stop",
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
        event_keys=("event_type", "hook_event_name"),
    )
    if not isinstance(payload, dict):
        return fields
    if "cwd" not in fields:
        put(fields, "cwd", first_text(payload, "working_dir"))
    tool = fields.get("tool")
    if tool is not None and fields["event"]["kind"] == "tool_post" and obj(tool.get("response")).get("is_error") is True:
        fields["event"]["kind"] = "tool_error"
        tool["is_error"] = True
    if "prompt" not in fields and fields["event"]["kind"] == "prompt":
        put(fields, "prompt", prompt_digest(payload.get("message")))
    return fields
