"""The daemon is built before it listens: the socket appears only once every part that serves a
record is up (the normalizing workers first of all), so a hook that connects the moment the
socket exists is acknowledged within its time budget instead of spooling (docs/daemon.md)."""

from __future__ import annotations

import json
import os
import time

import pytest
from support.daemon import Daemon, envelope, line
from support.hook_fakes import run_hook

from agentwatch import hookclient

# Serial (`make test` runs this file alone, after the parallel phase):
# a hook sent while the daemon starts must be acknowledged within the hook's own 250 ms
# budget, not spooled.
pytestmark = [pytest.mark.serial, pytest.mark.usefixtures("reap_daemons")]

# A Claude Code PreToolUse payload (the fields its hooks documentation lists for that event).
PAYLOAD = json.dumps({"session_id": "startup-session", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                      "hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "true"}}).encode()


def test_a_hook_sent_the_moment_the_socket_appears_is_acknowledged_not_spooled(tmp_path):
    d = Daemon(tmp_path, verify_interval=0, extra_args=["--normalize-workers", "2"])
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "AGENTWATCH_SOCKET": str(d.socket),
           "AGENTWATCH_SPOOL": str(d.spool)}
    env.pop("AGENTWATCH_HOOK_TIMEOUT_MS", None)  # the hook's own budget
    d.spawn()
    try:
        deadline = time.monotonic() + 60
        while not d.socket.exists():
            assert d.proc.poll() is None, d.output()
            assert time.monotonic() < deadline, "the socket never appeared"
            time.sleep(0.0005)
        # The first frame, sent at once with the hook's own send and budget: acknowledged.
        seq = hookclient.send(str(d.socket), line(envelope("first")), "first", hookclient.DEFAULT_TIMEOUT_MS)
        done = run_hook("claude-code", stdin=PAYLOAD, env=env)
        assert (done.returncode, done.stderr) == (0, b"")
    finally:
        assert d.stop() == 0
    events = d.rows("event")
    assert [r["record_id"] for r in events][0] == "first" and events[0]["seq"] == seq
    assert len(events) == 2
    assert events[1]["payload"]["client"]["delivery"] == "socket", events[1]["payload"]
    assert not list((d.spool / "new").glob("*"))


def test_sigterm_the_moment_the_socket_appears_stops_the_daemon_cleanly(tmp_path):
    """The signal handlers are in place before the socket exists: a stop asked for at once is a
    clean stop (exit 0, the stop attestation written), not a process killed mid-start."""
    d = Daemon(tmp_path, verify_interval=0)
    d.spawn()
    deadline = time.monotonic() + 60
    while not d.socket.exists():
        assert d.proc.poll() is None, d.output()
        assert time.monotonic() < deadline, "the socket never appeared"
        time.sleep(0.0005)
    assert d.stop() == 0, d.output()
    assert [r["payload"]["type"] for r in d.rows("attestation")] == ["start", "stop"]
    assert not d.socket.exists()
    assert [p.name for p in d.socket.parent.iterdir() if p.name.startswith(".aw")] == []
