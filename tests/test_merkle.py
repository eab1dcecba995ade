"""RFC 6962 tree hashing and proofs, against the published vectors and a direct reading of the RFC.

tests/vectors/rfc6962/ holds the inclusion and consistency proof vectors of the
transparency-dev/merkle project (its README names the commit): happy paths and
corrupted proofs, each with the verdict it expects.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentwatch.store.merkle import (
    EMPTY_ROOT,
    CompactRange,
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_of,
    split_point,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).parent / "vectors" / "rfc6962"
INCLUSION = sorted((VECTORS / "inclusion").rglob("*.json"))
CONSISTENCY = sorted((VECTORS / "consistency").rglob("*.json"))


def _b(text: str) -> bytes:
    return base64.b64decode(text) if text else b""


def _id(path: Path) -> str:
    return str(path.relative_to(VECTORS))


def test_the_vector_files_are_all_there():
    assert (len(INCLUSION), len(CONSISTENCY)) == (98, 98)


@pytest.mark.parametrize("path", INCLUSION, ids=_id)
def test_inclusion_vectors(path: Path):
    v = json.loads(path.read_text())
    args = (v["leafIdx"], v["treeSize"], _b(v["leafHash"]), [_b(p) for p in v["proof"] or []], _b(v["root"]))
    if v["wantErr"]:
        with pytest.raises(ProofError):
            verify_inclusion(*args)
    else:
        verify_inclusion(*args)


@pytest.mark.parametrize("path", CONSISTENCY, ids=_id)
def test_consistency_vectors(path: Path):
    v = json.loads(path.read_text())
    args = (v["size1"], v["size2"], _b(v["root1"]), _b(v["root2"]), [_b(p) for p in v["proof"] or []])
    if v["wantErr"]:
        with pytest.raises(ProofError):
            verify_consistency(*args)
    else:
        verify_consistency(*args)


def mth(leaves: list[bytes]) -> bytes:
    """MTH as RFC 6962 section 2.1 defines it, recursively: the reference the fast paths must match."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = split_point(len(leaves))
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def test_the_empty_tree_and_the_vectors_leaf_recipe():
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    # The vectors' first leaf is the RFC 6962 leaf hash of the empty entry.
    happy = json.loads((VECTORS / "inclusion" / "1" / "happy-path.json").read_text())
    assert leaf_hash(b"") == _b(happy["leafHash"])


@given(st.integers(min_value=1, max_value=70))
def test_proofs_made_here_verify_and_are_at_most_log2_n_hashes(n: int):
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]
    root = mth(leaves)
    assert root_of(leaves) == root
    hash_range = lambda a, b: mth(leaves[a:b])  # noqa: E731
    for i in range(n):
        proof = inclusion_proof(i, n, hash_range)
        assert len(proof) <= math.ceil(math.log2(n)) if n > 1 else proof == []
        verify_inclusion(i, n, leaves[i], proof, root)
    for m in range(1, n + 1):
        proof = consistency_proof(m, n, hash_range)
        verify_consistency(m, n, mth(leaves[:m]), root, proof)
        if m < n:
            with pytest.raises(ProofError):
                verify_consistency(m, n, mth(leaves[:m]), leaf_hash(b"other"), proof)


def test_a_compact_range_grows_and_round_trips():
    cr = CompactRange()
    leaves = [leaf_hash(i.to_bytes(2, "big")) for i in range(300)]
    completed = []
    for i, leaf in enumerate(leaves):
        completed += cr.append(leaf)
        assert cr.root() == mth(leaves[: i + 1])
    again = CompactRange.from_bytes(cr.size, cr.to_bytes())
    assert (again.size, again.root()) == (300, mth(leaves))
    # every complete subtree above the leaves, once: 300 - popcount(300) of them
    assert len(completed) == 300 - bin(300).count("1")
    assert (8, 0, mth(leaves[:256])) in completed
    with pytest.raises(ValueError):
        CompactRange(3, [bytes(32)])


def test_extend_is_append_in_one_go():
    entries = [i.to_bytes(4, "big") for i in range(70000)]
    one, many = CompactRange(), CompactRange()
    kept = [n for e in entries for n in one.append(leaf_hash(e)) if n[0] % 8 == 0]
    assert many.extend(entries[:1000], 8) + many.extend(entries[1000:], 8) == kept
    assert (many.size, many.root()) == (one.size, one.root())
    assert [(level, index) for level, index, _ in kept] == [(8, i) for i in range(256)] + [(16, 0)] + [
        (8, i) for i in range(256, 273)
    ]
