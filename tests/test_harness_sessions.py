"""A realistic session per harness, run through the hook command `agentwatch install` wrote.

Each session (tests/fixtures/sessions/<harness>.json) is a sequence of hook payloads built from
the harness's own source or documentation, each step naming the file it follows: a start, a
prompt, tool calls of which one fails and one is denied where the harness can report it, a
subagent or a compaction where the harness has them, and the end. The test installs agentwatch
for the harness (its CLI on PATH is a stand-in that prints a version that has every event), runs
each step's payload through the installed command for that step's event the way the harness
runs it (`/bin/sh -c COMMAND`; Cline: the hook file itself), lets the client spool (no daemon),
stores the spooled records in step order in a store of the test's own, and then checks the
`events` and `tool_calls` views exactly. A step's `fill` sets a payload field to that many
characters (a Write over 1 MiB: the client cuts it, the call still pairs). A step's `event` is the
config entry the harness runs;
its `name`, when given, the event name the payload carries (VS Code runs the `subagentStart` entry
for its `SubagentStart`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.record import normalize
from agentwatch.store.append import Store

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
# <harness>.json is the harness's own session; <harness>--<variant>.json another one through
# the same install (another runtime, or another harness running that config).
FILES = sorted(p.stem for p in SESSIONS.glob("*.json"))
HARNESSES = [name for name in FILES if "--" not in name]
PROGRAMS = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini", "cursor": "cursor",
            "copilot": "copilot", "cline": "cline"}
SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "taskId")
MS = 1_000_000


def load(name: str) -> dict:
    return json.loads((SESSIONS / f"{name}.json").read_text(encoding="utf-8"))


def config_file(home: Path, project: Path, harness: str) -> Path:
    scope_file = {
        "claude-code": home / ".claude" / "settings.json",
        "codex": home / ".codex" / "hooks.json",
        "gemini-cli": home / ".gemini" / "settings.json",
        "cursor": home / ".cursor" / "hooks.json",
        "copilot": home / ".copilot" / "hooks" / "agentwatch.json",
        "vscode": home / ".copilot" / "hooks" / "agentwatch.json",
        "cline": home / "Documents" / "Cline" / "Hooks",
        "openhands": project / ".openhands" / "hooks.json",
    }
    return scope_file[harness]


def commands(path: Path, harness: str) -> dict[str, list[str]]:
    """{event: argv the harness runs}, read from the written config by this test's own walk."""
    if harness == "cline":
        return {p.name: [str(p)] for p in path.iterdir() if "." not in p.name}
    out: dict[str, list[str]] = {}
    for event, entries in json.loads(path.read_text())["hooks"].items():
        handlers = [h for e in entries for h in (e["hooks"] if "hooks" in e else [e])]
        [command] = [h["command"] for h in handlers if "agentwatch/hook.py" in h["command"]]
        out[event] = ["/bin/sh", "-c", command]
    return out


@pytest.fixture
def installed(isolated_env, tmp_path, monkeypatch):
    home = Path(isolated_env)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "user-dirs.dirs"
    config.write_text('XDG_DOCUMENTS_DIR="$HOME/Documents"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")

    def install(harness: str, version_output: str | None) -> Path:
        if version_output is not None:
            program = bin_dir / PROGRAMS[harness]
            program.write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(version_output)}\n")
            program.chmod(0o755)
        result = CliRunner().invoke(app, ["install", harness])
        assert result.exit_code == 0, result.output
        return config_file(home, project, harness)

    return install


def filled(step: dict) -> dict:
    """The step's payload with each `fill` path ("tool_input.content") set to that many characters of
    a file's text: how a session carries a Write over 1 MiB without storing it in the fixture."""
    payload = json.loads(json.dumps(step["payload"]))
    for dotted, chars in step.get("fill", {}).items():
        *parents, leaf = dotted.split(".")
        target = payload
        for key in parents:
            target = target[key]
        line = "export const catalogue = [{ sku: 'SKU-000001', name: 'Espresso cup, é' }];\n"
        target[leaf] = (line * (chars // len(line) + 1))[:chars]
    return payload


def run_session(session: dict, harness: str, path: Path, store: Store, spool: Path) -> list[dict]:
    """Each step through its installed command; returns the spooled envelopes, stored in step order."""
    argvs = commands(path, harness)
    env = dict(os.environ, AGENTWATCH_SPOOL=str(spool), AGENTWATCH_SOCKET=str(spool / "no-daemon.sock"))
    seen: set[str] = set()
    envelopes = []
    for step in session["steps"]:
        done = subprocess.run(argvs[step["event"]], input=json.dumps(filled(step)).encode(), env=env,
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and done.stderr == b"", (step["event"], done.stderr)
        [new] = [p for p in (spool / "new").iterdir() if p.name not in seen]
        seen.add(new.name)
        envelope = json.loads(new.read_bytes())
        envelopes.append(envelope)
        store.append([normalize.to_append(envelope)])
    return envelopes


def rows(store: Store, sql: str) -> list[dict]:
    cursor = store.conn.execute(sql)
    names = [d[0] for d in cursor.getdescription()]
    return [dict(zip(names, row)) for row in cursor]


@pytest.mark.parametrize("name", FILES)
def test_a_realistic_session_through_the_installed_command(name, installed, store_path, tmp_path):
    session = load(name)
    harness = session["harness"]
    path = installed(harness, session.get("version_output"))
    expect = session["expect"]
    steps = session["steps"]
    with Store(store_path) as store:
        envelopes = run_session(session, harness, path, store, tmp_path / "spool")
        events = rows(store, "SELECT seq, record_id, harness, session_id, event_name, event_kind, payload "
                             "FROM events ORDER BY seq")
        calls = rows(store, "SELECT * FROM tool_calls ORDER BY first_seq")

    # events: one per step, in order, named by the real sender, with the config it came through
    first = steps[0]["payload"]
    session_id = next(first[k] for k in SESSION_KEYS if k in first)
    assert [(e["seq"], e["event_name"], e["event_kind"], e["harness"], e["session_id"]) for e in events] == [
        (n, step.get("name", step["event"]), step["kind"], expect["sender"], session_id)
        for n, step in enumerate(steps, 1)
    ]
    assert [e["record_id"] for e in events] == [env["record_id"] for env in envelopes]
    # a step over 1 MiB arrived cut field by field, marked, never as unparseable text
    assert [bool(env.get("cut_fields")) for env in envelopes] == ["fill" in step for step in steps]
    assert all("payload_error" not in json.loads(e["payload"]) for e in events)
    word = "copilot" if harness == "vscode" else harness
    via = {"harness": word, "config": str(path)}
    assert [json.loads(e["payload"])["via"] for e in events] == [via] * len(steps)

    # tool_calls: every call with its true outcome, both records, and its duration
    observed = {e["seq"]: json.loads(e["payload"])["client"]["ts_observed_ns"] for e in events}
    record_ids = {e["seq"]: e["record_id"] for e in events}
    assert len(calls) == len(expect["tool_calls"])
    for call, want in zip(calls, expect["tool_calls"]):
        start, end = want["steps"]
        assert (call["harness"], call["session_id"], call["tool_name"], call["call_id"], call["paired_by"],
                call["outcome"]) == (expect["sender"], session_id, want["tool_name"], want.get("call_id"),
                                     want["paired_by"], want["outcome"]), want
        assert (call["start_seq"], call["end_seq"]) == (start, end)
        assert (call["start_record_id"], call["end_record_id"]) == (record_ids[start], record_ids.get(end))
        if end is None:
            assert (call["duration_ms"], call["duration_source"], call["ended_at"]) == (None, None, None)
            assert (call["age_ms"] is None) == (call["outcome"] == "interrupted")
            continue
        assert call["age_ms"] is None
        assert call["duration_source"] == want["duration_source"]
        if want["duration_source"] == "harness":
            assert call["duration_ms"] == want["duration_ms"]
        else:
            assert call["duration_ms"] == (observed[end] - observed[start]) / MS


@pytest.mark.parametrize("name", FILES)
def test_every_session_step_names_its_upstream_source(name):
    session = load(name)
    assert session["sources"]
    for step in session["steps"]:
        assert step["source"].startswith("https://") or step["source"].split(" ", 1)[0].count("/") == 1, step
