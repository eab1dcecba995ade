"""Checking a store against the evidence kept outside it (docs/chain.md, "Checkpoints and witnesses").

`check_evidence` recomputes the store's Merkle tree from its row hashes and
compares it with every signed checkpoint it can find: the signer's record
(checkpoints/<store_id>.json) and each witness's copy. It names:

    truncated      a checkpoint covers more rows than the store has
    rolled_back    ... and the store is a self-consistent older copy (its own tree state matches its rows)
    rewritten      the store's tree at a checkpoint's size has another root
    unsigned       rows after the newest checkpoint while no daemon serves the store (it signs at stop)
    replaced       a checkpoint for this store's path names another store id
    witness_missing  a witness no longer holds the checkpoint it accepted
    bad_checkpoint   a checkpoint that does not verify with the store's key
    tree_mismatch    the tree state kept in the store does not match its rows
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import apsw

from agentwatch.evidence import trust
from agentwatch.evidence.checkpoints import CheckpointError, origin_for, read_state, read_verifier, state_path
from agentwatch.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint
from agentwatch.evidence.stored_tree import roots_at
from agentwatch.evidence.witness import DirectoryWitness
from agentwatch.store.merkle import CompactRange
from agentwatch.store.tree import has_tree, load
from agentwatch.store.writerlock import writer_holds
from agentwatch.verify import known_stores
from agentwatch.verify.findings import Finding

EVIDENCE_FINDINGS = {
    "rolled_back": "the store is an older, self-consistent copy: a signed checkpoint covers more rows",
    "unsigned": "rows after the newest signed checkpoint while no daemon serves the store (it signs at stop)",
    "replaced": "the store at this path has another store id than one a checkpoint was signed for",
    "witness_missing": "a witness no longer holds the checkpoint it accepted",
    "bad_checkpoint": "a checkpoint that does not verify with the store's key",
    "tree_mismatch": "the Merkle tree state kept in the store does not match its rows",
}

# Verdicts backed by a signed checkpoint; tree_mismatch, witness_missing and bad_checkpoint
# describe the evidence itself, not the rows.
SIGNED_VERDICTS = frozenset({"truncated", "rolled_back", "rewritten", "unsigned", "replaced"})

_HASHES_SQL = "SELECT hash FROM records WHERE seq > ? ORDER BY seq"


@dataclass
class EvidenceReport:
    findings: list[Finding] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    tree_size: int = 0
    tree_root: bytes = b""
    kept: CompactRange | None = None  # the tree at the size asked for (the new anchor's)
    resumed_at: int = 0  # the tree was extended from the anchor's range at this size (0: from genesis)
    # Stores replaced at this path by an explicit `init --new-store` whose evidence still exists:
    # {store_id, source, accepted_at_ns, accepted_at}. Named for as long as the evidence exists.
    history: list[dict[str, Any]] = field(default_factory=list)
    trust: str = ""  # evidence/trust.py: what kind of evidence this check rested on

    def to_json(self) -> dict[str, Any]:
        import base64

        return {
            "tree_size": self.tree_size,
            "tree_resumed_at": self.resumed_at,
            "tree_root": base64.b64encode(self.tree_root).decode() if self.tree_root else None,
            "checkpoints": self.checkpoints,
            "history": self.history,
            "trust": self.trust,
            "findings": [f.to_json() for f in self.findings],
        }


def daemon_serving(store: Path) -> bool:
    """Whether a writer (the daemon) holds the store: its lock file, or on Linux the lock on the
    store file itself, which deleting the lock file does not remove (store/writerlock.py)."""
    return writer_holds(store)


def _row_hashes(conn: apsw.Connection, after: int) -> Iterable[bytes]:
    for (h,) in conn.execute(_HASHES_SQL, (after,)):
        yield h if isinstance(h, bytes) else b""


def check_evidence(conn: apsw.Connection, store: Path, store_id: bytes, *, state_dir: Path | None,
                   witness_dirs: Iterable[Path] = (), key: str | None = None,
                   serving: bool | None = None, resume: CompactRange | None = None,
                   keep: int | None = None) -> EvidenceReport:
    """Compare the store with every checkpoint held outside it. `conn` is a read-only connection.

    `resume` is the tree over rows 1..resume.size that an earlier verify computed (the
    anchor's): the tree is extended from there when no checkpoint is older, so an
    incremental verify hashes only the new rows. `report.kept` is the range at size `keep`.
    """
    report = EvidenceReport()
    witness_dirs = list(witness_dirs)
    report.trust = trust.level(witness_dirs, [state_path(store_id, state_dir).parent])
    origin = origin_for(store_id)
    here = os.path.realpath(store)
    verifier = read_verifier(store_id, state_dir, key)
    witnesses = [DirectoryWitness(d) for d in witness_dirs]

    notes: list[tuple[str, str, Verifier | None]] = []
    try:
        state = read_state(store_id, state_dir)
    except CheckpointError as exc:
        report.findings.append(Finding(0, "bad_checkpoint", str(exc)))
        state = None
    if state is not None:
        notes.append(("signer", state.note, verifier))
    for w in witnesses:
        held = w.held(origin)
        if held is None or not held.note:
            continue
        pinned = None
        try:
            pinned = Verifier.parse(held.verifier_key)
        except NoteError:
            pass
        if verifier is not None and pinned is not None and pinned != verifier:
            report.findings.append(Finding(0, "bad_checkpoint",
                                           f"witness {w.name} trusts another key for this store than keys/{store_id.hex()}.pub"))
        notes.append((f"witness:{w.name}", held.note, verifier or pinned))

    checkpoints: list[tuple[str, Checkpoint]] = []
    for source, note, v in notes:
        if v is None:
            report.findings.append(Finding(0, "bad_checkpoint", f"{source}: no verifier key for this store"))
            continue
        try:
            checkpoints.append((source, open_checkpoint(note, v)))
        except NoteError as exc:
            report.findings.append(Finding(0, "bad_checkpoint", f"{source}: the checkpoint does not verify: {exc}"))

    conn.execute("BEGIN")
    try:
        stored = load(conn) if has_tree(conn) else None
        sizes = [cp.size for _, cp in checkpoints]
        if stored is not None:
            sizes.append(stored.size)
        if resume is not None and any(n < resume.size for n in sizes):
            resume = None  # a checkpoint older than the anchor: recompute from genesis
        report.resumed_at = resume.size if resume else 0
        roots, tree, report.kept = roots_at(_row_hashes(conn, resume.size if resume else 0), sizes, resume, keep)
    finally:
        conn.execute("COMMIT")
    head = tree.size
    report.tree_size, report.tree_root = head, tree.root()

    if stored is not None and stored.size <= head and roots[stored.size] != stored.root():
        report.findings.append(Finding(stored.size, "tree_mismatch",
                                       f"the tree kept in the store at size {stored.size} does not match its rows"))
    self_consistent = stored is not None and stored.size == head and stored.root() == tree.root()

    for source, cp in checkpoints:
        entry = {"source": source, "size": cp.size, "status": "consistent"}
        if cp.size > head:
            kind = "rolled_back" if self_consistent else "truncated"
            entry["status"] = kind
            report.findings.append(Finding(head + 1, kind, f"{source} holds a signed checkpoint of {cp.size} rows; "
                                           f"the store has {head}"))
        elif roots[cp.size] != cp.root:
            entry["status"] = "rewritten"
            report.findings.append(Finding(cp.size, "rewritten", f"{source}: the store's tree at {cp.size} rows has "
                                           "another root than the signed checkpoint: rows at or before it changed"))
        report.checkpoints.append(entry)

    signed = max((cp.size for _, cp in checkpoints), default=None)
    if signed is not None and head > signed:
        if serving is None:
            serving = daemon_serving(Path(store))
        if not serving:
            report.findings.append(Finding(signed + 1, "unsigned", f"rows {signed + 1}..{head} are covered by no "
                                           "signed checkpoint, and no daemon serves the store (it signs at stop): "
                                           "appended outside the recorder, or after a crash"))

    if state is not None:
        for name, size in sorted(state.witnesses.items()):
            held = DirectoryWitness(name).held(origin) if os.path.isabs(name) else None
            held_size = held.size if held is not None and held.note else 0
            if held_size < size:
                report.findings.append(Finding(size, "witness_missing",
                                               f"witness {name} accepted {size} rows and now holds {held_size}"))

    # Stores that `agentwatch init --new-store` accepted away at this path are named in its
    # history (verify/known_stores.py), not as a replacement again.
    known = known_stores.load(store, state_dir)
    accepted = {entry.get("previous_store_id"): entry for entry in known.history} if known is not None else {}
    for other_id, other_store, source in _others(state_dir, witnesses, store_id):
        if not other_store or os.path.realpath(other_store) != here:
            continue
        if other_id in accepted:
            at = int(accepted[other_id].get("accepted_at_ns") or 0)
            report.history.append({"store_id": other_id, "source": source, "accepted_at_ns": at,
                                   "accepted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at / 1e9))})
            continue
        report.findings.append(Finding(1, "replaced", f"{source} was signed for store {other_id} at this path; "
                                       f"the store here is {store_id.hex()}"))
    return report


def _others(state_dir: Path | None, witnesses: list[DirectoryWitness], store_id: bytes):
    """(store id, store path, source) of checkpoints kept for other stores."""
    seen = set()
    directory = state_path(store_id, state_dir).parent
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        names = []
    for name in names:
        other = name[:-5] if name.endswith(".json") else ""
        if len(other) != 32 or other == store_id.hex():
            continue
        try:
            state = read_state(bytes.fromhex(other), state_dir)
        except (CheckpointError, ValueError):
            continue
        if state is not None and (other, state.store) not in seen:
            seen.add((other, state.store))
            yield other, state.store, "the checkpoint record"
    for w in witnesses:
        for held in w.entries():
            other = held.origin.rsplit("/", 1)[-1]
            if held.origin != origin_for(store_id) and held.store and (other, held.store) not in seen:
                seen.add((other, held.store))
                yield other, held.store, f"witness {w.name}"
