"""The daemon's sweeper: chain verification beside the writer, never in its way.

A thread drives `verify.verify_range` on bounded chunks, each in one short
read transaction (WAL gives it a snapshot; no transaction outlives a call, so
checkpoints are never pinned). The reading and hashing run in a child process
(`verify_worker`) on its own read-only connection, so they never compete with
the event loop and the writer for the GIL; the thread only waits for answers.
Where no child can be started it verifies in the thread itself. It takes no
lock the writer needs and shares nothing with it but `Writer.head_seq`, a
plain int it reads to know whether there is anything new.

Two walks share the thread:

- **Incremental**: from the store's verify anchor when there is one
  (re-checking the anchored row), else from genesis, and then only rows it
  has not seen: the steady-state cost is O(new rows). Catching up on a large
  store is paced (a duty cycle) so its hashing does not starve the event loop
  and the writer of the GIL.
- **Full pass**: every `full_interval` seconds a walk from genesis to the head
  of that moment, one chunk per round, so an edit behind the incremental
  position (a row verified long ago) is still found.

A finding is sticky (`state` stays "broken"). Each distinct finding (seq,
kind) is reported once to `on_finding`, which the daemon turns into an
`integrity_break` attestation row through the writer's job queue: the
sweeper never writes. An incremental finding ends the incremental walk (the
rows after it cannot be linked to what was verified); the full passes go on,
each stopping at the first break it meets. It does not write the anchor
(`agentwatch verify` owns that).

What the writer knows (a truncation it met, findings remembered from earlier runs) the
writer owns; the sweeper reads it through `writer_findings`, shows it beside its own, does
not report it again, and walks again from genesis when the writer met a cut.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from agentwatch.store import db, schema_check
from agentwatch.store.chain import GENESIS, format_hash
from agentwatch.verify.anchors import anchor_path, read_anchor
from agentwatch.verify.findings import Finding
from agentwatch.verify.walk import RangeResult, read_store_id, verify_range
from agentwatch.verify.worker import Worker, WorkerError

log = logging.getLogger(__name__)

CHUNK_ROWS = 5000
# A full pass takes one chunk per round: a short burst of hashing in one short read transaction.
FULL_CHUNK_ROWS = 20_000
DUTY = 0.25  # at most this share of wall time spent verifying while catching up


class Sweeper:
    def __init__(
        self,
        store: Path,
        head_seq: Callable[[], int],
        *,
        interval: float,
        full_interval: float,
        on_finding: Optional[Callable[[Finding, str], None]] = None,
        state_dir: Optional[Path] = None,
        writer_findings: Callable[[], list[tuple[Finding, str]]] = lambda: [],
    ):
        self.store = Path(store)
        self._head_seq = head_seq
        self.interval = interval
        self.full_interval = full_interval  # seconds between full passes; 0 turns them off
        self._on_finding = on_finding  # (finding, "incremental"|"full"), called on this thread
        self.state_dir = state_dir
        self.state = "starting"  # starting | ok | broken | error
        self.started_from: Optional[str] = None  # "anchor" | "genesis"
        self.verified_seq = 0
        self.verified_hash = GENESIS
        self.rows_verified = 0
        self.finding: Optional[Finding] = None  # the first one found
        self.found_by: Optional[str] = None
        self.findings: dict[tuple[int, str], Finding] = {}  # every distinct finding, by (seq, kind)
        self._reported: set[tuple[int, str]] = set()  # handed to on_finding, and not refused since
        self._recorded: dict[tuple[int, str], int] = {}  # the seq of each finding's integrity_break row
        self.last_error: Optional[str] = None
        self.last_round_ns = 0
        self.rounds = 0
        # The full pass: its position, its goal (the head when it began), when the next is due.
        self.full_seq: Optional[int] = None  # None: no pass running
        self.full_hash = GENESIS
        self.full_target = 0
        self.full_passes = 0
        self.full_last_ns = 0
        self._full_due = time.monotonic() + full_interval
        self._incremental_done = False  # the incremental walk met a break: it stops there
        self._store_id = b""
        self._looked = False
        self._worker: Optional[Worker] = Worker(self.store)  # None: verify in this thread
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentwatch-sweeper", daemon=True)
        self._lock = threading.Lock()  # findings and their recorded seqs, from this thread and the loop's
        self._writer_findings = writer_findings
        self._cuts_seen = 0  # truncations the writer met that this walk has started again from
        self._first_of_writer()

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _first_of_writer(self) -> None:
        """The writer's findings count as this sweeper's first and make it broken (sticky)."""
        for finding, by in self._writer_findings():
            if self.finding is None:
                self.finding, self.found_by = finding, by
            self.state = "broken"

    def _all_findings(self) -> dict[tuple[int, str], Finding]:
        found = {(f.seq, f.kind): f for f, _ in self._writer_findings()}
        for key, finding in dict(self.findings).items():
            found.setdefault(key, finding)
        return found

    def _writer_cut(self) -> bool:
        """Whether the writer met a truncation since the last call: it goes on from the cut, so
        rows it commits now sit where verified ones were."""
        cuts = sum(1 for _, by in self._writer_findings() if by == "writer")
        if cuts == self._cuts_seen:
            return False
        self._cuts_seen = cuts
        return True

    def health(self) -> dict:
        head = self._head_seq()
        self._first_of_writer()
        return {
            "state": self.state,
            "started_from": self.started_from,
            "verified_seq": self.verified_seq,
            "verified_hash": format_hash(self.verified_hash),
            "lag_rows": max(0, head - self.verified_seq),
            "rows_verified": self.rows_verified,
            "last_round_ns": self.last_round_ns,
            "finding": self.finding.to_json() if self.finding else None,
            "last_error": self.last_error,
            "found_by": self.found_by,
            "findings": [
                {**f.to_json(), "recorded_seq": self._recorded.get(key)} for key, f in self._all_findings().items()
            ],
            "rounds": self.rounds,
            "verifies_in": "thread" if self._worker is None else "process",
            "worker_pid": self._worker.pid if self._worker is not None else None,
            "full": {
                "interval_s": self.full_interval,
                "state": "off" if self.full_interval <= 0 else ("running" if self.full_seq is not None else "idle"),
                "position_seq": self.full_seq,
                "target_seq": self.full_target if self.full_seq is not None else None,
                "passes": self.full_passes,
                "last_pass_ns": self.full_last_ns,
            },
        }

    # -- the sweeper thread ---------------------------------------------------------

    def _run(self) -> None:
        conn = None
        try:
            while not self._stop.is_set():
                try:
                    if conn is None:
                        conn = db.open_reader(self.store)
                        self._start_position(conn)
                    self._check_schema(conn)
                    if not self._incremental_done and self._sweep(conn):
                        self._incremental_done = True
                    self._full_round(conn)
                    self.rounds += 1
                    if not self._all_findings():
                        self.state = "ok"
                    self.last_error = None
                except Exception as exc:  # report, then retry on a fresh connection
                    if not self._all_findings():
                        self.state = "error"
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    if conn is not None:
                        _close(conn)
                        conn = None
                self._stop.wait(self.interval)
        finally:
            if conn is not None:
                _close(conn)
            if self._worker is not None:
                self._worker.close()

    def _verify(self, conn, after_seq: int, after_hash: bytes, limit: int) -> RangeResult:
        worker = self._worker
        if worker is not None:
            try:
                return worker.request("range", self._store_id, after_seq, after_hash, limit)
            except (OSError, WorkerError) as exc:
                if worker.answered and not isinstance(exc, OSError):
                    raise  # one ran before and died: report, and start a new one next round
                # No child can start (OSError), or the first never answered.
                log.warning("sweeper: no worker process (%s); verifying in the daemon", exc)
                worker.close()
                self._worker = None
        return verify_range(conn, self._store_id, after_seq, after_hash, limit)

    def _start_position(self, conn) -> None:
        if self.started_from is not None:
            return  # a reconnect keeps the position already verified
        store_id = self._store_id = read_store_id(conn)
        anchor = read_anchor(anchor_path(store_id, self.state_dir), store_id)
        if anchor is not None:
            self.verified_seq, self.verified_hash = anchor.seq, anchor.hash
            self.started_from = "anchor"
        else:
            self.started_from = "genesis"

    def _check_schema(self, conn) -> None:
        problems = schema_check.differences(conn)
        if problems:
            self._found(Finding(0, "schema_changed", schema_check.describe(problems)), "schema")

    def _sweep(self, conn) -> bool:
        """Verify up to the head as it is now. True on a finding.

        Every round looks, even with nothing new: the position it verified is re-checked
        (one row), so a head cut below it is found at once, and the rows the writer
        committed must all be there: a store ending below them is `truncated`.
        """
        if self._writer_cut():
            self.verified_seq, self.verified_hash = 0, GENESIS
        while not self._stop.is_set():
            self._looked = True
            committed = self._head_seq()  # read before the snapshot: every row up to it is in it
            began = time.monotonic()
            result = self._verify(conn, self.verified_seq, self.verified_hash, CHUNK_ROWS)
            self.last_round_ns = time.time_ns()
            self.verified_seq, self.verified_hash = result.last_seq, result.last_hash
            self.rows_verified += result.rows
            finding = result.finding
            if finding is None and result.rows < CHUNK_ROWS and result.last_seq < committed:
                finding = Finding(result.last_seq + 1, "truncated",
                                  f"the store ends at seq {result.last_seq}, but seq {committed} was committed")
            if finding is not None and self._writer_cut():
                # The writer found the head cut meanwhile and goes on from it: rows it commits now
                # sit where verified ones were. Its finding names the cut; walk again from genesis.
                self.verified_seq, self.verified_hash = 0, GENESIS
                return False
            if finding is not None:
                self._found(finding, "incremental")
                if finding.kind == "truncated":
                    # What is left is verified again from genesis; the loss stays a finding.
                    self.verified_seq, self.verified_hash = 0, GENESIS
                    return False
                return True
            if result.rows < CHUNK_ROWS:
                break  # caught up with this snapshot
            # Catching up: leave the GIL to the loop and the writer most of the time.
            self._stop.wait((time.monotonic() - began) * (1 - DUTY) / DUTY)
        return False

    def _full_round(self, conn) -> None:
        """One chunk of the full pass, if one is running or due."""
        if self.full_interval <= 0:
            return
        if self.full_seq is None:
            if time.monotonic() < self._full_due:
                return
            self._full_due = time.monotonic() + self.full_interval
            self.full_seq, self.full_hash, self.full_target = 0, GENESIS, self._head_seq()
        limit = min(FULL_CHUNK_ROWS, self.full_target - self.full_seq)
        result = self._verify(conn, self.full_seq, self.full_hash, max(limit, 0))
        self.last_round_ns = time.time_ns()
        self.full_seq, self.full_hash = result.last_seq, result.last_hash
        if result.finding is not None:
            self._found(result.finding, "full")
        if result.finding is not None or result.rows < limit or self.full_seq >= self.full_target:
            self.full_seq = None  # this pass is over (at the end, or at the first break)
            self.full_passes += 1
            self.full_last_ns = time.time_ns()

    def _found(self, finding: Finding, by: str) -> None:
        with self._lock:
            self._found_locked(finding, by)

    def _found_locked(self, finding: Finding, by: str) -> None:
        key = (finding.seq, finding.kind)
        if self.finding is None:
            self.finding, self.found_by = finding, by
        self.state = "broken"
        if any((f.seq, f.kind) == key for f, _ in self._writer_findings()):
            return  # the writer's: shown, and recorded by the daemon from the writer
        if key not in self.findings:
            self.findings[key] = finding
            log.error("chain verification (%s) found %s at seq %d: %s", by, finding.kind, finding.seq, finding.detail)
        if key in self._reported:
            return
        self._reported.add(key)
        if self._on_finding is not None:
            try:
                self._on_finding(finding, by)
            except Exception as exc:  # recording it is the daemon's job; the finding stays in health
                log.error("could not record the finding: %r", exc)


    def recorded(self, finding: Finding, seq: int) -> None:
        """`finding` (its own or the writer's) is in the store, as the row at `seq` (stored now, or
        earlier: a duplicate)."""
        self._recorded[(finding.seq, finding.kind)] = seq

    def unreported(self, finding: Finding) -> None:
        """Recording `finding` failed: hand it to on_finding again when it is found again."""
        self._reported.discard((finding.seq, finding.kind))


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:
        pass
