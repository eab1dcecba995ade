"""Archives: the rows recorded before a time, with their payloads and proofs, in one offline file.

An archive (`agentwatch archive --before T -o FILE`, docs/retention.md) is a JSON document of
format `agentwatch-archive/1`: the store id, the latest signed checkpoint and its size, and one
entry per archived row, each what an inclusion bundle's `record` holds (docs/chain.md, "Proof
bundles") plus its `leaf_index` and `inclusion_proof` against that one checkpoint. Anyone with
the store's verifier key checks it offline, row by row, with `agentwatch verify-bundle` or
`standalone_verify.py --bundle`; after retention removed the payloads from the store, the
archive still holds them, and each still hashes to the row the signed tree proves.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from agentwatch import platform_layer
from agentwatch.evidence.bundle import ARCHIVE_FORMAT, ProveError, _b64, _latest
from agentwatch.evidence.stored_tree import StoredTree, TreeReadError
from agentwatch.store import db
from agentwatch.store.chain import format_hash
from agentwatch.store.erasure import ERASED_PAYLOAD, erasure_named
from agentwatch.store.packing import Dictionaries
from agentwatch.store.retention import covered, retained_ranges

_ROWS_SQL = ("SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict,"
             " payload_z, {kept} FROM records WHERE seq > ? AND seq <= ? AND recorded_at_ns < ? ORDER BY seq LIMIT 1000")


@dataclass(frozen=True, slots=True)
class ArchiveResult:
    path: str
    rows: int
    first_seq: int | None
    last_seq: int | None
    tree_size: int
    sha256: str  # of the file as written
    bytes: int
    without_payload: int  # erased or retained rows: their digests only

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "first_seq": self.first_seq, "last_seq": self.last_seq,
                "tree_size": self.tree_size, "sha256": self.sha256, "bytes": self.bytes,
                "without_payload": self.without_payload}


def _records(conn, upto_seq: int, before_ns: int, size: int) -> Iterator[dict[str, Any]]:
    dictionaries = Dictionaries.of(conn)
    tree = StoredTree(conn)
    ranges = retained_ranges(conn)
    sql = _ROWS_SQL.format(kept=dictionaries.kept_column)
    after = 0
    while True:
        rows = conn.execute(sql, (after, upto_seq, before_ns)).fetchall()
        if not rows:
            return
        for seq, record_id, kind, at, payload, prev, stored, dict_id, z, kept in rows:
            after = seq
            document = dictionaries.document(payload, dict_id, z)
            record: dict[str, Any] = {
                "seq": seq, "record_id": record_id, "kind": kind, "recorded_at_ns": at,
                "prev_hash": format_hash(prev), "hash": format_hash(stored),
            }
            if document == ERASED_PAYLOAD and kept is not None:
                record["payload_sha256"] = format_hash(kept)
                record["retained_by_seq"] = covered(ranges, seq)
            elif document == ERASED_PAYLOAD and (named := erasure_named(conn, seq)) is not None:
                record["payload_sha256"] = format_hash(named.payload_sha256)
                record["erased_by_seq"] = named.erasure_seq
            else:
                record["payload_sha256"] = format_hash(hashlib.sha256(document).digest())
                record["payload"] = document.decode("utf-8")
            record["leaf_index"] = seq - 1
            record["inclusion_proof"] = _b64(tree.inclusion(seq - 1, size))
            yield record


def write_archive(path: Path, before_ns: int, out: Path, *, state_dir: Path | None = None) -> ArchiveResult:
    """Write the archive of the rows recorded before `before_ns` that the latest signed checkpoint covers."""
    from agentwatch.evidence.bundle import verify_bundle

    conn = db.open_reader(Path(path))
    try:
        store_id, verifier, note, checkpoint = _latest(conn, state_dir)
        conn.execute("BEGIN")
        try:
            records = list(_records(conn, checkpoint.size, before_ns, checkpoint.size))
        except TreeReadError as exc:
            raise ProveError(f"the store cannot give the proofs: {exc}") from None
        finally:
            conn.execute("COMMIT")
        uncovered = db.one(conn.execute("SELECT count(*) FROM records WHERE seq > ? AND recorded_at_ns < ?",
                                 (checkpoint.size, before_ns)))[0]
    finally:
        conn.close()
    if uncovered:
        raise ProveError(f"{uncovered} rows before that time are not covered by the latest signed checkpoint "
                         f"(rows 1..{checkpoint.size}); let the daemon sign (or run `agentwatch checkpoint`) first")
    doc = {"format": ARCHIVE_FORMAT, "type": "archive", "store_id": store_id.hex(), "checkpoint": note,
           "tree_size": checkpoint.size, "verifier_key": verifier.encode(), "before_ns": before_ns,
           "records": records}
    verify_bundle(doc, verifier)  # an archive is only written if it verifies
    data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    # Owner-only, like the store: the archive holds the payloads. Written whole, then renamed.
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, data)
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ArchiveResult(str(out), len(records), records[0]["seq"] if records else None,
                         records[-1]["seq"] if records else None, checkpoint.size,
                         format_hash(hashlib.sha256(data).digest()), len(data),
                         sum(1 for r in records if "payload" not in r))
