"""Cline hooks: one executable per event, named after it (TaskStart, PreToolUse, …).

The client passes the executable's name as event_hint. Two runtimes run these
files and send different payloads:

- the Cline SDK and CLI (sdk/packages/core/src/hooks/hook-file-hooks.ts):
  `hookName` in snake case (`tool_call`, `tool_result`, `agent_start`, …),
  `tool_call{id, name, input}` before a tool and `tool_result{id, name,
  input, output, error?, durationMs}` after it, so calls pair by id; plus
  `agent_id` and `parent_agent_id`;
- the VS Code extension (apps/vscode/src/core/hooks/hook-factory.ts):
  `hookName` in Pascal case and the event's data nested under its lower-camel
  name, `preToolUse{toolName, parameters}` and `postToolUse{toolName,
  parameters, result, success, executionTimeMs}`, with no call id (calls pair
  FIFO on tool name and parameters), and `model{provider, slug}`.

Both nest the data the extension way too, and both carry clineVersion,
timestamp, taskId (the session), workspaceRoots and userId. TaskCancel (the
SDK's agent_abort) marks the record `interrupt: true`: calls of the task that
never ended are then `interrupted`.
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
    "Notification": "notification",
}

# The SDK's hookName for each hook file name.
SDK_NAMES = {
    "agent_start": "TaskStart",
    "agent_resume": "TaskResume",
    "agent_abort": "TaskCancel",
    "agent_end": "TaskComplete",
    "agent_error": "TaskError",
    "tool_call": "PreToolUse",
    "tool_result": "PostToolUse",
    "prompt_submit": "UserPromptSubmit",
    "pre_compact": "PreCompact",
    "session_shutdown": "SessionShutdown",
}

CATEGORIES = {
    **BASE_CATEGORIES,
    # The SDK's tools (sdk/packages/core/src/extensions/tools/definitions.ts).
    "run_commands": "shell",
    "read_files": "read",
    "editor": "edit",
    "apply_patch": "edit",
    "search_codebase": "search",
    "fetch_web_content": "web",
    "spawn_agent": "agent",
    # The VS Code extension's tools.
    "execute_command": "shell",
    "read_file": "read",
    "write_to_file": "write",
    "replace_in_file": "edit", "apply_diff": "edit",
    "search_files": "search", "list_files": "search", "list_code_definition_names": "search",
    "browser_action": "web", "web_fetch": "web", "web_search": "web",
    "use_mcp_tool": "mcp", "access_mcp_resource": "mcp",
    "new_task": "agent", "use_subagents": "agent",
}

_BASE = {"clineVersion", "hookName", "timestamp", "taskId", "workspaceRoots", "userId", "model",
         "sessionContext", "workspaceInfo"}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    p = obj(payload)
    hook_name = first_text(p, "hookName")
    name = text(event_hint) or SDK_NAMES.get(hook_name or "", hook_name)
    kind = KINDS.get(name or "", "other")
    fields: dict[str, Any] = {"event": event(name, kind)}
    if not p:
        return fields
    data = _event_data(p, name)
    meta = obj(data.get("taskMetadata"))
    put(fields, "harness_version", first_text(p, "clineVersion"))
    put(fields, "session_id", first_text(p, "taskId") or first_text(meta, "taskId"))
    put(fields, "cwd", first_root(p.get("workspaceRoots")))
    put(fields, "model", _model(p.get("model")))
    put(fields, "ts_harness", text(p.get("timestamp")))
    put(fields, "agent", _agent(p))
    put(fields, "tool", _tool(p, data, kind))
    if fields.get("tool", {}).get("is_error"):
        fields["event"]["kind"] = "tool_error"
    if kind == "prompt":
        put(fields, "prompt", prompt_digest(data.get("prompt")))
    elif kind == "session_start":
        put(fields, "prompt", prompt_digest(text(meta.get("initialTask"))))
    if name == "TaskCancel":
        fields["interrupt"] = True
    return fields


def _tool(p: dict, data: dict, kind: str) -> dict | None:
    if kind not in ("tool_pre", "tool_post"):
        return None
    call = obj(p.get("tool_call")) if kind == "tool_pre" else obj(p.get("tool_result"))
    if call:  # the SDK's own record of the call: id, raw input, error, duration
        error = call.get("error")
        failed = kind == "tool_post" and isinstance(error, str) and bool(error)
        return tool(
            first_text(call, "name") or first_text(data, "toolName"),
            CATEGORIES,
            call_id=call.get("id"),
            input=call.get("input"),
            response=error if failed else call.get("output"),
            is_error=failed if kind == "tool_post" else None,
            duration_ms=call.get("durationMs"),
        )
    success = flag(data.get("success"))
    return tool(
        first_text(data, "toolName"),
        CATEGORIES,
        mcp_server=first_text(obj(data.get("parameters")), "server_name"),
        input=data.get("parameters"),
        response=data.get("result"),
        is_error=None if success is None else not success,
        duration_ms=data.get("executionTimeMs"),
    )


def _event_data(p: dict, name: str | None) -> dict:
    """The nested object for this event: `preToolUse` for PreToolUse, and so on."""
    if name:
        nested = p.get(name[:1].lower() + name[1:])
        if isinstance(nested, dict):
            return nested
    rest = [v for k, v in p.items() if k not in _BASE and isinstance(v, dict)]
    return rest[0] if len(rest) == 1 else {}


def _model(value: Any) -> str | None:
    """The extension's model{provider, slug} as `provider/slug` (its "unknown" placeholders left out)."""
    if isinstance(value, str):
        return value or None
    model = obj(value)
    parts = [v for v in (text(model.get("provider")), text(model.get("slug"))) if v and v != "unknown"]
    return "/".join(parts) or None


def _agent(p: dict) -> dict | None:
    out = {}
    agent_id = first_text(p, "agent_id", "agentId")
    parent = first_text(p, "parent_agent_id")
    if agent_id:
        out["id"] = agent_id
    if parent:
        out["parent_id"] = parent
    return out or None
