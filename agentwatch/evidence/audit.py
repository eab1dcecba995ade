"""`agentwatch verify`: check a whole store against its chain and its anchor.

``verify_store(path, *, full=False, state_dir=None, progress=None, update_anchor=True)``
opens the store read-only and by default verifies incrementally: it re-checks the row named
by the store's anchor (how far an earlier verify got, kept outside the store:
agentwatch.verify.anchors), then only the rows after it, so the cost is proportional to the
new rows. Without an anchor, or with ``full=True``, it walks from genesis and also compares
the anchored row. A clean verify moves the anchor to the head. ``progress(done, total)``
runs between chunks. It returns a VerifyResult; ``to_json()`` is what `verify --json`
prints and ``exit_code`` is 0 (intact) or 1 (a finding). Errors carry their own exit codes:
UsageError 2 (e.g. an unreadable anchor file), StoreUnreachable and SchemaError 3.

A large store is verified in consecutive segments by worker processes
(agentwatch.verify.worker); the walk itself is agentwatch.verify.walk.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import apsw

from agentwatch import paths
from agentwatch.coverage import rows as coverage_rows
from agentwatch.errors import EXIT_OK, UsageError, exit_for_findings
from agentwatch.evidence.compare import SIGNED_VERDICTS, EvidenceReport, check_evidence, daemon_serving
from agentwatch.store import db
from agentwatch.store.chain import CHAIN_VERSION, DOMAIN_TAG, GENESIS, format_hash
from agentwatch.store.merkle import CompactRange
from agentwatch.store.packing import Dictionaries
from agentwatch.verify import foreign, identity, known_stores, recheck
from agentwatch.verify.anchors import Anchor, anchor_path, read_anchor, write_anchor
from agentwatch.verify.findings import HEAD_SQL, Finding, check_position
from agentwatch.verify.walk import CHUNK_ROWS, read_store_id, verify_segment, walk_segment
from agentwatch.verify.worker import Worker, WorkerError


@dataclass(frozen=True, slots=True)
class AnchorInfo:
    """The anchor before and after a verify.

    status: ``absent`` (none, none written), ``created``, ``advanced``,
    ``unchanged`` (already at the head), ``kept`` (not moved: the verify found
    a problem or update_anchor was off).
    """

    path: Path
    status: str
    before: Anchor | None
    after: Anchor | None

    def to_json(self) -> dict[str, Any]:
        def pos(a: Anchor | None) -> dict[str, Any] | None:
            if a is None:
                return None
            return {"seq": a.seq, "hash": format_hash(a.hash), "verified_at_ns": a.verified_at_ns}

        return {"path": str(self.path), "status": self.status, "before": pos(self.before), "after": pos(self.after)}


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The verdict of verify_store.

    mode is ``incremental`` when the walk started at the anchor, ``full`` when
    it started at genesis. rows_checked counts rows verified intact by this
    run; verified_through is the last seq of the intact chain (0 when an
    incremental verify could not trust its anchor). erased lists (seq, erasure
    seq) of the erased rows this run found intact (docs/erasure.md).
    """

    ok: bool
    mode: str
    store: str
    store_id: str
    rows_checked: int
    first_seq_checked: int | None
    head_seq: int
    head_hash: str | None
    verified_through: int
    finding: Finding | None
    anchor: AnchorInfo
    chain_version: int = CHAIN_VERSION
    erased: tuple[tuple[int, int], ...] = ()
    retained: int = 0  # rows up to the verified head whose payload a retention pass removed (docs/retention.md)
    # Every finding: about the store as a whole (replaced, rolled_back, rewritten, schema_changed,
    # a remembered truncation: verify/identity.py), then the chain's first break and each one the
    # signed checkpoints and witnesses show (agentwatch.evidence.compare), by seq.
    findings: tuple[Finding, ...] = ()
    known_store: dict[str, Any] | None = None  # what is remembered about the path (verify/known_stores.py)
    evidence: EvidenceReport | None = None
    # What the record says it misses (coverage/rows.py): hook-config findings and sessions with
    # tool calls the transcript has and the store does not. Reported; the exit code is the chain's.
    recorder: dict[str, Any] | None = None
    # Old rows re-checked by this run (verify/recheck.py): window, samples, the next full walk's deadline.
    recheck: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        """0 intact; 1 a chain finding; 4-7 a finding about the store as a whole (errors.FINDING_EXIT)."""
        return exit_for_findings(f.kind for f in self.findings) if self.findings else (EXIT_OK if self.ok else 1)

    def to_json(self) -> dict[str, Any]:
        """The stable `verify --json` document; fields are only ever added."""
        return {
            "ok": self.ok,
            "mode": self.mode,
            "store": self.store,
            "store_id": self.store_id,
            "chain_version": self.chain_version,
            "rows_checked": self.rows_checked,
            "first_seq_checked": self.first_seq_checked,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "verified_through": self.verified_through,
            "finding": None if self.finding is None else self.finding.to_json(),
            "anchor": self.anchor.to_json(),
            "erased": [{"seq": seq, "erasure_seq": by} for seq, by in self.erased],
            "findings": [f.to_json() for f in self.findings],
            "known_store": self.known_store,
            "evidence": None if self.evidence is None else self.evidence.to_json(),
            "recorder": self.recorder,
            "retained": self.retained,
            "recheck": self.recheck,
        }


def verify_store(
    path: Path | str,
    *,
    full: bool = False,
    state_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    update_anchor: bool = True,
    chunk_rows: int = CHUNK_ROWS,
    jobs: int | None = None,
    witness_dirs: Iterable[Path] | None = None,
    key: str | None = None,
    evidence: bool = True,
    signer_dir: Path | None = None,
) -> VerifyResult:
    """Verify a store's chain; see the module docstring. progress(done, total) runs between chunks.

    `jobs` processes verify consecutive segments at once (None: one per CPU, at most
    PARALLEL_MAX, once there are PARALLEL_MIN_ROWS rows to check; 1: this process only).
    With `evidence` (the default) the store is also compared with every signed checkpoint
    kept outside it: the signer's record under `signer_dir` (None: `state_dir`) and each
    of `witness_dirs` (None: <state_dir>/witness); `key` overrides the store's verifier key.
    Two directories, each with one role: `signer_dir` is the daemon's state directory (config
    `state_dir`: its key and signed checkpoints, read only), `state_dir` this verifier's own
    memory (anchors, known stores, the re-check schedule), which the person verifying must be
    able to write, so in the service layout it stays theirs while `signer_dir` is the service's.
    """
    path = Path(path)
    identity.check_missing(path, state_dir)  # a remembered path with no store: `replaced`, not just absent
    conn = db.open_reader(path)
    try:
        store_id = read_store_id(conn)
        known, store_level = identity.store_findings(path, conn, state_dir)
        apath = anchor_path(store_id, state_dir)
        before = read_anchor(apath, store_id)
        head = conn.execute(HEAD_SQL).fetchone()
        head_seq, head_hash = (head[0], head[1]) if head else (0, None)

        # Old rows on a schedule (verify/recheck.py): a full walk once the last is older than its
        # bound, else a rotating window and random samples below the anchor after the new rows.
        schedule = recheck.load(store_id, state_dir) if before is not None and update_anchor else None
        scheduled_full = schedule is not None and not full and recheck.full_due(schedule)
        incremental = before is not None and not full and not scheduled_full
        start_seq, start_hash = (before.seq, before.hash) if before is not None and incremental else (0, GENESIS)
        total = max(head_seq - start_seq, 0)
        if progress:
            progress(0, total)
        bounds = _segments(start_seq, head_seq, _jobs(jobs, total))
        if len(bounds) == 1:
            rows, last_seq, last_hash, finding, erased = walk_segment(conn, store_id, start_seq, start_hash,
                                                                      head_seq, chunk_rows, progress, total)
        else:
            rows, last_seq, last_hash, finding, erased = _verify_parallel(conn, path, store_id, start_seq,
                                                                          start_hash, bounds, chunk_rows, progress,
                                                                          total)
        if before is not None and not incremental:
            finding = _earlier(finding, _anchor_finding(conn, store_id, before))
        rechecked = None
        if incremental and finding is None and schedule is not None and before is not None:
            rechecked = recheck.recheck(conn, store_id, before.seq, schedule)
            finding = rechecked.finding
        report = None
        if evidence:
            dirs = witness_dirs if witness_dirs is not None else [Path(state_dir or paths.state_dir()) / "witness"]
            resume = None
            if incremental and before is not None and before.tree:
                resume = CompactRange.from_bytes(before.seq, before.tree)
            report = check_evidence(conn, path, store_id, state_dir=signer_dir or state_dir, witness_dirs=dirs,
                                    key=key, resume=resume, keep=last_seq)
        recorder = coverage_rows.summary(conn)
        # Rows the recorder's writer did not write: named by the store's gap rows in the walked
        # range, or past the head the writer last committed (verify/foreign.py).
        named = {(f.kind, f.seq) for f in store_level}
        for found in foreign.findings(conn, path, store_id, head_seq, after_seq=start_seq, state_dir=state_dir,
                                      serving=lambda: daemon_serving(path)):
            if (found.kind, found.seq) not in named:
                named.add((found.kind, found.seq))
                store_level.append(found)
                if update_anchor:
                    known_stores.add_finding(path, store_id, found, found.seq, state_dir)
        retained = retained_count(conn, last_seq)
    finally:
        conn.close()
    if incremental and finding is not None:
        # The anchor or a row after it broke. Name the first break from genesis, as a full
        # verify does: a row deleted before the anchor and the rows renumbered show at the
        # anchor as an edit, and from genesis as the rows missing where they were deleted.
        from_genesis = verify_store(path, full=True, state_dir=state_dir, progress=progress,
                                    update_anchor=update_anchor, chunk_rows=chunk_rows, jobs=jobs,
                                    witness_dirs=witness_dirs, key=key, evidence=evidence, signer_dir=signer_dir)
        return dataclasses.replace(from_genesis, mode="incremental")
    if update_anchor:
        known_stores.remember(path, store_id, head_seq, head_hash if isinstance(head_hash, bytes) else None,
                              state_dir)

    broken = sorted([*([finding] if finding is not None else []), *(report.findings if report else [])],
                    key=lambda f: (f.seq, f.kind))
    if report is not None and report.findings:
        first = min(report.findings, key=lambda f: (f.seq, f.kind not in SIGNED_VERDICTS))
        # A signed checkpoint names a break the chain cannot see: at the same seq its verdict is
        # the sharper one. The store's own tree state and witness bookkeeping are not.
        if finding is None or first.seq < finding.seq or (first.seq == finding.seq and first.kind in SIGNED_VERDICTS):
            finding = first
    findings = tuple(store_level) + tuple(broken)
    chain_ok = finding is None
    ok = not findings
    finding = finding or (store_level[0] if store_level else None)
    if chain_ok or finding is None:
        verified_through = last_seq
    else:
        verified_through = finding.seq - 1 if finding.seq > start_seq else 0
        verified_through = min(verified_through, last_seq)
    recheck_doc = None
    if update_anchor and chain_ok:
        sched = schedule or recheck.Schedule()
        if not incremental:
            sched.full_at_ns = time.time_ns()
        recheck.save(store_id, sched, state_dir)
        recheck_doc = {"full": not incremental, "scheduled_full": scheduled_full,
                       "window": list(rechecked.window) if rechecked and rechecked.window else None,
                       "samples": len(rechecked.samples) if rechecked else 0,
                       "rows": rechecked.rows if rechecked else 0,
                       "next_full_by_ns": sched.full_at_ns + recheck.FULL_EVERY_S * 1_000_000_000}
    after, status = before, ("kept" if before else "absent")
    if chain_ok and update_anchor and last_seq > 0:
        # Another verify may have moved the anchor meanwhile: never move it backwards.
        current = read_anchor(apath, store_id)
        if current is not None and current.seq >= last_seq:
            after, status = current, "unchanged"
        else:
            kept = report.kept if report is not None and report.kept is not None else None
            after = Anchor(store_id.hex(), last_seq, last_hash, time.time_ns(), os.path.abspath(path),
                           kept.to_bytes() if kept is not None and kept.size == last_seq else b"")
            write_anchor(apath, after)
            status = "advanced" if before else "created"
    return VerifyResult(
        ok=ok,
        mode="incremental" if incremental else "full",
        store=str(path),
        store_id=store_id.hex(),
        rows_checked=rows,
        first_seq_checked=start_seq + 1 if head_seq > start_seq else None,
        head_seq=head_seq,
        head_hash=format_hash(head_hash) if isinstance(head_hash, bytes) and len(head_hash) == 32 else None,
        verified_through=verified_through,
        finding=finding,
        anchor=AnchorInfo(apath, status, before, after),
        erased=tuple(sorted(set(erased))),
        retained=retained,
        findings=findings,
        known_store=known.to_json() if known is not None else None,
        evidence=report,
        recorder=recorder,
        recheck=recheck_doc,
    )


def retained_count(conn, upto_seq: int) -> int:
    """How many rows up to `upto_seq` are retained: verified with the digest they kept."""
    if Dictionaries.of(conn).kept_column == "NULL":
        return 0  # a store from before retention
    return conn.execute("SELECT count(*) FROM records WHERE kept_sha256 IS NOT NULL AND seq <= ?",
                        (upto_seq,)).fetchone()[0]


# A full verify of a large store is split into consecutive segments verified at once, one
# process each: a segment starts from the stored hash of the row before it, and the segment
# before it proves that hash, so together they check exactly what one walk checks.
PARALLEL_MIN_ROWS = 200_000
PARALLEL_MAX = 2


def _jobs(jobs: int | None, total: int) -> int:
    if jobs is None:
        return min(os.cpu_count() or 1, PARALLEL_MAX) if total >= PARALLEL_MIN_ROWS else 1
    if jobs < 1:
        raise UsageError("jobs must be at least 1")
    return jobs


def _segments(start_seq: int, head_seq: int, jobs: int) -> list[tuple[int, int]]:
    """(after_seq, end_seq) per segment, consecutive, covering start_seq+1..head_seq."""
    total = head_seq - start_seq
    if jobs <= 1 or total < 2 * jobs:
        return [(start_seq, head_seq)]
    cuts = [start_seq + total * i // jobs for i in range(jobs + 1)]
    return list(zip(cuts, cuts[1:]))


def _verify_parallel(conn, path: Path, store_id: bytes, start_seq: int, start_hash: bytes,
                     bounds: list[tuple[int, int]], chunk_rows: int, progress, total: int):
    workers = []
    try:
        for after_seq, end_seq in bounds[1:]:
            worker = Worker(path)
            workers.append(worker)
            try:
                worker.send("segment", store_id, after_seq, end_seq, chunk_rows)
            except (OSError, WorkerError):
                pass  # walked here below
        results = [walk_segment(conn, store_id, start_seq, start_hash, bounds[0][1], chunk_rows, progress, total)]
        for (after_seq, end_seq), worker in zip(bounds[1:], workers):
            try:
                got = worker.receive()
            except WorkerError:
                # No process could verify it (none could start, it died, it failed): walk it here.
                got = verify_segment(conn, store_id, after_seq, end_seq, chunk_rows)
            results.append(got)
    finally:
        for worker in workers:
            worker.close()
    rows = 0
    erased: list[tuple[int, int]] = []
    for seg_rows, last_seq, last_hash, finding, seg_erased in results:
        rows += seg_rows
        erased.extend(seg_erased)
        if finding is not None:
            return rows, last_seq, last_hash, finding, erased  # the first break; later segments do not count
    if progress:
        progress(rows, total)
    return rows, last_seq, last_hash, None, erased


def _anchor_finding(conn: apsw.Connection, store_id: bytes, anchor: Anchor) -> Finding | None:
    conn.execute("BEGIN")
    try:
        return check_position(conn, DOMAIN_TAG + store_id, anchor.seq, anchor.hash)
    finally:
        conn.execute("COMMIT")


def _earlier(chain: Finding | None, anchored: Finding | None) -> Finding | None:
    """The first break wins; at the same seq the anchor's verdict is the sharper one."""
    if chain is None or anchored is None:
        return chain or anchored
    return chain if chain.seq < anchored.seq else anchored
