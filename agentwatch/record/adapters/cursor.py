"""Cursor hooks (hooks.json version 1, cursor.com/docs/agent/hooks).

Two generations of tool events:

- the tool events (Cursor 2.4+): preToolUse, postToolUse and
  postToolUseFailure for every tool (Shell, Read, Write, Grep, MCP:…, Task),
  with `tool_use_id`, so calls pair by id. postToolUse's `tool_output` is a
  JSON string; postToolUseFailure fires when a tool fails, times out or is
  denied, with `error_message`, `failure_type` (`error`, `timeout`,
  `permission_denied`) and `is_interrupt`;
- the per-action events: before/afterShellExecution and
  before/afterMCPExecution pair FIFO on the command or the tool and its
  arguments (no ids); MCP events name the server by `url` or `command`.
  beforeReadFile and afterFileEdit have no counterpart event.

After-events carry `duration` in ms. `stop` with status `aborted` marks the
record `interrupt: true`: calls of the session that never ended are then
`interrupted`.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    BASE_CATEGORIES,
    decision,
    event,
    first_root,
    first_text,
    flag,
    maybe_json,
    obj,
    prompt_digest,
    put,
    text,
    tool,
)

KINDS = {
    "sessionStart": "session_start",
    "sessionEnd": "session_end",
    "beforeSubmitPrompt": "prompt",
    "beforeShellExecution": "tool_pre",
    "afterShellExecution": "tool_post",
    "beforeMCPExecution": "tool_pre",
    "afterMCPExecution": "tool_post",
    "beforeReadFile": "tool_pre",
    "afterFileEdit": "tool_post",
    "preToolUse": "tool_pre",
    "postToolUse": "tool_post",
    "postToolUseFailure": "tool_error",
    "subagentStart": "subagent_start",
    "subagentStop": "subagent_end",
    "preCompact": "compact",
    "stop": "stop",
    # afterAgentResponse, afterAgentThought and the Tab hooks: other
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "strreplace": "edit",
    "delete": "write",
    "ls": "search",
    "codebasesearch": "search",
    "websearch": "web",
}

# The per-action events name no tool; give them the name the newer tool events use.
_ACTION_TOOLS = {
    "beforeShellExecution": ("Shell", "shell"),
    "afterShellExecution": ("Shell", "shell"),
    "beforeMCPExecution": (None, "mcp"),
    "afterMCPExecution": (None, "mcp"),
    "beforeReadFile": ("Read", "read"),
    "afterFileEdit": ("Edit", "edit"),
}
_FAILURE_OUTCOMES = {"permission_denied": "denied", "denied": "denied"}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    p = obj(payload)
    name = text(event_hint) or first_text(p, "hook_event_name")
    kind = KINDS.get(name or "", "other")
    fields: dict[str, Any] = {"event": event(name, kind)}
    if not p:
        return fields
    put(fields, "harness_version", first_text(p, "cursor_version"))
    put(fields, "session_id", first_text(p, "conversation_id", "session_id"))
    put(fields, "turn_id", first_text(p, "generation_id"))
    put(fields, "cwd", first_text(p, "cwd") or first_root(p.get("workspace_roots")))
    put(fields, "model", first_text(p, "model"))
    put(fields, "transcript_path", first_text(p, "transcript_path"))
    put(fields, "agent", _agent(p))
    put(fields, "tool", _tool(p, name or "", kind))
    if fields.get("tool", {}).get("outcome") == "denied":
        fields["decision"] = decision("deny")
    put(fields, "prompt", prompt_digest(p.get("prompt")))
    if kind == "stop" and first_text(p, "status") == "aborted":
        fields["interrupt"] = True
    return fields


def _tool(p: dict, name: str, kind: str) -> dict | None:
    tool_name, category = _ACTION_TOOLS.get(name, (None, None))
    duration = p.get("duration", p.get("duration_ms"))
    if category == "shell":
        return tool(tool_name, CATEGORIES, category=category, input=_only("command", p),
                    response=p.get("output"), duration_ms=duration)
    if category in ("read", "edit"):
        return tool(tool_name, CATEGORIES, category=category, input=_only("file_path", p))
    failed = kind == "tool_error"
    outcome = None
    if failed:
        outcome = "interrupted" if flag(p.get("is_interrupt")) else _FAILURE_OUTCOMES.get(
            first_text(p, "failure_type") or "")
    return tool(
        first_text(p, "tool_name"),
        CATEGORIES,
        category=category,
        call_id=p.get("tool_use_id"),
        # MCP per-action events name the server by how it is reached.
        mcp_server=first_text(p, "url", "command") if category == "mcp" else None,
        input=maybe_json(p.get("tool_input")),
        response=p.get("error_message") if failed else maybe_json(p.get("tool_output", p.get("result_json"))),
        is_error=True if failed else None,
        duration_ms=duration,
        outcome=outcome,
    )


def _only(key: str, p: dict) -> dict | None:
    # Only the identifying argument: pre and post must digest alike to pair.
    value = p.get(key)
    return None if value is None else {key: value}


def _agent(p: dict) -> dict | None:
    agent_id = first_text(p, "subagent_id", "agent_id")
    agent_type = first_text(p, "subagent_type", "agent_type")
    if not (agent_id or agent_type):
        return None
    return {k: v for k, v in (("id", agent_id), ("type", agent_type)) if v}
