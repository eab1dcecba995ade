"""The Merkle tree's persisted state, kept by the writer inside its append transaction.

`_agentwatch_tree` holds the compact range over rows 1..size (migration 0005);
`_agentwatch_tree_nodes` the complete subtrees at every TILE_HEIGHT-th level,
for proofs. A store migrated from before the tree, or whose tree state does not
match its rows, is brought up to date from the stored row hashes in the next
append transaction.
"""

from __future__ import annotations

import apsw

from agentwatch.store.merkle import CompactRange

TILE_HEIGHT = 8  # levels between stored node levels: a stored node per 256 of the level below

_STATE_SQL = "SELECT size, nodes FROM _agentwatch_tree WHERE id = 1"
_SAVE_SQL = "INSERT OR REPLACE INTO _agentwatch_tree (id, size, nodes, root) VALUES (1, ?, ?, ?)"
_NODE_SQL = "INSERT OR REPLACE INTO _agentwatch_tree_nodes (level, idx, hash) VALUES (?, ?, ?)"
_HASHES_SQL = "SELECT hash FROM records WHERE seq > ? AND seq <= ? ORDER BY seq"


def has_tree(conn: apsw.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = '_agentwatch_tree'").fetchone() is not None


def load(conn: apsw.Connection) -> CompactRange | None:
    """The persisted compact range, or None when there is none or it does not parse."""
    row = conn.execute(_STATE_SQL).fetchone()
    if row is None:
        return None
    try:
        return CompactRange.from_bytes(row[0], row[1])
    except (ValueError, TypeError):
        return None


def extend(conn: apsw.Connection, tree: CompactRange, head_seq: int) -> None:
    """Add rows tree.size+1 .. head_seq to the tree and store their completed nodes."""
    nodes = tree.extend([digest for (digest,) in conn.execute(_HASHES_SQL, (tree.size, head_seq))], TILE_HEIGHT)
    if tree.size != head_seq:
        raise apsw.CorruptError(f"the records table has no contiguous rows 1..{head_seq}")
    if nodes:
        conn.executemany(_NODE_SQL, nodes)


def catch_up(conn: apsw.Connection, head_seq: int) -> CompactRange:
    """The tree over rows 1..head_seq, from the persisted state where it still fits (in a write transaction)."""
    tree = load(conn)
    if tree is None or tree.size > head_seq:
        tree = CompactRange()
    extend(conn, tree, head_seq)
    return tree


def save(conn: apsw.Connection, tree: CompactRange, nodes: list) -> bytes:
    """Persist the compact range and the completed nodes worth keeping; returns the root."""
    if nodes:
        conn.executemany(_NODE_SQL, nodes)
    root = tree.root()
    conn.execute(_SAVE_SQL, (tree.size, tree.to_bytes(), root))
    return root
