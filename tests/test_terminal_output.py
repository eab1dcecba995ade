"""Recorded content cannot take over the reviewer's terminal (issue 13, class 6).

An agent's output may hold escape sequences: cursor movement, line erase, a
window title, an OSC 8 link. `tail`, `sql` and every command printing recorded
content show them as visible text on a terminal (readers/render.neutralize);
`--json` keeps the exact value.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.daemon import wait_for

from agentwatch.cli.render import neutralize
from agentwatch.record.importer import import_lines

TITLE = "\x1b]0;pwned\x07"
LINK = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
ERASE = "\x1b[2K\x1b[1A\r"
C1 = "\x9b2J\x9d0;t\x9c"
BIDI = "\u202eexe.txt"
HOSTILE = {"tool": "Bash" + TITLE, "session": "s" + ERASE + "ok", "command": LINK + C1 + BIDI}
# What a terminal may receive from us: text, CR LF line ends, and rich's own colours (SGR).
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def hostile_store(tmp_path, store_path):
    payload = {"hook_event_name": "PreToolUse", "session_id": HOSTILE["session"], "tool_name": HOSTILE["tool"],
               "tool_input": {"command": HOSTILE["command"]}}  # fmt: skip
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(payload) + "\n")
    assert import_lines(store_path, str(source), harness="claude-code").rejected == []
    return store_path


def on_a_terminal(*args: str) -> str:
    """Run the CLI with stdout and stderr on a pseudo-terminal; everything the terminal received."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "400"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", *args], stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=follower, env=env)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 1 << 16)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(60) == 0, b"".join(chunks)
    return b"".join(chunks).decode("utf-8")


def leftovers(screen: str) -> list[str]:
    """Control characters left once our own colours and line ends are taken out."""
    plain = SGR.sub("", screen).replace("\r\r\n", "\n").replace("\r\n", "\n")  # csv ends lines CR LF too
    return [f"{ord(c):#x}" for c in plain if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]  # fmt: skip


@pytest.mark.parametrize("command", [
    ("tail",),
    ("sql", "SELECT tool_name, session_id, json_extract(payload, '$.tool.input.command') AS cmd FROM events"),
    ("sql", "--csv", "SELECT tool_name, session_id, json_extract(payload, '$.tool.input.command') FROM events"),
], ids=["tail", "sql", "sql --csv"])  # fmt: skip
def test_escape_sequences_in_recorded_content_reach_the_terminal_as_visible_text(hostile_store, command):
    screen = on_a_terminal(*command, "--store", str(hostile_store))
    assert leftovers(screen) == []
    assert "Bash\\x1b]0;pwne" in screen  # what the agent tried stays readable (tail shortens the column)


def test_json_output_keeps_the_exact_value(hostile_store):
    screen = on_a_terminal("sql", "--json", "--store", str(hostile_store),
                           "SELECT tool_name, session_id, json_extract(payload, '$.tool.input.command') AS cmd "
                           "FROM events")  # fmt: skip
    (row,) = json.loads(screen)
    assert row == {"tool_name": HOSTILE["tool"], "session_id": HOSTILE["session"], "cmd": HOSTILE["command"]}


@pytest.mark.parametrize(("text", "keep_lines", "shown"), [
    ("plain text, é, 雪", False, "plain text, é, 雪"),
    (TITLE, False, "\\x1b]0;pwned\\x07"),
    (LINK, False, "\\x1b]8;;https://evil.example/\\x1b\\click me\\x1b]8;;\\x1b\\"),
    (ERASE, False, "\\x1b[2K\\x1b[1A\\r"),
    (C1, False, "\\x9b2J\\x9d0;t\\x9c"),
    (BIDI, False, "\\u202eexe.txt"),
    ("a\nb\tc", False, "a\\nb\\tc"),
    ("a\nb\tc\x08", True, "a\nb\tc\\x08"),
    ("x\u2028y", False, "x\\u2028y"),
    ("lone \ud800 surrogate", False, "lone \\ud800 surrogate"),
])  # fmt: skip
def test_neutralize(text, keep_lines, shown):
    assert neutralize(text, keep_lines=keep_lines) == shown


UNSAFE = {*range(0x20), *range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
          0x2028, 0x2029, *range(0xD800, 0xE000)}  # fmt: skip


@example("\x1b[31mred\x1b[0m\x9b")
@given(st.text())
def test_neutralized_text_holds_no_control_character_and_plain_text_is_unchanged(text):
    shown = neutralize(text)
    assert not any(ord(c) in UNSAFE for c in shown)
    if not any(ord(c) in UNSAFE for c in text):
        assert shown == text


def _tmux(sock, *args: str) -> str:
    return subprocess.run(["tmux", "-S", str(sock), *args], capture_output=True, text=True, check=True,
                          timeout=30).stdout  # fmt: skip


def test_what_a_person_sees_in_tmux(tmp_path, hostile_store):
    """tmux renders the output: the window title stays, and the attempt shows as text."""
    if not shutil.which("tmux"):
        if os.environ.get("CI"):
            pytest.fail("CI needs tmux for this test")
        pytest.skip("tmux not installed")
    sock = tmp_path / "tmux.sock"
    done = tmp_path / "done"
    command = (f"{shlex.quote(sys.executable)} -m agentwatch.cli tail --store {shlex.quote(str(hostile_store))}; "
               f"touch {shlex.quote(str(done))}; sleep 60")  # fmt: skip
    _tmux(sock, "new-session", "-d", "-s", "quiet", "sleep 60")  # a pane whose title nothing sets
    try:
        _tmux(sock, "new-session", "-d", "-x", "200", "-y", "20", "-s", "aw", command)
        wait_for(done.exists, "tail to finish in tmux")
        screen = _tmux(sock, "capture-pane", "-p", "-t", "aw")
        title = _tmux(sock, "display-message", "-p", "-t", "quiet", "#{pane_title}")
        after = _tmux(sock, "display-message", "-p", "-t", "aw", "#{pane_title}")
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=30)
    assert (after, "pwned" in after) == (title, False)
    assert "Bash\\x1b]0;pwne" in screen and "s\\x1b[2K\\x1" in screen
