"""Errors that say what to do next (issue 31, item 2): `health` with no daemon prints its error once,
the records waiting in the spool with the oldest one's age, and the command that starts the recorder
for the way it is set up here. Screens in tmux at 80 and 120 columns, against golden files."""

from __future__ import annotations

import json
import os
import time

import pytest
from support import tmux
from test_views_tmux import WIDTHS, agentwatch, terminal_env
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.readers import offline


def spool_with(directory, ages_s):
    """A spool directory whose new/ holds one file per age (seconds since it was written)."""
    for sub in ("new", "tmp", "bad"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    now = time.time()
    for i, age in enumerate(ages_s):
        path = directory / "new" / f"rec-{i}"
        path.write_bytes(b'{"record_id":"r"}\n' * 8)
        os.utime(path, (now - age, now - age))


@pytest.mark.parametrize("width", WIDTHS)
def test_health_with_the_daemon_down_on_a_terminal(tmp_path, width):
    home = tmp_path / "home"
    (home / ".config/systemd/user").mkdir(parents=True)
    (home / ".config/systemd/user/agentwatch.service").write_text("[Service]\n")
    spool_with(tmp_path / "spool", [7210, 30, 5])
    env = {**terminal_env(), "HOME": str(home), "AGENTWATCH_SPOOL": "spool"}
    with tmux.Terminal(tmp_path, width=width, height=24, env=env) as term:
        screen = term.run(f"{agentwatch()} health --socket d.sock", cwd=tmp_path, exit_code=3)
    tmux.check_golden(f"health-down-{width}.txt", screen)
    assert screen.count("cannot connect to d.sock") == 1  # once, not on stderr as well
    assert "3 waiting" in screen and "oldest 2 h 0 min" in screen
    assert "systemctl --user start agentwatch" in screen


def test_health_with_the_daemon_down_into_a_pipe_and_as_json(tmp_path, monkeypatch):
    spool_with(tmp_path / "spool", [100])
    monkeypatch.setenv("AGENTWATCH_SPOOL", str(tmp_path / "spool"))
    monkeypatch.setenv("HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["health", "--socket", str(tmp_path / "d.sock")])
    reason = f"cannot connect to {tmp_path / 'd.sock'}: no daemon socket there"
    assert result.exit_code == 3
    assert result.stdout.splitlines() == [
        "status: stopped", f"reason: {reason}", "spool: 1 waiting (144 B), oldest 1 min 40 s",
        "start it: agentwatch serve (in the foreground); `agentwatch service print` sets it up to start at login"]
    assert result.stderr == f"agentwatch: {reason}\n"  # stdout went to a script: the error on stderr too
    doc = json.loads(CliRunner().invoke(app, ["health", "--json", "--socket", str(tmp_path / "d.sock")]).stdout)
    assert (doc["status"], doc["spool"]["backlog"], doc["spool_dir"]) == ("stopped", 1, str(tmp_path / "spool"))
    assert doc["start"].startswith("agentwatch serve")


def test_no_spool_yet_is_said_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SPOOL", str(tmp_path / "nowhere"))
    result = CliRunner().invoke(app, ["health", "--socket", str(tmp_path / "d.sock")])
    assert result.stdout.splitlines()[2] == f"spool: none at {tmp_path / 'nowhere'}"


@pytest.mark.parametrize("where,expected", [
    ("etc/systemd/system/agentwatch.service", "sudo systemctl start agentwatch"),
    ("home/.config/systemd/user/agentwatch.service", "systemctl --user start agentwatch"),
    ("home/Library/LaunchAgents/agentwatch.serve.plist", f"launchctl kickstart gui/{os.getuid()}/agentwatch.serve"),
    ("Library/LaunchDaemons/agentwatch.serve.plist", "sudo launchctl kickstart system/agentwatch.serve"),
    (None, "agentwatch serve"),
])  # fmt: skip
def test_the_next_step_follows_how_the_recorder_is_set_up(tmp_path, where, expected):
    (tmp_path / "home").mkdir()
    if where:
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text("")
    assert offline.start_hint(home=tmp_path / "home", system_root=tmp_path).split(" (")[0] == expected
