"""`agentwatch sessions` and `agentwatch show`: a realistic session of each harness, built
from the harnesses' own published payloads (tests/fixtures/harness/, each naming its source)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest
from support import sessions as fixture_sessions
from support.sessions import SESSIONS, T0_NS, append_at, envelope

from agentwatch.errors import UsageError
from agentwatch.readers import sessions
from agentwatch.record.redact.corpus import secrets_corpus
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True,
                          timeout=120, **kw)


@pytest.fixture
def built(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    seqs = fixture_sessions.build(store, monkeypatch)
    return store, seqs


# harness: (events, prompts, tool calls, failures, denials, last event)
EXPECTED = {
    "claude-code": (10, 1, 3, 1, 0, "SessionEnd"),
    "codex": (7, 1, 1, 0, 0, "Stop"),
    "gemini-cli": (7, 1, 2, 1, 0, "SessionEnd"),
    "cursor": (9, 1, 3, 1, 0, "sessionEnd"),
    "copilot": (6, 1, 2, 0, 1, "sessionEnd"),  # the denied call is a denial, not a failure
    "vscode": (6, 1, 2, 0, 0, "Stop"),
    "cline": (6, 1, 2, 1, 0, "TaskComplete"),
    "openhands": (6, 1, 1, 0, 0, "SessionEnd"),
}


def test_one_row_per_session_with_exact_counts(built):
    store, seqs = built
    found = sessions.list_sessions(store)
    assert [s.harness for s in found] == list(SESSIONS)
    got = {s.harness: (s.events, s.prompts, s.tool_calls, s.failures, s.denials, s.last_event) for s in found}
    assert got == EXPECTED
    for s in found:
        assert (s.first_seq, s.last_seq) == (seqs[s.harness][0], seqs[s.harness][-1])
        assert s.duration_s == (len(SESSIONS[s.harness]) - 1) * 1.5
    claude = found[0]
    assert claude.session_id == "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e" and claude.cwd == "/home/dev/shop"


def test_harness_and_since_filter_sessions(built):
    store, _ = built
    assert [s.harness for s in sessions.list_sessions(store, harness="cline")] == ["cline"]
    assert sessions.list_sessions(store, harness="windsurf") == []
    # The last three sessions have events after the start of vscode's session.
    vscode_start = sessions.list_sessions(store, harness="vscode")[0].started_ns
    assert [s.harness for s in sessions.list_sessions(store, since_ns=vscode_start)] == ["vscode", "cline", "openhands"]


def test_sessions_json_and_plain_off_a_tty(built):
    store, _ = built
    out = cli("sessions", "--store", str(store), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [d["harness"] for d in doc] == list(SESSIONS)
    assert {d["harness"]: d["tool_calls"] for d in doc} == {h: e[2] for h, e in EXPECTED.items()}
    plain = cli("sessions", "--store", str(store), "--harness", "codex")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert len(lines) == 2 and lines[0].split()[:3] == ["harness", "session", "cwd"]
    assert lines[1].split()[:3] == ["codex", "0199a3f2-7c1e-7d40-b5a6-1f2e3d4c5b6a", "/home/dev/api"]
    assert not set(plain.stdout) & set("─│╭╮╰╯┃━")


def test_since_takes_an_age_or_a_time_and_refuses_anything_else(built):
    store, _ = built
    assert sessions.parse_since("2h", now_ns=10**19) == 10**19 - 7200 * 10**9
    assert sessions.parse_since("2025-11-30T10:00:00Z") == T0_NS
    assert sessions.parse_since("2025-11-30T11:00:00+01:00") == T0_NS
    assert sessions.parse_since("2025-11-30T10:00:00.5") == T0_NS + 500_000_000
    assert json.loads(cli("sessions", "--store", str(store), "--since", "2025-11-30T10:10:00Z", "--json").stdout)[0][
        "harness"] == "cline"
    assert json.loads(cli("sessions", "--store", str(store), "--since", "1d", "--json").stdout) == []  # fixtures are old
    bad = cli("sessions", "--store", str(store), "--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr


# -- show ---------------------------------------------------------------------------------


def lines_of(items):
    return [(i.kind, i.name, i.outcome) for i in items]


def test_the_claude_code_timeline_pairs_calls_and_keeps_order(built):
    store, seqs = built
    harness, sid, head, items = sessions.timeline(store, "8a1c2f0e")
    assert (harness, sid, head) == ("claude-code", "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e", 57)
    assert lines_of(items) == [
        ("session_start", "SessionStart", None),
        ("prompt", "UserPromptSubmit", None),
        ("tool", "Bash", "ok"),  # PreToolUse + PostToolUse by call id: one line
        ("permission", "PermissionRequest", None),
        ("tool", "Bash", "error"),  # PostToolUseFailure whose start is not in the session
        ("tool", "Grep", "open"),  # started, never ended
        ("compact", "PreCompact", None),
        ("stop", "Stop", None),
        ("session_end", "SessionEnd", None),
    ]
    bash = items[2]
    assert (bash.seq, bash.end_seq, bash.call_id, bash.summary) == (3, 4, "toolu_01Hx3kP9", "pytest -q tests/test_cart.py")
    assert bash.duration_ms == 1500.0  # the two hook clocks, 1.5 s apart
    assert items[1].summary == "Fix the failing test in tests/test_cart.py"
    assert items[4].detail == {"unpaired": "end without a recorded start", "error": items[4].detail["error"]}


@pytest.mark.parametrize("harness", list(SESSIONS))
def test_every_harness_session_has_one_line_per_prompt_and_per_call(built, harness):
    store, _ = built
    summary = sessions.list_sessions(store, harness=harness)[0]
    _, _, _, items = sessions.timeline(store, summary.session_id)
    assert sum(i.kind == "prompt" for i in items) == EXPECTED[harness][1]
    assert sum(i.kind == "tool" for i in items) == EXPECTED[harness][2]
    assert sum(i.kind == "tool" and i.outcome == "error" for i in items) == EXPECTED[harness][3]
    assert [i.seq for i in items] == sorted(i.seq for i in items)


def test_an_unknown_or_ambiguous_session_is_a_usage_error(built, monkeypatch):
    store, _ = built
    with pytest.raises(UsageError, match="no session"):
        sessions.timeline(store, "nope")
    # codex's session id, used by a second harness too: ambiguous until --harness says which.
    payload = {"hook_event_name": "SessionStart", "session_id": "0199a3f2-7c1e-7d40-b5a6-1f2e3d4c5b6a", "cwd": "/x"}
    with Store(store) as s:
        append_at(s, [(envelope("claude-code", "SessionStart", 99, T0_NS, payload=payload), T0_NS)], monkeypatch)
    with pytest.raises(UsageError, match="ambiguous .*claude-code:0199a3f2.*codex:0199a3f2"):
        sessions.timeline(store, "0199a3f2")
    assert sessions.timeline(store, "0199a3f2", "codex")[0] == "codex"
    assert [i.kind for i in sessions.timeline(store, "0199a3f2", "claude-code")[3]] == ["session_start"]
    out = cli("show", "nope", "--store", str(store))
    assert out.returncode == 2 and "no session 'nope'" in out.stderr


def test_show_json_is_one_document(built):
    store, _ = built
    out = cli("show", "vs-5d6e7f80", "--store", str(store), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["harness"] == "vscode" and doc["session_id"] == "vs-5d6e7f80"
    assert [(i["kind"], i["name"], i.get("outcome")) for i in doc["items"]] == [
        ("session_start", "SessionStart", None), ("prompt", "UserPromptSubmit", None),
        ("tool", "editFiles", "ok"), ("tool", "runInTerminal", "open"), ("stop", "Stop", None),
    ]
    out = cli("show", "vs-5d6e7f80", "--store", str(store), "--json", "--limit", "2")
    assert [i["name"] for i in json.loads(out.stdout)["items"]] == ["runInTerminal", "Stop"]
    out = cli("sessions", "--store", str(store), "--json", "--limit", "2")
    assert [s["harness"] for s in json.loads(out.stdout)] == ["cline", "openhands"]


def _one_session(store, monkeypatch, payloads):
    """A claude-code session of the given PreToolUse inputs; the store's path."""
    envs = []
    for i, tool_input in enumerate(payloads):
        payload = {"session_id": "hostile-1", "cwd": "/home/dev/x", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": f"toolu_{i}"}
        envs.append((envelope("claude-code", "PreToolUse", i, T0_NS + i, payload=payload), T0_NS + i))
    with Store(store) as s:
        append_at(s, envs, monkeypatch)


def test_recorded_escapes_are_neutralized_and_masks_stay_visible(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    _, _, clone = next(c for c in secrets_corpus() if c[0] == "github_token" and c[2].startswith("git clone"))
    _one_session(store, monkeypatch, [
        {"command": "echo \x1b]0;owned\x07\x1b[2J done"},
        {"command": "ls \u202etxt.exe"},
        {"command": clone},
    ])
    out = cli("show", "hostile-1", "--store", str(store))
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\u202e" not in out.stdout
    assert "echo \\x1b]0;owned\\x07\\x1b[2J done" in out.stdout
    assert "ls \\u202etxt.exe" in out.stdout
    assert "[REDACTED:github_token:hmac-sha256:" in out.stdout and "ghp_" not in out.stdout


def test_off_a_terminal_a_long_input_is_one_whole_line(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    _one_session(store, monkeypatch, [{"command": "x" * 1000}])
    out = cli("show", "hostile-1", "--store", str(store))
    assert out.returncode == 0, out.stderr
    (line,) = [line for line in out.stdout.splitlines() if "xxx" in line]
    assert line.endswith(" " + "x" * 1000)  # folding (three lines, then …) is for terminals: tests/test_views_tmux.py


def test_a_record_named_by_an_integrity_finding_is_marked(built):
    store, seqs = built
    finding = {"seq": 3, "kind": "payload_edited", "detail": "payload bytes do not match the row hash"}
    with Store(store) as s:
        s.append([Append("attest-integrity-break-3-payload_edited", "attestation",
                         canonical_json({"schema": 1, "type": "integrity_break", "finding": finding}))])
    _, _, _, items = sessions.timeline(store, "8a1c2f0e")
    marked = [(i.seq, [f["kind"] for f in i.findings]) for i in items if i.findings]
    assert marked == [(3, ["payload_edited"])]
    out = cli("show", "8a1c2f0e", "--store", str(store))
    (line,) = [x for x in out.stdout.splitlines() if "#3 " in x]
    assert "!payload_edited" in line


def read_lines(proc, n: int, deadline_s: float = 60.0) -> list[dict]:
    """n JSON lines from the follower, failing (not hanging) if they do not come."""
    out, buf = [], b""
    fd = proc.stdout.fileno()
    end = time.monotonic() + deadline_s
    while len(out) < n:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            raise AssertionError(f"the follower printed {len(out)} of {n} lines: {out}")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise AssertionError(f"the follower ended: {proc.stderr.read()}")
        buf += chunk
        while b"\n" in buf and len(out) < n:
            line, buf = buf.split(b"\n", 1)
            out.append(json.loads(line))
    return out


def test_show_follow_prints_new_lines_and_the_end_of_an_open_call(built, monkeypatch):
    store, seqs = built
    with subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "show", "vs-5d6e7f80", "-f", "--json",
                           "--store", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            first = read_lines(proc, 5)
            assert [i["kind"] for i in first] == ["session_start", "prompt", "tool", "tool", "stop"]
            assert first[3]["outcome"] == "open"
            # The terminal call ends (by its call id) and a new prompt arrives.
            end = {"hookEventName": "PostToolUse", "sessionId": "vs-5d6e7f80", "tool_name": "runInTerminal",
                   "tool_input": {"command": "npm run build"}, "tool_use_id": "tool-124", "tool_response": "built",
                   "cwd": "/home/dev/web"}
            prompt = {"hookEventName": "UserPromptSubmit", "sessionId": "vs-5d6e7f80", "prompt": "and the docs",
                      "cwd": "/home/dev/web"}
            t = T0_NS + 10**12
            with Store(store) as s:
                append_at(s, [(envelope("vscode", "PostToolUse", 90, t, payload=end), t),
                              (envelope("vscode", "UserPromptSubmit", 91, t + 1, payload=prompt), t + 1)], monkeypatch)
            later = read_lines(proc, 2)
            assert [(i["kind"], i["name"], i.get("outcome")) for i in later] == [
                ("tool", "runInTerminal", "ok"), ("prompt", "UserPromptSubmit", None)]
            assert later[0]["seq"] == first[3]["seq"]  # the same call, now ended
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_a_denied_call_counts_once_as_a_denial_and_not_as_a_failure(built):
    """Copilot's denied postToolUse is both a `deny` decision and a denied call's end: it counts once."""
    import apsw

    store, _ = built
    conn = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        sid = "synth:7a19760aba04a042515e448c308c77b0"
        assert sessions._call_outcomes(conn, "copilot", sid) == {"ok": 1, "denied": 1}
        assert sessions._denials(conn, "copilot", sid) == 1
    finally:
        conn.close()


def test_a_page_of_the_newest_sessions_and_the_next_page(built):
    store, _ = built
    everything = sessions.list_sessions(store)
    newest_three = sessions.list_sessions(store, limit=3)
    assert [s.to_json() for s in newest_three] == [s.to_json() for s in everything[-3:]]
    before = min(s.last_seq for s in newest_three)
    second = sessions.list_sessions(store, limit=3, before_seq=before)
    assert [s.to_json() for s in second] == [s.to_json() for s in everything[-6:-3]]
    rest = sessions.list_sessions(store, limit=100, before_seq=min(s.last_seq for s in second))
    assert [s.to_json() for s in rest] == [s.to_json() for s in everything[:-6]]
    assert sessions.list_sessions(store, limit=0) == []
    assert [s.harness for s in sessions.list_sessions(store, limit=2, harness="cline")] == ["cline"]
    vscode_start = sessions.list_sessions(store, harness="vscode")[0].started_ns
    assert [s.harness for s in sessions.list_sessions(store, limit=10, since_ns=vscode_start)] == [
        "vscode", "cline", "openhands"]
