"""The daemon's one writer: a thread that owns the store and commits in groups.

Everything else (socket reading, parsing, normalization, spool reading) runs
elsewhere and hands finished rows to `Writer.submit`. The writer takes
whatever is queued, up to `batch_max`, appends it in one `Store.append`
transaction and reports every outcome back to the event loop in one call,
only after COMMIT returned. Its critical section is O(batch): it never waits
on background work.

A commit that fails fails closed: every job of the batch is told so (its
sender is answered `unavailable` and spools), the writer keeps going, and the
first batch that commits again carries a `gap` row describing the outage.

A store that is no longer the one the writer opened (its file, WAL or shared
memory deleted or swapped, its schema changed, an append that did not store
what it was given) stops the writer for good: every later job is answered
`unavailable` and `health` says `stopped` with the reason, until an operator
restarts the daemon (docs/reliability.md, "Store identity"). A head below the
writer's last commit (rows deleted from the tail) is a truncation: the writer
keeps it as a finding (`findings()`, with those remembered for the store from
earlier runs), has it remembered outside the store (`remember`), and goes on from
the head the store has; the daemon reads the finding from here and records it.

Rows another process appended (foreign rows) are named by a `gap` row (reason
`foreign_rows`) in the very commit that first chains past them (store/append.py),
so no commit, and no checkpoint signed from one, covers them unnamed; when idle the
writer looks for them every `probe_interval` seconds. The writer owns what it names:
`stats.foreign_rows` lists every range (those the start commit named, made before the
writer existed, included), and `remember` keeps each as a finding outside the store. Before every commit group it
asks `guard` (store/writerlock.py) whether it is still the one writer: a second one
stops it for good, like a replaced store.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Hashable, Optional, Sequence, Union

from agentwatch.record.normalize import gap_append
from agentwatch.store.append import Append, Appended, HeadMoved, RowRefused, Store, StoreIntegrityError
from agentwatch.store.erasure import FINDING_GAP_PREFIX
from agentwatch.store.rows import TailRecord
from agentwatch.store.schema_check import SchemaChanged
from agentwatch.store.wal import BACKGROUND_AT, Checkpointer
from agentwatch.verify import foreign
from agentwatch.verify.findings import Finding

log = logging.getLogger(__name__)

# A job's row, or a function the writer calls just before the commit to build
# it (attestations, which need the head as the writer sees it).
RowSource = Union[Append, Callable[["Writer"], Append], "Chore"]
# Keeps a finding outside the store (verify/known_stores.py): (finding, through_seq, head or None).
Remember = Callable[[Finding, int, Optional[tuple[int, bytes]]], None]


def foreign_gap_row(first: int, last: int) -> Append:
    """The `gap` row naming rows another process appended (store/append.py adds it)."""
    return gap_append(f"{FINDING_GAP_PREFIX}{first}-{last}-{uuid.uuid4()}", "foreign_rows", {
        "first_seq": first, "last_seq": last,
        "detail": "rows appended to the store outside this daemon's writer"})


@dataclass(frozen=True)
class Refusal:
    """Why a job was not committed: `unavailable` (retry later), `bad_request` (never), `shutting_down`."""

    code: str
    message: str


class Chore:
    """Work the writer does on its store between group commits, in transactions of its own:
    `run(store)` returns the rows it appended, as (Append, Appended) pairs, for the writer's
    head, live tail and tree bookkeeping (a retention pass: store/retention.py)."""

    __slots__ = ("run",)

    def __init__(self, run: Callable[[Store], list[tuple[Append, Appended]]]):
        self.run = run


class Job:
    """One row to commit and the callback (run on the event loop) told how it went."""

    __slots__ = ("row", "done", "queued_ns", "peer")

    def __init__(self, row: RowSource, done: Callable[[Optional[Appended], Optional[Refusal]], None],
                 peer: Hashable = None):
        self.row = row
        self.done = done  # done(result, None) after commit; done(None, refusal) when not committed
        self.peer = peer  # whose record (daemon/fairness.py): (uid, pid) of a socket client, None the daemon's
        self.queued_ns = 0  # monotonic time of submit, for stats.queue_wait_max_ns


@dataclass
class Outage:
    """Commits that failed since the last one that succeeded."""

    first_ns: int
    last_ns: int
    error: str
    failed_commits: int = 0
    rows_refused: int = 0

    def gap_row(self) -> Append:
        return gap_append(
            f"gap-{uuid.uuid4()}",
            "commit_failed",
            {
                "error": self.error,
                "first_failure_ns": self.first_ns,
                "last_failure_ns": self.last_ns,
                "failed_commits": self.failed_commits,
                # Their senders were answered `unavailable`; their clients spool and resend them.
                "rows_refused": self.rows_refused,
            },
        )


@dataclass
class WriterStats:
    commits: int = 0
    rows_committed: int = 0
    commit_failures: int = 0
    gaps_recorded: int = 0
    last_commit_ns: int = 0
    last_error: Optional[str] = None
    largest_batch: int = 0
    rows_refused_by_store: int = 0  # single rows the store refused (answered bad_request)
    # How long the hot path was held up, for soaks and health: the longest group commit
    # (BEGIN IMMEDIATE to COMMIT, fsync included), and the longest a record sat queued
    # before the writer took its group (a stalled writer shows here first).
    commit_max_ns: int = 0
    queue_wait_max_ns: int = 0
    # Rows another process appended: {first_seq, last_seq, gap_seq} per range, in order found.
    foreign_rows: list = field(default_factory=list)


class Writer:
    """Owns `store` from `start()` until `stop()`; nothing else may touch it meanwhile.

    `deliver(pairs)` is called (from the writer thread) with a list of
    (job, result, error) for each finished batch; the server passes a function
    that hops onto its event loop with `call_soon_threadsafe`.
    """

    def __init__(
        self,
        store: Store,
        deliver: Callable[[list], None],
        *,
        batch_max: int,
        reopen: Optional[Callable[[], Store]] = None,
        checkpointer: Optional[Checkpointer] = None,
        on_head: Optional[Callable[[int, bytes], None]] = None,
        on_pending: Optional[Callable[[int, bytes], None]] = None,
        salvage: Optional[Callable[[Store], None]] = None,
        guard: Optional[Callable[[], Optional[str]]] = None,
        remember: Optional[Remember] = None,
        known_findings: Sequence[Finding] = (),
        probe_interval: float = 1.0,
    ):
        self.store: Optional[Store] = store
        self._deliver = deliver
        # A reopen never creates a store: a missing file is not the store this writer had.
        pack = getattr(store, "packer", None) is not None
        self._reopen = reopen or (lambda: Store(Path(store.path), create=False, pack=pack))
        self.store_id = store.store_id
        self._store_file = store.files_ids()[0]
        # Called after every commit, before its acknowledgements go out (the remembered head).
        self._on_head = on_head
        # Called inside each commit's transaction, just before COMMIT, with the head it will leave.
        self._on_pending = on_pending
        # Asked before every commit group: None while this process is the store's one writer.
        self._guard = guard
        # Called (writer thread) with each foreign range and truncation the writer finds.
        self._remember = remember
        # What the writer knows is wrong with its store: (finding, found_by), "remembered" from
        # earlier runs (verify/identity.py) or "writer" (a truncation found here); read by others.
        self._findings: list[tuple[Finding, str]] = [(f, "remembered") for f in known_findings]
        self._findings_lock = threading.Lock()
        self.probe_interval = probe_interval
        store.foreign_gap = foreign_gap_row
        store.pending_hook = on_pending
        self.halted: Optional[str] = None  # why the writer stopped for good
        # Called once, on the thread that owns the store, when its files at the path were deleted or
        # replaced: the connection still holds them, and what it committed there can be copied out.
        self._salvage = salvage
        self._files_lost = False
        self.batch_max = batch_max
        self._queue: deque[Job] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="agentwatch-writer", daemon=True)
        self.outage: Optional[Outage] = None
        self.stats = WriterStats()
        self._named(store, counted=False)  # rows the start commit, made before the writer, named
        self.committed: list[TailRecord] = []  # since the last take_committed()
        self.head_seq, self.head_hash = store.head()
        # The Merkle tree head (size, root) of the last commit, for the checkpoint signer.
        self.tree_head: Optional[tuple[int, bytes]] = store.tree_head
        # Called on the writer thread after each commit (the checkpoint timer counts rows).
        self.after_commit: Optional[Callable[[], None]] = None
        # None: SQLite checkpoints inside COMMIT, as for any connection.
        self.checkpointer = checkpointer
        if checkpointer is not None:
            checkpointer.attach(store.conn)

    # -- called from other threads -------------------------------------------------

    def start(self) -> None:
        if self.checkpointer is not None and not self.checkpointer.start():
            # No second connection: SQLite checkpoints inside COMMIT again, as it would anyway.
            log.warning("%s; checkpoints stay in the commit", self.checkpointer.stats.last_error)
            if self.store is not None:
                self.store.conn.setwalhook(None)
                self.store.conn.wal_autocheckpoint(BACKGROUND_AT)
            self.checkpointer = None
        self._thread.start()

    def submit(self, jobs: Sequence[Job]) -> bool:
        """Queue jobs for the next group commit. False when the writer is stopping."""
        now = time.monotonic_ns()
        for job in jobs:
            job.queued_ns = now
        with self._cond:
            if self._stopping:
                return False
            self._queue.extend(jobs)
            self._cond.notify()
        return True

    def take_committed(self) -> list[TailRecord]:
        """The rows committed since the last call (writer thread: call it from `deliver`)."""
        committed, self.committed = self.committed, []
        return committed

    def queued(self) -> int:
        return len(self._queue)

    def findings(self) -> list[tuple[Finding, str]]:
        """(finding, found_by) for each finding the writer holds, in the order it learned them (any thread)."""
        with self._findings_lock:
            return list(self._findings)

    def close_store(self) -> None:
        """Close the store the writer holds (the one it opened, or reopened): after stop()."""
        if self.store is not None:
            self.store.close()

    def halt(self, reason: str) -> None:
        """Stop committing for good: the store is not the one this writer opened (any thread)."""
        if self.halted is None:
            self.halted = reason
            self.stats.last_error = reason
            log.warning(f"the writer stopped: {reason}; answering unavailable until a restart")

    def check_store(self) -> Optional[str]:
        """Halt if the files at the store path are no longer the ones held open; the reason, or None."""
        store = self.store
        if self.halted is None and store is not None:
            changed = store.files_changed()
            if changed is not None:
                self._files_lost = True
                self.halt(changed)
        return self.halted

    def stop(self, timeout: float | None = None) -> None:
        """Commit what is queued, then end the thread. The caller closes the store."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.ident is not None:
            self._thread.join(timeout)
        if self.checkpointer is not None:
            self.checkpointer.stop()

    def commit_now(self, jobs: Sequence[Job]) -> list:
        """Commit on the calling thread: only while the writer thread is not running."""
        if self._thread.is_alive():
            raise RuntimeError("the writer thread owns the store")
        return self._commit(list(jobs))

    # -- the writer thread ----------------------------------------------------------

    def _run(self) -> None:
        queue = self._queue
        while True:
            with self._cond:
                if not queue and not self._stopping:
                    self._cond.wait(self.probe_interval if self.probe_interval > 0 else None)
                if not queue and self._stopping:
                    return
                idle = not queue
            if idle:
                try:
                    self._probe()
                except BaseException as exc:  # the writer thread must never die silently
                    log.exception("writer: unexpected %r", exc)
                continue
            with self._cond:
                n = min(len(queue), self.batch_max)
                jobs = [queue.popleft() for _ in range(n)]
            chores = [job for job in jobs if isinstance(job.row, Chore)]
            if chores:
                jobs = [job for job in jobs if not isinstance(job.row, Chore)]
            try:
                began = time.monotonic_ns()
                outcomes = self._commit(jobs) if jobs else []
                outcomes += [self._do_chore(job) for job in chores]
                stats = self.stats
                stats.commit_max_ns = max(stats.commit_max_ns, time.monotonic_ns() - began)
                stats.queue_wait_max_ns = max(stats.queue_wait_max_ns, began - (jobs or chores)[0].queued_ns)
                self._deliver(outcomes)
                if self.after_commit is not None:
                    self.after_commit()
                if self.checkpointer is not None and self.store is not None:
                    self.checkpointer.after_commit(self.store.conn)
            except BaseException as exc:  # the writer thread must never die silently
                log.exception("writer: unexpected %r", exc)

    def _probe(self) -> None:
        """Idle: am I still the one writer, and did another process append rows? Name them now."""
        if self.check_store() is not None or self.store is None:
            return
        reason = self._guard() if self._guard is not None else None
        if reason is not None:
            self.halt(reason)
            return
        if self.store.head()[0] <= self.store.committed_head[0]:
            return
        learned = len(self._findings)
        outcomes = self._commit_rows([], [], probe=True)
        if outcomes:
            self._deliver(outcomes)
        elif self.committed or len(self._findings) != learned:  # the loop reads what is new
            self._deliver([])

    def _do_chore(self, job: Job) -> tuple:
        """Run one chore on the store; its rows count as committed like any group's."""
        assert isinstance(job.row, Chore)
        if self.halted is None and self._guard is not None:
            reason = self._guard()
            if reason is not None:
                self.halt(reason)
        if self.halted is not None or self.store is None:
            return (job, None, Refusal("unavailable", f"the writer stopped: {self.halted}"))
        try:
            appended = job.row.run(self.store)
        except Exception as exc:  # the chore's transaction rolled back; the writer goes on
            log.warning("writer: a chore failed: %r", exc)
            return (job, None, Refusal("unavailable", f"{type(exc).__name__}: {exc}"))
        # A gap row the chore's append put ahead of its own rows.
        stored = [(row, r) for _, row, r in self.store.foreign_committed]
        stored += [(row, r) for row, r in appended if not r.duplicate]
        self._named(self.store, counted=False)
        self.committed.extend(
            TailRecord(r.seq, r.record_id, row.kind, r.recorded_at_ns, r.hash, row.payload) for row, r in stored)
        if stored:
            self.head_seq, self.head_hash = stored[-1][1].seq, stored[-1][1].hash
            if self._on_head is not None:
                self._on_head(self.head_seq, self.head_hash)
            self.stats.commits += 1
            self.stats.last_commit_ns = time.time_ns()
        self.tree_head = self.store.tree_head
        return (job, stored[-1][1] if stored else None, None)

    def _commit(self, jobs: list[Job]) -> list:
        try:
            rows = [job.row if isinstance(job.row, Append) else job.row(self) for job in jobs
                    if not isinstance(job.row, Chore)]
        except Exception as exc:  # a row builder's bug: refuse the group rather than lose the thread
            return self._failed(jobs, exc)
        return self._commit_rows(jobs, rows)

    def _commit_rows(self, jobs: list[Job], rows: list[Append], retried: bool = False, probe: bool = False) -> list:
        if self.halted is None and self._guard is not None and not retried:
            reason = self._guard()
            if reason is not None:
                self.halt(reason)
        if self.halted is not None:
            return self._stopped(jobs)
        try:
            if self.store is None:
                self.store = self._reopen()
                if self.store.store_id != self.store_id or self.store.files_ids()[0] != self._store_file:
                    self.halt(f"the store at {self.store.path} is not the one this daemon opened")
                    return self._stopped(jobs)
                self.store.foreign_gap = foreign_gap_row
                self.store.pending_hook = self._on_pending
                if self.checkpointer is not None:
                    self.checkpointer.attach(self.store.conn)
            gaps = [self.outage.gap_row()] if self.outage is not None else []
            options: dict = {"probe": True} if probe else {}
            results = self.store.append([*gaps, *rows], **options)
        except HeadMoved as exc:
            if exc.kind != "truncated" or retried:
                self.halt(f"{exc.kind}: {exc}")
                return self._stopped(jobs)
            # Rows were deleted from the tail: keep the finding, and go on from the head the store has.
            if self.store is not None:
                self.store.committed_head = exc.found
            self.head_seq, self.head_hash = exc.found
            self._truncated(exc.found, exc.expected)
            return self._commit_rows(jobs, rows, retried=True)
        except (StoreIntegrityError, SchemaChanged) as exc:
            kind = exc.kind if isinstance(exc, StoreIntegrityError) else "schema_changed"
            self._files_lost = self._files_lost or kind == "replaced"
            self.halt(f"{kind}: {exc}")
            return self._stopped(jobs)
        except RowRefused as exc:
            # Something about one row (a payload SQLite's JSON functions refuse, a CHECK)
            # fails the whole transaction. Split the group so the one poisoned row is
            # refused alone instead of turning every record beside it away, forever.
            self._recover_connection()
            if len(jobs) == 1:
                self.stats.rows_refused_by_store += 1
                message = f"the store refused this record ({exc})"
                log.warning("%s: %r", message, rows[0].record_id)
                return [(jobs[0], None, Refusal("bad_request", message))]
            half = len(jobs) // 2
            return self._commit_rows(jobs[:half], rows[:half]) + self._commit_rows(jobs[half:], rows[half:])
        except Exception as exc:  # the store's fault, or a bug: fail closed, the sender spools
            return self._failed(jobs, exc)
        now = time.time_ns()
        stats = self.stats
        # Committed rows, in seq order, for live-tail subscribers (the server takes them); a row
        # naming foreign rows, when this commit made one, comes first.
        named = self.store.foreign_committed if self.store is not None else []
        stored = [(row, r) for _, row, r in named]
        stored += [(row, r) for row, r in zip([*gaps, *rows], results) if not r.duplicate]
        self.committed.extend(
            TailRecord(r.seq, r.record_id, row.kind, r.recorded_at_ns, r.hash, row.payload) for row, r in stored
        )
        if stored:  # the last row stored is the head: no need to ask the store
            self.head_seq, self.head_hash = stored[-1][1].seq, stored[-1][1].hash
            if self._on_head is not None:
                self._on_head(self.head_seq, self.head_hash)  # before any acknowledgement goes out
        if gaps:
            results = results[len(gaps):]
            stats.gaps_recorded += len(gaps)
            self.outage = None
        store = self.store
        if store is not None:
            self.tree_head = store.tree_head
            self._named(store, counted=True)
            store.foreign_rows.clear()
        stats.commits += 1
        stats.rows_committed += len(rows)
        stats.last_commit_ns = now
        if len(rows) > stats.largest_batch:
            stats.largest_batch = len(rows)
        return [(job, result, None) for job, result in zip(jobs, results)]

    def _named(self, store: Store, *, counted: bool) -> None:
        """Take the foreign ranges the store's last commit named: listed, remembered, and (a group
        commit's, whose gap rows the writer counts) counted."""
        for (first, last), _, r in store.foreign_committed:
            if counted:
                log.warning("rows %d..%d were appended to the store by another process; named by gap row %d",
                            first, last, r.seq)
                self.stats.gaps_recorded += 1
            self.stats.foreign_rows.append({"first_seq": first, "last_seq": last, "gap_seq": r.seq})
            if self._remember is not None:
                self._remember(foreign.named(first, last, r.seq), last, None)
        store.foreign_committed.clear()

    def _truncated(self, found: tuple[int, bytes], committed: tuple[int, bytes]) -> None:
        """The store's head fell below the writer's last commit: a finding, kept before the commit over the cut."""
        finding = Finding(found[0] + 1, "truncated",
                          f"the store ends at seq {found[0]}, but seq {committed[0]} was committed: "
                          f"rows {found[0] + 1}..{committed[0]} were deleted")
        log.error("the writer found %s at seq %d: %s", finding.kind, finding.seq, finding.detail)
        if self._remember is not None:
            self._remember(finding, committed[0], found)
        with self._findings_lock:
            self._findings.append((finding, "writer"))

    def _stopped(self, jobs: list[Job]) -> list:
        if not jobs:
            return []
        if self._files_lost and self._salvage is not None and self.store is not None:
            salvage, self._salvage = self._salvage, None
            try:
                salvage(self.store)
            except Exception as exc:  # the copy is a courtesy; the refusal below is what matters
                log.warning(f"could not copy the lost store out: {exc!r}")
        self.stats.commit_failures += 1
        refusal = Refusal("unavailable", f"the writer stopped ({self.halted}); spool the record")
        return [(job, None, refusal) for job in jobs]

    def _failed(self, jobs: list[Job], exc: Exception) -> list:
        now = time.time_ns()
        error = f"{type(exc).__name__}: {exc}"
        stats = self.stats
        stats.commit_failures += 1
        stats.last_error = error
        if self.outage is None:
            self.outage = Outage(now, now, error)
            log.error("commit failed, answering unavailable until it succeeds: %s", error)
        outage = self.outage
        outage.last_ns = now
        outage.error = error
        outage.failed_commits += 1
        outage.rows_refused += len(jobs)
        self._recover_connection()
        refusal = Refusal("unavailable", "the store cannot commit now; spool the record and retry later")
        return [(job, None, refusal) for job in jobs]

    def _recover_connection(self) -> None:
        """Leave no transaction open; drop a connection that cannot even roll back."""
        store = self.store
        if store is None:
            return
        try:
            if not store.conn.getautocommit():
                store.conn.execute("ROLLBACK")
        except Exception:
            try:
                store.close()
            except Exception:
                pass
            self.store = None  # reopened before the next batch
