"""Adapters accept any JSON value: a hook payload is untrusted input, and a
record that cannot be normalized is still stored (kind `other`), never dropped.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_adapters import empty_values

from agentwatch.record import normalize
from agentwatch.record.adapters import HARNESSES, _common, adapter_for

# Every field name any adapter reads, so random payloads hit the typed paths too.
FIELDS = [
    "hook_event_name", "hookEventName", "event_type", "hookName", "type", "session_id", "sessionId",
    "conversation_id", "generation_id", "taskId", "thread-id", "turn-id", "turn_id", "prompt_id", "cwd",
    "working_dir", "workspace_roots", "workspaceRoots", "model", "permission_mode", "transcript_path",
    "transcriptPath", "timestamp", "agent_id", "agent_type", "agentName", "tool_name", "toolName",
    "tool_input", "toolArgs", "tool_use_id", "tool_response", "toolResult", "tool_output", "result_json",
    "error", "error_message", "duration", "duration_ms", "command", "output", "file_path", "prompt",
    "message", "decision", "mcp_context", "cursor_version", "clineVersion", "preToolUse", "postToolUse",
    "taskStart", "userPromptSubmit", "initialPrompt", "reason", "source", "stopReason", "errorContext",
    "subagent_id", "subagent_type", "server_name",
]
EVENTS = sorted({e for h in HARNESSES for e in adapter_for(h).KINDS} | {"", "Unknown"})

# JSON as json.loads can produce it, lone surrogates and NaN included.
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=None), max_size=20)
    | st.sampled_from(["\ud800", float("nan"), 2**70])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
field_values = json_values | st.sampled_from(EVENTS) | st.just("mcp__srv__tool") | st.just('{"a": 1}')
shaped = st.fixed_dictionaries({}, optional={k: field_values for k in FIELDS})
nested = st.dictionaries(st.sampled_from(["preToolUse", "postToolUse", "toolResult", "mcp_context"]), shaped,
                         max_size=2)
payloads = json_values | shaped | st.builds(lambda a, b: {**a, **b}, shaped, nested)
hints = st.none() | st.sampled_from(EVENTS)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(harness=st.sampled_from(HARNESSES + ("not-a-harness",)), payload=payloads, hint=hints)
# found by CI: a Claude-shaped payload through Copilot's hooks file (VS Code runs that file with its
# selected agent harness's payload, so the sender is claude-code)
@example(harness="copilot", payload={"hook_event_name": "mcp__srv__tool"}, hint=None)
def test_any_json_normalizes_and_appends(harness, payload, hint):
    fields = adapter_for(harness).normalize(payload, hint)
    assert isinstance(fields, dict)
    assert fields["event"]["kind"] in _common.KINDS
    if "tool" in fields:
        assert fields["tool"]["category"] in _common.CATEGORIES
    assert list(empty_values(fields)) == []  # compact: only keys that have values

    env = {"record_id": "r-1", "harness": harness, "payload": payload, "ppid": 7}
    if hint is not None:
        env["event"] = hint
    append = normalize.to_append(env)
    doc = json.loads(append.payload)
    assert doc["schema"] == 2
    # The sender is the harness on the command line, or (for harnesses that run each other's
    # configs) another of that group, named from the payload; the command line stays in `via`.
    # VS Code runs Copilot's and its own hooks files with the payload of the agent harness selected in
    # it, Claude's or Codex's too (code.visualstudio.com/docs/agents/reference/hooks-reference).
    runs = {"claude-code": {"claude-code", "vscode", "copilot", "cursor", "codex"},
            "copilot": {"copilot", "vscode", "claude-code", "codex"},
            "vscode": {"copilot", "vscode", "claude-code", "codex"}}
    assert doc["harness"] == harness or doc["harness"] in runs.get(harness, set())
    if doc["harness"] != harness:
        assert doc["via"] == {"harness": harness}
    assert "normalize_error" not in doc  # the adapter itself never raised


@settings(max_examples=100, deadline=None)
@given(harness=st.sampled_from(HARNESSES), text=st.text(max_size=40))
def test_any_payload_text_is_stored(harness, text):
    append = normalize.to_append({"record_id": "r-2", "harness": harness, "payload_text": text})
    assert json.loads(append.payload)["schema"] == 2
