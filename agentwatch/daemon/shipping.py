"""Shipping inside `agentwatch serve`: a supervised child process (agentwatch.fleet.worker).

When `ship.url` is configured the daemon starts the shipper as a child, reads
its status lines for `health`, and starts it again (after 1 s, doubling to
30 s) whenever it exits. The child holds no lock and no connection the writer
needs and runs at a lower CPU priority, so shipping never blocks ingestion: a
slow or unreachable fleet server only makes the lag grow. Closing the child's
stdin stops it; the daemon does so at exit, and the kernel does so when the
daemon dies.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from agentwatch.fleet.connect import redact

log = logging.getLogger(__name__)

RESTART_MIN_S = 1.0
RESTART_MAX_S = 30.0
STOP_WAIT_S = 10.0


class ShipSupervisor:
    def __init__(self, store: Path, target: str, *, host: Optional[str], batch_rows: int,
                 head_seq: Callable[[], int], nice: int = 19, state_dir: Optional[Path] = None):
        self.store = Path(store)
        self.target = target
        self.host = host
        self.batch_rows = batch_rows
        self.nice = nice
        self.state_dir = state_dir  # the signed checkpoints the shipper sends after the rows
        self._head_seq = head_seq  # the writer's head, for a lag that is never staler than the child
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._proc: Optional[subprocess.Popen] = None
        self._status: dict = {"state": "starting", "target": redact(target)}
        self.restarts = 0
        self.last_exit: Optional[str] = None

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "agentwatch.fleet.worker", "--store", str(self.store), "--to", self.target,
               "--batch-rows", str(self.batch_rows), "--nice", str(self.nice)]
        if self.host:
            cmd += ["--host", self.host]
        if self.state_dir is not None:
            cmd += ["--state-dir", str(self.state_dir)]
        return cmd

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="ship-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        proc = self._proc
        if proc is not None:
            _close(proc.stdin)
            try:
                proc.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._thread is not None:
            self._thread.join(STOP_WAIT_S)

    def _supervise(self) -> None:
        delay = RESTART_MIN_S
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                proc = self._proc = subprocess.Popen(self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                     close_fds=True)
            except OSError as exc:
                self.last_exit = f"cannot start the shipper: {exc}"
                log.warning("%s; trying again in %g s", self.last_exit, delay)
            else:
                for line in proc.stdout or ():
                    try:
                        doc = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(doc, dict):
                        self._status = doc
                code = proc.wait()
                _close(proc.stdout)
                _close(proc.stdin)
                if self._stop.is_set():
                    break
                if time.monotonic() - started > 60:
                    delay = RESTART_MIN_S  # it ran a while: a new failure, not the same one again
                self.last_exit = f"the shipper exited with code {code}"
                log.warning("%s (last state %s: %s); starting it again in %g s", self.last_exit,
                            self._status.get("state"), self._status.get("last_error"), delay)
            self.restarts += 1
            self._stop.wait(delay)
            delay = min(delay * 2, RESTART_MAX_S)

    def health(self) -> dict:
        doc = dict(self._status)
        central = doc.get("central_head_seq")
        if central is not None:
            doc["lag_rows"] = max(self._head_seq() - central, 0)
        proc = self._proc
        doc["pid"] = proc.pid if proc is not None and proc.poll() is None else None
        doc["restarts"] = self.restarts
        doc["last_exit"] = self.last_exit
        return doc


def _close(stream) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass
