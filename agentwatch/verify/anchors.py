"""Verify anchors: how far an earlier verify got, kept outside the store (docs/chain.md).

An anchor is the (seq, hash) of the head a clean verify reached. The next
verify starts from it (incremental), and a store whose head fell below it, or
whose anchored row changed, is reported as truncated or rewritten. Readers
never write the store, so anchors live in the state directory:
``<state_dir>/anchors/<store_id>.json``, written atomically, owner-only.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentwatch import paths, safefs
from agentwatch.errors import UsageError
from agentwatch.store.chain import CHAIN_VERSION, format_hash, parse_hash
from agentwatch.verify.atomic import read_json, write_json

ANCHOR_FORMAT = "agentwatch-anchor/1"


@dataclass(frozen=True, slots=True)
class Anchor:
    """A verified-through position, kept outside the store (docs/chain.md)."""

    store_id: str
    seq: int
    hash: bytes
    verified_at_ns: int
    store: str = ""
    # The Merkle tree's compact range over rows 1..seq (docs/chain.md, "The tree"), so the
    # next verify extends the tree from here instead of from genesis; empty when unknown.
    tree: bytes = b""

    def to_json(self) -> dict[str, Any]:
        doc = {
            "format": ANCHOR_FORMAT,
            "store_id": self.store_id,
            "chain_version": CHAIN_VERSION,
            "seq": self.seq,
            "hash": format_hash(self.hash),
            "verified_at_ns": self.verified_at_ns,
            "store": self.store,
        }
        if self.tree:
            doc["tree"] = base64.b64encode(self.tree).decode()
        return doc


def anchor_path(store_id: bytes, state_dir: Path | None = None) -> Path:
    """Where the anchor of a store lives: <state_dir>/anchors/<store_id>.json."""
    return Path(state_dir or paths.state_dir()) / "anchors" / f"{store_id.hex()}.json"


def read_anchor(path: Path, store_id: bytes) -> Anchor | None:
    """The anchor at path, None if there is none. UsageError if it is unreadable or foreign."""
    anchor = read_json(path, "verify anchor", _parse_anchor)
    if anchor is None:
        return None
    if anchor.store_id != store_id.hex():
        raise UsageError(f"{path}: anchor belongs to store {anchor.store_id}, not {store_id.hex()}")
    return anchor


def _parse_anchor(doc: Any) -> Anchor:
    if doc["format"] != ANCHOR_FORMAT or doc["chain_version"] != CHAIN_VERSION:
        raise ValueError(f"format {doc['format']!r}, chain version {doc['chain_version']!r}")
    seq, verified_at = doc["seq"], doc["verified_at_ns"]
    if type(seq) is not int or seq < 1 or type(verified_at) is not int:
        raise ValueError("seq and verified_at_ns must be integers, seq >= 1")
    tree = base64.b64decode(doc.get("tree", ""), validate=True)
    if len(tree) != 32 * bin(seq).count("1") and tree:
        raise ValueError(f"tree must hold {bin(seq).count('1')} hashes for seq {seq}")
    return Anchor(doc["store_id"], seq, parse_hash(doc["hash"]), verified_at, str(doc.get("store", "")), tree)


def write_anchor(path: Path, anchor: Anchor) -> None:
    """Replace the anchor atomically (temp file, fsync, rename), owner-only."""
    safefs.private_dir(path.parent, "anchor directory")
    write_json(path, anchor.to_json(), 0o600)
