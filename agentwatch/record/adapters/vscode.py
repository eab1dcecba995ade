"""VS Code agent hooks (Local harness): Claude-like, with mixed casing.

Common fields are camelCase (`hookEventName`, `sessionId`, `timestamp`) while
tool fields are snake_case (`tool_name`, `tool_input`, `tool_use_id`,
`tool_response`); the shared reader accepts both spellings
(microsoft/vscode-docs docs/agent-customization/hooks.md). Tool events carry
`tool_use_id`, so calls pair by id. PostToolUse fires only after a tool
succeeded and there is no failure event: a call that fails or is refused
stays open.
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style

KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "Stop": "stop",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_end",
    "PreCompact": "compact",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "runinterminal": "shell", "run_in_terminal": "shell", "runtasks": "shell",
    "readfile": "read", "read_file": "read",
    "createfile": "write", "create_file": "write",
    "editfiles": "edit", "replace_string_in_file": "edit", "insert_edit_into_file": "edit",
    "apply_patch": "edit",
    "filesearch": "search", "file_search": "search", "textsearch": "search",
    "grep_search": "search", "codebase": "search", "semantic_search": "search",
    "fetch": "web", "fetch_webpage": "web",
    "runsubagent": "agent",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    return claude_style(
        payload, event_hint, kinds=KINDS, categories=CATEGORIES,
        event_keys=("hookEventName", "hook_event_name"),
    )
