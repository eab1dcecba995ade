"""RFC 6962 Merkle tree hashing over the chain's row hashes (docs/chain.md, "The tree").

Pure functions and one small class, no I/O: the writer keeps a CompactRange
in its transaction, the verifier recomputes trees, and proofs are built from a
`hash_range(begin, end)` callback that knows where subtree hashes are stored.

Leaves are the chain v1 row hashes, seq 1 at index 0. Hashing follows RFC 6962
section 2.1: leaf = SHA-256(0x00 || row hash), node = SHA-256(0x01 || left || right),
and the tree of zero leaves has the root SHA-256 of nothing.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Iterable, Sequence

_sha256 = hashlib.sha256
EMPTY_ROOT = _sha256(b"").digest()
HASH_SIZE = 32


def leaf_hash(entry: bytes) -> bytes:
    return _sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(b"\x01" + left + right).digest()


def split_point(n: int) -> int:
    """The largest power of two smaller than n (n >= 2): where RFC 6962 splits a list of n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


def perfect_subtrees(begin: int, end: int) -> list[tuple[int, int]]:
    """[begin, end) as perfect subtrees (level, index), left to right, largest first.

    `begin` must be aligned as RFC 6962 aligns a subtree's start: a multiple of the
    power of two at or above end - begin (true for every range the proofs ask for).
    """
    out = []
    at, size = begin, end - begin
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            out.append((level, at >> level))
            at += 1 << level
    return out


def fold(hashes: Sequence[bytes]) -> bytes:
    """The root over perfect subtree hashes listed left to right, largest first."""
    if not hashes:
        return EMPTY_ROOT
    root = hashes[-1]
    for h in reversed(hashes[:-1]):
        root = node_hash(h, root)
    return root


class CompactRange:
    """The perfect subtree roots covering leaves [0, size): all a tree needs to grow.

    `append` returns the nodes it completed as (level, index, hash), leaves
    excluded, so a caller can store the ones it keeps for proofs.
    """

    __slots__ = ("size", "nodes")

    def __init__(self, size: int = 0, nodes: Iterable[bytes] = ()):
        self.size = size
        self.nodes = list(nodes)
        if len(self.nodes) != bin(size).count("1"):
            raise ValueError(f"a compact range of size {size} has {bin(size).count('1')} nodes, not {len(self.nodes)}")

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add one leaf hash (already leaf_hash'ed)."""
        size, nodes = self.size, self.nodes
        h, level, done = leaf, 0, []
        while size >> level & 1:
            h = node_hash(nodes.pop(), h)
            level += 1
            done.append((level, size >> level, h))
        nodes.append(h)
        self.size = size + 1
        return done

    def extend(self, entries: Sequence[bytes], keep_every: int = 1) -> list[tuple[int, int, bytes]]:
        """Append the leaves of `entries` (row hashes, leaf-hashed here) in one go: the writer's path.

        Returns the completed nodes whose level is a multiple of `keep_every`.
        """
        sha = _sha256
        nodes, size, kept = self.nodes, self.size, []
        for entry in entries:
            h = sha(b"\x00" + entry).digest()
            s, level = size, 0
            while s & 1:
                h = sha(b"\x01" + nodes.pop() + h).digest()
                s >>= 1
                level += 1
                if level % keep_every == 0:
                    kept.append((level, s, h))
            nodes.append(h)
            size += 1
        self.size = size
        return kept

    def root(self) -> bytes:
        return fold(self.nodes)

    def copy(self) -> "CompactRange":
        return CompactRange(self.size, self.nodes)

    def to_bytes(self) -> bytes:
        return b"".join(self.nodes)

    @classmethod
    def from_bytes(cls, size: int, data: bytes) -> "CompactRange":
        if len(data) % HASH_SIZE:
            raise ValueError("a compact range is a whole number of 32-byte hashes")
        return cls(size, [data[i : i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)])


def root_of(leaves: Iterable[bytes]) -> bytes:
    """The root over leaf hashes, by streaming them through a compact range."""
    cr = CompactRange()
    for leaf in leaves:
        cr.append(leaf)
    return cr.root()


# --- proofs (RFC 6962 section 2.1.1 and 2.1.2, as RFC 9162 section 2.1.3 and 2.1.4) -------------

HashRange = Callable[[int, int], bytes]


def inclusion_proof(index: int, size: int, hash_range: HashRange) -> list[bytes]:
    """PATH(index, D[0:size]), bottom up. hash_range(begin, end) is MTH(D[begin:end])."""
    if not 0 <= index < size:
        raise ValueError(f"leaf index {index} is outside a tree of size {size}")
    path: list[bytes] = []
    begin, end = 0, size
    while end - begin > 1:
        k = split_point(end - begin)
        if index < begin + k:
            path.append(hash_range(begin + k, end))
            end = begin + k
        else:
            path.append(hash_range(begin, begin + k))
            begin += k
    path.reverse()
    return path


def consistency_proof(old: int, new: int, hash_range: HashRange) -> list[bytes]:
    """PROOF(old, D[0:new]), for 0 < old <= new; empty when old == new."""
    if not 0 < old <= new:
        raise ValueError(f"no consistency proof from size {old} to size {new}")
    path: list[bytes] = []
    begin, end, m, whole = 0, new, old, True
    while m != end - begin:
        k = split_point(end - begin)
        if m <= k:
            path.append(hash_range(begin + k, end))
            end = begin + k
        else:
            path.append(hash_range(begin, begin + k))
            begin += k
            m -= k
            whole = False
    if not whole:
        path.append(hash_range(begin, end))
    path.reverse()
    return path


class ProofError(ValueError):
    """A proof does not verify."""


def _check_hash(name: str, value: bytes) -> None:
    if not isinstance(value, bytes) or len(value) != HASH_SIZE:
        raise ProofError(f"{name} is not a 32-byte hash")


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root an inclusion proof leads to (RFC 9162 section 2.1.3.2)."""
    _check_hash("the leaf hash", leaf)
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        _check_hash("a proof hash", p)
        if sn == 0:
            raise ProofError("the proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than the tree is deep")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """Raise ProofError unless `leaf` sits at `index` in the tree of `size` leaves with `root`."""
    _check_hash("the root", root)
    if root_from_inclusion(index, size, leaf, proof) != root:
        raise ProofError("the inclusion proof leads to a different root")


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """Raise ProofError unless the tree (new, new_root) extends (old, old_root) (RFC 9162 section 2.1.4.2)."""
    if old < 1:
        raise ProofError("a tree of size 0 has nothing to be consistent with")
    if old > new:
        raise ProofError(f"size {new} is smaller than size {old}")
    if old == new:
        if proof:
            raise ProofError("trees of equal size need an empty proof")
        if old_root != new_root:
            raise ProofError("two different roots for one tree size")
        return
    _check_hash("the old root", old_root)
    _check_hash("the new root", new_root)
    for p in proof:
        _check_hash("a proof hash", p)
    if not proof:
        raise ProofError("the proof is empty")
    path = list(proof)
    if old & (old - 1) == 0:  # a power of two: the old root is itself a node of the new tree
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the proof is longer than needed")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is shorter than needed")
    if fr != old_root:
        raise ProofError("the proof does not lead to the old root")
    if sr != new_root:
        raise ProofError("the proof does not lead to the new root")
