"""The Merkle tree the writer keeps in its append transaction (migration 0005, agentwatch/store/tree.py)."""

from __future__ import annotations

import sqlite3

from agentwatch.evidence.stored_tree import StoredTree, roots_at
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.store.merkle import leaf_hash


def _rows(first: int, count: int) -> list[Append]:
    return [Append(f"r-{i}", "event", canonical_json({"n": i})) for i in range(first, first + count)]


# Read through apsw: closing a stdlib sqlite3 connection would drop the POSIX locks of the
# apsw connection a Store holds on the same file in this process.
def _hashes(path) -> list[bytes]:
    con = db.open_reader(path)
    try:
        return [h for (h,) in con.execute("SELECT hash FROM records ORDER BY seq")]
    finally:
        con.close()


def _state(path) -> tuple[int, bytes, int]:
    con = db.open_reader(path)
    try:
        size, root = con.execute("SELECT size, root FROM _agentwatch_tree").fetchone()
        nodes = con.execute("SELECT count(*) FROM _agentwatch_tree_nodes").fetchone()[0]
        return size, root, nodes
    finally:
        con.close()


def test_each_commit_keeps_the_tree_of_all_rows(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        for first in (1, 4, 301):  # batches of 3, 297 and 400 rows
            store.append(_rows(first, {1: 3, 4: 297, 301: 400}[first]))
            hashes = _hashes(path)
            roots, tree, _ = roots_at(hashes, [])
            assert store.tree_head == (len(hashes), tree.root())
            assert _state(path)[:2] == (len(hashes), tree.root())
    # 700 rows: two complete subtrees of 256 leaves are stored (level 8, indexes 0 and 1)
    assert _state(path) == (700, tree.root(), 2)


def test_stored_subtrees_give_the_same_hashes_as_the_rows(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.append(_rows(1, 600))
    leaves = [leaf_hash(h) for h in _hashes(path)]
    conn = db.open_reader(path)
    try:
        tree = StoredTree(conn)
        for size in (1, 2, 255, 256, 257, 511, 512, 600):
            assert tree.root(size) == roots_at(_hashes(path), [size])[0][size]
        assert tree.node(8, 1) == roots_at([h for h in _hashes(path)[256:512]], [256])[0][256]
    finally:
        conn.close()
    assert len(leaves) == 600


def test_a_store_without_tree_state_catches_up_in_the_next_append(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.append(_rows(1, 300))
    con = sqlite3.connect(path)
    con.execute("DELETE FROM _agentwatch_tree")
    con.execute("DELETE FROM _agentwatch_tree_nodes")
    con.commit()
    con.close()
    with Store(path) as store:
        store.append(_rows(301, 5))
        assert store.take_foreign_rows() == []
    roots, tree, _ = roots_at(_hashes(path), [])
    assert _state(path) == (305, tree.root(), 1)


def test_rows_appended_by_another_connection_are_noticed(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as store, Store(path) as other:
        store.append(_rows(1, 3))
        other.append(_rows(4, 2))
        store.append(_rows(6, 1))
        assert store.take_foreign_rows() == [(4, 5)]
        assert store.take_foreign_rows() == []  # handed out once
        assert store.tree_head == (6, roots_at(_hashes(path), [])[1].root())
