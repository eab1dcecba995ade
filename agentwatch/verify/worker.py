"""Chain verification in a child process: `python -m agentwatch.verify.worker STORE`.

Two users: the daemon's sweeper, whose reading and hashing would otherwise
contend with the event loop and the writer for the GIL on every row read
(SQLite calls release it), and a parallel full verify, which walks one segment
per process. A plain child started with `-m`, not a multiprocessing one: that
would re-import the caller's main module (a CLI, a test runner, a user's
script without a main guard) in every child.

The child opens the store read-only and answers requests in order, each on
its pipe as a pickle (parent and child only, same user):

- ``("range", store_id, after_seq, after_hash, limit)`` -> ``("ok", RangeResult)``
- ``("segment", store_id, after_seq, end_seq, chunk_rows)`` -> ``("ok", (rows, last_seq, last_hash, finding))``
- on any error -> ``("error", text)``

EOF on stdin (the parent closed it, stopped or died) ends the child.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional


class WorkerError(RuntimeError):
    """The child could not be started, died, or answered with an error."""


class Worker:
    """A verify_worker child on one store, started on first use."""

    def __init__(self, store: Path):
        self.store = Path(store)
        self.proc: Optional[subprocess.Popen] = None
        self.answered = False  # it has answered once: a child can run here
        self._pending = 0  # requests sent and not answered yet

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    def send(self, *request: Any) -> None:
        """Start the child if needed and hand it a request. Raises OSError when it cannot start."""
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agentwatch.verify.worker", str(self.store)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        stdin = self.proc.stdin
        assert stdin is not None  # a pipe: stdin=PIPE
        try:
            pickle.dump(request, stdin)
            stdin.flush()
            self._pending += 1
        except (OSError, ValueError) as exc:
            self.close()
            raise WorkerError(f"verify worker process failed: {type(exc).__name__}: {exc}") from None

    def receive(self) -> Any:
        """The answer to the oldest request not yet received (waits without the GIL)."""
        if self.proc is None:
            raise WorkerError("verify worker process is not running")
        try:
            status, value = pickle.load(self.proc.stdout)  # type: ignore[arg-type]  # stdout=PIPE
        except (OSError, EOFError, pickle.UnpicklingError, ValueError) as exc:
            self.close()
            raise WorkerError(f"verify worker process failed: {type(exc).__name__}: {exc}") from None
        self._pending -= 1
        self.answered = True
        if status != "ok":
            raise WorkerError(value)
        return value

    def request(self, *request: Any) -> Any:
        self.send(*request)
        return self.receive()

    def close(self) -> None:
        """End the child: at once if it is still working on a request, else by EOF."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        busy, self._pending = self._pending > 0, 0
        if busy:
            proc.kill()  # its answer is no longer wanted (an interrupted verify, a failed read)
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            proc.wait(5)  # EOF on its stdin ends it
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str]) -> int:
    from agentwatch.store import db
    from agentwatch.verify.walk import verify_range, verify_segment

    store = Path(argv[0])
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    conn = None
    reply: tuple[str, Any]
    try:
        while True:
            try:
                op, *args = pickle.load(requests)
            except EOFError:
                return 0
            try:
                if conn is None:
                    conn = db.open_reader(store)
                if op == "range":
                    reply = ("ok", verify_range(conn, *args))
                elif op == "segment":
                    reply = ("ok", verify_segment(conn, *args))
                else:
                    reply = ("error", f"unknown request {op!r}")
            except Exception as exc:  # reported to the parent
                reply = ("error", f"{type(exc).__name__}: {exc}")
                if conn is not None:
                    conn.close()
                    conn = None
            pickle.dump(reply, replies)
            replies.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        if conn is not None:
            conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
