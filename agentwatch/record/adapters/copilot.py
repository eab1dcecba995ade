"""GitHub Copilot CLI and cloud agent hooks (.github/hooks/*.json).

Two payload styles, chosen by the event name in the hook config: camelCase
(`sessionStart`, `toolName`, `toolArgs`, `toolResult{resultType,
textResultForLlm}`, `timestamp` in epoch ms) and a VS Code-compatible
PascalCase/snake_case one. camelCase payloads carry no event name, so the
event comes from the hook's command line (event_hint) or is inferred from the
fields present. Older builds send no session id at all; normalize.py then
synthesizes one (docs/record.md). No tool-call ids: FIFO pairing.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    BASE_CATEGORIES,
    agent,
    decision,
    event,
    first_text,
    maybe_json,
    number,
    obj,
    prompt_digest,
    put,
    result_is_error,
    text,
    tool,
)

KINDS = {
    "sessionStart": "session_start", "SessionStart": "session_start",
    "sessionEnd": "session_end", "SessionEnd": "session_end",
    "userPromptSubmitted": "prompt", "UserPromptSubmit": "prompt",
    "preToolUse": "tool_pre", "PreToolUse": "tool_pre",
    "postToolUse": "tool_post", "PostToolUse": "tool_post",
    "postToolUseFailure": "tool_error", "PostToolUseFailure": "tool_error",
    "permissionRequest": "permission", "PermissionRequest": "permission",
    "agentStop": "stop", "Stop": "stop",
    "subagentStart": "subagent_start", "SubagentStart": "subagent_start",
    "subagentStop": "subagent_end", "SubagentStop": "subagent_end",
    "preCompact": "compact", "PreCompact": "compact",
    "notification": "notification", "Notification": "notification",
    # errorOccurred / ErrorOccurred: other
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "view": "read",
    "create": "write",
    "str_replace": "edit",
    "web_fetch": "web",
    "ask_user": "other",
}


def normalize(payload: Any, event_hint: str | None = None) -> dict:
    p = obj(payload)
    name = text(event_hint) or first_text(p, "hook_event_name", "hookEventName") or _infer(p)
    kind = KINDS.get(name or "", "other")
    fields: dict[str, Any] = {"event": event(name, kind)}
    if not p:
        return fields
    put(fields, "session_id", first_text(p, "sessionId", "session_id"))
    put(fields, "cwd", first_text(p, "cwd"))
    put(fields, "transcript_path", first_text(p, "transcriptPath", "transcript_path"))
    put(fields, "ts_harness", number(p.get("timestamp")) or text(p.get("timestamp")))
    put(fields, "agent", agent(None, first_text(p, "agentName", "agent_name")))
    result = p.get("toolResult", p.get("tool_result"))
    result_type = obj(result).get("resultType", obj(result).get("result_type"))
    if kind == "tool_post" and result_is_error(result_type):
        fields["event"]["kind"] = kind = "tool_error"
    failed = kind == "tool_error"
    error = p.get("error")
    put(fields, "tool", tool(
        first_text(p, "toolName", "tool_name"),
        CATEGORIES,
        input=maybe_json(p.get("toolArgs", p.get("tool_input"))),
        response=error if failed and isinstance(error, str) else result,
        is_error=True if failed else None,
    ))
    if isinstance(result_type, str) and result_type.lower() == "denied":
        fields["decision"] = decision("deny")
    put(fields, "prompt", prompt_digest(p.get("prompt", p.get("initialPrompt", p.get("initial_prompt")))))
    return fields


def _infer(p: dict) -> str | None:
    """camelCase payloads name no event; each event's field set is distinct."""
    if "toolResult" in p:
        return "postToolUse"
    if "toolName" in p:
        return "postToolUseFailure" if "error" in p else "preToolUse"
    if "errorContext" in p or isinstance(p.get("error"), dict):
        return "errorOccurred"
    if "agentName" in p:
        return "subagentStop" if "stopReason" in p else "subagentStart"
    if "stopReason" in p:
        return "agentStop"
    if "prompt" in p:
        return "userPromptSubmitted"
    if "trigger" in p:
        return "preCompact"
    if "reason" in p:
        return "sessionEnd"
    if "source" in p or "initialPrompt" in p:
        return "sessionStart"
    return None
