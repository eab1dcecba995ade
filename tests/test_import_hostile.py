"""`import` against hostile input (issue 13, class 6): lines are capped as on the wire, an endless
line costs no memory, and a record's client facts are the importer's own."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import time
import tracemalloc

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.record import importer
from agentwatch.store import db

MAX = 1 << 20  # the wire protocol's line limit (docs/protocol.md)


def stop(n: int) -> bytes:
    return json.dumps({"hook_event_name": "Stop", "session_id": "s", "n": n}).encode()


def exactly(size: int) -> bytes:
    """A valid payload line of exactly `size` bytes."""
    head = b'{"hook_event_name":"Stop","session_id":"s","pad":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def rows(store) -> list[tuple[str, dict]]:
    conn = db.open_reader(store)
    try:
        return [(kind, json.loads(p)) for kind, p in conn.execute("SELECT kind, payload FROM records ORDER BY seq")]
    finally:
        conn.close()


def test_a_line_past_1_mib_is_a_numbered_gap_and_the_good_lines_go_on(tmp_path, store_path):
    long_line = b"y" * (MAX + 1)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join([stop(1), long_line, exactly(MAX), stop(2)]) + b"\r\n")
    result = CliRunner().invoke(app, ["import", "--store", str(store_path), str(source), "--harness", "claude-code"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "agentwatch: signed checkpoint 4",  # no daemon serves the store: import covers its rows itself
        f"agentwatch: line 2: line longer than {MAX} bytes ({MAX + 1} bytes); skipped unread",
        f"3 stored, 0 duplicates, 1 rejected (of 4 lines) into {store_path}",
    ]
    stored = rows(store_path)
    assert [kind for kind, _ in stored] == ["event", "gap", "event", "event"]
    gap = stored[1][1]
    assert (gap["reason"], gap["line"], gap["bytes"], gap["sha256"]) == (
        "import_rejected_line", 2, MAX + 1, "sha256:" + hashlib.sha256(long_line).hexdigest())
    assert stored[2][1]["raw"]["pad"] == "x" * (MAX - 52)


class Zeros(io.RawIOBase):
    """`size` NUL bytes with no newline, then `tail`: /dev/zero, made finite."""

    def __init__(self, size: int, tail: bytes):
        self.left = size
        self.tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.left:
            n = min(len(buffer), self.left)
            buffer[:n] = bytes(n)
            self.left -= n
            return n
        n = min(len(buffer), len(self.tail))
        buffer[:n] = self.tail[:n]
        self.tail = self.tail[n:]
        return n


def test_an_endless_line_is_read_in_bounded_pieces():
    size = 256 << 20
    stream = io.BufferedReader(Zeros(size, b"\n" + stop(1) + b"\n"))
    tracemalloc.start()
    try:
        lines = list(importer._lines(stream, [0]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    digest = hashlib.sha256()
    for _ in range(size >> 20):
        digest.update(bytes(1 << 20))
    assert lines == [(1, importer.TooLong(size, "sha256:" + digest.hexdigest())), (2, stop(1))]
    assert peak < 8 * MAX  # a few pieces of 1 MiB, never the 256 MiB line


def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) << 10
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _read_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="watches the process through /proc")
def test_importing_dev_zero_does_not_grow(tmp_path, store_path):
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "import", "--store", str(store_path), "/dev/zero"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while _read_bytes(proc.pid) < (768 << 20) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None  # still reading the one endless line
        peak = _status(proc.pid, "VmHWM")
    finally:
        proc.kill()
        proc.wait()
    assert peak < 256 << 20  # the interpreter and its libraries, and a few pieces; not 768 MiB of line


def test_an_imported_records_client_facts_are_the_importers_own(tmp_path, store_path):
    forged = {"record_id": "forged-1", "harness": "claude-code", "payload": {"hook_event_name": "Stop"},
              "delivery": "socket", "uid": 0, "pid": 1, "ppid": 4242, "ts_observed_ns": 7}  # fmt: skip
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(forged) + "\n" + stop(1).decode() + "\n")
    before = time.time_ns()
    assert importer.import_lines(store_path, str(source), harness="claude-code").rejected == []
    after = time.time_ns()
    (_, first), (_, second) = rows(store_path)
    client = first["client"]
    assert before <= client.pop("ts_observed_ns") <= after
    assert client == {"delivery": "import", "uid": os.geteuid(), "pid": os.getpid()}
    assert first["client_claimed"] == {"delivery": "socket", "uid": 0, "pid": 1, "ppid": 4242, "ts_observed_ns": 7}
    assert (second["client"]["delivery"], "client_claimed" in second) == ("import", False)
