"""`agentwatch erase`: erase payloads from a store no daemon is serving.

The erasure itself is agentwatch.store.erasure. This module adds what makes it
safe beside the recorder: it holds the store's writer lock (store/writerlock.py),
the one `agentwatch serve` holds for its whole life, while it erases. So an erase
refuses to run while a daemon (or any other writer) holds the store, even with the
lock file deleted, and no daemon can start until it is done. Stopping the daemon
first costs no records (hooks spool and the daemon stores them when it starts) and
also ends the daemon's own in-memory copies of the payload (live-tail buffers).

The erasure rows it appends are the recorder's own: it leaves the writer's head file
at them and signs a checkpoint over them, so `verify` is clean afterwards, not
`unsigned` until the daemon's next stop.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Optional, Sequence

from agentwatch.daemon.integrity import DaemonRunning, Exclusive
from agentwatch.errors import StoreMissing
from agentwatch.store.actors import actor, check_reason
from agentwatch.store.append import Store
from agentwatch.store.erasure import WHY, EraseResult, erase_rows

log = logging.getLogger(__name__)

__all__ = ["DaemonRunning", "erase_store"]


def erase_store(path: Path, seqs: Iterable[int], reason: str, *, by: str | None = None,
                override_hold: str | None = None, state_dir: Optional[Path] = None,
                witness_dirs: Optional[Sequence[Path]] = None, sign: bool = True) -> EraseResult:
    """Erase the payloads of `seqs` in the store at `path` (see store.erasure.erase_rows), then
    sign a checkpoint over the erasure rows (`state_dir`: the checkpoint directory)."""
    path = Path(path)
    check_reason(reason, WHY)
    actor(by)  # a bad --by is a usage error before the store is touched
    if not path.exists():
        raise StoreMissing(f"{path}: store does not exist")
    with Exclusive(path, "erase") as writer:
        with Store(path) as store:
            writer.opened(store)
            try:
                result = erase_rows(store, seqs, reason, by=by, override_hold=override_hold)
            finally:
                writer.closing(store)
            if sign and any(e.status == "erased" for e in result.erased):
                # While the store is still open: its close, the last, removes the WAL again.
                _sign(path, state_dir, witness_dirs)
    return result


def _sign(path: Path, state_dir: Optional[Path], witness_dirs: Optional[Sequence[Path]]) -> None:
    from agentwatch import paths
    from agentwatch.evidence import checkpoints

    dirs = list(witness_dirs) if witness_dirs is not None else [Path(state_dir or paths.state_dir()) / "witness"]
    try:
        signed = checkpoints.sign_store(path, state_dir=state_dir, witness_dirs=dirs)
    except Exception as exc:  # the erasure stands; verify names the rows `unsigned` until a signer runs
        log.warning(f"agentwatch: the erasure rows are not covered by a signed checkpoint: {exc}")
        return
    log.info(f"signed checkpoint {signed.checkpoint.size}")
