"""What a person sees in a real terminal: tmux at 80 and 120 columns, the screen compared
with golden files in tests/goldens/ (`make goldens` rewrites them; review the diff).

The stores and health documents behind the screens are fixed (support/sessions.py pins
every clock; support/fakehealth.py answers with a chosen document), so a screen is the
same on every run. A live daemon is checked for what cannot be fixed: that its health
fits one 80x24 screen with the state in view.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from support import sessions as fixture_sessions
from support import tmux
from support.fakehealth import FakeHealth, document

pytestmark = pytest.mark.skipif(not tmux.available() and not os.environ.get("CI"),
                                reason="tmux is not installed (the Makefile installs it for `make test`)")

WIDTHS = (80, 120)
BOX = set("─│╭╮╰╯┬┴┼├┤━┃┏┓┗┛")


def terminal_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("NO_COLOR", None)
    return env


def agentwatch() -> str:
    return f"{sys.executable} -m agentwatch.cli"


@pytest.fixture(scope="module")
def session_store(tmp_path_factory):
    directory = tmp_path_factory.mktemp("views")
    with pytest.MonkeyPatch.context() as mp:
        fixture_sessions.build(directory / "store.db", mp)
    return directory


DEGRADED = document(
    status="degraded",
    reasons=["chain verification found payload_edited at seq 5: payload bytes do not match the row hash",
             "2 spool file(s) quarantined in /home/dev/.local/share/agentwatch/spool/bad"],
    spool={"backlog": 12, "backlog_bytes": 40960, "oldest_age_s": 42.0, "tmp": 0, "bad": 2, "inflight": 0},
    sweeper={"state": "broken", "verified_seq": 4, "lag_rows": 182_340,
             "findings": [{"seq": 5, "kind": "payload_edited", "detail": "payload bytes do not match the row hash"}]},
    ship={"state": "backoff", "lag_rows": 120, "lag_s": 3.2, "last_error": "connection refused"},
)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name,doc,code", [("recording", document(), 0), ("degraded", DEGRADED, 1)])
def test_health_screen(tmp_path, width, name, doc, code):
    with FakeHealth(tmp_path / "d.sock", doc), tmux.Terminal(tmp_path, width=width, height=24,
                                                               env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} health --socket d.sock", exit_code=code)
    tmux.check_golden(f"health-{name}-{width}.txt", screen)
    assert screen.splitlines()[0] == f"agentwatch {name.upper()}"
    assert len(screen.splitlines()) <= 23


@pytest.mark.parametrize("width", WIDTHS)
def test_reconcile_screen(session_store, tmp_path, width):
    with tmux.Terminal(tmp_path, width=width, height=60, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} reconcile --store store.db", cwd=session_store, exit_code=0)
    tmux.check_golden(f"reconcile-{width}.txt", screen)


@pytest.mark.parametrize("width", WIDTHS)
def test_sessions_screen(session_store, tmp_path, width):
    with tmux.Terminal(tmp_path, width=width, height=40, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} sessions --store store.db", cwd=session_store, exit_code=0)
    tmux.check_golden(f"sessions-{width}.txt", screen)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("session", ["8a1c2f0e", "4b7e1c2a"])  # claude-code, cursor
def test_show_screen(session_store, tmp_path, width, session):
    with tmux.Terminal(tmp_path, width=width, height=40, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} show {session} --store store.db", cwd=session_store, exit_code=0)
    tmux.check_golden(f"show-{session}-{width}.txt", screen)
    assert max(len(line) for line in screen.splitlines()) <= width


def test_a_long_input_folds_to_three_lines_on_a_terminal(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    payload = {"session_id": "long-1", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "echo " + "0123456789" * 60}, "tool_use_id": "toolu_long"}
    with fixture_sessions.Store(store) as s:
        fixture_sessions.append_at(s, [(fixture_sessions.envelope("claude-code", "PreToolUse", 0,
                                                                  fixture_sessions.T0_NS, payload=payload),
                                        fixture_sessions.T0_NS)], monkeypatch)
    with tmux.Terminal(tmp_path, width=80, height=24, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} show long-1 --store store.db", cwd=tmp_path, exit_code=0)
    lines = screen.splitlines()
    assert len(lines) == 4  # the header, then the call on three lines
    assert lines[3].endswith("…") and all(len(line) <= 80 for line in lines)


@pytest.mark.parametrize("command", ["health --socket d.sock", "reconcile --store store.db",
                                     "sessions --store store.db", "show 8a1c2f0e --store store.db"])
def test_off_a_terminal_the_output_is_plain(session_store, tmp_path, command):
    shutil.copy(session_store / "store.db", tmp_path / "store.db")
    with FakeHealth(tmp_path / "d.sock", document()), tmux.Terminal(tmp_path, width=80, height=40,
                                                                      env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} {command} | cat", cwd=tmp_path)
    assert screen.strip() and not set(screen) & BOX


def test_a_live_daemons_health_fits_one_screen(tmp_path):
    from support.daemon import Daemon, append_many

    d = Daemon(tmp_path)
    d.start()
    try:
        append_many(d, 20)
        with tmux.Terminal(tmp_path, width=80, height=24, env=terminal_env()) as term:
            screen = term.run(f"{agentwatch()} health --socket {d.socket}", exit_code=0)
    finally:
        assert d.stop() == 0
    lines = screen.splitlines()
    assert lines[0] == "agentwatch RECORDING"
    assert len(lines) <= 23 and all(len(line) <= 80 for line in lines)  # the prompt line stays on the screen
    labels = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert [label for label in labels if label] == ["daemon", "store", "writer", "last commit", "sweeper", "findings",
                                                    "spool", "evidence", "WAL", "redaction", "ship", "connections"]


def test_the_worst_health_still_fits_one_screen(tmp_path):
    """Many long reasons, a long store path and a shipping error: still 80x24, the state on top."""
    reason = "the oldest spool file waits for 912 s (over 300 s): the drain is stuck " * 3
    doc = document(status="degraded", reasons=[reason] * 9,
                   store="/home/a-rather-long-user-name/.local/share/agentwatch/stores/projects/store.db",
                   ship={"state": "backoff", "lag_rows": 120, "lag_s": 3.2,
                         "last_error": "could not connect to server: Connection refused (fleet.example.internal:5432)"})
    with FakeHealth(tmp_path / "d.sock", doc), tmux.Terminal(tmp_path, width=80, height=24,
                                                               env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} health --socket d.sock", exit_code=1)
    lines = screen.splitlines()
    assert lines[0] == "agentwatch DEGRADED" and len(lines) <= 23
    assert "│ store       │ …" in screen and "store.db, head seq 182,344" in screen
    assert "… and 6 more (--verbose or --json)" in screen
