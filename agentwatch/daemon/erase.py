"""`agentwatch erase`: erase payloads from a store no daemon is serving.

The erasure itself is agentwatch.store.erasure. This module adds what makes it
safe beside the recorder: it holds the store's lock file, the one `agentwatch
serve` holds for its whole life (agentwatch.daemon.runfiles), while it erases.
So an erase refuses to run while a daemon serves the store, and no daemon can
start until it is done. Stopping the daemon first costs no records (hooks spool
and the daemon stores them when it starts) and also ends the daemon's own
in-memory copies of the payload (live-tail buffers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from agentwatch.daemon import runfiles
from agentwatch.errors import StoreUnreachable
from agentwatch.store.append import Store
from agentwatch.store.erasure import EraseResult, actor, check_reason, erase_rows


class DaemonRunning(StoreUnreachable):
    """A daemon serves the store: erase needs it to itself."""


def erase_store(path: Path, seqs: Iterable[int], reason: str, *, by: str | None = None,
                override_hold: str | None = None) -> EraseResult:
    """Erase the payloads of `seqs` in the store at `path` (see store.erasure.erase_rows)."""
    path = Path(path)
    check_reason(reason)
    actor(by)  # a bad --by is a usage error before the store is touched
    if not path.exists():
        raise StoreUnreachable(f"{path}: store does not exist")
    lock = runfiles.LockFile(runfiles.lock_path(path), f"store {path}")
    try:
        lock.acquire()
    except runfiles.AlreadyServing as exc:
        raise DaemonRunning(
            f"{exc}; erase needs the store to itself: stop the daemon (SIGTERM, or your service manager), "
            "run erase, start it again (hooks spool meanwhile and nothing is lost)"
        ) from None
    try:
        with Store(path) as store:
            return erase_rows(store, seqs, reason, by=by, override_hold=override_hold)
    finally:
        lock.release()
