"""`agentwatch export`: JSON lines, and OTLP traces decoded by a receiver the test starts,
with the OpenTelemetry project's own protobuf definitions (opentelemetry-proto)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from support import sessions as fixture_sessions
from support.otlpreceiver import Receiver, attrs
from support.sessions import SESSIONS, T0_NS, append_at, envelope

from agentwatch.errors import UsageError
from agentwatch.readers import export, otlp
from agentwatch.store.append import Store


@pytest.fixture
def built(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    seqs = fixture_sessions.build(store, monkeypatch)
    return store, seqs


def names(spans) -> list[str]:
    return [s.name for s in spans]


# One invoke_agent span per turn and one execute_tool span per tool call that ended, per harness
# (a call still open is exported when its end is recorded).
SPANS = {
    "claude-code": ["execute_tool Bash", "execute_tool Bash", "invoke_agent claude-code"],
    "codex": ["execute_tool Bash", "invoke_agent codex"],
    "gemini-cli": ["execute_tool run_shell_command", "execute_tool read_file", "invoke_agent gemini-cli"],
    "cursor": ["execute_tool Shell", "execute_tool database_query", "execute_tool Shell", "invoke_agent cursor"],
    "copilot": ["execute_tool bash", "execute_tool bash", "invoke_agent copilot"],
    "vscode": ["execute_tool editFiles", "invoke_agent vscode"],
    "cline": ["execute_tool execute_command", "execute_tool write_to_file", "invoke_agent cline"],
    "openhands": ["execute_tool terminal", "invoke_agent openhands"],
}


def test_otlp_spans_follow_the_genai_conventions(built, tmp_path):
    store, _ = built
    with Receiver() as receiver:
        report = export.export(store, fmt="otlp", endpoint=receiver.endpoint)
    assert receiver.content_types == ["application/x-protobuf"] * len(receiver.requests)
    spans = receiver.spans()
    assert names(spans) == [n for h in SESSIONS for n in SPANS[h]]
    assert (report.records, report.spans, report.rejected_spans) == (57, len(spans), 0)
    (resource,) = {tuple(sorted(attrs(rs.resource.attributes))) for r in receiver.requests for rs in r.resource_spans}
    assert resource == ("agentwatch.store_id", "service.name")

    bash, failed, turn = spans[0], spans[1], spans[2]
    assert attrs(bash.attributes) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Bash", "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "toolu_01Hx3kP9", "gen_ai.agent.name": "claude-code",
        "gen_ai.conversation.id": "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e", "agentwatch.tool.category": "shell",
        "agentwatch.seq.start": 3, "agentwatch.seq.end": 4, "agentwatch.outcome": "ok",
    }
    assert bash.kind == 1 and bash.status.code == 0  # INTERNAL, UNSET
    assert bash.end_time_unix_nano - bash.start_time_unix_nano == 1_500_000_000
    assert bash.start_time_unix_nano == T0_NS + 2 * fixture_sessions.STEP_NS  # the hook's clock at the third event
    assert failed.status.code == 2 and attrs(failed.attributes)["error.type"] == "tool_error"
    assert attrs(failed.attributes)["gen_ai.tool.call.id"] == "toolu_01Fail"

    assert attrs(turn.attributes) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "claude-code",
        "gen_ai.provider.name": "anthropic", "gen_ai.conversation.id": "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e",
        "agentwatch.turn.id": "c0ffee00-1111-4222-8333-444455556666",
        "agentwatch.seq.first": 2, "agentwatch.seq.last": 9,
    }
    assert turn.parent_span_id == b"" and bash.parent_span_id == turn.span_id and failed.parent_span_id == turn.span_id
    assert {bash.trace_id, failed.trace_id} == {turn.trace_id} and len(turn.trace_id) == 16
    assert [e.name for e in turn.events] == ["agentwatch.prompt", "agentwatch.permission", "agentwatch.compaction"]
    prompt = attrs(turn.events[0].attributes)
    assert prompt["agentwatch.prompt.length"] == 42 and "agentwatch.prompt.text" not in prompt
    assert attrs(turn.events[1].attributes)["gen_ai.tool.name"] == "Write"
    # Content is opt-in: nothing of the tool's arguments or results by default.
    for span in spans:
        assert not {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} & set(attrs(span.attributes))
    assert len({s.span_id for s in spans}) == len(spans)
    assert len({s.trace_id for s in spans}) == len(SESSIONS)


def test_content_is_sent_only_when_asked(built):
    store, _ = built
    with Receiver() as receiver:
        export.export(store, fmt="otlp", endpoint=receiver.endpoint, content=True)
    bash = attrs(receiver.spans()[0].attributes)
    assert json.loads(bash["gen_ai.tool.call.arguments"]) == {"command": "pytest -q tests/test_cart.py",
                                                             "description": "Run the cart tests"}
    assert "gen_ai.tool.call.result" in bash
    turn = receiver.spans()[2]
    assert attrs(turn.events[0].attributes)["agentwatch.prompt.text"] == "Fix the failing test in tests/test_cart.py"


def test_a_durable_consumer_resumes_exactly_and_never_sends_a_span_twice(built, tmp_path, monkeypatch):
    store, _ = built
    state = tmp_path / "state"
    with Receiver() as receiver:
        first = export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                              batch_rows=5)
        assert (first.first_seq, first.last_seq, first.records) == (1, 57, 57)
        again = export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state)
        assert (again.records, again.spans, again.requests) == (0, 0, 0)
        # The vscode call that was open ends, and a new turn follows: only their spans go out.
        end = {"hookEventName": "PostToolUse", "sessionId": "vs-5d6e7f80", "tool_name": "runInTerminal",
               "tool_input": {"command": "npm run build"}, "tool_use_id": "tool-124", "tool_response": "ok",
               "cwd": "/home/dev/web"}
        stop = {"hookEventName": "Stop", "sessionId": "vs-5d6e7f80", "cwd": "/home/dev/web"}
        prompt = {"hookEventName": "UserPromptSubmit", "sessionId": "vs-5d6e7f80", "prompt": "more", "cwd": "/w"}
        t = T0_NS + 10**12
        with Store(store) as s:
            append_at(s, [(envelope("vscode", "PostToolUse", 90, t, payload=end), t),
                          (envelope("vscode", "UserPromptSubmit", 91, t + 1, payload=prompt), t + 1),
                          (envelope("vscode", "Stop", 92, t + 2, payload=stop), t + 2)], monkeypatch)
        later = export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state)
        assert (later.first_seq, later.last_seq, later.records) == (58, 60, 3)
        spans = receiver.spans()
    assert names(spans)[-2:] == ["execute_tool runInTerminal", "invoke_agent vscode"]
    assert len(spans) == sum(map(len, SPANS.values())) + 2
    assert len({s.span_id for s in spans}) == len(spans)  # no span sent twice


def test_a_refused_batch_is_not_acknowledged_and_goes_out_on_the_next_run(built, tmp_path):
    store, _ = built
    state = tmp_path / "state"
    with Receiver() as receiver:
        receiver.fail_next = 1
        with pytest.raises(export.EndpointError, match="HTTP 503"):
            export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                          batch_rows=20)
        assert receiver.requests == []
        # The receiver answered 503: the batch is known not to be taken, so the next run simply sends it.
        report = export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                               batch_rows=20)
        assert (report.first_seq, report.resent) == (1, [])
        spans = receiver.spans()
    assert names(spans) == [n for h in SESSIONS for n in SPANS[h]]


def test_a_batch_whose_answer_was_lost_stops_the_next_run_until_the_operator_decides(built, tmp_path):
    store, _ = built
    state = tmp_path / "state"
    with Receiver() as receiver:
        def killed_after_sending(url, body):
            export.post(url, body)
            raise KeyboardInterrupt  # the process dies before it logs the answer

        with pytest.raises(KeyboardInterrupt):
            export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                          batch_rows=20, sender=killed_after_sending)
        sent = len(receiver.spans())
        assert sent == 5  # the spans closed by seq 1..20: claude-code's three and codex's two
        with pytest.raises(export.UncertainBatch, match="seq 1..20"):
            export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state)
        report = export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                               skip_uncertain=True, batch_rows=20)
        assert report.skipped == [1, 20] and report.first_seq == 21
        spans = receiver.spans()
    assert names(spans) == [n for h in SESSIONS for n in SPANS[h]]
    assert len({s.span_id for s in spans}) == len(spans)


def test_a_consumer_is_bound_to_its_endpoint_and_format(built, tmp_path):
    store, _ = built
    state = tmp_path / "state"
    with Receiver() as receiver:
        export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state)
        with pytest.raises(UsageError, match="exports otlp to"):
            export.export(store, fmt="otlp", endpoint="http://127.0.0.1:1", consumer="otel", state_dir=state)
        with pytest.raises(UsageError, match="exports otlp to"):
            export.export(store, fmt="jsonl", out=io.BytesIO(), consumer="otel", state_dir=state)
        with pytest.raises(UsageError, match="--from is not allowed"):
            export.export(store, fmt="otlp", endpoint=receiver.endpoint, consumer="otel", state_dir=state,
                          from_seq=3)


def test_jsonl_writes_one_record_per_line_and_resumes(built, tmp_path):
    store, _ = built
    state = tmp_path / "state"
    out = io.BytesIO()
    report = export.export(store, fmt="jsonl", out=out, from_seq=50, consumer="lines", state_dir=state)
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [d["seq"] for d in docs] == list(range(50, 58)) and report.records == 8
    assert docs[0]["record_id"] == "cline-004-PostToolUse-failure" and docs[0]["hash"].startswith("sha256:")
    again = io.BytesIO()
    assert export.export(store, fmt="jsonl", out=again, consumer="lines", state_dir=state).records == 0
    assert again.getvalue() == b""


def test_export_cli(built, tmp_path):
    store, _ = built
    with Receiver() as receiver:
        out = subprocess.run([sys.executable, "-m", "agentwatch.cli", "export", "--format", "otlp", "--store",
                              str(store), "--endpoint", receiver.endpoint, "--json"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["spans"] == len(receiver.spans()) == sum(map(len, SPANS.values()))
    lines = subprocess.run([sys.executable, "-m", "agentwatch.cli", "export", "--format", "jsonl", "--store",
                            str(store), "--from", "57"], capture_output=True, text=True, timeout=120)
    assert lines.returncode == 0, lines.stderr
    assert [json.loads(x)["seq"] for x in lines.stdout.splitlines()] == [57]
    unreachable = subprocess.run([sys.executable, "-m", "agentwatch.cli", "export", "--format", "otlp", "--store",
                                  str(store), "--endpoint", "http://127.0.0.1:9"],
                                 capture_output=True, text=True, timeout=120)
    assert unreachable.returncode == 3 and "cannot send" in unreachable.stderr
    usage = subprocess.run([sys.executable, "-m", "agentwatch.cli", "export", "--format", "otlp", "--store",
                            str(store)], capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "--endpoint" in usage.stderr


def test_headers_come_from_the_otel_variables(built, monkeypatch):
    store, _ = built
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr%3Dt, x-team=obs")
    with Receiver() as receiver:
        export.export(store, fmt="otlp", endpoint=receiver.endpoint, from_seq=1)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=traces-only")
        export.export(store, fmt="otlp", endpoint=receiver.endpoint, from_seq=1)
    first, second = receiver.headers[0], receiver.headers[-1]
    assert (first["x-api-key"], first["x-team"]) == ("s3cr=t", "obs")
    assert second["x-api-key"] == "traces-only" and "x-team" not in second


def test_span_ids_are_stable_for_the_same_store(built):
    store, _ = built
    with Receiver() as a, Receiver() as b:
        export.export(store, fmt="otlp", endpoint=a.endpoint)
        export.export(store, fmt="otlp", endpoint=b.endpoint, batch_rows=3)
        assert [(s.trace_id, s.span_id, s.parent_span_id) for s in a.spans()] == [
            (s.trace_id, s.span_id, s.parent_span_id) for s in b.spans()]
    assert otlp.PROVIDERS["codex"] == "openai"
