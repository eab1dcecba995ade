"""Load and fault helpers for daemon-level fault tests (tests/ and soak/).

Senders follow the hook client's contract (docs/hook.md): an ack for the
record's own record_id means done; anything else (timeout, refused, reset,
`ok:false`) means the envelope goes to spool/new through
`hookclient.spool_write`, exactly as the hook does. Every attempt is one line
in a sender ledger in the hook's ledger format, so `reconcile --ledger` reads
it. `HookProcessSender` runs the real hook (`python -I -S hook.py`);
`SocketSender` runs the same code path in a thread, for more load per CPU.

`FaultyDaemon` runs the real `Server` in a child process whose write
connection goes through `support.faultvfs.FaultVFS`; the test arms
and clears faults over the child's stdin.

`check()` is the gate: the stored event set equals the ledger's set, each
exactly once, every acked seq is the stored seq, reconcile is within bounds,
and the spool is empty.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

import agentwatch
from agentwatch import hookclient
from agentwatch.readers.reconcile import reconcile
from support.daemon import Daemon

HOOK_PY = Path(agentwatch.__file__).parent / "hook.py"
TESTS_DIR = Path(__file__).resolve().parent.parent


def payload_text(i: int) -> str:
    return json.dumps(
        {"hook_event_name": "PreToolUse", "session_id": "fault-session", "tool_name": "Bash",
         "tool_input": {"command": f"echo {i}"}, "cwd": "/tmp"}
    )  # fmt: skip


class Ledger:
    """One line per attempt, hook format, single O_APPEND write (shared with hook processes)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def write(self, record_id: str, outcome: str, seq: Optional[int], reason: Optional[str]) -> None:
        hookclient._ledger(str(self.path).encode(), record_id, outcome, seq, time.monotonic_ns(), reason)

    def entries(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(x) for x in self.path.read_bytes().splitlines() if x.strip()]


def deliver(socket_path: Path, spool: Path, ledger: Ledger, i: int, timeout_ms: int,
            record_id: Optional[str] = None) -> tuple[str, str, Optional[int], Optional[str]]:
    """One record the way hookclient.record delivers it: send, else spool; ledger line."""
    record_id = record_id or hookclient.uuid7()
    raw = payload_text(i).encode()
    frame = hookclient.build_frame(record_id, "claude-code", None, raw, len(raw), None, True)
    seq = reason = None
    try:
        seq = hookclient.send(str(socket_path).encode(), frame + b',"delivery":"socket"}\n', record_id, timeout_ms)
    except hookclient.Rejected as exc:
        reason = exc.code
    except TimeoutError:
        reason = "timeout"
    except (FileNotFoundError, ConnectionRefusedError):
        reason = "no_daemon"
    except Exception:
        reason = "error"
    outcome = "acked"
    if seq is None:
        hookclient.spool_write(str(spool).encode(), record_id, frame + b',"delivery":"spool"}\n')
        outcome = "spooled"
    ledger.write(record_id, outcome, seq, reason)
    return record_id, outcome, seq, reason


class _Sender(threading.Thread):
    def __init__(self, name: str, pause: float):
        super().__init__(name=name, daemon=True)
        self.stop_event = threading.Event()
        self.pause = pause
        self.sent = 0
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            while not self.stop_event.is_set():
                self.one()
                self.sent += 1
                if self.pause:
                    self.stop_event.wait(self.pause)
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def stop(self) -> None:
        self.stop_event.set()
        self.join(60)
        assert not self.is_alive(), f"{self.name} did not stop"
        if self.error is not None:
            raise self.error


class SocketSender(_Sender):
    """The hook's delivery code in a thread (hookclient.send / spool_write)."""

    def __init__(self, socket_path: Path, spool: Path, ledger: Ledger, timeout_ms: int = 250, pause: float = 0.0):
        super().__init__("socket-sender", pause)
        self.args = (socket_path, spool, ledger)
        self.timeout_ms = timeout_ms

    def one(self) -> None:
        deliver(*self.args, self.sent, self.timeout_ms)


class HookProcessSender(_Sender):
    """The real hook client: `python -I -S agentwatch/hook.py claude-code`, one process per record."""

    def __init__(self, socket_path: Path, spool: Path, ledger: Ledger, timeout_ms: int = 250, pause: float = 0.0):
        super().__init__("hook-sender", pause)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/"),
            "AGENTWATCH_SOCKET": str(socket_path),
            "AGENTWATCH_SPOOL": str(spool),
            "AGENTWATCH_LEDGER": str(ledger.path),
            "AGENTWATCH_HOOK_TIMEOUT_MS": str(timeout_ms),
        }

    def one(self) -> None:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", str(HOOK_PY), "claude-code"],
            input=payload_text(self.sent).encode(), env=self.env, capture_output=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0 and proc.stdout == b"", (proc.returncode, proc.stdout, proc.stderr)


# -- the gate -----------------------------------------------------------------------------


@dataclass
class Figures:
    sent: int = 0
    acked: int = 0
    spooled: int = 0
    reasons: dict = field(default_factory=dict)
    stored: int = 0
    duplicates: int = 0  # record_ids stored more than once
    missing: int = 0
    extra: int = 0  # stored events nobody sent
    seq_mismatch: int = 0
    gaps: int = 0
    within_bounds: bool = False

    def line(self) -> str:
        return (
            f"sent {self.sent}, acked {self.acked}, spooled {self.spooled} {self.reasons}, stored {self.stored}, "
            f"duplicates {self.duplicates}, missing {self.missing}, extra {self.extra}, "
            f"seq mismatches {self.seq_mismatch}, gap rows {self.gaps}, reconcile within_bounds {self.within_bounds}"
        )


def spool_files(spool: Path) -> dict[str, list[str]]:
    return {sub: sorted(os.listdir(spool / sub)) if (spool / sub).exists() else [] for sub in ("new", "tmp", "bad")}


def wait_spool_empty(d: Daemon, stall_s: float = 60.0) -> None:
    """Wait until the daemon drained its spool; fail only if the backlog stops shrinking."""
    best, since = None, time.monotonic()
    while True:
        files = spool_files(d.spool)
        left = len(files["new"]) + len(files["tmp"])
        if not left and d.health()["spool"].get("inflight", 0) == 0:
            return
        if best is None or left < best:
            best, since = left, time.monotonic()
        assert time.monotonic() - since < stall_s, f"spool {d.spool} stopped draining at {left} files"
        time.sleep(0.1)


def check(d: Daemon, ledger: Ledger) -> Figures:
    """The gate. Call after the daemon has drained its spool (it may still run)."""
    entries = ledger.entries()
    outcome: dict[str, str] = {}
    acked_seq: dict[str, int] = {}
    reasons: Counter = Counter()
    for e in entries:
        rid = e["record_id"]
        assert e["outcome"] in ("acked", "spooled"), e  # "failed" means a spool write failed: a harness problem
        outcome[rid] = e["outcome"]
        if e["outcome"] == "acked":
            acked_seq[rid] = e["seq"]
        else:
            reasons[e["reason"]] += 1
    rows = d.rows()
    events = [r for r in rows if r["kind"] == "event"]
    stored = Counter(r["record_id"] for r in events)
    seq_of = {r["record_id"]: r["seq"] for r in events}
    f = Figures(
        sent=len(outcome),
        acked=len(acked_seq),
        spooled=len(outcome) - len(acked_seq),
        reasons=dict(sorted(reasons.items())),
        stored=len(stored),
        duplicates=sum(n - 1 for n in stored.values()),
        missing=len(set(outcome) - set(stored)),
        extra=len(set(stored) - set(outcome)),
        seq_mismatch=sum(1 for rid, seq in acked_seq.items() if seq_of.get(rid) != seq),
        gaps=sum(1 for r in rows if r["kind"] == "gap"),
    )
    f.within_bounds = reconcile(d.store, ledger=ledger.path).within_bounds
    return f


def assert_gate(f: Figures, d: Daemon) -> None:
    assert f.sent > 0
    assert (f.duplicates, f.missing, f.extra, f.seq_mismatch) == (0, 0, 0, 0), f.line()
    assert f.stored == f.sent, f.line()
    assert f.within_bounds, f.line()
    assert spool_files(d.spool) == {"new": [], "tmp": [], "bad": []}


# -- SIGKILL under load -------------------------------------------------------------------


@dataclass
class KillRun:
    kills: int
    figures: Figures
    seconds: float

    def line(self) -> str:
        return f"daemon SIGKILLed {self.kills} times under load in {self.seconds:.1f} s: {self.figures.line()}"


def kill_under_load(root: Path, kills: int, *, seed: int, socket_senders: int = 2, hook_senders: int = 1,
                    up_s: tuple[float, float] = (0.2, 1.2), down_s: tuple[float, float] = (0.0, 0.3)) -> KillRun:
    """Run senders against a daemon, SIGKILL it `kills` times at random moments and restart it."""
    rng = random.Random(seed)
    started = time.monotonic()
    d = Daemon(root, verify_interval=1.0).start()
    ledger = Ledger(root / "ledger.jsonl")
    senders = [SocketSender(d.socket, d.spool, ledger, pause=0.005) for _ in range(socket_senders)]
    senders += [HookProcessSender(d.socket, d.spool, ledger) for _ in range(hook_senders)]
    try:
        for s in senders:
            s.start()
        for _ in range(kills):
            time.sleep(rng.uniform(*up_s))
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait(30)
            time.sleep(rng.uniform(*down_s))  # hooks meanwhile find no daemon and spool
            d.start()  # drains the spool while the senders go on
        time.sleep(rng.uniform(*up_s))
    finally:
        for s in senders:
            s.stop()
    wait_spool_empty(d)
    figures = check(d, ledger)
    assert d.stop() == 0, d.output()
    return KillRun(kills, figures, time.monotonic() - started)


# -- the daemon on a fault VFS ------------------------------------------------------------

# The child: the real Server, whose Store (and the writer's reopen) opens through a
# FaultVFS. Commands on stdin arm and clear faults; each is answered "ok" on stdout.
_CHILD = r"""
import sys, threading
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from agentwatch.daemon import server
from agentwatch.store import append as store_mod
from agentwatch.daemon import writer
from agentwatch.daemon.settings import ServeConfig
from support.faultvfs import FaultVFS

vfs = FaultVFS(sync_failure=sys.argv[5], real_sync=True)
Store = store_mod.Store
def faulty_store(path, *, vfs_name=None, **options):
    return Store(path, vfs=vfs.name, **options)
server.Store = writer.Store = faulty_store

def control():
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "arm":
            vfs.arm_fault(cmd[1], 1, cmd[2], persist=True)
        elif cmd[0] == "clear":
            vfs.clear_faults()
        sys.stdout.write("ok %s\n" % len(vfs.injected))
        sys.stdout.flush()
threading.Thread(target=control, daemon=True).start()
cfg = ServeConfig(store=Path(sys.argv[2]), socket=Path(sys.argv[3]), spool=Path(sys.argv[4]),
                         attest_interval=0, verify_interval=1.0)
sys.exit(server.serve(cfg))
"""


class FaultyDaemon(Daemon):
    """`Daemon`, but the real Server runs with its write connection on a FaultVFS."""

    def __init__(self, root: Path, sync_failure: str = "keep", **kw):
        super().__init__(root, **kw)
        self.sync_failure = sync_failure

    def argv(self) -> list[str]:
        return [sys.executable, "-c", _CHILD, str(TESTS_DIR), str(self.store), str(self.socket), str(self.spool),
                self.sync_failure]  # fmt: skip

    def spawn(self) -> subprocess.Popen:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=log, stdin=subprocess.PIPE)
        return self.proc

    def control(self, command: str) -> int:
        """Send `arm KIND ERROR` or `clear`; returns how many faults were injected so far."""
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split()
        assert reply and reply[0] == b"ok", reply
        return int(reply[1])

    def start(self) -> "FaultyDaemon":
        try:
            super().start()
        except BaseException:
            self._close_pipes()  # a daemon that never served leaves no pipe for the garbage collector
            raise
        return self

    def stop(self, sig: int = signal.SIGTERM) -> int:
        code = super().stop(sig)
        self._close_pipes()
        return code

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


@pytest.fixture(autouse=False)
def reap_daemons(monkeypatch):
    """Kill, at teardown, any daemon a failed test left running (a passing test stops its own)."""
    started: list[Daemon] = []
    original = Daemon.start

    def start(self):
        started.append(self)
        return original(self)

    monkeypatch.setattr(Daemon, "start", start)
    yield
    for d in started:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait()
