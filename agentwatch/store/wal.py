"""WAL checkpoints off the writer's commit path.

SQLite's automatic checkpoint runs inside the COMMIT that pushes the WAL past
1000 frames: it copies the frames into the database file and syncs it, about
2 ms here, and the sender of that commit and every record queued behind it
wait for it. A commit of one record writes about nine frames (the row, five
index leaves, the page header), so at 1,000 single-record commits a second
that is a stall every ~110 commits, enough to set the ack latency's p99.

The daemon's writer replaces it with two steps (docs/daemon.md, "Checkpoints"):

1. past `BACKGROUND_AT` frames the writer wakes this thread, which runs a
   PASSIVE checkpoint on its own connection while commits go on (PASSIVE
   takes no lock a writer needs);
2. commits keep adding frames meanwhile, so that checkpoint can never end with
   the WAL fully copied, and only a fully copied WAL starts over. Once it has
   run, the writer copies what was committed during it, between commits and
   after its acks went out: the frames of a commit or two, and one sync. Its
   next transaction restarts the WAL from the beginning.

At `CAP` frames the writer checkpoints itself whatever the background one did
(a stalled or failing background thread never lets the WAL grow unbounded).
Durability is unchanged: a checkpoint only copies committed frames, and
SQLite's own recovery handles a crash inside one.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import apsw

from agentwatch.store import db

BACKGROUND_AT = 1000  # frames: SQLite's own autocheckpoint threshold
CAP = 8192  # frames (32 MiB of 4 KiB pages): the writer checkpoints at once


@dataclass
class CheckpointStats:
    background: int = 0  # background checkpoints run
    tail: int = 0  # checkpoints the writer finished itself
    capped: int = 0  # checkpoints the writer ran because the WAL reached CAP
    busy: int = 0  # attempts SQLite answered BUSY (retried at a later commit)
    errors: int = 0
    last_error: Optional[str] = None

    def as_dict(self) -> dict:
        return asdict(self)


class Checkpointer:
    """The background half, and the decision the writer takes after each commit."""

    def __init__(self, path: Path, *, background_at: int = BACKGROUND_AT, cap: int = CAP):
        self.path = Path(path)
        self.background_at, self.cap = background_at, cap
        self.stats = CheckpointStats()
        self._frames = 0  # WAL frames after the writer's last commit (its WAL hook)
        self._generation = 0  # +1 each time the WAL starts over
        self._background_ran_in = -1  # the WAL generation of the last background checkpoint
        self._wake = threading.Event()
        self._one_at_a_time = threading.Lock()  # a background and a writer checkpoint never overlap
        self._stopping = False
        self._conn: Optional[apsw.Connection] = None
        self._thread = threading.Thread(target=self._run, name="agentwatch-checkpointer", daemon=True)

    # -- the writer's side (writer thread) ------------------------------------------

    def attach(self, conn: apsw.Connection) -> None:
        """Take over the checkpoints of the writer's connection (SQLite's automatic one stops)."""
        conn.setwalhook(self._on_commit)

    def _on_commit(self, _conn: apsw.Connection, _name: str, frames: int) -> int:
        """Inside each COMMIT: only note the WAL's size."""
        if frames < self._frames:
            self._generation += 1
        self._frames = frames
        return apsw.SQLITE_OK

    def after_commit(self, conn: apsw.Connection) -> None:
        """Between transactions, once the acks of a commit are out."""
        frames = self._frames
        if frames < self.background_at:
            return
        if frames >= self.cap:
            self._checkpoint_here(conn, "capped")
        elif self._background_ran_in == self._generation:  # it copied the bulk of this WAL
            self._checkpoint_here(conn, "tail")
        else:
            self._wake.set()

    def _checkpoint_here(self, conn: apsw.Connection, why: str) -> None:
        if not self._one_at_a_time.acquire(blocking=False):
            return  # the background one is copying now; decide again after the next commit
        try:
            if self._checkpoint(conn) is not None:
                setattr(self.stats, why, getattr(self.stats, why) + 1)
                self._background_ran_in = -1
        finally:
            self._one_at_a_time.release()

    # -- the background thread --------------------------------------------------------

    def start(self) -> bool:
        """Open the connection and start the thread; False (and why, in stats) if it cannot."""
        try:
            self.open()
        except Exception as exc:
            self.stats.errors += 1
            self.stats.last_error = f"cannot open the checkpoint connection: {exc}"
            return False
        self._thread.start()
        return True

    def open(self) -> None:
        self._conn = db.open_checkpointer(self.path)

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread.ident is not None:
            self._thread.join()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            self.background_once()

    def background_once(self) -> None:
        """One background checkpoint (the thread's step; tests call it directly)."""
        generation = self._generation
        conn = self._conn
        if conn is None:
            return  # stopped, or never opened
        with self._one_at_a_time:
            copied = self._checkpoint(conn)
        if copied is not None:
            self.stats.background += 1
            self._background_ran_in = generation

    def _checkpoint(self, conn: apsw.Connection) -> Optional[int]:
        """One PASSIVE checkpoint; the frames copied, or None when it could not run."""
        try:
            _log, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        except apsw.BusyError:
            self.stats.busy += 1
            return None
        except apsw.Error as exc:  # an I/O error: counted and shown in health, retried later
            self.stats.errors += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            return None
        return copied
