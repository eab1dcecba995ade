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


# -- install --list (issue 31, item 3) -------------------------------------------------------------


def listing_home(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "hooks.json").write_text('{"hooks": {"stop": [')  # cut short: malformed
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{"hooks": {}}')
    project.mkdir()
    return home, project


@pytest.mark.parametrize("width", WIDTHS)
def test_install_list_is_one_line_per_harness_and_scope_at_80_columns(tmp_path, width):
    home, project = listing_home(tmp_path)
    env = {**terminal_env(), "HOME": str(home)}
    with tmux.Terminal(tmp_path, width=width, height=40, env=env) as term:
        screen = term.run(f"{agentwatch()} install --list", cwd=project, exit_code=1)
    tmux.check_golden(f"install-list-{width}.txt", screen)
    lines = screen.splitlines()
    assert max(len(line) for line in lines) <= width and not set(screen) & set("─│╭╮╰╯┬┴┼")
    assert len(lines) == 1 + 16 + (3 if width == 80 else 2) + 2  # header, 16 rows, the reason, the note


def test_install_list_into_a_pipe_is_plain_and_a_malformed_config_exits_1_with_the_reason(tmp_path, monkeypatch):
    home, project = listing_home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["install", "--list"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["harness", "scope", "state", "file"]
    assert [line.split()[:3] for line in lines if line.startswith("cursor ")] == [
        ["cursor", "user", "error"], ["cursor", "project", "not"]]
    assert result.stderr.startswith(f"agentwatch: cursor (user): {home}/.cursor/hooks.json: is not valid JSON")
    assert json.loads(CliRunner().invoke(app, ["install", "--list", "--json"]).stdout)[6]["state"] == "error"


def test_install_list_with_every_config_readable_exits_0(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["install", "--list"]).exit_code == 0
