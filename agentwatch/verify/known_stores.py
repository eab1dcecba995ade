"""Stores remembered by path, outside the store (docs/reliability.md, "Store identity").

A store cannot vouch for itself: deleted, it leaves nothing to compare with;
replaced by a fresh one, it verifies; rolled back to an older copy, or cut
short once its WAL is gone, it is a shorter valid chain. So every path that
held a store is remembered in the state directory, beside the verify anchors:

    <state_dir>/stores/<key>.json   path, store_id, the highest head seen, sticky
                                    findings, and every replacement an operator
                                    accepted (`agentwatch init --new-store`)
    <state_dir>/stores/<key>.head   the head the daemon's writer committed last,
                                    rewritten in place after every commit and before
                                    its acknowledgements go out

`<key>` is the SHA-256 of the store's absolute path. Files are 0600 in a 0700
directory; the JSON is replaced atomically under an flock, so `serve`,
`verify` and `reconcile` can update it at once without losing a finding.

Measured against what is at the path now:

- `replaced`: the path holds another store_id, or nothing, than the one remembered;
- `rolled_back`: the same store, ending below a head seen earlier;
- `rewritten`: the row at the remembered head carries another hash;
- and the sticky findings kept for this store (a live `truncated`).

The head file is written with one `pwrite` (no fsync): it survives a killed
process, which is what it is for (a WAL deleted after a SIGKILL); after a power
loss it may trail the last acknowledgement, and the JSON head, written with
fsync at start and stop, is the floor.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from agentwatch import paths, safefs
from agentwatch.store.chain import format_hash, parse_hash
from agentwatch.verify.atomic import read_json, write_json
from agentwatch.verify.findings import Finding

FORMAT = "agentwatch-known-store/1"
_HEAD_MAGIC = b"agentwatch-head/1"
_HEAD_SIZE = 160
# Findings about a store's identity and length, which the chain alone cannot show.
IDENTITY_KINDS = ("replaced", "rolled_back", "truncated", "schema_changed")


@dataclass
class KnownStore:
    """What is remembered about one store path."""

    path: str
    store_id: str  # 32 hex digits; "" once the store was seen missing and not yet replaced
    head_seq: int = 0
    head_hash: str = ""
    seen_at_ns: int = 0
    # Sticky: {kind, seq, through_seq, detail, store_id, found_at_ns}. Kept until accepted.
    findings: list[dict] = field(default_factory=list)
    # Accepted replacements: {previous_store_id, previous_head_seq, new_store_id, findings, accepted_at_ns, ...}.
    history: list[dict] = field(default_factory=list)
    # Copies the daemon made of a store deleted or replaced under it: {store_id, path, head_seq, at_ns}.
    salvaged: list[dict] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "path": self.path,
            "store_id": self.store_id,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "seen_at_ns": self.seen_at_ns,
            "findings": self.findings,
            "history": self.history,
            "salvaged": self.salvaged,
        }


def store_key(store: Path | str) -> str:
    return hashlib.sha256(os.path.abspath(store).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def stores_dir(state_dir: Path | None = None) -> Path:
    return Path(state_dir or paths.state_dir()) / "stores"


def record_path(store: Path | str, state_dir: Path | None = None) -> Path:
    return stores_dir(state_dir) / f"{store_key(store)}.json"


def head_path(store: Path | str, state_dir: Path | None = None) -> Path:
    return stores_dir(state_dir) / f"{store_key(store)}.head"


def _private_dir(directory: Path) -> None:
    safefs.private_dir(directory, "remembered-store directory")


@contextmanager
def _locked(store: Path | str, state_dir: Path | None) -> Iterator[None]:
    directory = stores_dir(state_dir)
    _private_dir(directory)
    fd = os.open(directory / f"{store_key(store)}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# -- reading -----------------------------------------------------------------------------


def load(store: Path | str, state_dir: Path | None = None) -> Optional[KnownStore]:
    """What is remembered about the path (the head file's head included), None if nothing."""
    known = read_json(record_path(store, state_dir), "remembered store", _parse_known)
    if known is None:
        return None
    beacon = read_head(store, state_dir)
    if beacon is not None and beacon[0] == known.store_id and beacon[1] > known.head_seq:
        known.head_seq, known.head_hash = beacon[1], beacon[2]
    return known


def _parse_known(doc: Any) -> KnownStore:
    if doc["format"] != FORMAT:
        raise ValueError(f"format {doc['format']!r}")
    return KnownStore(
        path=str(doc["path"]), store_id=str(doc["store_id"]), head_seq=int(doc["head_seq"]),
        head_hash=str(doc["head_hash"]), seen_at_ns=int(doc["seen_at_ns"]),
        findings=list(doc.get("findings") or []), history=list(doc.get("history") or []),
        salvaged=list(doc.get("salvaged") or []),
    )  # fmt: skip


def read_head(store: Path | str, state_dir: Path | None = None) -> Optional[tuple[str, int, str]]:
    """The writer's last committed head: (store_id hex, seq, "sha256:…"), None if absent or unreadable."""
    try:
        with open(head_path(store, state_dir), "rb") as f:
            data = f.read(_HEAD_SIZE)
    except OSError:
        return None
    parts = data.split(b"\n", 1)[0].split()
    if len(parts) != 4 or parts[0] != _HEAD_MAGIC:
        return None
    try:
        store_id, seq, digest = parts[1].decode(), int(parts[2]), parts[3].decode()
        parse_hash(digest)
    except ValueError:
        return None
    return store_id, seq, digest


# -- writing -----------------------------------------------------------------------------


def _save(known: KnownStore, state_dir: Path | None) -> None:
    write_json(record_path(known.path, state_dir), known.to_json(), 0o600)


def remember(store: Path | str, store_id: bytes, head_seq: int, head_hash: bytes | None,
             state_dir: Path | None = None) -> KnownStore:
    """Record that the path holds store_id with this head; the remembered head never moves down.

    A path seen for the first time is remembered as it is. A known path holding
    another store is not overwritten here (that is `accept`'s explicit choice).
    """
    store = os.path.abspath(store)
    with _locked(store, state_dir):
        known = load(store, state_dir)
        if known is None or not known.store_id:
            known = KnownStore(store, store_id.hex(), history=known.history if known else [],
                               findings=known.findings if known else [])
        elif known.store_id != store_id.hex():
            return known
        if head_seq >= known.head_seq and head_hash is not None:
            known.head_seq, known.head_hash = head_seq, format_hash(head_hash)
        known.seen_at_ns = time.time_ns()
        _save(known, state_dir)
        return known


def add_finding(store: Path | str, store_id: bytes, finding: Finding, through_seq: int,
                state_dir: Path | None = None, *, head: tuple[int, bytes] | None = None) -> None:
    """Keep a finding about this store (a live truncation) so that a restart does not forget it.

    `head`: the head the store has now, below the one remembered (a truncation the
    daemon records and goes on from); the remembered head moves down to it, the
    finding naming what was lost.
    """
    store = os.path.abspath(store)
    entry = {"kind": finding.kind, "seq": finding.seq, "through_seq": through_seq, "detail": finding.detail,
             "store_id": store_id.hex(), "found_at_ns": time.time_ns()}
    with _locked(store, state_dir):
        known = load(store, state_dir) or KnownStore(store, store_id.hex())
        if known.store_id != store_id.hex():
            return
        if not any(f.get("kind") == finding.kind and f.get("seq") == finding.seq
                   and f.get("store_id") == store_id.hex() for f in known.findings):
            known.findings.append(entry)
        if head is not None and head[0] < known.head_seq:
            known.head_seq, known.head_hash = head[0], format_hash(head[1])
            _write_head(store, state_dir, store_id, head[0], head[1])
        _save(known, state_dir)


def note_salvage(store: Path | str, store_id: bytes, copy: Path, head_seq: int,
                 state_dir: Path | None = None) -> None:
    """Remember where the daemon copied a store that was deleted or replaced under it."""
    store = os.path.abspath(store)
    with _locked(store, state_dir):
        known = load(store, state_dir) or KnownStore(store, store_id.hex())
        known.salvaged.append({"store_id": store_id.hex(), "path": str(copy), "head_seq": head_seq,
                               "at_ns": time.time_ns()})
        _save(known, state_dir)


def accept(store: Path | str, store_id: bytes, head_seq: int, head_hash: bytes | None,
           findings: list[Finding], state_dir: Path | None = None, *, reason: str = "init --new-store",
           extra: Optional[dict] = None) -> dict:
    """The operator's explicit choice: from now on the path holds store_id at this head.

    What was remembered before (the previous store_id, its head, its findings and
    the ones found now) moves into `history`, so the loss stays named. Returns the
    history entry.
    """
    store = os.path.abspath(store)
    with _locked(store, state_dir):
        known = load(store, state_dir)
        entry = {
            "accepted_at_ns": time.time_ns(),
            "reason": reason,
            "uid": os.getuid(),
            "pid": os.getpid(),
            "previous_store_id": known.store_id if known else None,
            "previous_head_seq": known.head_seq if known else 0,
            "previous_head_hash": known.head_hash if known else "",
            "new_store_id": store_id.hex(),
            "new_head_seq": head_seq,
            # Each names what was lost: seqs `seq`..`through_seq` of `store_id`.
            "findings": [{**f.to_json(), "store_id": known.store_id if known else None,
                          "through_seq": known.head_seq if known else 0} for f in findings]
            + (known.findings if known else []),
            "salvaged": known.salvaged if known else [],
            **(extra or {}),
        }
        history = (known.history if known else []) + [entry]
        new = KnownStore(store, store_id.hex(), head_seq, format_hash(head_hash) if head_hash else "",
                         time.time_ns(), [], history)
        _save(new, state_dir)
        _write_head(store, state_dir, store_id, head_seq, head_hash)
        return entry


def write_writer_head(store: Path | str, store_id: bytes, seq: int, digest: bytes | None,
                      state_dir: Path | None = None) -> None:
    """The head a writer other than the daemon (`erase`, `import`, under the writer lock) left."""
    _write_head(store, state_dir, store_id, seq, digest)


def _write_head(store, state_dir, store_id: bytes, seq: int, digest: bytes | None) -> None:
    beacon = HeadFile(store, store_id, state_dir)
    try:
        beacon.write(seq, digest)
    finally:
        beacon.close()


class HeadFile:
    """The writer's last committed head, rewritten in place (one pwrite) after every commit."""

    def __init__(self, store: Path | str, store_id: bytes, state_dir: Path | None = None):
        directory = stores_dir(state_dir)
        _private_dir(directory)
        self._prefix = _HEAD_MAGIC + b" " + store_id.hex().encode() + b" "
        self._fd: Optional[int] = os.open(
            head_path(store, state_dir), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )

    def write(self, seq: int, digest: bytes | None) -> None:
        line = self._prefix + b"%d %s\n" % (seq, format_hash(digest or bytes(32)).encode())
        if self._fd is None:
            raise OSError(errno.EBADF, "the remembered head file is closed")
        os.pwrite(self._fd, line.ljust(_HEAD_SIZE, b" "), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# -- assessing ---------------------------------------------------------------------------


def assess(known: Optional[KnownStore], store_id: Optional[bytes], head_seq: int,
           hash_at: Optional[Callable[[int], Optional[bytes]]] = None) -> list[Finding]:
    """Findings about the store now at a remembered path. `store_id` None: nothing is there.

    `hash_at(seq)` returns the stored hash of the row at seq (None if absent); with it,
    the row at the remembered head is compared too.
    """
    if known is None or not known.store_id:
        return []
    seen = f"store {known.store_id} was seen at {known.path} through seq {known.head_seq}"
    if store_id is None:
        return [Finding(1, "replaced", f"{seen}; the path now holds no store")]
    if store_id.hex() != known.store_id:
        return [Finding(1, "replaced", f"{seen}; the path now holds store {store_id.hex()}")]
    found = [Finding(int(f["seq"]), str(f["kind"]), str(f["detail"]))
             for f in known.findings if f.get("store_id") == known.store_id]
    if head_seq < known.head_seq:
        found.append(Finding(head_seq + 1, "rolled_back", f"the store ends at seq {head_seq}; {seen}"))
    elif hash_at is not None and known.head_seq and known.head_hash:
        stored = hash_at(known.head_seq)
        if stored is not None and format_hash(stored) != known.head_hash:
            found.append(Finding(known.head_seq, "rewritten",
                                 f"seq {known.head_seq} has another hash than when {seen}"))
    return found
