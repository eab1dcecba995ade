"""The smaller items of issue 31 (item 10): a misspelt harness is an error, an empty session id says
so, and counts of one are singular."""

from __future__ import annotations

import pytest
from support import sessions as fixture_sessions
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.readers.health_view import _writer


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("smaller") / "store.db"
    with pytest.MonkeyPatch.context() as mp:
        fixture_sessions.build(path, mp, harnesses=["claude-code"])
    return str(path)


def run(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_an_unknown_harness_is_an_error_not_an_empty_table(store):
    code, out, err = run("sessions", "--store", store, "--harness", "claude")
    assert (code, out) == (2, "")
    assert err == ("agentwatch: no sessions of harness 'claude', which agentwatch does not know (one of: claude-code, "
                   "codex, gemini-cli, cursor, copilot, vscode, cline, openhands)\n")
    assert run("sessions", "--store", store, "--harness", "codex", "--json")[:2] == (0, "[]\n")


def test_an_empty_session_id_says_so(store):
    assert run("show", "--store", store, "") == (
        2, "", "agentwatch: an empty session id: give a session id or a prefix of one (see `agentwatch sessions`)\n")


@pytest.mark.parametrize("rows,commits,said", [(5, 1, "5 rows in 1 commit"), (1, 1, "1 row in 1 commit"),
                                               (2, 2, "2 rows in 2 commits")])  # fmt: skip
def test_counts_of_one_are_singular(rows, commits, said):
    assert _writer({"state": "ok", "rows_committed": rows, "commits": commits, "queued": 0}).value == f"ok, {said} since start, 0 queued"


def test_the_hook_typed_at_a_terminal_records_nothing_and_says_how_it_is_run(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    env = {**os.environ, "AGENTWATCH_SOCKET": str(tmp_path / "d.sock"), "AGENTWATCH_SPOOL": str(tmp_path / "spool")}
    try:
        proc = subprocess.run([sys.executable, "-m", "agentwatch.hook", "claude-code"], stdin=follower,
                              stdout=subprocess.PIPE, stderr=follower, env=env, timeout=30)  # fmt: skip
        os.close(follower)
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"stdin is a terminal, so this is a person, not a harness: nothing recorded." in said
    assert not (tmp_path / "spool").exists()  # no daemon, and nothing spooled either
    # A harness's call, with its input piped, is recorded (spooled here, no daemon answering).
    piped = subprocess.run([sys.executable, "-m", "agentwatch.hook", "claude-code"], input=b'{"session_id":"s"}',
                           capture_output=True, env=env, timeout=30)  # fmt: skip
    assert piped.returncode == 0 and len(list((tmp_path / "spool" / "new").iterdir())) == 1
