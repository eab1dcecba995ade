"""Reading the Merkle tree of a store: subtree hashes for proofs, roots recomputed from rows.

Proofs are built from what the store holds (the row hashes and the stored
subtree hashes of migration 0005); nothing read here is trusted, because every
proof is checked against a signed root before anyone relies on it. Roots for
verification are recomputed from the row hashes (`roots_at`).
"""

from __future__ import annotations

from typing import Iterable

import apsw

from agentwatch.store.merkle import (
    CompactRange,
    consistency_proof,
    fold,
    inclusion_proof,
    leaf_hash,
    node_hash,
    perfect_subtrees,
)
from agentwatch.store.tree import TILE_HEIGHT, has_tree

_LEAVES_SQL = "SELECT seq, hash FROM records WHERE seq > ? AND seq <= ? ORDER BY seq"
_NODES_SQL = "SELECT idx, hash FROM _agentwatch_tree_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx"


class TreeReadError(Exception):
    """The store lacks the rows or hashes a proof needs."""


class StoredTree:
    """Subtree hashes of a store's tree, read on `conn` (one read transaction per proof)."""

    def __init__(self, conn: apsw.Connection):
        self.conn = conn
        self.stored_nodes = has_tree(conn)

    def _leaves(self, begin: int, end: int) -> list[bytes]:
        rows = self.conn.execute(_LEAVES_SQL, (begin, end)).fetchall()
        if len(rows) != end - begin or (rows and rows[0][0] != begin + 1) or not all(
            isinstance(h, bytes) and len(h) == 32 for _, h in rows
        ):
            raise TreeReadError(f"rows {begin + 1}..{end} are not all present with 32-byte hashes")
        return [leaf_hash(h) for _, h in rows]  # type: ignore[arg-type]  # checked to be bytes above

    def _level(self, level: int, begin: int, end: int) -> list[bytes]:
        """Hashes of the complete subtrees at `level`, indexes begin..end-1."""
        if level == 0:
            return self._leaves(begin, end)
        if self.stored_nodes:
            rows = self.conn.execute(_NODES_SQL, (level, begin, end)).fetchall()
            if len(rows) == end - begin and all(isinstance(h, bytes) and len(h) == 32 for _, h in rows):
                return [h for _, h in rows]  # type: ignore[misc]  # checked to be bytes above
        below = self._level(level - TILE_HEIGHT, begin << TILE_HEIGHT, end << TILE_HEIGHT)
        return [_perfect_root(below[i << TILE_HEIGHT : (i + 1) << TILE_HEIGHT]) for i in range(end - begin)]

    def node(self, level: int, index: int) -> bytes:
        base = level - level % TILE_HEIGHT
        width = level - base
        return _perfect_root(self._level(base, index << width, (index + 1) << width))

    def hash_range(self, begin: int, end: int) -> bytes:
        """MTH(D[begin:end]) for the ranges RFC 6962 proofs ask for."""
        return fold([self.node(level, index) for level, index in perfect_subtrees(begin, end)])

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return inclusion_proof(index, size, self.hash_range)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return consistency_proof(old, new, self.hash_range)

    def root(self, size: int) -> bytes:
        return self.hash_range(0, size) if size else fold([])


def _perfect_root(hashes: list[bytes]) -> bytes:
    """The root of a perfect subtree over a power-of-two count of hashes."""
    while len(hashes) > 1:
        hashes = [node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


def roots_at(row_hashes: Iterable[bytes], sizes: Iterable[int], start: CompactRange | None = None,
             keep: int | None = None) -> tuple[dict[int, bytes], CompactRange, CompactRange | None]:
    """Stream row hashes (seq order, from row start.size + 1) through a compact range.

    Returns the roots at `sizes` (those at or above the start), the final range, and a copy
    of the range at size `keep` (None if the stream never reached it).
    """
    tree = start.copy() if start is not None else CompactRange()
    wanted = sorted(n for n in set(sizes) if n >= tree.size)
    roots: dict[int, bytes] = {}
    kept = tree.copy() if keep == tree.size else None
    at = 0
    while at < len(wanted) and wanted[at] == tree.size:
        roots[tree.size] = tree.root()
        at += 1
    for digest in row_hashes:
        tree.append(leaf_hash(digest))
        while at < len(wanted) and wanted[at] == tree.size:
            roots[tree.size] = tree.root()
            at += 1
        if keep == tree.size:
            kept = tree.copy()
    return roots, tree, kept
