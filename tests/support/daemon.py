"""A real `agentwatch serve` subprocess on a store, socket and spool the test owns.

    from support.daemon import Daemon  # or take the `daemon` fixture (registered in conftest.py)

    def test_something(daemon):
        with daemon.client() as client:
            reply = client.append(envelope())
        assert daemon.rows("event") == [...]

The fixture starts the daemon, waits until it answers `ping`, and at teardown
stops it with SIGTERM and checks it exited 0. Rows are read through a
read-only connection, counted by kind, so the daemon's own attestation rows
never leak into a count.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterable, Optional

import pytest

from support.ingest import wait_until

DEADLINE_S = 30.0  # generous: conditions are polled, never timed


def envelope(record_id: Optional[str] = None, harness: str = "claude-code", **payload) -> dict:
    """A wire-protocol append request with a small Claude-style payload."""
    body = {"hook_event_name": "PreToolUse", "session_id": "test-session", "tool_name": "Bash", **payload}
    return {"op": "append", "v": 1, "record_id": record_id or str(uuid.uuid4()), "harness": harness, "payload": body}


def line(message: dict) -> bytes:
    return json.dumps(message).encode("utf-8") + b"\n"


def append_many(d: "Daemon", n: int, prefix: Optional[str] = None, **payload) -> list[int]:
    """n appends pipelined over one connection (record ids `prefix-i`, else random); the acked seqs."""
    with d.client() as client:
        client.send(b"".join(line(envelope(f"{prefix}-{i}" if prefix else None, **payload)) for i in range(n)))
        replies = [client.reply() for _ in range(n)]
    assert [r["ok"] for r in replies] == [True] * n, replies
    return [r["seq"] for r in replies]


def wait_for(condition, what: str, deadline_s: float = DEADLINE_S, every: float = 0.02):
    """Poll `condition()` until it is truthy; fail with `what` after the deadline."""
    return wait_until(condition, what, deadline_s, every)


class Client:
    """A blocking connection to the daemon: send lines, read reply lines."""

    def __init__(self, path: Path, timeout: float = DEADLINE_S):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(timeout)
            self.sock.connect(str(path))
        except BaseException:
            self.sock.close()
            raise
        self._buf = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, message: dict) -> dict:
        self.send(line(message))
        return self.reply()

    def append(self, env: dict) -> dict:
        return self.request(env)

    def reply(self) -> dict:
        raw = self.reply_line()
        if raw is None:
            raise ConnectionError("daemon closed the connection without a reply")
        return json.loads(raw)

    def reply_line(self) -> Optional[bytes]:
        """One reply line, or None at EOF."""
        while True:
            newline = self._buf.find(b"\n")
            if newline >= 0:
                out = bytes(self._buf[:newline])
                del self._buf[: newline + 1]
                return out
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                # The daemon closed with requests of ours unread (it stopped reading
                # to exit): the replies it sent come first, then the reset.
                chunk = b""
            if not chunk:
                return None
            self._buf += chunk

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Daemon:
    """One `agentwatch serve` process on paths under `root`."""

    def __init__(
        self,
        root: Path,
        *,
        store: Optional[Path] = None,
        socket_path: Optional[Path] = None,
        spool: Optional[Path] = None,
        attest_interval: float = 0,
        idle_timeout: float = 30.0,
        verify_interval: float = 5.0,
        extra_args: Iterable[str] = (),
    ):
        self.root = Path(root)
        self.store = store or self.root / "data" / "store.db"
        self.socket = socket_path or self.root / "run" / "agentwatch.sock"
        self.spool = spool or self.root / "data" / "spool"
        self.attest_interval = attest_interval
        self.idle_timeout = idle_timeout
        self.verify_interval = verify_interval
        self.extra_args = list(extra_args)
        self.proc: Optional[subprocess.Popen] = None
        self.log = self.root / f"daemon-{uuid.uuid4().hex[:8]}.log"

    def argv(self) -> list[str]:
        return [
            sys.executable, "-m", "agentwatch.cli", "serve",
            "--store", str(self.store),
            "--socket", str(self.socket),
            "--spool", str(self.spool),
            "--attest-interval", str(self.attest_interval),
            "--idle-timeout", str(self.idle_timeout),
            "--verify-interval", str(self.verify_interval),
            *self.extra_args,
        ]  # fmt: skip

    def spawn(self) -> subprocess.Popen:
        """Start the process without waiting for it to serve."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        return self.proc

    def start(self) -> "Daemon":
        self.spawn()
        wait_for(self._ready, f"the daemon to answer ping on {self.socket}")
        return self

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited {self.proc.returncode} before serving:\n{self.output()}")
        try:
            with Client(self.socket, timeout=2.0) as client:
                return client.request({"op": "ping"}).get("ok") is True
        except OSError:
            return False

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def client(self, timeout: float = DEADLINE_S) -> Client:
        return Client(self.socket, timeout)

    def request(self, message: dict) -> dict:
        with self.client() as client:
            return client.request(message)

    def health(self) -> dict:
        return self.request({"op": "health"})

    def send_signal(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait(self, deadline_s: float = DEADLINE_S) -> int:
        try:
            return self.proc.wait(deadline_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"daemon did not exit within {deadline_s:g} s:\n{self.output()}") from None

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """SIGTERM and wait; returns the exit code (0 after a clean drain)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.send_signal(sig)
        return self.wait()

    # -- reading what the daemon stored (read-only; works while it runs) ----------

    def rows(self, kind: Optional[str] = None) -> list[dict]:
        from agentwatch.store import db

        if not self.store.exists():
            return []
        conn = db.open_reader(self.store)
        try:
            query = "SELECT seq, record_id, kind, payload FROM records"
            args: tuple = ()
            if kind is not None:
                query += " WHERE kind = ?"
                args = (kind,)
            return [
                {"seq": seq, "record_id": rid, "kind": k, "payload": json.loads(payload)}
                for seq, rid, k, payload in conn.execute(query + " ORDER BY seq", args)
            ]
        finally:
            conn.close()

    def count(self, kind: str) -> int:
        return len(self.rows(kind))


@pytest.fixture
def daemon(tmp_path):
    """A started daemon; stopped with SIGTERM at teardown, which must exit 0."""
    d = Daemon(tmp_path / "daemon").start()
    try:
        yield d
    finally:
        code = d.stop()
        assert code == 0, f"daemon exited {code}:\n{d.output()}"


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory):
    """One started daemon for the cases of a module that each check only what they added to it
    (rows and counters read before and after, compared with `==`). It runs in an environment of its
    own, as the `daemon` fixture's does: the autouse isolation is per test, so it is set here for
    the process this starts. Stopped with SIGTERM after the module's last case, which must exit 0."""
    root = tmp_path_factory.mktemp("shared-daemon")
    with pytest.MonkeyPatch.context() as mp:
        for var, sub in (("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                         ("XDG_CONFIG_HOME", "config"), ("XDG_RUNTIME_DIR", "run")):
            (root / "env" / sub).mkdir(parents=True, mode=0o700)
            mp.setenv(var, str(root / "env" / sub))
        for var in [v for v in os.environ if v.startswith("AGENTWATCH_")]:
            mp.delenv(var)
        d = Daemon(root / "daemon").start()
    try:
        yield d
    finally:
        code = d.stop()
        assert code == 0, f"daemon exited {code}:\n{d.output()}"


def spool_write(spool: Path, record_id: str, data: bytes) -> Path:
    """Put a file into spool/new the way the hook does (tmp, then rename)."""
    for sub in ("tmp", "new", "bad"):
        (spool / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = spool / "tmp" / f"{record_id}.json"
    tmp.write_bytes(data)
    final = spool / "new" / f"{record_id}.json"
    os.rename(tmp, final)
    return final
