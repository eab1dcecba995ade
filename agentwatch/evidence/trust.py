"""How far the evidence a check used can be trusted against the recorded agent (docs/chain.md, "Threat model").

The first adversary runs as the developer's user. Evidence that user can write (the signer's
key and record, the anchor, a witness directory of its own) proves nothing against it: it can
rewrite the store, re-sign with the key it can read and overwrite every record. So `verify` and
`health` say which kind of evidence they checked:

- `witness: fleet server`: checkpoints also go to the fleet server (the daemon ships);
- `witness: other account`: a witness directory, or the signer's files, belong to another
  uid than the one this process runs as and cannot be written by it (the service deployment
  seen from the developer's side, or a witness another account keeps);
- `evidence: same user only`: everything that vouches for the store can be rewritten by
  the user this process runs as (the per-user install).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

SAME_USER = "evidence: same user only"
OTHER_ACCOUNT = "witness: other account"
FLEET = "witness: fleet server"


def _other_account(path: Path) -> bool:
    """Owned by another uid and not writable by this one (a directory: nor its entries' parent)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid != os.getuid() and not os.access(path, os.W_OK)


def level(witness_dirs: Iterable[Path] = (), signer_files: Iterable[Path] = (), *, fleet: bool = False) -> str:
    if fleet:
        return FLEET
    if any(_other_account(Path(d)) for d in witness_dirs) or any(_other_account(Path(f)) for f in signer_files):
        return OTHER_ACCOUNT
    return SAME_USER


def explain(trust: str) -> str:
    if trust == SAME_USER:
        return (f"{trust}: this user can rewrite the store and every file that vouches for it "
                "(docs/deployment.md: the service deployment puts the key and witness in another account)")
    return trust


def as_seen_here(daemon_level: str | None, witness_dirs: Iterable[Path], state_dir: Path | None) -> str | None:
    """The trust level for the user asking `health`, from the daemon's statement of it.

    The daemon judges by its own uid: in the service deployment the witness is its own
    (`same user only`), while to the developer asking, whose agent is what is recorded, it
    belongs to another account. So a reader judges the same files again by its own uid; a
    fleet server stays a fleet server."""
    if daemon_level is None or daemon_level == FLEET:
        return daemon_level
    from agentwatch.evidence.checkpoints import resolved_state_dir

    return level(witness_dirs, [resolved_state_dir(state_dir) / "checkpoints"])
