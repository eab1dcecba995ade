"""Progress bars: drawn on stderr when it is a terminal, never with --json, never off a terminal.

stderr is a pseudo-terminal the test reads; stdout is a pipe, as when the output goes to a file.
"""

from __future__ import annotations

import errno
import json
import os
import pty
import subprocess
import sys
import tempfile

import pytest

from agentwatch.record import importer


def run_with_tty_stderr(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, what was drawn on the terminal). stdout goes to a file, so a large
    output never waits on a pipe while the terminal is read."""
    master, slave = pty.openpty()
    out_file = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", *args], stdout=out_file,
                                stderr=slave, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "100"})
    finally:
        os.close(slave)
    drawn = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError as exc:  # the terminal's other end closed: the process is done with it
                if exc.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
    code = proc.wait(timeout=120)
    with out_file:
        out_file.seek(0)
        out = out_file.read().decode()
    return code, out, drawn.decode("utf-8", "replace")


@pytest.fixture
def lines_file(tmp_path):
    path = tmp_path / "events.jsonl"
    rows = [{"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash",
             "tool_input": {"command": f"echo {i}"}} for i in range(300)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_reports_progress_by_bytes_up_to_the_files_size(tmp_path, lines_file):
    seen = []
    report = importer.import_lines(tmp_path / "s.db", str(lines_file), harness="claude-code", batch_size=100,
                                   progress=lambda done, total: seen.append((done, total)))
    size = lines_file.stat().st_size
    assert report.stored == 300
    assert [total for _, total in seen] == [size] * 4  # three full batches, then the (empty) last flush
    assert seen[-1][0] == size and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_bars_go_to_a_terminal_and_never_with_json(tmp_path, lines_file):
    store = str(tmp_path / "s.db")
    code, out, drawn = run_with_tty_stderr("import", str(lines_file), "--store", store, "--harness", "claude-code",
                                           "--batch-size", "50")
    assert code == 0 and "importing" in drawn
    code, out, drawn = run_with_tty_stderr("import", str(lines_file), "--store", store, "--json")
    assert code == 0 and json.loads(out)["duplicates"] == 0 and "importing" not in drawn
    for args, label in ((("verify", "--full"), "verifying"), (("reconcile",), "verifying the chain"),
                        (("tail", "--from", "1"), "catching up")):
        code, out, drawn = run_with_tty_stderr(*args, "--store", store)
        assert code == 0 and label in drawn, (args, drawn)
        assert "\x1b" not in out  # the data on stdout stays clean
        code, out, drawn = run_with_tty_stderr(*args, "--store", store, "--json")
        assert code == 0 and label not in drawn, (args, drawn)
