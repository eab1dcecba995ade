"""Helpers every adapter shares: type-safe field reads, tool categories, digests,
and the normalizer for the Claude-style payloads several harnesses copy.

Adapters must accept any JSON value without raising (a hook payload is
untrusted input), so every read here checks the type it gets and answers None
when the value is missing or of the wrong type.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

KINDS = (
    "session_start", "session_end", "prompt", "tool_pre", "tool_post", "tool_error",
    "permission", "subagent_start", "subagent_end", "compact", "notification", "stop", "other",
)
CATEGORIES = ("shell", "read", "write", "edit", "mcp", "web", "search", "agent", "other")
# How a tool call ended, set on the record that ends it when the event kind alone does not
# say (docs/record.md, "Tool calls"): a tool_post is ok and a tool_error an error otherwise.
OUTCOMES = ("ok", "error", "denied", "interrupted")

# Tool names shared by several harnesses (Claude Code and the harnesses that copy it).
# Keys are lower case; each adapter adds its own harness-specific names.
BASE_CATEGORIES = {
    "bash": "shell", "shell": "shell", "powershell": "shell",
    "read": "read", "notebookread": "read",
    "write": "write",
    "edit": "edit", "multiedit": "edit", "notebookedit": "edit",
    "webfetch": "web", "websearch": "web",
    "grep": "search", "glob": "search", "ls": "search",
    "task": "agent", "agent": "agent",
}

_DECISIONS = {
    "allow": "allow", "approve": "allow", "approved": "allow", "allowed": "allow",
    "deny": "deny", "block": "deny", "denied": "deny", "blocked": "deny", "reject": "deny",
    "ask": "ask",
}


def text(value: Any) -> str | None:
    """A non-empty string, or None."""
    return value if isinstance(value, str) and value else None


def obj(value: Any) -> dict:
    """A JSON object, or an empty dict for anything else."""
    return value if isinstance(value, dict) else {}


def first_text(payload: Mapping, *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def number(value: Any) -> int | float | None:
    """A finite JSON number (not a bool), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def first_root(value: Any) -> str | None:
    """The first string of a workspace-roots list (Cursor, Cline)."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str) and item:
                return item
    return None


def maybe_json(value: Any) -> Any:
    """Tool arguments some harnesses send as a JSON string (Cursor MCP, Copilot)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
            return value
    return value


# The canonical JSON settings of chain.canonical_json, in one reusable encoder:
# json.dumps with keyword arguments builds a new encoder on every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest(value: Any) -> str | None:
    """`sha256:<hex>` of a JSON value's canonical bytes (escaped text if it has none);
    None for a value nested too deeply to encode."""
    try:
        try:
            data = _CANONICAL.encode(value).encode("utf-8")
        except (ValueError, TypeError):  # NaN, lone surrogates
            data = json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True, default=repr).encode()
    except RecursionError:
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def prompt_digest(prompt: Any) -> dict | None:
    """{sha256, length}: the prompt text itself stays only in `raw`."""
    if not isinstance(prompt, str):
        return None
    data = prompt.encode("utf-8", "surrogatepass")
    return {"sha256": "sha256:" + hashlib.sha256(data).hexdigest(), "length": len(prompt)}


def decision(value: Any, *, source: str | None = None, reason: Any = None) -> dict | None:
    if not isinstance(value, str) or not value:
        return None
    out = {"value": _DECISIONS.get(value.lower(), value)}
    if source:
        out["source"] = source
    if isinstance(reason, str) and reason:
        out["reason"] = reason
    return out


def mcp_parts(name: str) -> str | None:
    """The server of an MCP tool name: `mcp__server__tool` or Cursor's `MCP:server:tool`."""
    if name.startswith("mcp__"):
        server, sep, _ = name[5:].partition("__")
        return server if sep and server else None
    if name[:4].lower() == "mcp:":
        server, sep, _ = name[4:].partition(":")
        return server if sep and server else None
    return None


def tool(
    name: Any,
    categories: Mapping[str, str],
    *,
    call_id: Any = None,
    mcp_server: Any = None,
    input: Any = None,
    response: Any = None,
    is_error: Any = None,
    duration_ms: Any = None,
    category: str | None = None,
    outcome: str | None = None,
    pair_on_input: bool = True,
) -> dict | None:
    """The normalized `tool` object; only keys that have values.

    `outcome` goes on the record that ends a call. `pair_on_input=False` leaves
    out `input_sha256`, so calls without an id pair FIFO on the tool name alone
    (for a harness whose end event may carry arguments a hook rewrote).
    """
    name = text(name)
    if name is None:
        return None
    server = text(mcp_server) or mcp_parts(name)
    if category is None:
        category = "mcp" if server else categories.get(name.lower(), "other")
    out: dict[str, Any] = {"name": name, "category": category}
    if isinstance(call_id, str) and call_id:
        out["call_id"] = call_id
    if server:
        out["mcp_server"] = server
    if input is not None:
        out["input"] = input
        if "call_id" not in out and pair_on_input:  # the FIFO pairing key; a call id makes it unnecessary
            put(out, "input_sha256", digest(input))
    if response is not None:
        out["response"] = response
    if isinstance(is_error, bool):
        out["is_error"] = is_error
    ms = number(duration_ms)
    if ms is not None and ms >= 0:
        out["duration_ms"] = ms
    if outcome in OUTCOMES:
        out["outcome"] = outcome
    return out


def put(fields: dict, key: str, value: Any) -> None:
    """Set a field only when it has a value (payloads stay compact)."""
    if value is not None and value != "" and value != {}:
        fields[key] = value


def event(name: Any, kind: str) -> dict:
    name = text(name)
    return {"name": name, "kind": kind} if name else {"kind": kind}


def agent(agent_id: Any, agent_type: Any) -> dict | None:
    out = {}
    if text(agent_id):
        out["id"] = agent_id
    if text(agent_type):
        out["type"] = agent_type
    return out or None


# (field, payload keys in order of preference) for the plain string fields.
_CLAUDE_TEXT_FIELDS = (
    ("session_id", ("session_id", "sessionId")),
    ("turn_id", ("turn_id", "prompt_id", "turnId", "promptId")),
    ("cwd", ("cwd",)),
    ("model", ("model",)),
    ("permission_mode", ("permission_mode", "permissionMode")),
    ("transcript_path", ("transcript_path", "transcriptPath")),
)


def claude_style(
    payload: Any,
    hint: str | None,
    *,
    kinds: Mapping[str, str],
    categories: Mapping[str, str],
    event_keys: tuple[str, ...] = ("hook_event_name", "hookEventName"),
) -> dict:
    """Normalize the Claude Code hook shape (also Codex, OpenHands, VS Code, Gemini).

    Reads both snake_case and camelCase spellings of the common fields, so
    harnesses that mix casing (VS Code) share this one reader.
    """
    if not isinstance(payload, dict):
        return {"event": event(hint, kinds.get(hint or "", "other"))}
    p = payload
    name = text(hint) or first_text(p, *event_keys)
    kind = kinds.get(name or "", "other")
    fields: dict[str, Any] = {"event": event(name, kind)}
    for field, keys in _CLAUDE_TEXT_FIELDS:
        for key in keys:
            value = p.get(key)
            if value.__class__ is str and value:
                fields[field] = value
                break
    put(fields, "ts_harness", text(p.get("timestamp")) or number(p.get("timestamp")))
    put(fields, "agent", agent(p.get("agent_id"), p.get("agent_type")))
    error = p.get("error")
    failed = kind == "tool_error"
    # A failure the user caused by interrupting (PostToolUseFailure is_interrupt) is not the tool's error.
    outcome = "interrupted" if failed and p.get("is_interrupt") is True else None
    put(fields, "tool", tool(
        first_text(p, "tool_name", "toolName"),
        categories,
        call_id=first_text(p, "tool_use_id", "toolUseId"),
        input=p.get("tool_input"),
        response=error if failed and error is not None else p.get("tool_response"),
        is_error=True if failed else None,
        duration_ms=p.get("duration_ms"),
        outcome=outcome,
    ))
    put(fields, "prompt", prompt_digest(p.get("prompt")))
    put(fields, "decision", decision(p.get("decision")))
    return fields
