"""Proof bundles anyone can check offline (docs/chain.md, "Proof bundles").

An inclusion bundle holds one record's stored fields and payload, its RFC 6962
inclusion proof and a signed checkpoint whose tree covers it; a consistency
bundle holds a proof that the latest signed checkpoint extends the tree at an
older size. `verify_bundle` checks either with only the bundle and the log's
note verifier key, and so does agentwatch/standalone_verify.py.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from agentwatch.errors import EXIT_OK, EXIT_PROBLEM, AgentwatchError, UsageError
from agentwatch.evidence.checkpoints import origin_for, read_state, read_verifier
from agentwatch.evidence.cosign import CosignerKey
from agentwatch.evidence.note import NoteError, Verifier, open_checkpoint
from agentwatch.evidence.stored_tree import StoredTree, TreeReadError
from agentwatch.store import db
from agentwatch.store.chain import DOMAIN_TAG, format_hash, framed_kind_id, parse_hash, row_hash_framed
from agentwatch.store.erasure import ERASED_PAYLOAD, erasure_named
from agentwatch.store.merkle import ProofError, leaf_hash, verify_consistency, verify_inclusion
from agentwatch.store.packing import Dictionaries
from agentwatch.store.retention import covered, retained_ranges
from agentwatch.verify.walk import read_store_id

BUNDLE_FORMAT = "agentwatch-proof/1"
ARCHIVE_FORMAT = "agentwatch-archive/1"  # rows with their proofs against one checkpoint (evidence/archive.py)

_ROW_SQL = ("SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict, payload_z,"
            " {kept} FROM records WHERE seq = ?")


class ProveError(AgentwatchError):
    """No proof can be made: nothing is signed that covers the record, or the store cannot give the proof."""

    exit_code = EXIT_PROBLEM


def _b64(items: list[bytes]) -> list[str]:
    return [base64.b64encode(h).decode() for h in items]


def _latest(conn, state_dir: Path | None):
    """(store id, its verifier, the latest signed note, its checkpoint) for the store on `conn`."""
    store_id = read_store_id(conn)
    verifier = read_verifier(store_id, state_dir)
    if verifier is None:
        raise ProveError("this store has no checkpoint key yet (the daemon makes it when it first signs)")
    state = read_state(store_id, state_dir)
    if state is None:
        raise ProveError("no checkpoint has been signed for this store yet (the daemon signs them while it runs)")
    try:
        return store_id, verifier, state.note, open_checkpoint(state.note, verifier)
    except NoteError as exc:
        raise ProveError(f"the latest checkpoint does not verify with the store's key: {exc}") from None


def prove_inclusion(path: Path, seq: int, *, state_dir: Path | None = None) -> dict[str, Any]:
    """The inclusion bundle of row `seq` against the latest signed checkpoint."""
    conn = db.open_reader(Path(path))
    try:
        store_id, verifier, note, checkpoint = _latest(conn, state_dir)
        if not 1 <= seq <= checkpoint.size:
            raise ProveError(f"seq {seq} is not covered by the latest signed checkpoint (rows 1..{checkpoint.size})")
        conn.execute("BEGIN")
        try:
            dictionaries = Dictionaries.of(conn)
            row = conn.execute(_ROW_SQL.format(kept=dictionaries.kept_column), (seq,)).fetchone()
            if row is None:
                raise ProveError(f"seq {seq} is not in the store")
            kept = row[9] if row[4] == ERASED_PAYLOAD else None
            row = (*row[:4], dictionaries.document(row[4], row[7], row[8]), *row[5:7])
            erased = erasure_named(conn, seq) if row[4] == ERASED_PAYLOAD and kept is None else None
            retained_by = covered(retained_ranges(conn), seq) if kept is not None else None
            proof = StoredTree(conn).inclusion(seq - 1, checkpoint.size)
        except TreeReadError as exc:
            raise ProveError(f"the store cannot give the proof: {exc}") from None
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    _, record_id, kind, recorded_at_ns, payload, prev_hash, stored = row
    record: dict[str, Any] = {
        "seq": seq,
        "record_id": record_id,
        "kind": kind,
        "recorded_at_ns": recorded_at_ns,
        "prev_hash": format_hash(prev_hash),
        "payload_sha256": format_hash(hashlib.sha256(payload).digest()),
        "payload": payload.decode("utf-8"),
        "hash": format_hash(stored),
    }
    if erased is not None:
        # The payload is gone; the digest the erasure row kept is what the row hash covers
        # (docs/erasure.md), so the bundle carries that digest and no payload.
        del record["payload"]
        record["payload_sha256"] = format_hash(erased.payload_sha256)
        record["erased_by_seq"] = erased.erasure_seq
    elif kept is not None:
        # A retained row: the digest it kept in its payload's place (docs/retention.md).
        del record["payload"]
        record["payload_sha256"] = format_hash(kept)
        record["retained_by_seq"] = retained_by
    bundle = {
        "format": BUNDLE_FORMAT,
        "type": "inclusion",
        "store_id": store_id.hex(),
        "record": record,
        "leaf_index": seq - 1,
        "tree_size": checkpoint.size,
        "inclusion_proof": _b64(proof),
        "checkpoint": note,
        "verifier_key": verifier.encode(),
    }
    try:  # a bundle is only handed out if it verifies
        verify_bundle(bundle, verifier)
    except BundleError as exc:
        raise ProveError(f"the store's tree does not prove seq {seq} in the signed checkpoint: {exc}") from None
    return bundle


def prove_consistency(path: Path, old_size: int, *, state_dir: Path | None = None) -> dict[str, Any]:
    """The consistency bundle from tree size `old_size` to the latest signed checkpoint."""
    conn = db.open_reader(Path(path))
    try:
        store_id, verifier, note, checkpoint = _latest(conn, state_dir)
        if not 1 <= old_size <= checkpoint.size:
            raise ProveError(f"size {old_size} is not between 1 and the latest signed size {checkpoint.size}")
        conn.execute("BEGIN")
        try:
            tree = StoredTree(conn)
            old_root = tree.root(old_size)
            proof = tree.consistency(old_size, checkpoint.size)
        except TreeReadError as exc:
            raise ProveError(f"the store cannot give the proof: {exc}") from None
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    bundle = {
        "format": BUNDLE_FORMAT,
        "type": "consistency",
        "store_id": store_id.hex(),
        "old_size": old_size,
        "old_root": base64.b64encode(old_root).decode(),
        "tree_size": checkpoint.size,
        "consistency_proof": _b64(proof),
        "checkpoint": note,
        "verifier_key": verifier.encode(),
    }
    try:
        verify_bundle(bundle, verifier)
    except BundleError as exc:
        raise ProveError(f"the store's tree does not extend size {old_size} to the signed checkpoint: {exc}") from None
    return bundle


class BundleError(AgentwatchError):
    """A bundle that does not verify."""

    exit_code = EXIT_PROBLEM


@dataclass(frozen=True)
class BundleResult:
    ok: bool
    type: str
    store_id: str
    tree_size: int
    detail: str
    seq: int | None = None
    old_size: int | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_PROBLEM

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "type": self.type, "store_id": self.store_id, "tree_size": self.tree_size,
                "seq": self.seq, "old_size": self.old_size, "detail": self.detail}


def _hashes(values: Any, what: str) -> list[bytes]:
    if not isinstance(values, list):
        raise BundleError(f"{what} is not a list")
    out = []
    for v in values:
        try:
            h = base64.b64decode(v, validate=True)
        except (ValueError, TypeError):
            raise BundleError(f"{what} holds a value that is not base64") from None
        out.append(h)
    return out


def verify_bundle(doc: Any, verifier: Verifier, witnesses: Sequence[CosignerKey] = ()) -> BundleResult:
    """Check a bundle with nothing but `verifier` (and the cosigner keys of witnesses whose
    cosignature it must carry). Raises BundleError naming the first problem."""
    if not isinstance(doc, dict) or (doc.get("format"), doc.get("type") == "archive") not in (
            (BUNDLE_FORMAT, False), (ARCHIVE_FORMAT, True)):
        raise BundleError(f"not an {BUNDLE_FORMAT} bundle or {ARCHIVE_FORMAT} archive")
    try:
        checkpoint = open_checkpoint(doc["checkpoint"], verifier)
    except NoteError as exc:
        raise BundleError(f"the checkpoint does not verify with the key: {exc}") from None
    except (KeyError, TypeError):
        raise BundleError("the bundle has no checkpoint") from None
    for witness in witnesses:
        try:
            witness.timestamp_of(doc["checkpoint"])
        except NoteError as exc:
            raise BundleError(f"the checkpoint lacks a valid witness cosignature: {exc}") from None
    store_id = doc.get("store_id")
    if not isinstance(store_id, str) or len(store_id) != 32 or checkpoint.origin != origin_for(bytes.fromhex(store_id)):
        raise BundleError(f"the checkpoint's origin {checkpoint.origin!r} is not the bundle's store")
    if doc.get("tree_size") != checkpoint.size:
        raise BundleError(f"tree_size {doc.get('tree_size')!r} is not the checkpoint's size {checkpoint.size}")
    kind = doc.get("type")
    try:
        if kind == "inclusion":
            return _verify_inclusion(doc, checkpoint, store_id)
        if kind == "consistency":
            return _verify_consistency(doc, checkpoint, store_id)
        if kind == "archive":
            return _verify_archive(doc, checkpoint, store_id)
    except ProofError as exc:
        raise BundleError(str(exc)) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BundleError(f"the bundle is incomplete or malformed ({type(exc).__name__}: {exc})") from None
    raise BundleError(f"unknown bundle type {kind!r}")


def _verify_inclusion(doc: dict, checkpoint, store_id: str) -> BundleResult:
    rec = doc["record"]
    seq = rec["seq"]
    if type(seq) is not int or doc["leaf_index"] != seq - 1:
        raise BundleError("leaf_index is not seq - 1")
    payload_sha = parse_hash(rec["payload_sha256"])
    if "payload" in rec and hashlib.sha256(rec["payload"].encode("utf-8")).digest() != payload_sha:
        raise BundleError("the payload does not match payload_sha256")
    stored = parse_hash(rec["hash"])
    recomputed = row_hash_framed(DOMAIN_TAG + bytes.fromhex(store_id), seq, rec["recorded_at_ns"],
                                 framed_kind_id(rec["kind"], rec["record_id"]), parse_hash(rec["prev_hash"]), payload_sha)
    if recomputed != stored:
        raise BundleError("the record's fields do not hash to its row hash (chain v1)")
    verify_inclusion(seq - 1, checkpoint.size, leaf_hash(stored), _hashes(doc["inclusion_proof"], "inclusion_proof"),
                     checkpoint.root)
    return BundleResult(True, "inclusion", store_id, checkpoint.size,
                        f"seq {seq} is in the signed tree of {checkpoint.size} rows", seq=seq)


def _verify_archive(doc: dict, checkpoint, store_id: str) -> BundleResult:
    """Every row of an archive (evidence/archive.py) as an inclusion bundle against its one checkpoint."""
    records = doc["records"]
    if not isinstance(records, list):
        raise BundleError("records is not a list")
    last = 0
    for entry in records:
        if type(entry.get("seq")) is not int or entry["seq"] <= last:
            raise BundleError(f"archive rows are not in increasing seq order at {entry.get('seq')!r}")
        last = entry["seq"]
        record = {k: v for k, v in entry.items() if k not in ("leaf_index", "inclusion_proof")}
        _verify_inclusion({"record": record, "leaf_index": entry["leaf_index"],
                           "inclusion_proof": entry["inclusion_proof"]}, checkpoint, store_id)
    span = f" (seq {records[0]['seq']}..{records[-1]['seq']})" if records else ""
    return BundleResult(True, "archive", store_id, checkpoint.size,
                        f"{len(records)} archived rows{span} are in the signed tree of {checkpoint.size} rows")


def _verify_consistency(doc: dict, checkpoint, store_id: str) -> BundleResult:
    old = doc["old_size"]
    old_root = base64.b64decode(doc["old_root"], validate=True)
    verify_consistency(old, checkpoint.size, old_root, checkpoint.root,
                       _hashes(doc["consistency_proof"], "consistency_proof"))
    return BundleResult(True, "consistency", store_id, checkpoint.size,
                        f"the signed tree of {checkpoint.size} rows extends the tree of {old} rows "
                        f"(root {doc['old_root']})", old_size=old)


def cosigner_key(text: str) -> CosignerKey:
    """A witness cosigner key given as text or as a file holding it. UsageError if it is neither."""
    import os

    if os.path.isfile(text):
        text = Path(text).read_text(encoding="ascii")
    try:
        return CosignerKey.parse(text)
    except NoteError as exc:
        raise UsageError(f"--witness-key: {exc}") from None


def load_bundle(path: Path) -> Any:
    import json

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such bundle") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable JSON bundle ({exc})") from None
