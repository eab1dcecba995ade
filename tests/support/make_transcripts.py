"""Write tests/fixtures/transcripts/: each harness's transcript of the session in tests/fixtures/sessions/.

Run `python tests/support/make_transcripts.py` to rebuild them byte for byte. Each transcript holds
the same tool calls as the hook session (same ids where the harness has them, the same inputs), in
the harness's own format as its published source writes it; the parser in
agentwatch/coverage/transcripts.py cites the same files:

- claude-code: JSONL lines {type, uuid, parentUuid, sessionId, timestamp, cwd, version, message}; the
  assistant's message.content holds `tool_use` blocks {id, name, input}, the next user line
  `tool_result` blocks {tool_use_id, content, is_error} (Claude Code hooks reference, transcript_path;
  Messages API tool use; oneryalcin/agent-schemas claude-code/v2.1.1/session.schema.json).
- codex: RolloutLine JSONL {timestamp, type, payload} with session_meta, turn_context, response_item
  function_call {name, arguments, call_id} / function_call_output {call_id, output}
  (openai/codex codex-rs/protocol/src/models.rs and protocol.rs, 001cb8e).
- gemini-cli: chat-recording JSONL: metadata {sessionId, projectHash, startTime, lastUpdated}, then
  message records {id, timestamp, type, content, toolCalls: [{id, name, args, status, timestamp}]},
  a record appended again whole when its tool calls change, and `$set` updates
  (google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts 016443b,
  chatRecordingTypes.ts 04741d1).
- cline: api_conversation_history.json, the task's Anthropic MessageParam[] with tool_use /
  tool_result blocks (cline/cline src/core/storage/disk.ts, GlobalFileNames.apiConversationHistory).
- openhands: events/event-<index>-<id>.json, one event a file: ActionEvent {kind, id, timestamp,
  source, thought, tool_name, tool_call_id, tool_call, action, llm_response_id} and
  ObservationEvent {kind, tool_name, tool_call_id, action_id, observation} (OpenHands/
  software-agent-sdk openhands-sdk/openhands/sdk/event/llm_convertible/action.py 17555e4,
  observation.py 18de68b; file names as conversation/persistence_const.py 167ee0a).
  Session fixtures the transcripts follow: tests/fixtures/sessions/<harness>.json.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "fixtures"
SESSIONS = HERE / "sessions"
OUT = HERE / "transcripts"


def load(name: str) -> dict:
    return json.loads((SESSIONS / f"{name}.json").read_text(encoding="utf-8"))


def calls(session: dict) -> list[dict]:
    """The session's tool calls: the pre step's payload and the end step's (None while open)."""
    out = []
    for call in session["expect"]["tool_calls"]:
        start, end = call["steps"]
        out.append({"pre": session["steps"][start - 1]["payload"],
                    "end": session["steps"][end - 1] if end is not None else None,
                    "outcome": call["outcome"]})
    return out


def jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)


def claude_code() -> str:
    s = load("claude-code")
    sid = s["steps"][0]["payload"]["session_id"]
    base = {"sessionId": sid, "cwd": "/home/dev/shop", "version": "2.1.119", "gitBranch": "main",
            "userType": "external", "isSidechain": False}
    lines = [{"type": "user", "uuid": "u-0", "parentUuid": None, "timestamp": "2026-11-30T09:00:01.000Z",
              "message": {"role": "user", "content": s["steps"][1]["payload"]["prompt"]}, **base}]
    parent = "u-0"
    for n, c in enumerate(calls(s), 1):
        pre = c["pre"]
        a, u = f"a-{n}", f"r-{n}"
        lines.append({"type": "assistant", "uuid": a, "parentUuid": parent, "timestamp": f"2026-11-30T09:00:{n:02d}.100Z",
                      "requestId": f"req_{n:02d}", "message": {
                          "id": f"msg_{n:02d}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "tool_use", "id": pre["tool_use_id"], "name": pre["tool_name"],
                                       "input": pre["tool_input"]}],
                          "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 80}}, **base})
        ok = c["outcome"] == "ok"
        text = "done" if ok else {"error": "String to replace not found in file.",
                                  "denied": "Permission to use Bash has been denied.",
                                  "interrupted": "[Request interrupted by user for tool use]"}[c["outcome"]]
        lines.append({"type": "user", "uuid": u, "parentUuid": a, "timestamp": f"2026-11-30T09:00:{n:02d}.900Z",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": pre["tool_use_id"],
                                                               "content": text, "is_error": not ok}]},
                      "sourceToolAssistantUUID": a, **base})
        parent = u
    return jsonl(lines)


def codex() -> str:
    s = load("codex")
    sid = s["steps"][0]["payload"]["session_id"]
    lines = [{"timestamp": "2026-11-30T09:12:44.001Z", "type": "session_meta",
              "payload": {"id": sid, "timestamp": "2026-11-30T09:12:44.001Z", "cwd": "/home/dev/infra",
                          "originator": "codex_cli_rs", "cli_version": "0.150.0"}},
             {"timestamp": "2026-11-30T09:12:45.000Z", "type": "turn_context",
              "payload": {"cwd": "/home/dev/infra", "approval_policy": "on-request", "model": "gpt-5-codex"}}]
    for n, c in enumerate(calls(s), 1):
        pre = c["pre"]
        ts = f"2026-11-30T09:13:{n:02d}.000Z"
        args = {"command": ["bash", "-lc", pre["tool_input"]["command"]], "workdir": "/home/dev/infra"}
        lines.append({"timestamp": ts, "type": "response_item",
                      "payload": {"type": "function_call", "name": "shell", "arguments": json.dumps(args),
                                  "call_id": pre["tool_use_id"]}})
        if c["outcome"] == "ok":
            lines.append({"timestamp": ts, "type": "response_item",
                          "payload": {"type": "function_call_output", "call_id": pre["tool_use_id"],
                                      "output": json.dumps({"output": "Plan: 0 to add", "metadata": {"exit_code": 0}})}})
        if n == 1:  # a tool Codex runs no hook for: counted as not hooked, never missing
            lines.append({"timestamp": ts, "type": "response_item",
                          "payload": {"type": "function_call", "name": "update_plan", "call_id": "call_plan1",
                                      "arguments": json.dumps({"plan": [{"step": "plan", "status": "completed"}]})}})
            lines.append({"timestamp": ts, "type": "response_item",
                          "payload": {"type": "function_call_output", "call_id": "call_plan1", "output": "Plan updated"}})
    return jsonl(lines)


def gemini_cli() -> str:
    s = load("gemini-cli")
    sid = s["steps"][0]["payload"]["session_id"]
    lines: list[dict] = [{"sessionId": sid, "projectHash": "5e1f0c2a9b", "startTime": "2026-11-30T10:02:00.000Z",
                          "lastUpdated": "2026-11-30T10:02:00.000Z"},
                         {"id": "m-user", "timestamp": "2026-11-30T10:02:01.000Z", "type": "user",
                          "content": [{"text": s["steps"][1]["payload"]["prompt"]}]}]
    records: list[dict] = []
    for n, c in enumerate(calls(s), 1):
        pre = c["pre"]
        status = {"ok": "success", "error": "error", "open": "cancelled"}[c["outcome"]]
        tc = {"id": f"{pre['tool_name']}-1764496{n:03d}-{n}", "name": pre["tool_name"], "args": pre["tool_input"],
              "status": "executing", "timestamp": f"2026-11-30T10:02:{n:02d}.000Z"}
        records.append(tc)
        message = {"id": "m-gemini-1", "timestamp": "2026-11-30T10:02:02.000Z", "type": "gemini", "content": "",
                   "model": "gemini-2.5-pro", "thoughts": [], "toolCalls": [dict(t) for t in records]}
        lines.append(message)  # recordToolCalls appends the whole message again each time
        records[-1] = dict(tc, status=status, result=[{"functionResponse": {"id": tc["id"], "name": tc["name"],
                                                                            "response": {"output": "..."}}}])
        lines.append(dict(message, toolCalls=[dict(t) for t in records]))
    lines.append({"$set": {"lastUpdated": "2026-11-30T10:03:00.000Z"}})
    return jsonl(lines)


def cline() -> str:
    s = load("cline")
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "<task>Fix the config loader</task>"}]}]
    for c in calls(s):
        call = c["pre"]["tool_call"]
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]}]})
        if c["outcome"] in ("ok", "error"):
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call["id"], "content": "…", "is_error": c["outcome"] == "error"}]})
    return json.dumps(messages, indent=2, ensure_ascii=False) + "\n"


def openhands() -> dict[str, str]:
    s = load("openhands")
    files = {}
    index = 0
    for n, c in enumerate(calls(s), 1):
        pre = c["pre"]
        call_id, event_id = f"toolu_oh{n}", f"a{n:07d}-0000-4000-8000-000000000000"
        arguments = json.dumps(pre["tool_input"])
        action_kind = "".join(w.capitalize() for w in pre["tool_name"].split("_")) + "Action"
        files[f"event-{index:05d}-{event_id}.json"] = json.dumps({
            "kind": "ActionEvent", "id": event_id, "timestamp": f"2026-11-30T11:00:{n:02d}", "source": "agent",
            "thought": [], "tool_name": pre["tool_name"], "tool_call_id": call_id,
            "tool_call": {"id": call_id, "name": pre["tool_name"], "arguments": arguments, "origin": "completion"},
            "action": {"kind": action_kind, **pre["tool_input"]}, "llm_response_id": f"resp_{n}"}, indent=2) + "\n"
        index += 1
        if c["end"] is not None:
            obs_id = f"b{n:07d}-0000-4000-8000-000000000000"
            files[f"event-{index:05d}-{obs_id}.json"] = json.dumps({
                "kind": "ObservationEvent", "id": obs_id, "timestamp": f"2026-11-30T11:00:{n:02d}",
                "source": "environment", "tool_name": pre["tool_name"], "tool_call_id": call_id, "action_id": event_id,
                "observation": {"kind": action_kind.replace("Action", "Observation"),
                                "is_error": c["outcome"] == "error",
                                "content": [{"type": "text", "text": "…"}]}}, indent=2) + "\n"
            index += 1
    return files


def main() -> None:
    OUT.mkdir(exist_ok=True)
    (OUT / "claude-code.jsonl").write_text(claude_code(), encoding="utf-8")
    (OUT / "codex.jsonl").write_text(codex(), encoding="utf-8")
    (OUT / "gemini-cli.jsonl").write_text(gemini_cli(), encoding="utf-8")
    (OUT / "cline.json").write_text(cline(), encoding="utf-8")
    events = OUT / "openhands-events"
    events.mkdir(exist_ok=True)
    for name, text in openhands().items():
        (events / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
