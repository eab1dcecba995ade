"""Gemini CLI hooks: Claude-like base fields, its own event and tool names.

No tool-call id, and calls run in parallel: the scheduler runs a batch of
read-only calls at once (packages/core/src/scheduler/scheduler.ts,
`_isParallelizable` and `Promise.all` over the batch), so their AfterTool
events come back in any order. BeforeTool and AfterTool therefore pair FIFO
on the tool name plus the digest of `tool_input`, which AfterTool carries too
(packages/core/src/core/coreToolHookTriggers.ts passes the invocation's
params to both). Only a BeforeTool hook that rewrites the arguments
(`hookSpecificOutput.tool_input`, merged into those params) makes the two
differ: then the view pairs the halves left alone by order, the last resort
(migrations/0008).
AfterTool's tool_response is {llmContent, returnDisplay, error}; a non-empty
error makes the record a tool_error. MCP tools carry mcp_context.server_name.
Gemini sends no prompt id: turn_id stays empty. A call refused in the
confirmation dialog or blocked by a BeforeTool hook gets no AfterTool and
stays open.
"""

from __future__ import annotations

from typing import Any

from ._common import BASE_CATEGORIES, claude_style, obj, text

KINDS = {
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "BeforeAgent": "prompt",
    "AfterAgent": "stop",
    "BeforeTool": "tool_pre",
    "AfterTool": "tool_post",
    "PreCompress": "compact",
    "Notification": "notification",
    # BeforeModel, AfterModel (once per streamed chunk) and BeforeToolSelection: other
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "run_shell_command": "shell",
    "read_file": "read",
    "read_many_files": "read",
    "list_directory": "read",
    "write_file": "write",
    "replace": "edit",
    "edit": "edit",
    "glob": "search",
    "search_file_content": "search",
    "grep_search": "search",
    "web_fetch": "web",
    "google_web_search": "web",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    fields = claude_style(payload, event_hint, kinds=KINDS, categories=CATEGORIES)
    tool = fields.get("tool")
    if tool is None or not isinstance(payload, dict):
        return fields
    server = text(obj(payload.get("mcp_context")).get("server_name"))
    if server:
        tool["mcp_server"] = server
        tool["category"] = "mcp"
    if fields["event"]["kind"] == "tool_post" and obj(tool.get("response")).get("error"):
        fields["event"]["kind"] = "tool_error"
        tool["is_error"] = True
    return fields
