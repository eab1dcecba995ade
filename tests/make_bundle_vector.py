"""Build tests/vectors/bundle_v1.json: proof bundles pinned byte for byte (docs/chain.md, "Proof bundles").

Everything is fixed: the store_id, five rows, their timestamps, and the signing key
(the secret key of RFC 8032's TEST 1, whose public key is in tests/vectors/rfc8032_ed25519.json).
Ed25519 signatures are deterministic, so rerunning this gives the same file;
tests/test_evidence_proofs.py checks that, and that both verifiers accept the bundles.
    python tests/make_bundle_vector.py > tests/vectors/bundle_v1.json
"""

from __future__ import annotations

import base64
import hashlib
import json

from agentwatch.evidence.checkpoints import origin_for
from agentwatch.evidence.note import Checkpoint, Signer
from agentwatch.store.chain import GENESIS, canonical_json, format_hash, row_hash
from agentwatch.store.merkle import CompactRange, consistency_proof, inclusion_proof, leaf_hash, node_hash

STORE_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
SECRET = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")  # RFC 8032 TEST 1
KINDS = ("attestation", "event", "event", "gap", "event")


def _mth(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return node_hash(_mth(leaves[:k]), _mth(leaves[k:]))


def build() -> dict:
    rows, prev = [], GENESIS
    for i, kind in enumerate(KINDS, start=1):
        payload = canonical_json({"harness": "claude-code", "n": i, "note": "naïve ✓"})
        at = 1_767_225_600_000_000_000 + i
        rid = f"rec-{i:03d}"
        digest = row_hash(STORE_ID, i, at, kind, rid, prev, payload)
        rows.append({"seq": i, "record_id": rid, "kind": kind, "recorded_at_ns": at, "prev_hash": format_hash(prev),
                     "payload_sha256": format_hash(hashlib.sha256(payload).digest()),
                     "payload": payload.decode("utf-8"), "hash": format_hash(digest)})
        prev = digest
    leaves = [leaf_hash(bytes.fromhex(r["hash"][7:])) for r in rows]
    hash_range = lambda a, b: _mth(leaves[a:b])  # noqa: E731
    tree = CompactRange()
    for leaf in leaves:
        tree.append(leaf)
    signer = Signer(origin_for(STORE_ID), SECRET)
    note = signer.sign(Checkpoint(origin_for(STORE_ID), len(rows), tree.root()).text())
    b64 = lambda items: [base64.b64encode(h).decode() for h in items]  # noqa: E731
    common = {"format": "agentwatch-proof/1", "store_id": STORE_ID.hex(), "checkpoint": note,
              "tree_size": len(rows), "verifier_key": signer.verifier.encode()}
    bundles = [{**common, "type": "inclusion", "record": r, "leaf_index": r["seq"] - 1,
                "inclusion_proof": b64(inclusion_proof(r["seq"] - 1, len(rows), hash_range))} for r in rows]
    bundles += [{**common, "type": "consistency", "old_size": m, "old_root": base64.b64encode(_mth(leaves[:m])).decode(),
                 "consistency_proof": b64(consistency_proof(m, len(rows), hash_range))} for m in range(1, len(rows) + 1)]
    return {"source": "tests/make_bundle_vector.py; signing key: RFC 8032 section 7.1 TEST 1 secret key",
            "verifier_key": signer.verifier.encode(), "bundles": bundles}


if __name__ == "__main__":
    print(json.dumps(build(), indent=1, sort_keys=True, ensure_ascii=False))
