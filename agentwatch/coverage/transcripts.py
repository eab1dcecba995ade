"""Each harness's own session record, read as the list of tool calls it holds (docs/record.md, "Coverage").

One parser per format, each built from the harness's published source
(cited at the parser). A parser returns every tool call with its id (where
the format has one), tool name, input, outcome as far as the transcript says
(`ok`, `error`, or None while it does not) and the line it starts on.

Reads are bounded: only files under the places the harness writes them
(`roots`), opened without following a symlink, at most MAX_BYTES and
MAX_SECONDS. A file the parser does not recognise raises TranscriptProblem
with code `coverage_unknown_format`; every other problem has its own code.
Nothing here raises anything else for bad input.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

MAX_BYTES = 64 << 20
MAX_SECONDS = 10.0
MAX_FILES = 20_000  # OpenHands: one file per event

UNKNOWN_FORMAT = "coverage_unknown_format"
PROBLEMS = (UNKNOWN_FORMAT, "transcript_missing", "transcript_unreadable", "transcript_too_large",
            "transcript_outside_harness_dir", "transcript_not_this_session", "transcript_timeout",
            "transcript_not_named", "no_transcript")


class TranscriptProblem(Exception):
    def __init__(self, code: str, detail: str):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclass
class Call:
    call_id: Optional[str]
    tool: str
    input: Any
    outcome: Optional[str]  # "ok" | "error" | None (the transcript does not say)
    line: int
    file: str = ""  # set for formats spread over files (OpenHands)
    hooked: bool = True  # False: a tool the harness runs no hook for (not counted as missing)
    input_digest: Optional[str] = None  # supplied in place of `input` (the service deployment's call list)

    def to_json(self) -> dict:
        return {"call_id": self.call_id, "tool": self.tool, "outcome": self.outcome, "line": self.line,
                **({"file": self.file} if self.file else {})}


@dataclass
class Transcript:
    harness: str
    path: str
    format: str
    sha256: str
    bytes: int
    calls: list[Call] = field(default_factory=list)
    has_ids: bool = True  # the format carries the harness's call ids
    input_comparable: bool = True  # a call's input has the shape the hook reports

    def to_json(self) -> dict:
        return {"path": self.path, "format": self.format, "sha256": self.sha256, "bytes": self.bytes,
                "calls": len(self.calls)}


# ---------------------------------------------------------------- where harnesses write


def _home() -> Path:
    return Path.home()


def _env_dir(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value) if value and os.path.isabs(value) else default


def roots(harness: str) -> list[Path]:
    """The directories `harness` writes its transcripts under (a transcript elsewhere is not read)."""
    home = _home()
    config = _env_dir("XDG_CONFIG_HOME", home / ".config")
    if harness == "claude-code":
        return [_env_dir("CLAUDE_CONFIG_DIR", home / ".claude") / "projects"]
    if harness == "codex":
        return [_env_dir("CODEX_HOME", home / ".codex") / "sessions"]
    if harness == "gemini-cli":
        return [home / ".gemini" / "tmp"]
    if harness == "cline":
        return [home / ".cline" / "data" / "tasks",
                config / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks",
                home / "Library" / "Application Support" / "Code" / "User" / "globalStorage"
                / "saoudrizwan.claude-dev" / "tasks"]
    if harness == "openhands":
        return [_env_dir("OPENHANDS_PERSISTENCE_DIR", home / ".openhands") / "conversations"]
    return []


def locate(harness: str, session_id: str, named: Optional[str]) -> Optional[str]:
    """The transcript of a session: the path the hook payload named, else where the harness keeps it by id."""
    if named:
        return named
    if harness == "cline":
        for root in roots("cline"):
            candidate = root / session_id / "api_conversation_history.json"
            if candidate.exists():
                return str(candidate)
    if harness == "openhands":
        # The SDK names a conversation's directory after its id in hex, without dashes.
        for root in roots("openhands"):
            for name in (session_id.replace("-", ""), session_id):
                candidate = root / name / "events"
                if candidate.is_dir():
                    return str(candidate)
    return None


def check_name(harness: str, session_id: str, path: str) -> None:
    """Raise TranscriptProblem unless `path` is named as the harness names this session's transcript.

    The path comes from a hook payload, which the agent can shape: a file of its own making under
    the harness's directory must still carry the session's id where the harness puts it.
    """
    p = Path(path)
    name = p.name
    ok = {
        "claude-code": lambda: name == f"{session_id}.jsonl",
        "codex": lambda: name.startswith("rollout-") and name.endswith(f"-{session_id}.jsonl"),
        "gemini-cli": lambda: name.startswith("session-") and len(session_id) >= 8
        and (name.endswith(f"-{session_id[:8]}.jsonl") or name.endswith(f"-{session_id[:8]}.json")),
        "cline": lambda: name == "api_conversation_history.json" and p.parent.name == session_id,
        "openhands": lambda: name == "events" and p.parent.name in (session_id, session_id.replace("-", "")),
    }.get(harness)
    if ok is not None and not ok():
        raise TranscriptProblem("transcript_not_this_session",
                                f"{path} is not where {harness} keeps the transcript of session {session_id}")


def _inside(path: Path, harness: str) -> bool:
    real = Path(os.path.realpath(path))
    for root in roots(harness):
        try:
            real.relative_to(os.path.realpath(root))
            return True
        except ValueError:
            continue
    return False


# ---------------------------------------------------------------- bounded reading


def _read_file(path: Path, budget: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TranscriptProblem("transcript_missing", f"{path} does not exist (deleted, or never written)") from None
    except OSError as exc:
        raise TranscriptProblem("transcript_unreadable", f"{path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TranscriptProblem("transcript_unreadable", f"{path} is not a regular file")
        if st.st_size > budget:
            raise TranscriptProblem("transcript_too_large", f"{path} has {st.st_size} bytes (bound {budget})")
        chunks, total = [], 0
        while True:
            data = os.read(fd, 1 << 20)
            if not data:
                break
            total += len(data)
            if total > budget:
                raise TranscriptProblem("transcript_too_large", f"{path} grew past {budget} bytes while read")
            chunks.append(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read(harness: str, path: str, *, max_bytes: int = MAX_BYTES, max_seconds: float = MAX_SECONDS,
         check_root: bool = True, session_id: Optional[str] = None) -> Transcript:
    """The transcript at `path` as `harness` writes it. Raises TranscriptProblem, nothing else for bad input.

    With `check_root`, the file must be under the harness's directories and, given `session_id`,
    named as the harness names that session's transcript.
    """
    parser = PARSERS.get(harness)
    if parser is None:
        raise TranscriptProblem("no_transcript", f"{harness} keeps no transcript agentwatch can read")
    p = Path(path)
    if not p.is_absolute():
        raise TranscriptProblem("transcript_outside_harness_dir", f"{path} is not an absolute path")
    if check_root and not _inside(p, harness):
        where = ", ".join(str(r) for r in roots(harness))
        raise TranscriptProblem("transcript_outside_harness_dir", f"{path} is not under {where}")
    if check_root and session_id is not None:
        check_name(harness, session_id, path)
    deadline = time.monotonic() + max_seconds
    if harness == "openhands":
        return _openhands(p, max_bytes, deadline)
    data = _read_file(p, max_bytes)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TranscriptProblem(UNKNOWN_FORMAT, f"{path} is not UTF-8 text") from None
    fmt, calls, has_ids, comparable = parser(text, deadline)
    return Transcript(harness, str(p), fmt, digest, len(data), calls, has_ids, comparable)


def _lines(text: str, deadline: float) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON or None) for each non-blank line."""
    for number, line in enumerate(text.splitlines(), 1):
        if number % 1000 == 0 and time.monotonic() > deadline:
            raise TranscriptProblem("transcript_timeout", f"parsing took longer than the bound (line {number})")
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except (ValueError, RecursionError):
            yield number, None


def _require(known: int, total: int, what: str) -> None:
    # A last line may be half written; more than that unreadable is not this format.
    if known == 0 or total - known > max(1, total // 10):
        raise TranscriptProblem(UNKNOWN_FORMAT, f"{known} of {total} lines look like {what}")


def _merge_outcome(calls: dict[str, Call], call_id: Any, outcome: str) -> None:
    if isinstance(call_id, str) and call_id in calls:
        calls[call_id].outcome = outcome


# ---------------------------------------------------------------- Claude Code
# ~/.claude/projects/<cwd with / as ->/<session_id>.jsonl, named by every hook payload's
# transcript_path (code.claude.com/docs/en/hooks, "Common input fields"). One JSON object a
# line; `assistant` lines hold message.content blocks of the Messages API, a `tool_use` block
# {id, name, input}; the result comes back in a `user` line as a `tool_result` block
# {tool_use_id, content, is_error} (docs.anthropic.com Messages API, "Tool use"; the line
# shapes as Claude Code 2.0.76 and 2.1.1 write them: oneryalcin/agent-schemas
# claude-code/v2.1.1/session.schema.json). Hooks carry the same id as tool_use_id.

_CLAUDE_TYPES = {"user", "assistant", "system", "summary", "queue-operation", "file-history-snapshot",
                 "progress", "attachment", "custom-title", "tag"}


def _claude_code(text: str, deadline: float) -> tuple[str, list[Call], bool, bool]:
    calls: dict[str, Call] = {}
    known = total = 0
    for number, obj in _lines(text, deadline):
        total += 1
        if not isinstance(obj, dict) or obj.get("type") not in _CLAUDE_TYPES:
            continue
        known += 1
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str) and obj["type"] == "assistant":
                calls.setdefault(block["id"], Call(block["id"], str(block.get("name") or ""), block.get("input"),
                                                   None, number))
            elif block.get("type") == "tool_result":
                _merge_outcome(calls, block.get("tool_use_id"), "error" if block.get("is_error") else "ok")
    _require(known, total, "Claude Code transcript lines")
    return "claude-code-jsonl", list(calls.values()), True, True


# ---------------------------------------------------------------- Codex
# $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl, named by transcript_path.
# Each line a RolloutLine {timestamp, type, payload} (codex-rs/protocol/src/protocol.rs:
# session_meta, response_item, event_msg, turn_context, compacted). A response_item payload is a
# ResponseItem (codex-rs/protocol/src/models.rs, openai/codex 001cb8e): function_call {name,
# arguments (a JSON string), call_id}, custom_tool_call {call_id, name, input},
# local_shell_call {call_id, action}, answered by function_call_output {call_id, output}
# (output a string, or {content, success}) and custom_tool_call_output. Codex's hooks report the
# shell tools as `Bash` with {command}, and MCP tools by their name; they run for no other tool.
# Newer builds add line types (world_state, inter_agent_communication, ...) and an `ordinal`;
# any {timestamp, type, payload} line is Codex's, and a response item may come wrapped in an
# envelope holding it as `item`. A compressed rollout is not UTF-8: coverage_unknown_format.

_CODEX_SHELL = {"shell", "container.exec", "shell_command", "exec_command", "local_shell"}


def _codex_tool(name: str) -> tuple[str, bool]:
    if name in _CODEX_SHELL:
        return "Bash", True
    return name, name.startswith("mcp__") or "/" in name


def _codex(text: str, deadline: float) -> tuple[str, list[Call], bool, bool]:
    calls: dict[str, Call] = {}
    known = total = 0
    for number, obj in _lines(text, deadline):
        total += 1
        if not (isinstance(obj, dict) and isinstance(obj.get("timestamp"), str) and isinstance(obj.get("type"), str)
                and "payload" in obj):
            continue
        known += 1
        if obj["type"] != "response_item" or not isinstance(obj.get("payload"), dict):
            continue
        item = obj["payload"]
        if "type" not in item and isinstance(item.get("item"), dict):
            item = item["item"]
        kind = item.get("type")
        call_id = item.get("call_id")
        if kind in ("function_call", "custom_tool_call", "local_shell_call") and isinstance(call_id, str):
            name = "local_shell" if kind == "local_shell_call" else str(item.get("name") or "")
            tool, hooked = _codex_tool(name)
            raw = item.get("arguments") if kind == "function_call" else item.get("input", item.get("action"))
            calls.setdefault(call_id, Call(call_id, tool, raw, None, number, hooked=hooked))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            failed = isinstance(output, dict) and output.get("success") is False
            _merge_outcome(calls, call_id, "error" if failed else "ok")
    _require(known, total, "Codex rollout lines")
    return "codex-rollout-jsonl", list(calls.values()), True, False


# ---------------------------------------------------------------- Gemini CLI
# ~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl, named by transcript_path
# (google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts, 016443b): a first
# line of metadata {sessionId, projectHash, startTime, ...}, then message records {id, timestamp,
# type, content, toolCalls?} appended again whole each time they change (the last copy of an id
# wins), `{$set: ...}` metadata updates and `{$rewindTo: id}`. A ToolCallRecord is {id, name,
# args, result, status, timestamp} (chatRecordingTypes.ts). Older builds wrote one JSON
# document, ConversationRecord {sessionId, projectHash, messages: [...]} (read the same way).
# Gemini's hooks carry no call id: calls pair on the tool name and arguments (pairing.py).
# A rewound call still ran, and its hooks fired: it is counted.


def _gemini_cli(text: str, deadline: float) -> tuple[str, list[Call], bool, bool]:
    stripped = text.lstrip()
    calls: dict[str, Call] = {}

    def take(message: Any, number: int) -> None:
        if not isinstance(message, dict) or message.get("type") != "gemini":
            return
        for tc in message.get("toolCalls") or []:
            if not isinstance(tc, dict) or not isinstance(tc.get("id"), str):
                continue
            status = tc.get("status")
            outcome = "ok" if status == "success" else "error" if status in ("error", "cancelled") else None
            if tc["id"] in calls:
                calls[tc["id"]].outcome = outcome or calls[tc["id"]].outcome
                calls[tc["id"]].input = tc.get("args")
            else:
                calls[tc["id"]] = Call(tc["id"], str(tc.get("name") or ""), tc.get("args"), outcome, number)

    first_line = stripped.split("\n", 1)[0]
    try:
        whole = json.loads(text) if stripped.startswith("{") and not _one_object_line(first_line) else None
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list) and "sessionId" in whole:
        lines = text.splitlines()
        for message in whole["messages"]:
            for tc in (message.get("toolCalls") or []) if isinstance(message, dict) else []:
                if isinstance(tc, dict) and isinstance(tc.get("id"), str):
                    take({"type": "gemini", "toolCalls": [tc]}, _line_of(lines, tc["id"]))
        return "gemini-cli-json", list(calls.values()), False, True
    known = total = 0
    metadata = False
    for number, obj in _lines(text, deadline):
        total += 1
        if not isinstance(obj, dict):
            continue
        if "sessionId" in obj and "projectHash" in obj:
            metadata = True
            known += 1
        elif "$set" in obj or "$rewindTo" in obj or ("id" in obj and "type" in obj):
            known += 1
            take(obj, number)
    if not metadata:
        raise TranscriptProblem(UNKNOWN_FORMAT, "no Gemini CLI session metadata line (sessionId, projectHash)")
    _require(known, total, "Gemini CLI chat records")
    return "gemini-cli-jsonl", list(calls.values()), False, True


def _one_object_line(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def _line_of(lines: list[str], needle: str) -> int:
    quoted = json.dumps(needle)
    for number, line in enumerate(lines, 1):
        if quoted in line:
            return number
    return 0


# ---------------------------------------------------------------- Cline
# <global storage>/tasks/<task id>/api_conversation_history.json: the task's Anthropic
# MessageParam[] (cline/cline src/core/storage/disk.ts, GlobalFileNames.apiConversationHistory;
# the VS Code extension's global storage is .../globalStorage/saoudrizwan.claude-dev, the CLI's
# ~/.cline/data). With native tool calling an assistant message holds `tool_use` blocks
# {id, name, input}, answered by `tool_result` blocks {tool_use_id, is_error} in the next user
# message; the hook's tool_call.id is the same id (sdk/packages/core/src/hooks/hook-file-hooks.ts).
# The hook payload names no transcript: it is found by the task id.


def _cline(text: str, deadline: float) -> tuple[str, list[Call], bool, bool]:
    try:
        messages = json.loads(text)
    except (ValueError, RecursionError):
        raise TranscriptProblem(UNKNOWN_FORMAT, "not a JSON document") from None
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        raise TranscriptProblem(UNKNOWN_FORMAT, "not a list of {role, content} messages")
    lines = text.splitlines()
    calls: dict[str, Call] = {}
    for message in messages:
        if time.monotonic() > deadline:
            raise TranscriptProblem("transcript_timeout", "parsing took longer than the bound")
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                calls.setdefault(block["id"], Call(block["id"], str(block.get("name") or ""), block.get("input"),
                                                   None, _line_of(lines, block["id"])))
            elif block.get("type") == "tool_result":
                _merge_outcome(calls, block.get("tool_use_id"), "error" if block.get("is_error") else "ok")
    return "cline-api-history-json", list(calls.values()), True, True


# ---------------------------------------------------------------- OpenHands
# <persistence dir>/conversations/<conversation id hex>/events/event-<index>-<event id>.json,
# one event a file, the index zero-padded to at least 5 digits and not capped, so files are
# ordered by the number, not the name (OpenHands/software-agent-sdk openhands-sdk/openhands/sdk/
# conversation/persistence_const.py, 167ee0a: EVENT_NAME_RE). An ActionEvent {kind:
# "ActionEvent", tool_name, tool_call_id, tool_call, action, ...} is a tool call
# (event/llm_convertible/action.py, 17555e4); its ObservationEvent {tool_name, tool_call_id,
# action_id, observation} ends it, or an AgentErrorEvent or UserRejectObservation
# (observation.py, 18de68b).
# The hooks (openhands/sdk/hooks/types.py) carry no call id: calls pair on the tool name and
# arguments.


_EVENT_NAME = re.compile(r"^event-(?P<idx>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")


def _openhands(directory: Path, budget: int, deadline: float) -> Transcript:
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        raise TranscriptProblem("transcript_missing", f"{directory} does not exist") from None
    except OSError as exc:
        raise TranscriptProblem("transcript_unreadable", f"{directory}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise TranscriptProblem(UNKNOWN_FORMAT, f"{directory} is not an OpenHands events directory")
    try:
        found = [(m, n) for n in os.listdir(directory) if (m := _EVENT_NAME.match(n))]
    except OSError as exc:
        raise TranscriptProblem("transcript_unreadable", f"{directory}: {exc.strerror or exc}") from None
    names = [n for m, n in sorted(found, key=lambda p: (int(p[0]["idx"]), p[1]))]
    if len(names) > MAX_FILES:
        raise TranscriptProblem("transcript_too_large", f"{directory} holds {len(names)} event files")
    hasher = hashlib.sha256()
    total = 0
    calls: dict[str, Call] = {}
    known = 0
    for name in names:
        if time.monotonic() > deadline:
            raise TranscriptProblem("transcript_timeout", "reading the events took longer than the bound")
        data = _read_file(directory / name, budget - total)
        total += len(data)
        hasher.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
        try:
            event = json.loads(data)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
            continue
        known += 1
        kind, call_id = event["kind"], event.get("tool_call_id")
        if kind == "ActionEvent" and isinstance(call_id, str):
            action = event.get("action")
            args = {k: v for k, v in action.items() if k != "kind"} if isinstance(action, dict) else action
            calls.setdefault(call_id, Call(call_id, str(event.get("tool_name") or ""), args, None, 1, name))
        elif kind == "ObservationEvent":
            observation = event.get("observation")
            failed = isinstance(observation, dict) and observation.get("is_error") is True
            _merge_outcome(calls, call_id, "error" if failed else "ok")
        elif kind in ("AgentErrorEvent", "UserRejectObservation"):
            _merge_outcome(calls, call_id, "error")
    if names and known == 0:
        raise TranscriptProblem(UNKNOWN_FORMAT, f"no file in {directory} is an OpenHands event")
    return Transcript("openhands", str(directory), "openhands-events-dir", "sha256:" + hasher.hexdigest(), total,
                      list(calls.values()), False, True)


PARSERS: dict[str, Callable[[str, float], tuple[str, list[Call], bool, bool]]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "gemini-cli": _gemini_cli,
    "cline": _cline,
    "openhands": lambda text, deadline: ("", [], False, False),  # a directory: read by _openhands
}
