"""`show` says why (issue 31, item 7): a failed or refused call's error text, a denial's reason and a
notification's text are on its line; a tool name the column cuts is printed whole (tmux, 80 and 120
columns); long summaries fold at word boundaries."""

from __future__ import annotations

import pytest
from support import sessions as fixture_sessions
from support import tmux
from test_views_tmux import WIDTHS, agentwatch, terminal_env

from agentwatch.readers.sessions import _event_summary

TOOL = "mcp__github__create_pull_request"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_tool_name_is_printed_whole(tmp_path, monkeypatch, width):
    payload = {"session_id": "mcp-1", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": TOOL,
               "tool_input": {"title": "Fix the failing cart test and the flaky checkout test"},
               "tool_use_id": "toolu_mcp"}  # fmt: skip
    with fixture_sessions.Store(tmp_path / "store.db") as s:
        fixture_sessions.append_at(s, [(fixture_sessions.envelope("claude-code", "PreToolUse", 0, fixture_sessions.T0_NS,
                                                                  payload=payload), fixture_sessions.T0_NS)], monkeypatch)  # fmt: skip
    with tmux.Terminal(tmp_path, width=width, height=24, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} show mcp-1 --store store.db", cwd=tmp_path, exit_code=0)
    lines = screen.splitlines()
    assert TOOL in "".join(line[50:] for line in lines[1:])  # whole, folded under itself when wider than the column
    assert max(len(line) for line in lines) <= width


def test_a_denials_reason_and_a_notifications_text_are_shown():
    denied = {"decision": {"value": "deny", "reason": "writes outside the project"},
              "tool": {"name": "Write", "input": {"file_path": "/etc/hosts"}}}
    assert _event_summary("permission", denied) == "deny Write /etc/hosts (reason: writes outside the project)"
    note = {"raw": {"hook_event_name": "Notification", "message": "Claude needs your permission to use Bash"}}
    assert _event_summary("notification", note) == "Claude needs your permission to use Bash"
    assert _event_summary("notification", {"raw": {}}) == ""
