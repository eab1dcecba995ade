"""Tampering with the WAL file itself, while the writer still holds the store open.

Committed rows live in the -wal file until a checkpoint copies them into the main
database. An edit there is either read back by the next reader (its frames are
indexed already) or, when the WAL is recovered, cuts the log at the edited frame.
The first is a content edit both verifiers name; the second drops committed rows
from the tail, which a keyless chain cannot see and the anchor does.
"""

from __future__ import annotations

import shutil

from support import chain_tamper as t

from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

ROWS = 12


def marked(i: int) -> Append:
    return Append(f"wal-{i:04d}", "event", canonical_json({"harness": "test", "note": f"marker-{i:04d}-end"}))


def flip_in_wal(wal, needle: bytes) -> None:
    """Flip one byte of the first WAL frame holding `needle` (later commits rewrite the page)."""
    data = bytearray(wal.read_bytes())
    at = data.find(needle)
    assert at >= 0, "marker must be in the WAL"
    data[at + len(needle) - 1] ^= 0x01  # one byte of the row's payload
    with open(wal, "r+b") as f:  # in place: the same file, as an attacker with write access would
        f.write(data)


def test_edit_in_the_live_wal_is_a_payload_edit_for_both_verifiers(tmp_path):
    path = tmp_path / "store.db"
    store = Store(path)
    try:
        store.append([marked(i) for i in range(1, ROWS + 1)])
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size > 0
        flip_in_wal(wal, b"marker-0007")
        library, standalone = t.both_verdicts(path)
    finally:
        store.close()
    assert library == (False, "payload_edited", 7)
    assert standalone == (False, "payload_edited", 7)


def test_edit_in_a_wal_left_by_a_crash_drops_the_tail_and_only_the_anchor_sees_it(tmp_path):
    path = tmp_path / "store.db"
    state = tmp_path / "state"
    with Store(path) as store:
        store.append([marked(i) for i in range(1, 4)])
    # An earlier verify anchored seq 3; then more rows are committed (into the WAL) ...
    assert verify_store(path, state_dir=state).ok
    store = Store(path)
    for i in range(4, ROWS + 1):
        store.append([marked(i)])  # one commit (one WAL frame set) per row
    # ... and the process dies before any checkpoint: keep a copy of the files as they are.
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{path}{suffix}", crashed / f"store.db{suffix}")
    store.close()
    copy = crashed / "store.db"
    flip_in_wal(copy.with_name("store.db-wal"), b"marker-0009")
    # Recovery rebuilds the WAL index and stops at the first frame whose checksum fails:
    # rows 9..12 are gone, and what is left is a consistent chain of 8 rows.
    alone = verify_store(copy, full=True, update_anchor=False, state_dir=tmp_path / "no-anchor")
    assert (alone.ok, alone.head_seq) == (True, 8)
    anchored = verify_store(copy, full=True, update_anchor=False, state_dir=state)
    assert anchored.ok is True  # the anchor (seq 3) is still below the new head
    # With an anchor taken after the rows were committed, the loss is named.
    later = tmp_path / "later-state"
    assert verify_store(path, state_dir=later).head_seq == ROWS
    result = verify_store(copy, full=True, update_anchor=False, state_dir=later)
    assert (result.ok, result.finding.kind, result.head_seq) == (False, "truncated", 8)
