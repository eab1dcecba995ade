"""The daemon's side of "one writer" and of naming rows it did not write (docs/reliability.md).

- `acquire(store)`: the store's writer lock (store/writerlock.py), taken before the store is
  opened, its lock on the store file once the file exists;
- `adopt_stop_head(store, path)`: rows past the head the writer left at its last stop were
  written while no daemon ran; the start commit names them (`foreign_rows`), like rows
  appended under a running daemon;
- `remembering(path, store_id)`: how the writer keeps what it finds (each foreign range it
  names, a truncation) outside the store as a finding, so `verify`, `reconcile` and a
  restarted daemon name it too; `health` reads the writer's own list.
- `Exclusive`: what `erase` and `import` do to write beside no daemon: hold the writer lock
  (refused while a daemon or another writer holds it), name rows past the writer's head
  before adding their own, and leave the head file at their last commit, so their rows are
  the recorder's own and not taken for foreign ones at the next start.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Optional

from agentwatch import safefs
from agentwatch.errors import AgentwatchError, StoreUnreachable
from agentwatch.store.append import Store
from agentwatch.store.chain import GENESIS, format_hash
from agentwatch.store.writerlock import AlreadyServing, WriterLock
from agentwatch.verify import foreign, known_stores
from agentwatch.verify.findings import Finding

log = logging.getLogger(__name__)


def acquire(store: Path) -> WriterLock:
    return WriterLock(store).acquire()


def adopt_stop_head(store: Store, path: Path, state_dir: Optional[Path] = None, *,
                    checkpoint_dir: Optional[Path] = None) -> Optional[tuple[int, int]]:
    """Make the store's next commit name rows past the writer's remembered head as foreign.

    The head is the head file's (verify/known_stores.py); without one, the size of the last
    checkpoint the signer signed (at stop it covers the stop attestation). Returns the range
    (first, last), or None. Only when the row at the remembered head is the one the writer
    committed: a rewrite or a rollback is the identity checks' finding."""
    head = foreign.own_head(store.conn, path, store.store_id, state_dir)
    now = store.head()
    if head is None:
        head = _signed_head(store, checkpoint_dir)
    if head is None or now[0] <= head[0]:
        return None
    if head[0] > 0:
        row = store.conn.execute("SELECT hash FROM records WHERE seq = ?", (head[0],)).fetchone()
        if row is None or not isinstance(row[0], bytes) or format_hash(row[0]) != head[1]:
            return None
        store.committed_head = (head[0], row[0])
    else:
        store.committed_head = (0, GENESIS)
    log.warning(f"rows {head[0] + 1}..{now[0]} were written to {path} while no daemon ran; the start names them")
    return head[0] + 1, now[0]


def _signed_head(store: Store, checkpoint_dir: Optional[Path]) -> Optional[tuple[int, str]]:
    """The signer's own record of where the store ended: (size, hash of the row at it)."""
    from agentwatch.evidence.checkpoints import CheckpointError, read_state

    try:
        state = read_state(store.store_id, checkpoint_dir)
    except CheckpointError:
        return None
    if state is None:
        return None
    if not state.size:
        return 0, format_hash(GENESIS)
    row = store.conn.execute("SELECT hash FROM records WHERE seq = ?", (state.size,)).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return None
    return state.size, format_hash(row[0])


def remembering(path: Path, store_id: bytes, state_dir: Optional[Path] = None) -> Callable[..., None]:
    """The writer's `remember`: keep (finding, through_seq, head) in the store's remembered state."""

    def remember(finding: Finding, through_seq: int, head: Optional[tuple[int, bytes]] = None) -> None:
        try:
            known_stores.add_finding(path, store_id, finding, through_seq, state_dir, head=head)
        except (OSError, AgentwatchError) as exc:
            log.warning(f"cannot remember the {finding.kind} finding: {exc}")

    return remember


class DaemonRunning(StoreUnreachable):
    """A daemon (or another writer) holds the store: this command needs it to itself."""


class Exclusive:
    """The store's writer lock for a command that writes beside no daemon (`erase`, `import`)."""

    def __init__(self, path: Path, command: str, state_dir: Optional[Path] = None):
        self.path, self.command, self.state_dir = Path(path), command, state_dir
        self.lock = WriterLock(self.path)
        self.remember: Optional[Callable[..., None]] = None

    def __enter__(self) -> "Exclusive":
        # The lock file sits beside the store: a store about to be created (`import` into a new
        # path) needs its directory first, made as the store's own would be (owner-only).
        safefs.private_dir(self.path.parent, "store directory")
        try:
            self.lock.acquire()
        except AlreadyServing as exc:
            raise DaemonRunning(
                f"{exc}; {self.command} needs the store to itself: stop the daemon (SIGTERM, or your service "
                f"manager), run {self.command}, start it again (hooks spool meanwhile and nothing is lost)"
            ) from None
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()

    def opened(self, store: Store) -> None:
        """Right after the store is opened (or created): lock its file, and make the first commit
        name rows past the writer's remembered head."""
        from agentwatch.daemon.writer import foreign_gap_row

        self.lock.lock_store()
        store.foreign_gap = foreign_gap_row
        adopt_stop_head(store, self.path, self.state_dir)
        self.remember = remembering(self.path, store.store_id, self.state_dir)

    def closing(self, store: Store) -> None:
        """Before the store is closed: keep the foreign rows named, and the head this command left."""
        if self.remember is not None:
            for (first, last), _, named in store.foreign_committed:
                self.remember(foreign.named(first, last, named.seq), last)
        store.foreign_committed.clear()
        head = foreign.writer_head(self.path, store.store_id, self.state_dir)
        if head is None or store.committed_head[0] > head[0]:
            known_stores.write_writer_head(self.path, store.store_id, *store.committed_head, state_dir=self.state_dir)
