"""GitHub Copilot CLI and cloud agent hooks (github/docs content/copilot/reference/hooks-reference.md).

Two payload formats, chosen by the event name in the hook config:

- camelCase events (`preToolUse`): camelCase fields, `sessionId`, `timestamp`
  in epoch ms, `toolName`, `toolArgs`, `toolResult{resultType,
  textResultForLlm}`; the payload names no event, so it comes from the hook's
  command line (event_hint) or is inferred from the fields present;
- PascalCase events (`PreToolUse`), the "VS Code compatible" format:
  `hook_event_name`, `session_id`, ISO `timestamp`, `tool_name`,
  `tool_input`, `tool_result{result_type, text_result_for_llm}`.

postToolUse fires only after a tool succeeded; a failure arrives as
postToolUseFailure with `error`. Older builds reported failures and denials in
`resultType` (failure, denied, rejected), which is still read. There are no
tool-call ids: calls pair FIFO on tool name and arguments. Builds that send no
session id get one synthesized by normalize.py (docs/record.md). Of the
sessionEnd reasons (complete, error, abort, timeout, user_exit) only `abort`
(the user cancelled the running turn) marks the record `interrupt: true`, so
its calls that never ended are `interrupted`. `user_exit` is the user leaving
or `/clear`ing an idle session (the docs: `/clear` ends the old session with
it while the CLI keeps running): a call left open then was denied or
abandoned in an earlier turn, not cut short.
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
    # errorOccurred / ErrorOccurred, userPromptTransformed: other
}

CATEGORIES = {
    **BASE_CATEGORIES,
    "view": "read",
    "create": "write",
    "str_replace": "edit",
    "str_replace_editor": "edit",
    "apply_patch": "edit",
    "rg": "search",
    "web_fetch": "web",
    "web_search": "web",
    "ask_user": "other",
    "update_todo": "other",
}

# resultType values of older builds' postToolUse, and the outcome each means.
_RESULT_OUTCOMES = {
    "success": "ok",
    "failure": "error", "error": "error", "timeout": "error",
    "denied": "denied", "rejected": "denied",
}
_INTERRUPTING_ENDS = {"abort"}
# The Pascal-case format reports Claude's tool names (hooks-reference.md, "Claude-format
# matchers"); the record keeps the runtime's name, the one the camelCase format reports.
_RUNTIME_NAMES = {
    "Bash": "bash", "Read": "view", "Write": "create", "Edit": "edit", "Grep": "grep", "Glob": "glob",
    "WebFetch": "web_fetch", "WebSearch": "web_search", "AskUserQuestion": "ask_user",
    "TodoWrite": "update_todo", "Agent": "task", "Task": "task",
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
    put(fields, "agent", agent(
        first_text(p, "agentId", "agent_id"),
        first_text(p, "agentType", "agent_type", "agentName", "agent_name"),
    ))
    result = p.get("toolResult", p.get("tool_result"))
    result_type = first_text(obj(result), "resultType", "result_type")
    outcome = _RESULT_OUTCOMES.get(result_type.lower()) if result_type else None
    if kind == "tool_post" and outcome in ("error", "denied"):
        fields["event"]["kind"] = kind = "tool_error"
    failed = kind == "tool_error"
    error = p.get("error")
    tool_name = first_text(p, "toolName") or first_text(p, "tool_name")
    if "toolName" not in p and tool_name in _RUNTIME_NAMES:
        tool_name = _RUNTIME_NAMES[tool_name]
    put(fields, "tool", tool(
        tool_name,
        CATEGORIES,
        input=maybe_json(p.get("toolArgs", p.get("tool_input"))),
        response=error if failed and isinstance(error, str) else result,
        is_error=True if failed else None,
        outcome="denied" if outcome == "denied" else None,
    ))
    if outcome == "denied":
        fields["decision"] = decision("deny")
    if kind == "session_end" and first_text(p, "reason") in _INTERRUPTING_ENDS:
        fields["interrupt"] = True
    prompt = p.get("prompt", p.get("initialPrompt", p.get("initial_prompt")))
    if kind in ("prompt", "session_start"):
        put(fields, "prompt", prompt_digest(prompt))
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
    if "transformedPrompt" in p:
        return "userPromptTransformed"
    if "prompt" in p:
        return "userPromptSubmitted"
    if "trigger" in p:
        return "preCompact"
    if "reason" in p:
        return "sessionEnd"
    if "source" in p or "initialPrompt" in p:
        return "sessionStart"
    return None
