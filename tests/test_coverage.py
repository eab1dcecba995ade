"""Transcript coverage: each harness's realistic session (tests/fixtures/sessions/) with its transcript
(tests/fixtures/transcripts/, built by tests/support/make_transcripts.py from the harness's published
format), stored with every hook run and with one tool call's hooks not run.

The store is built from the session's hook payloads through normalize (the hook path itself is
tested in test_harness_sessions.py); the transcript is placed where the harness writes it, under the
test's own HOME.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.coverage import pairing, transcripts
from agentwatch.record import normalize
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

FIXTURES = Path(__file__).parent / "fixtures"
HARNESSES = ["claude-code", "codex", "gemini-cli", "cline", "openhands"]
SOURCE = {"claude-code": "claude-code.jsonl", "codex": "codex.jsonl", "gemini-cli": "gemini-cli.jsonl",
          "cline": "cline.json", "openhands": "openhands-events"}
# The tool call whose hooks are not run: index into the session's expect.tool_calls.
DROPPED = {"claude-code": 1, "codex": 0, "gemini-cli": 0, "cline": 0, "openhands": 0}


def session_of(harness: str) -> dict:
    return json.loads((FIXTURES / "sessions" / f"{harness}.json").read_text(encoding="utf-8"))


def session_id(session: dict) -> str:
    first = session["steps"][0]["payload"]
    return next(first[k] for k in ("session_id", "taskId") if k in first)


def place(home: Path, harness: str, sid: str) -> Path:
    """Where the harness writes this session's transcript (transcripts.roots)."""
    return {
        "claude-code": home / ".claude" / "projects" / "-home-dev-shop" / f"{sid}.jsonl",
        "codex": home / ".codex" / "sessions" / "2026" / "11" / "30" / f"rollout-2026-11-30T09-12-44-{sid}.jsonl",
        "gemini-cli": home / ".gemini" / "tmp" / "5e1f0c2a9b" / "chats" / f"session-2026-11-30T10-02-{sid[:8]}.jsonl",
        "cline": home / ".cline" / "data" / "tasks" / sid / "api_conversation_history.json",
        "openhands": home / ".openhands" / "conversations" / sid.replace("-", "") / "events",
    }[harness]


def write_transcript(home: Path, harness: str, sid: str) -> Path:
    target = place(home, harness, sid)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = FIXTURES / "transcripts" / SOURCE[harness]
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


def store_session(store_path: Path, harness: str, session: dict, transcript: Path, skip: set[int]) -> None:
    """The session's hook payloads as stored records, in step order, leaving out the steps in `skip`."""
    with Store(store_path) as store:
        for i, step in enumerate(session["steps"]):
            if i in skip:
                continue
            payload = dict(step["payload"])
            if "transcript_path" in payload:
                payload["transcript_path"] = str(transcript)
            env = {"op": "append", "v": 1, "record_id": f"{harness}-{i:03d}", "harness": harness, "event": step["event"],
                   "payload": payload, "ts_observed_ns": 1_764_500_000_000_000_000 + i * 1_000_000,
                   "pid": 4242, "ppid": 4200}
            store.append([normalize.to_append(env)])


def dropped_steps(session: dict, harness: str) -> set[int]:
    start, end = session["expect"]["tool_calls"][DROPPED[harness]]["steps"]
    return {start - 1} | ({end - 1} if end is not None else set())


def transcript_line(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if json.dumps(needle) in line:
            return number
    raise AssertionError(f"{needle} not in {path}")


def record_coverage_row(store_path: Path, result: pairing.SessionCoverage) -> None:
    """The `coverage` attestation the daemon records at session end (daemon/recorder_watch.py)."""
    with Store(store_path) as store:
        body = {"schema": 1, "type": "coverage", "coverage": result.row_document()}
        store.append([Append(f"attest-test-{result.session_id}", "attestation", canonical_json(body))])


def cover(store_path: Path) -> list[pairing.SessionCoverage]:
    return pairing.coverage(store_path)


@pytest.mark.parametrize("harness", HARNESSES)
def test_full_coverage_when_every_hook_ran(harness, isolated_env, store_path):
    session = session_of(harness)
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), harness, sid)
    store_session(store_path, harness, session, transcript, skip=set())
    [result] = cover(store_path)
    n = len(session["expect"]["tool_calls"])
    assert (result.status, result.both, result.transcript_calls, result.recorded) == ("complete", n, n, n)
    assert (result.missing, result.extra, result.mismatched, result.findings) == ([], [], [], [])
    assert result.summary() == f"{n}/{n} recorded"
    assert result.transcript is not None and result.transcript.path == str(transcript)
    assert result.not_hooked == (1 if harness == "codex" else 0)  # Codex's update_plan runs no hook


@pytest.mark.parametrize("harness", HARNESSES)
def test_one_call_whose_hooks_did_not_run_is_exactly_the_missing_one(harness, isolated_env, store_path, capsys):
    session = session_of(harness)
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), harness, sid)
    store_session(store_path, harness, session, transcript, skip=dropped_steps(session, harness))
    dropped = session["expect"]["tool_calls"][DROPPED[harness]]
    pre = session["steps"][dropped["steps"][0] - 1]["payload"]
    n = len(session["expect"]["tool_calls"])

    [result] = cover(store_path)
    assert (result.status, result.both, result.transcript_calls, result.recorded) == ("missing", n - 1, n, n - 1)
    assert (result.extra, result.mismatched) == ([], [])
    [missing] = result.missing
    assert missing.tool == (pre.get("tool_name") or pre["tool_call"]["name"])
    if harness == "openhands":
        # One event a file: the missing call names its event file (the first terminal action).
        assert (missing.call_id, missing.file, missing.line) == (
            "toolu_oh1", "event-00000-a0000001-0000-4000-8000-000000000000.json", 1)
    elif harness == "gemini-cli":
        assert missing.call_id == "run_shell_command-1764496001-1"
        assert missing.line == transcript_line(transcript, missing.call_id)
    else:
        call_id = pre.get("tool_use_id") or pre["tool_call"]["id"]
        assert (missing.call_id, missing.line) == (call_id, transcript_line(transcript, call_id))
    assert result.summary() == f"{n - 1}/{n} · 1 missing"
    assert [f.kind for f in result.findings] == ["missing"]

    # The command, the coverage row, `sessions` and `show`.
    runner = CliRunner()
    out = runner.invoke(app, ["coverage", "--store", str(store_path), "--json"])
    assert out.exit_code == 1, out.output
    [doc] = json.loads(out.output)
    assert (doc["status"], doc["counts"]["missing"], [m["call_id"] for m in doc["missing"]]) == (
        "missing", 1, [missing.call_id])
    record_coverage_row(store_path, result)
    listed = runner.invoke(app, ["sessions", "--store", str(store_path), "--json"])
    assert [s["coverage"] for s in json.loads(listed.output)] == [f"{n - 1}/{n} · 1 missing"]
    shown = runner.invoke(app, ["show", sid, "--store", str(store_path)])
    assert shown.exit_code == 0, shown.output
    assert f"coverage {n - 1}/{n} · 1 missing" in shown.output
    assert f"missing: {missing.tool} {missing.call_id}" in shown.output


@pytest.mark.parametrize("text", ["", "not json at all\n", '{"a": 1}\n{"b": 2}\n', "[1, 2, 3]\n", "\xff\xfe"])
@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini-cli", "cline"])
def test_a_transcript_the_parser_does_not_understand_is_unknown_format(harness, text, isolated_env, store_path):
    session = session_of(harness)
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), harness, sid)
    transcript.write_bytes(text.encode("latin-1"))
    store_session(store_path, harness, session, transcript, skip=set())
    [result] = cover(store_path)
    assert result.status == "unknown"
    assert result.problem is not None and result.problem.kind == transcripts.UNKNOWN_FORMAT
    assert result.summary() == "coverage_unknown_format"


def test_a_transcript_outside_the_harness_directory_is_not_read(isolated_env, store_path, tmp_path):
    session = session_of("claude-code")
    elsewhere = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(FIXTURES / "transcripts" / "claude-code.jsonl", elsewhere)
    store_session(store_path, "claude-code", session, elsewhere, skip=set())
    [result] = cover(store_path)
    assert (result.status, result.problem.kind if result.problem else None) == (
        "unknown", "transcript_outside_harness_dir")


def test_a_deleted_transcript_and_one_over_the_bound(isolated_env, store_path):
    session = session_of("claude-code")
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), "claude-code", sid)
    store_session(store_path, "claude-code", session, transcript, skip=set())
    from agentwatch.store import db

    conn = db.open_reader(store_path)
    try:
        small = pairing.session_coverage(conn, "claude-code", sid, max_bytes=100)
        transcript.unlink()
        gone = pairing.session_coverage(conn, "claude-code", sid)
    finally:
        conn.close()
    assert small.problem is not None and small.problem.kind == "transcript_too_large"
    assert gone.problem is not None and gone.problem.kind == "transcript_missing"


def test_a_recorded_call_the_transcript_lacks_is_extra_and_a_changed_outcome_mismatched(isolated_env, store_path):
    session = session_of("claude-code")
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), "claude-code", sid)
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    # The transcript without toolu_01A's use and result; toolu_01B's error reported as success.
    kept = [line for line in lines if "toolu_01A" not in line]
    kept = [line.replace('"is_error":true', '"is_error":false') if "toolu_01B" in line else line for line in kept]
    transcript.write_text("".join(kept), encoding="utf-8")
    store_session(store_path, "claude-code", session, transcript, skip=set())
    [result] = cover(store_path)
    assert [r.call_id for r in result.extra] == ["toolu_01A"]
    assert [(m["call_id"], [d["field"] for d in m["differs"]]) for m in result.mismatched] == [("toolu_01B", ["outcome"])]
    assert result.missing == [] and result.status == "complete"
    assert sorted(f.kind for f in result.findings) == ["extra", "mismatched"]


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["type", "message", "content", "id", "name", "payload", "call_id",
                                          "toolCalls", "sessionId", "projectHash", "role", "tool_use_id", "kind",
                                          "tool_call_id", "$set", "input", "status"]), inner, max_size=5),
                     max_leaves=12)


@given(harness=st.sampled_from(["claude-code", "codex", "gemini-cli", "cline"]),
       lines=st.lists(_json, max_size=6), junk=st.binary(max_size=40))
def test_any_file_is_a_transcript_or_a_named_problem(harness, lines, junk, tmp_path_factory):
    root = tmp_path_factory.mktemp("t")
    path = root / "t.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines) + junk)
    try:
        t = transcripts.read(harness, str(path), check_root=False)
    except transcripts.TranscriptProblem as exc:
        assert exc.code in transcripts.PROBLEMS
    else:
        assert all(isinstance(c.tool, str) and isinstance(c.line, int) for c in t.calls)


def test_a_subagents_recorded_call_missing_from_the_session_transcript_is_not_extra(isolated_env, store_path):
    session = session_of("claude-code")
    sid = session_id(session)
    transcript = write_transcript(Path(isolated_env), "claude-code", sid)
    store_session(store_path, "claude-code", session, transcript, skip=set())
    sub = {"session_id": sid, "transcript_path": str(transcript), "cwd": "/home/dev/shop",
           "hook_event_name": "PreToolUse", "tool_name": "Grep", "tool_use_id": "toolu_sub1",
           "tool_input": {"pattern": "def money"}, "agent_id": "a1b2c3", "agent_type": "Explore"}
    with Store(store_path) as store:
        store.append([normalize.to_append({"op": "append", "v": 1, "record_id": "rec-sub", "harness": "claude-code",
                                           "event": "PreToolUse", "payload": sub})])
    [result] = cover(store_path)
    n = len(session["expect"]["tool_calls"])
    assert (result.status, result.both, result.recorded, result.extra, result.subagent_unpaired) == (
        "complete", n, n + 1, [], 1)


def test_another_source_extends_each_sessions_findings(isolated_env, store_path):
    session = session_of("codex")
    transcript = write_transcript(Path(isolated_env), "codex", session_id(session))
    store_session(store_path, "codex", session, transcript, skip=set())

    def witness(conn, result):
        result.findings.append(pairing.Finding("unrecorded_exec", "a process no tool call covers", source="witness"))

    [result] = pairing.coverage(store_path, sources=[witness])
    assert [(f.kind, f.source) for f in result.findings] == [("unrecorded_exec", "witness")]
    assert result.to_json()["findings"] == [{"kind": "unrecorded_exec", "detail": "a process no tool call covers",
                                             "source": "witness"}]


def test_a_transcript_named_for_another_session_is_not_read(isolated_env, store_path):
    session = session_of("claude-code")
    sid = session_id(session)
    decoy = place(Path(isolated_env), "claude-code", sid).with_name("decoy.jsonl")
    decoy.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "transcripts" / "claude-code.jsonl", decoy)
    store_session(store_path, "claude-code", session, decoy, skip=set())
    [result] = cover(store_path)
    assert (result.status, result.problem.kind if result.problem else None) == (
        "unknown", "transcript_not_this_session")


def test_gemini_clis_older_single_document_is_read_the_same(tmp_path):
    """Builds before the JSONL recording wrote one ConversationRecord (chatRecordingService.ts,
    parseLegacyRecordFallback): the same calls, each found at the line its id is on."""
    lines = [json.loads(line) for line in (FIXTURES / "transcripts" / "gemini-cli.jsonl").read_text().splitlines()]
    messages: dict[str, dict] = {}
    for record in lines[1:]:
        if "id" in record:
            messages[record["id"]] = record  # the last copy of a message wins
    legacy = dict(lines[0], messages=list(messages.values()))
    path = tmp_path / "session-2026-11-30T10-02-8d3f1b2a.json"
    path.write_text(json.dumps(legacy, indent=2))
    old = transcripts.read("gemini-cli", str(path), check_root=False)
    new = transcripts.read("gemini-cli", str(FIXTURES / "transcripts" / "gemini-cli.jsonl"), check_root=False)
    assert (old.format, new.format) == ("gemini-cli-json", "gemini-cli-jsonl")
    assert [(c.call_id, c.tool, c.outcome) for c in old.calls] == [(c.call_id, c.tool, c.outcome) for c in new.calls]
    # The session's outcomes as the chat record keeps them: a call left open was cancelled.
    outcomes = [{"ok": "ok", "error": "error", "open": "error"}[c["outcome"]]
                for c in session_of("gemini-cli")["expect"]["tool_calls"]]
    assert [c.outcome for c in new.calls] == outcomes
    assert all(c.line == transcript_line(path, c.call_id) for c in old.calls)


def test_the_command_by_prefix_and_by_age(isolated_env, store_path):
    for harness in ("claude-code", "cline"):
        session = session_of(harness)
        transcript = write_transcript(Path(isolated_env), harness, session_id(session))
        store_session(store_path, harness, session, transcript, skip=set())
    runner = CliRunner()
    n = {h: len(session_of(h)["expect"]["tool_calls"]) for h in ("claude-code", "cline")}
    by_prefix = runner.invoke(app, ["coverage", "3f2a9c1e", "--store", str(store_path)])
    assert by_prefix.exit_code == 0, by_prefix.output
    assert by_prefix.output.splitlines()[0].startswith(
        f"claude-code 3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b: {n['claude-code']}/{n['claude-code']} recorded (")
    recent = json.loads(runner.invoke(app, ["coverage", "--since", "1h", "--store", str(store_path), "--json"]).output)
    assert [(r["harness"], r["summary"]) for r in recent] == [
        ("claude-code", f"{n['claude-code']}/{n['claude-code']} recorded"), ("cline", f"{n['cline']}/{n['cline']} recorded")]
    unknown = runner.invoke(app, ["coverage", "nope", "--store", str(store_path)])
    assert unknown.exit_code == 2 and "no session 'nope'" in unknown.output
