"""The tamper matrix against signed checkpoints, with and without a witness (docs/chain.md, "Threat model").

Each case records 40 rows, signs a checkpoint of them as the daemon does at stop (the
signer's record under the state dir, and with a witness also the witness directory),
runs a clean verify (the anchor), then attacks the store the way a process with the
user's rights can, and checks every finding `verify` reports: those about the store as a
whole (what is remembered about its path), then the chain's and the checkpoints' in seq
order. Without a witness the evidence outside the store is the anchor, the remembered
store and the signer's record.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import chain_tamper as t

from agentwatch.errors import exit_for_findings
from agentwatch.evidence.audit import verify_store
from agentwatch.evidence.checkpoints import Notary, state_path
from agentwatch.evidence.witness import DirectoryWitness
from agentwatch.store.append import Store
from agentwatch.verify import known_stores
from agentwatch.verify.anchors import anchor_path

ROWS = 40
OLD = 30  # rows in the older copy a rollback restores


class Setup:
    def __init__(self, root: Path, witness: bool):
        self.root = root
        self.store = root / "data" / "store.db"
        self.state = root / "state"
        self.witness_dir = root / "witness"
        self.witnesses = [self.witness_dir] if witness else []
        self.store.parent.mkdir(parents=True)
        self.old_copy = root / "old.db"
        with Store(self.store) as store:
            store.append(t.appends(1, OLD))
            self.sign(store)
        shutil.copyfile(self.store, self.old_copy)  # closed: the WAL is folded into the file
        with Store(self.store) as store:
            store.append(t.appends(OLD + 1, ROWS - OLD))
            self.store_id = store.store_id
            self.sign(store)
        assert self.verify().ok

    def sign(self, store: Store) -> None:
        witnesses = [DirectoryWitness(d) for d in self.witnesses]
        notary = Notary(self.store, store.store_id, lambda: store.tree_head, state_dir=self.state,
                        witnesses=witnesses)
        for w in witnesses:
            w.trust(notary.verifier, os.path.abspath(self.store))
        signed = notary.sign()
        assert signed.witnesses == {str(d): "accepted" for d in self.witnesses}

    def verify(self, full: bool = False):
        return verify_store(self.store, full=full, state_dir=self.state, witness_dirs=self.witnesses)


def _edit(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.flip_payload_byte(con, 10)


def _delete(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.delete_row(con, 10)


def _swap(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.swap_rows(con, 10, 11)


def _truncate(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.truncate(con, OLD)


def _rechain(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.flip_payload_byte(con, 10)
        t.rehash_from(con, s.store_id, 10)


def _forged_append(s: Setup) -> None:
    with t.tamper(s.store) as con:
        t.forge(con, s.store_id, ROWS + 1, t.raw(con, ROWS)[5])


def _rollback(s: Setup) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{s.store}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(s.old_copy, s.store)


def _new_store_id(s: Setup) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{s.store}{suffix}").unlink(missing_ok=True)
    t.build_store(s.store, ROWS)  # the same rows, recorded again under a fresh store id


def _deleted_anchor(s: Setup) -> None:
    anchor_path(s.store_id, s.state).unlink()
    _truncate(s)


def _deleted_witness_copy(s: Setup) -> None:
    if s.witnesses:
        for entry in s.witness_dir.glob("*.json"):
            entry.unlink()
    else:  # the only copy outside the store without a witness: the signer's record
        state_path(s.store_id, s.state).unlink()
    _truncate(s)


def _all_local_evidence_deleted(s: Setup) -> None:
    anchor_path(s.store_id, s.state).unlink()
    state_path(s.store_id, s.state).unlink()
    known_stores.record_path(s.store, s.state).unlink()
    known_stores.head_path(s.store, s.state).unlink(missing_ok=True)
    _truncate(s)


# (tamper, findings with a witness, findings without one): (kind, seq), in seq order.
# (tamper, the finding about the store as a whole from what is remembered about its path
# (verify/known_stores.py), the chain's and checkpoints' findings with a witness, without one).
MATRIX = {
    "edit": (_edit, [], [("payload_edited", 10)], [("payload_edited", 10)]),
    "delete": (_delete, [], [("missing", 10)] + [("truncated", 40)] * 2, [("missing", 10), ("truncated", 40)]),
    "swap": (_swap, [], [("reordered", 10)] + [("rewritten", 40)] * 2 + [("tree_mismatch", 40)],
             [("reordered", 10), ("rewritten", 40), ("tree_mismatch", 40)]),
    "truncate": (_truncate, [("truncated", 31)], [("truncated", 31)] * 3, [("truncated", 31)] * 2),
    "re-chain suffix": (_rechain, [("rewritten", 40)], [("rewritten", 40)] * 3 + [("tree_mismatch", 40)],
                        [("rewritten", 40)] * 2 + [("tree_mismatch", 40)]),
    "forged append": (_forged_append, [], [("unsigned", 41)], [("unsigned", 41)]),
    "rollback to an older copy": (_rollback, [("rolled_back", 31)], [("rolled_back", 31)] * 2 + [("truncated", 31)],
                                  [("rolled_back", 31), ("truncated", 31)]),
    "full rewrite under a new store id": (_new_store_id, [("replaced", 1)], [("replaced", 1)], [("replaced", 1)]),
    "deleted anchor": (_deleted_anchor, [("truncated", 31)], [("truncated", 31)] * 2, [("truncated", 31)]),
    "deleted witness copy": (_deleted_witness_copy, [("truncated", 31)],
                             [("truncated", 31)] * 2 + [("witness_missing", 40)], [("truncated", 31)]),
    "all local evidence deleted": (_all_local_evidence_deleted, [], [("truncated", 31)], []),
}


# docs/chain.md's threat table, the exit code of its verdict for each attack (issue #24, class 13).
TABLE_EXIT = {"edit": 1, "delete": 6, "swap": 1, "truncate": 6, "re-chain suffix": 1, "forged append": 1,
              "rollback to an older copy": 5, "full rewrite under a new store id": 4, "deleted anchor": 6,
              "deleted witness copy": 6, "all local evidence deleted": 6}


@pytest.mark.parametrize("witness", [True, False], ids=["witness", "no witness"])
@pytest.mark.parametrize("case", list(MATRIX))
def test_tamper_matrix_with_checkpoints(tmp_path, case, witness):
    tamper, store_level, with_witness, without = MATRIX[case]
    s = Setup(tmp_path, witness)
    tamper(s)
    result = s.verify(full=True)
    breaks = with_witness if witness else without
    assert [(f.kind, f.seq) for f in result.findings] == store_level + breaks
    assert result.ok is (not store_level + breaks)
    # The exit code is the one the threat table's finding has (truncated 6, rolled_back 5, ...).
    assert result.exit_code == exit_for_findings(k for k, _ in store_level + breaks)
    assert result.exit_code == (TABLE_EXIT[case] if witness or case != "all local evidence deleted" else 0)
    # `finding` is the first break the chain or a signed checkpoint shows, else the store-level one.
    first = None if result.finding is None else (result.finding.kind, result.finding.seq)
    assert first == (breaks or store_level or [None])[0]


def test_an_incremental_verify_extends_the_tree_from_the_anchor(tmp_path):
    """The anchor keeps the tree's compact range, so the next verify hashes only the new rows."""
    s = Setup(tmp_path, witness=True)
    anchor = verify_store(s.store, state_dir=s.state, witness_dirs=s.witnesses).anchor.after
    assert (anchor.seq, len(anchor.tree)) == (ROWS, 32 * bin(ROWS).count("1"))
    with Store(s.store) as store:
        store.append(t.appends(ROWS + 1, 5))
        s.sign(store)
    again = verify_store(s.store, state_dir=s.state, witness_dirs=s.witnesses)
    assert (again.ok, again.mode, again.rows_checked, again.evidence.resumed_at) == (True, "incremental", 5, ROWS)
    assert again.evidence.tree_root == _signed_root(s)
    full = verify_store(s.store, full=True, state_dir=s.state, witness_dirs=s.witnesses)
    assert (full.ok, full.evidence.resumed_at, full.evidence.tree_root) == (True, 0, again.evidence.tree_root)


def _signed_root(s: Setup) -> bytes:
    from agentwatch.evidence.checkpoints import read_state
    from agentwatch.evidence.note import Checkpoint, split_note

    return Checkpoint.parse(split_note(read_state(s.store_id, s.state).note)[0]).root
