"""Helpers for the hook client tests: run the client as a real process, fake a daemon."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import agentwatch

HOOK = Path(agentwatch.__file__).resolve().parent / "hook.py"


def hook_cmd(*args: str) -> list[str]:
    """The command line `install` writes: the interpreter, isolated, on the file."""
    return [sys.executable, "-I", "-S", str(HOOK), *args]


def run_hook(*args: str, stdin: bytes = b"", env: dict | None = None, timeout: float = 30):
    return subprocess.run(hook_cmd(*args), input=stdin, capture_output=True, env=env, timeout=timeout)


def ack(line: bytes, seq: int) -> bytes:
    rid = json.loads(line)["record_id"]
    return json.dumps({"ok": True, "seq": seq, "record_id": rid, "duplicate": False}).encode() + b"\n"


class FakeDaemon:
    """A Unix socket server on threads: records every line, answers with `reply(line, seq)`.

    `reply` returns the bytes to send (None: send nothing and hold the
    connection open until the client goes away). Default: a valid ack.
    """

    def __init__(self, path: Path, reply=ack):
        self.path = Path(path)
        self.reply = reply
        self.lines: list[bytes] = []
        self._seq = 0
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def __enter__(self) -> "FakeDaemon":
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        sock.listen(256)
        sock.settimeout(0.05)
        self._sock = sock
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._sock is not None:
            self._sock.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            reader = conn.makefile("rb")
            try:
                for line in reader:
                    with self._lock:
                        self.lines.append(line)
                        self._seq += 1
                        seq = self._seq
                    answer = self.reply(line, seq)
                    if answer is None:
                        continue  # say nothing; the next read sees the client leave
                    conn.sendall(answer)
            except OSError:
                pass


class SocketDir:
    """Context manager: a private directory with a short path (AF_UNIX paths stop at 107 bytes,
    and pytest's tmp_path under xdist is 11 bytes longer), removed afterwards."""

    def __enter__(self) -> Path:
        self.dir = Path(tempfile.mkdtemp(prefix="aw-"))
        return self.dir

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
