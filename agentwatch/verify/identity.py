"""Is the store at a path the one that was recorded there? (docs/reliability.md, "Store identity").

What `serve`, `verify`, `reconcile` and `init` ask before they trust a store:
the remembered state of the path (verify/known_stores.py) and the schema
(store/schema_check.py). Findings:

- `replaced`: the path holds another store_id than the one remembered, or no store;
- `rolled_back`: the store ends below a head seen earlier;
- `rewritten`: the row at the remembered head carries another hash;
- `schema_changed`: a table, index, trigger or view differs from the migrations';
- and the sticky ones kept for the store (a live `truncated`).

`serve` refuses a replaced, rolled-back, rewritten or changed store until an
operator chooses explicitly: `agentwatch init --new-store` accepts what is at
the path now and keeps what was lost named in the remembered state's history.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import apsw

from agentwatch import safefs
from agentwatch.errors import AgentwatchError, UsageError, exit_for_findings
from agentwatch.store import db, schema_check
from agentwatch.store import tree as store_tree
from agentwatch.store.chain import format_hash
from agentwatch.verify import known_stores
from agentwatch.verify.anchors import anchor_path, read_anchor
from agentwatch.verify.findings import HEAD_SQL, Finding

# Findings that stop `serve` until an operator accepts the store (`init --new-store`).
log = logging.getLogger(__name__)

REFUSING = ("replaced", "rolled_back", "rewritten", "schema_changed")
# What a `rolled_back` becomes when the store's own tree state shows rows deleted from it: still
# refused by `serve`, unlike the `truncated` the daemon keeps after recording over a live cut.
CUT_NOTE = "rows were deleted from it, it is no older copy"


class IdentityRefused(AgentwatchError):
    """The store at the path is not the one remembered there (exit 4, 5, 7 or 1 by the findings)."""

    def __init__(self, message: str, findings: list[Finding]):
        super().__init__(message)
        self.findings = findings
        self.exit_code = exit_for_findings(f.kind for f in findings)


def schema_findings(conn: apsw.Connection) -> list[Finding]:
    problems = schema_check.differences(conn)
    return [Finding(0, "schema_changed", schema_check.describe(problems))] if problems else []


def store_findings(store: Path | str, conn: Optional[apsw.Connection],
                   state_dir: Path | None = None) -> tuple[Optional[known_stores.KnownStore], list[Finding]]:
    """What is remembered about the path, and the findings about the store on `conn` (None: no store there)."""
    known = known_stores.load(store, state_dir)
    if conn is None:
        return known, known_stores.assess(known, None, 0)
    store_id = db.store_id(conn)
    head = conn.execute(HEAD_SQL).fetchone()
    head_seq = head[0] if head else 0

    def hash_at(seq: int) -> Optional[bytes]:
        row = conn.execute("SELECT hash FROM records WHERE seq = ?", (seq,)).fetchone()
        return row[0] if row and isinstance(row[0], bytes) else None

    found = known_stores.assess(known, store_id, head_seq, hash_at)
    return known, schema_findings(conn) + [_truncated_or_rolled_back(conn, f, head_seq) for f in found]


def _truncated_or_rolled_back(conn: apsw.Connection, finding: Finding, head_seq: int) -> Finding:
    """A head below the remembered one is `rolled_back` when the store is a self-consistent older
    copy, and `truncated` when its own tree state covers more rows than it holds: rows were deleted
    from this store (docs/chain.md, "Threat model")."""
    if finding.kind != "rolled_back":
        return finding
    try:
        stored = store_tree.load(conn) if store_tree.has_tree(conn) else None
    except apsw.Error:
        stored = None
    if stored is None or stored.size <= head_seq:
        return finding
    return Finding(finding.seq, "truncated", f"{finding.detail}; the store's own tree state covers {stored.size} "
                                             "rows: " + CUT_NOTE)


def refusal(store: Path | str, findings: list[Finding]) -> IdentityRefused:
    lines = "; ".join(f"{f.kind}: {f.detail}" for f in findings)
    return IdentityRefused(
        f"{store}: {lines}. Nothing is recorded into it until you choose: "
        f"`agentwatch init --new-store --store {store}` accepts the store that is there now "
        "(the loss stays named in the remembered state)", findings)


def check_missing(store: Path | str, state_dir: Path | None = None) -> None:
    """Before `serve` creates a store: refuse when the path held one before."""
    if os.path.lexists(store):
        return
    _, findings = store_findings(store, None, state_dir)
    if findings:
        raise refusal(store, findings)


def check_serving(store: Path | str, conn: apsw.Connection, state_dir: Path | None = None) -> list[Finding]:
    """After `serve` opened the store: refuse a replaced or rolled-back one; return the sticky findings."""
    _, findings = store_findings(store, conn, state_dir)
    refusing = [f for f in findings if f.kind in REFUSING or (f.kind == "truncated" and CUT_NOTE in f.detail)]
    if refusing:
        raise refusal(store, refusing)
    return findings


@dataclass
class InitResult:
    store: str
    status: str  # created | remembered | unchanged | accepted | refused
    store_id: str
    head_seq: int
    findings: list[Finding]
    accepted: Optional[dict] = None

    @property
    def exit_code(self) -> int:
        return exit_for_findings(f.kind for f in self.findings) if self.status == "refused" else 0

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "status": self.status, "store_id": self.store_id, "head_seq": self.head_seq,
                "findings": [f.to_json() for f in self.findings], "accepted": self.accepted}


def _read(store: Path) -> tuple[bytes, int, Optional[bytes], list[Finding]]:
    conn = db.open_reader(store)
    try:
        head = conn.execute(HEAD_SQL).fetchone()
        return db.store_id(conn), head[0] if head else 0, head[1] if head else None, schema_findings(conn)
    finally:
        conn.close()


def _supersede_anchor(store: Path, store_id: bytes, head_seq: int, state_dir: Path | None) -> Optional[dict]:
    """A rolled-back store keeps its store_id, and its verify anchor may lie beyond the head now
    accepted: it would name the accepted store `truncated` forever. Move it aside (kept, named in
    the history); the next verify anchors afresh."""
    path = anchor_path(store_id, state_dir)
    try:
        anchor = read_anchor(path, store_id)
    except UsageError:
        anchor = None
    if anchor is None:
        return None
    conn = db.open_reader(store)
    try:
        row = conn.execute("SELECT hash FROM records WHERE seq = ?", (anchor.seq,)).fetchone()
    finally:
        conn.close()
    if anchor.seq <= head_seq and row is not None and row[0] == anchor.hash:
        return None
    moved = path.with_name(f"{path.name}.superseded-{time.time_ns()}")
    os.replace(path, moved)
    return {"seq": anchor.seq, "hash": format_hash(anchor.hash), "kept_at": str(moved)}


def init_store(store: Path | str, *, new_store: bool = False, state_dir: Path | None = None) -> InitResult:
    """`agentwatch init` under the store's writer lock: refused (exit 3) while a daemon or any
    other writer holds the store, its lock file deleted or not (store/writerlock.py)."""
    from agentwatch.store.writerlock import AlreadyServing, WriterLock

    lock = WriterLock(Path(os.path.abspath(store)))
    safefs.private_dir(lock.store.parent, "store directory")  # the lock file lives beside the store
    try:
        lock.acquire()
    except AlreadyServing as exc:
        raise AlreadyServing(f"{exc}; init needs the store to itself: stop the daemon first") from None
    try:
        return _init_store(store, new_store=new_store, state_dir=state_dir, lock=lock)
    finally:
        lock.release()


def _init_store(store: Path | str, *, new_store: bool, state_dir: Path | None, lock) -> InitResult:
    """`agentwatch init`: create the store if the path holds none, and remember it.

    At a path that held another store, or whose store was rolled back, nothing
    changes unless `new_store`: then what is there now is accepted (a store is
    created if there is none), and the previous identity, its head and the
    findings move into the remembered state's history, logged on stderr.
    """
    from agentwatch.store.append import Store  # the one writer path that creates a store

    store = Path(os.path.abspath(store))
    exists = os.path.lexists(store)
    if exists:
        conn = db.open_reader(store)
        try:
            _, findings = store_findings(store, conn, state_dir)
        finally:
            conn.close()
    else:
        _, findings = store_findings(store, None, state_dir)
    if findings and not new_store:
        store_id, head_seq = (_read(store)[:2]) if exists else (b"", 0)
        return InitResult(str(store), "refused", store_id.hex(), head_seq, findings)
    status = "unchanged"
    if not exists:
        Store(store).close()
        lock.lock_store()
        status = "created"
    store_id, head_seq, head_hash, schema = _read(store)
    if schema and not findings:
        findings = schema
    if new_store and findings:
        superseded = _supersede_anchor(store, store_id, head_seq, state_dir)
        entry = known_stores.accept(store, store_id, head_seq, head_hash, findings, state_dir,
                                    extra={"anchor_superseded": superseded} if superseded else None)
        # Logged (stderr without a configuration): an accepted replacement is a choice someone made.
        log.warning(f"agentwatch: accepted store {store_id.hex()} at {store} (head seq {head_seq}) in place of "
                    f"{entry['previous_store_id'] or 'nothing'} (seen through seq {entry['previous_head_seq']}): "
                    + "; ".join(f"{f.kind}: {f.detail}" for f in findings))
        return InitResult(str(store), "accepted", store_id.hex(), head_seq, findings, entry)
    known = known_stores.load(store, state_dir)
    if known is None:
        status = "created" if status == "created" else "remembered"
    known_stores.remember(store, store_id, head_seq, head_hash, state_dir)
    return InitResult(str(store), status, store_id.hex(), head_seq, [])


__all__ = ["IdentityRefused", "InitResult", "check_missing", "check_serving", "init_store", "store_findings"]
