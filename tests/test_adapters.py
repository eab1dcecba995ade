"""Every harness fixture normalizes to the fields it documents (table-driven).

A fixture (tests/fixtures/harness/<harness>/<event>.json) is a payload built
from the harness's documented hook input, the envelope fields a hook client
would add, and the normalized fields expected from it:

    {"source": "<doc it follows>", "event": "<event_hint>", "envelope": {...},
     "payload": {...} | "payload_text": "...",
     "expect": {"dotted.path": value, ...}, "absent": ["dotted.path", ...]}
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentwatch.record import compact, normalize
from agentwatch.record.adapters import HARNESSES, _common, adapter_for

FIXTURES = Path(__file__).parent / "fixtures" / "harness"
CASES = sorted(FIXTURES.glob("*/*.json"))
_MISSING = object()


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def envelope(path: Path) -> dict:
    fixture = load(path)
    env = {"record_id": f"{path.parent.name}/{path.stem}", "harness": path.parent.name}
    env.update(fixture.get("envelope", {}))
    if "event" in fixture:
        env["event"] = fixture["event"]
    for key in ("payload", "payload_text"):
        if key in fixture:
            env[key] = fixture[key]
    return env


def lookup(doc: dict, dotted: str):
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def empty_values(value, path=""):
    """Paths of normalized fields that carry no value (None, "", {})."""
    if isinstance(value, dict):
        if not value and path:
            yield path
        for key, item in value.items():
            if path == "" and key in ("raw", "client", "argv"):
                continue  # verbatim copies, not normalized fields
            if key in ("input", "response"):
                continue  # the harness's own values, kept as sent
            yield from empty_values(item, f"{path}.{key}" if path else key)
    elif value is None or value == "":
        yield path


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_normalizes_as_documented(path):
    fixture = load(path)
    env = envelope(path)
    doc = normalize.record_document(normalize.check_envelope(env))
    for dotted, expected in fixture["expect"].items():
        got = compact.harness_payload(doc) if dotted == "raw" else lookup(doc, dotted)
        assert got == expected, dotted
    for dotted in fixture.get("absent", ()):
        assert lookup(doc, dotted) is _MISSING, dotted
    assert doc["schema"] == 2
    # Each value is stored once, and the harness payload comes back whole (docs/record.md).
    if "payload" in fixture:
        assert compact.harness_payload(doc) == fixture["payload"]
        assert not set(doc.get("raw", {})) & set(doc.get("raw_moved", {}))
    assert doc["event"]["kind"] in _common.KINDS
    if "tool" in doc:
        assert doc["tool"]["category"] in _common.CATEGORIES
    assert list(empty_values(doc)) == []
    # The stored bytes are the canonical form of exactly this document.
    append = normalize.to_append(env)
    assert json.loads(append.payload) == json.loads(json.dumps(doc))


# A fixture names where its payload comes from: a documentation page, or a repository and the
# files in it ("owner/name path/to/file").
_SOURCE = re.compile(r"^(https://\S+|[A-Za-z0-9._-]+/[A-Za-z0-9._-]+ \S+)")


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_fixture_names_its_upstream_source(path):
    source = load(path).get("source")
    assert isinstance(source, str) and _SOURCE.match(source), source


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_harness_has_an_adapter_and_fixtures(harness):
    module = adapter_for(harness)
    assert module.__name__.endswith(harness.replace("-", "_"))
    kinds = {load(p)["expect"].get("event.kind") for p in (FIXTURES / harness).glob("*.json")}
    # Every kind the adapter can produce is exercised by at least one fixture.
    assert set(module.KINDS.values()) <= kinds
    assert set(module.KINDS.values()) <= set(_common.KINDS)
    assert set(module.CATEGORIES.values()) <= set(_common.CATEGORIES)


def test_fixtures_cover_every_tool_category():
    seen = set()
    for path in CASES:
        doc = normalize.record_document(envelope(path))
        if "tool" in doc:
            seen.add(doc["tool"]["category"])
    assert seen == set(_common.CATEGORIES)


def test_unknown_harness_is_stored_as_other_with_its_raw_payload():
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "session_id": "s"}
    doc = normalize.record_document({"record_id": "r", "harness": "aider", "payload": payload})
    assert doc["event"] == {"name": "PreToolUse", "kind": "other"}
    assert compact.harness_payload(doc) == payload


@pytest.mark.parametrize("harness", HARNESSES)
def test_unknown_event_is_kind_other(harness):
    doc = adapter_for(harness).normalize({"hook_event_name": "BrandNewEvent", "hookName": "BrandNewEvent"},
                                         "BrandNewEvent")
    assert doc["event"] == {"name": "BrandNewEvent", "kind": "other"}


def test_copilot_session_is_synthesized_from_harness_uid_ppid_cwd():
    def doc(ppid, cwd="/repo", uid=1000, **extra):
        env = {"record_id": "r", "harness": "copilot", "ppid": ppid,
               "payload": {"timestamp": 1, "cwd": cwd, "prompt": "hi", **extra}}
        return normalize.record_document(env, uid=uid)

    first = doc(4242)
    assert first["session_synthesized"] is True
    assert first["session_id"].startswith("synth:") and len(first["session_id"]) == 6 + 32
    assert doc(4242)["session_id"] == first["session_id"]
    assert doc(4243)["session_id"] != first["session_id"]
    assert doc(4242, cwd="/other")["session_id"] != first["session_id"]
    assert doc(4242, uid=1001)["session_id"] != first["session_id"]
    given = doc(4242, sessionId="cs-1")
    assert given["session_id"] == "cs-1" and "session_synthesized" not in given
    # Without a parent pid there is nothing stable to name the session by.
    env = {"record_id": "r", "harness": "copilot", "payload": {"cwd": "/repo", "prompt": "hi"}}
    assert "session_id" not in normalize.record_document(env)


def test_a_failing_adapter_costs_the_normalized_fields_not_the_record(monkeypatch):
    from agentwatch.record.adapters import claude_code

    def broken(payload, hint=None):
        raise KeyError("bug")

    monkeypatch.setattr(claude_code, "normalize", broken)
    env = {"record_id": "r", "harness": "claude-code", "event": "Stop", "payload": {"session_id": "s"}}
    doc = normalize.record_document(env)
    assert doc["event"] == {"name": "Stop", "kind": "other"}
    assert doc["normalize_error"] == "adapter failed: KeyError"
    assert doc["raw"] == {"session_id": "s"}  # the adapter took nothing
    normalize.to_append(env)


def test_codex_notify_payload_comes_from_the_last_argument_only_when_stdin_is_empty():
    notify = {"type": "agent-turn-complete", "thread-id": "t", "turn-id": "1"}
    argv = ["agentwatch-hook", "codex", json.dumps(notify)]
    from_stdin = {"hook_event_name": "Stop", "session_id": "s"}
    doc = normalize.record_document({"record_id": "r", "harness": "codex", "payload": from_stdin, "argv": argv})
    assert compact.harness_payload(doc) == from_stdin
    doc = normalize.record_document({"record_id": "r", "harness": "codex", "payload_text": " \n", "argv": argv})
    assert compact.harness_payload(doc) == notify and "payload_error" not in doc
    doc = normalize.record_document({"record_id": "r", "harness": "codex", "payload_text": "", "argv": ["x", "not json"]})
    assert doc["payload_error"] == "no input: stdin was closed empty"  # and argv holds no payload either


def test_a_json_string_nested_too_deep_to_parse_stays_a_string():
    deep = "[" * 100_000 + "]" * 100_000
    payload = {"hook_event_name": "beforeMCPExecution", "conversation_id": "c", "tool_name": "q", "tool_input": deep}
    doc = normalize.record_document({"record_id": "r", "harness": "cursor", "payload": payload})
    assert doc["tool"]["input"] == deep
    assert doc["tool"]["input_sha256"].startswith("sha256:")
    normalize.to_append({"record_id": "r", "harness": "cursor", "payload": payload})


@pytest.mark.parametrize("installed_for", ["claude-code", "copilot", "vscode"])
def test_claude_and_codex_payloads_through_files_vs_code_runs_are_named_by_shape(installed_for):
    # code.visualstudio.com/docs/agents/reference/hooks-reference: VS Code runs these files with the
    # payload of the agent harness selected in it; openai/codex codex-rs/hooks/schema/generated and
    # https://code.claude.com/docs/en/hooks give each shape
    from agentwatch.record.adapters.sender import sender

    codex_pre = load(FIXTURES / "codex" / "PreToolUse.json")["payload"]
    codex_stop = load(FIXTURES / "codex" / "Stop.json")["payload"]
    claude_pre = load(FIXTURES / "claude-code" / "PreToolUse.json")["payload"]
    claude_start = load(FIXTURES / "claude-code" / "SessionStart.json")["payload"]
    assert [sender(installed_for, p) for p in (codex_pre, codex_stop, claude_pre, claude_start)] == [
        "codex", "codex", "claude-code", "claude-code"]
    assert sender(installed_for, {**claude_pre, "prompt_id": "p1", "model": "x"}) == "claude-code"
    # Codex's own file is run by Codex alone: the name on the command line stays
    assert sender("codex", claude_pre) == "codex"
