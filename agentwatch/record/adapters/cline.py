"""Cline hooks: one executable per event, named after it, so the event may
arrive only as event_hint (the client passes the executable's name).

Base fields (clineVersion, hookName, timestamp, taskId, workspaceRoots,
userId) sit at the top; the event's data is nested under the event name in
lower camel case, e.g. `preToolUse{toolName, parameters}` and
`postToolUse{toolName, parameters, result, success, executionTimeMs}`. A
Cline task is the session. No tool-call id: FIFO pairing.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    BASE_CATEGORIES,
    event,
    first_root,
    first_text,
    flag,
    obj,
    prompt_digest,
    put,
    text,
    tool,
)

KINDS = {
    "TaskStart": "session_start",
    "TaskResume": "session_start",
    "TaskComplete": "session_end",
    "TaskCancel": "session_end",
    "TaskError": "session_end",
    "SessionShutdown": "session_end",
    "UserPromptSubmit": "prompt",
    "PreToolUse": "tool_pre",
    "PostToolUse": "tool_post",
    "PreCompact": "compact",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "execute_command": "shell",
    "read_file": "read",
    "write_to_file": "write",
    "replace_in_file": "edit", "apply_diff": "edit", "apply_patch": "edit",
    "search_files": "search", "list_files": "search", "list_code_definition_names": "search",
    "browser_action": "web", "web_fetch": "web", "web_search": "web",
    "use_mcp_tool": "mcp", "access_mcp_resource": "mcp",
    "new_task": "agent", "use_subagents": "agent",
}

_BASE = {"clineVersion", "hookName", "timestamp", "taskId", "workspaceRoots", "userId"}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    p = obj(payload)
    name = text(event_hint) or first_text(p, "hookName")
    kind = KINDS.get(name or "", "other")
    fields: dict[str, Any] = {"event": event(name, kind)}
    if not p:
        return fields
    data = _event_data(p, name)
    meta = obj(data.get("taskMetadata"))
    put(fields, "harness_version", first_text(p, "clineVersion"))
    put(fields, "session_id", first_text(p, "taskId") or first_text(meta, "taskId"))
    put(fields, "cwd", first_root(p.get("workspaceRoots")))
    put(fields, "model", first_text(p, "model"))
    put(fields, "ts_harness", text(p.get("timestamp")))
    put(fields, "agent", _agent(p))
    params = obj(data.get("parameters"))
    success = flag(data.get("success"))
    if kind == "tool_post" and success is False:
        fields["event"]["kind"] = kind = "tool_error"
    put(fields, "tool", tool(
        first_text(data, "toolName"),
        CATEGORIES,
        mcp_server=first_text(params, "server_name"),
        input=data.get("parameters"),
        response=data.get("result"),
        is_error=None if success is None else not success,
        duration_ms=data.get("executionTimeMs"),
    ))
    put(fields, "prompt", prompt_digest(data.get("prompt", meta.get("initialTask"))))
    return fields


def _event_data(p: dict, name: str | None) -> dict:
    """The nested object for this event: `preToolUse` for PreToolUse, and so on."""
    if name:
        nested = p.get(name[:1].lower() + name[1:])
        if isinstance(nested, dict):
            return nested
    rest = [v for k, v in p.items() if k not in _BASE and isinstance(v, dict)]
    return rest[0] if len(rest) == 1 else {}


def _agent(p: dict) -> dict | None:
    agent_id = first_text(p, "agent_id", "agentId")
    return {"id": agent_id} if agent_id else None
