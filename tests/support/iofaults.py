"""I/O errors and a full disk under Store.append, at every operation of a small workload.

Like SQLite's own I/O-error loop: a dry run counts the reads, writes, syncs and
truncates a small workload (open a store, append three batches, with
checkpoints) does; then, for every N, a fresh copy of the same store runs the
workload with the Nth operation of one kind failing (SQLITE_IOERR_*, or
SQLITE_FULL for writes), once or from then on (``persist``). For every case
``run()`` checks:

1. while the fault is armed, an append either returns (and then its records
   must survive a later power loss) or raises: it never acknowledges a commit
   that was not made durable;
2. after the fault clears, the *same* Store appends again (it is recorded
   whether it can, and what it raised if not);
3. closed and reopened, the store opens, every acknowledged record is there at
   its seq, every unacknowledged batch is stored whole or not at all (resending
   it acknowledges each record exactly once), the chain verifies and new
   appends work;
4. after a power loss that keeps only what was synced, 3 holds again.

The report says, per fault kind, what Store.append raised and whether the same
Store carried on: what the daemon's writer can rely on (docs/reliability.md).
"""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from support.faultvfs import FaultVFS

AUTOCHECKPOINT = 4  # pages: puts checkpoint writes, syncs and truncates inside the workload
MAX_PROBLEMS = 20


@dataclass(frozen=True)
class Case:
    kind: str  # read, write, sync, truncate
    nth: int
    error: str = "ioerr"  # or full
    persist: bool = False
    sync_failure: str = "keep"  # what a failed sync does to unsynced writes: keep or drop (Linux)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.error}{' persistent' if self.persist else ''}"

    def __str__(self) -> str:
        extra = f" sync_failure={self.sync_failure}" if self.kind == "sync" else ""
        return f"{self.kind}#{self.nth} {self.error}{' persistent' if self.persist else ''}{extra}"


@dataclass
class Report:
    ops: dict[str, int] = field(default_factory=dict)  # the dry run's operation counts
    cases: int = 0
    faults_injected: int = 0
    appends: int = 0  # appends attempted while a fault was armed
    appends_raised: int = 0
    acked: int = 0  # records acknowledged over all cases
    acked_checked: int = 0  # acknowledged records checked present (after reopen and after power loss)
    acks_lost: int = 0
    partial_batches: int = 0
    verify_failures: int = 0
    reopen_failures: int = 0
    append_after_reopen_failures: int = 0
    same_store_continued: int = 0  # cases where the same Store appended again once the fault cleared
    same_store_failed: int = 0
    left_in_transaction: int = 0  # appends that raised and left the connection inside a transaction
    # (fault, persistent) -> Counter of what Store.append raised, and what the same Store did next.
    raised: dict[str, Counter] = field(default_factory=dict)
    after: dict[str, Counter] = field(default_factory=dict)
    # Batches whose append raised but were committed (whole) all the same: resent,
    # they came back as duplicates. The COMMIT reached the disk and a later step
    # failed, e.g. the checkpoint that runs inside COMMIT past wal_autocheckpoint.
    raised_but_stored: Counter = field(default_factory=Counter)
    open_raised: Counter = field(default_factory=Counter)  # when the fault hit Store() itself
    problems: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return (
            self.acks_lost + self.partial_batches + self.verify_failures + self.reopen_failures
            + self.append_after_reopen_failures + self.left_in_transaction
        )

    def note(self, case: Case, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{case}: {message}")

    def summary(self) -> str:
        lines = [
            f"I/O faults: {self.cases} cases over operations {self.ops}; {self.faults_injected} faults injected; "
            f"{self.appends} appends under a fault, {self.appends_raised} raised "
            f"({sum(self.raised_but_stored.values())} of them committed all the same); {self.acked} records "
            f"acknowledged, {self.acked_checked} acknowledged-record checks; {self.acks_lost} lost; partial batches "
            f"{self.partial_batches}; verify failures {self.verify_failures}; reopen failures "
            f"{self.reopen_failures}; appends failing after reopen {self.append_after_reopen_failures}; appends "
            f"that left a transaction open {self.left_in_transaction}; "
            f"same Store carried on after the fault cleared in {self.same_store_continued} cases, "
            f"failed in {self.same_store_failed}",
        ]
        for key in sorted(self.raised):
            lines.append(
                f"  {key}: append raised {dict(self.raised[key])}, of those found committed after all: "
                f"{self.raised_but_stored.get(key, 0)}; next append on the same Store {dict(self.after.get(key, {}))}"
            )
        if self.open_raised:
            lines.append(f"  Store() under a fault raised {dict(self.open_raised)}")
        return "\n".join(lines)


def _batches() -> list[list[Append]]:
    big = "x" * 6000  # overflow pages
    sizes = ((1, ""), (5, "y" * 200), (3, big))
    out, n = [], 0
    for count, pad in sizes:
        batch = []
        for _ in range(count):
            n += 1
            batch.append(Append(f"w-{n}", "event", canonical_json({"n": n, "pad": pad})))
        out.append(batch)
    return out


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    code = getattr(exc, "extendedresult", None)
    return f"{name}({code})" if code is not None else name


class _Harness:
    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.vfs = FaultVFS()
        self.template = self.dir / "template.db"
        self.serial = 0
        with Store(self.template) as store:  # a store with history, made without faults
            store.append([Append(f"base-{i}", "event", canonical_json({"base": i})) for i in range(20)])
        self.base = {f"base-{i}": i + 1 for i in range(20)}

    def fresh(self) -> Path:
        self.serial += 1
        path = self.dir / f"case-{self.serial}.db"
        shutil.copyfile(self.template, path)
        self.vfs.forget()
        return path

    def open(self, path: Path) -> Store:
        store = Store(path, vfs=self.vfs.name)
        store.conn.pragma("wal_autocheckpoint", AUTOCHECKPOINT)
        return store

    def workload(self, path: Path, report: Optional[Report], case: Optional[Case]):
        """Open and append the batches; returns (store or None, acked, unacked batches)."""
        acked: dict[str, int] = dict(self.base)
        unacked: list[list[Append]] = []
        key = case.key if case else ""
        try:
            store = self.open(path)
        except Exception as exc:  # noqa: BLE001
            if report is None:
                raise
            report.open_raised[_describe(exc)] += 1
            return None, acked, _batches()
        for batch in _batches():
            if report is not None:
                report.appends += 1
            try:
                results = store.append(batch)
            except Exception as exc:  # noqa: BLE001
                if report is None:
                    raise
                report.appends_raised += 1
                report.raised.setdefault(key, Counter())[_describe(exc)] += 1
                if not store.conn.getautocommit():
                    report.left_in_transaction += 1
                    report.note(case, "append raised and left a transaction open")
                unacked.append(batch)
                continue
            for a, r in zip(batch, results):
                acked[a.record_id] = r.seq
        return store, acked, unacked

    def count_ops(self) -> dict[str, int]:
        path = self.fresh()
        self.vfs.reset_counts()
        store, _, _ = self.workload(path, None, None)
        store.close()
        return dict(self.vfs.counts)

    def check(self, path: Path, acked: dict, unacked: list, report: Report, case: Case, when: str) -> bool:
        try:
            verdict = verify_store(path, full=True, state_dir=path.with_suffix(".state"))
            conn = db.open_reader(path)
            try:
                rows = dict(conn.execute("SELECT record_id, seq FROM records"))
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001
            report.verify_failures += 1
            report.note(case, f"{when}: cannot verify: {_describe(exc)}: {exc}")
            return False
        ok = True
        if not verdict.ok:
            report.verify_failures += 1
            report.note(case, f"{when}: verify found {verdict.finding.kind} at seq {verdict.finding.seq}")
            ok = False
        report.acked_checked += len(acked)
        lost = [rid for rid, seq in acked.items() if rows.get(rid) != seq]
        if lost:
            report.acks_lost += len(lost)
            report.note(case, f"{when}: {len(lost)} acknowledged records lost, e.g. {lost[0]}")
            ok = False
        for batch in unacked:
            present = [a.record_id in rows for a in batch if a.record_id not in acked]
            if any(present) and not all(present):
                report.partial_batches += 1
                report.note(case, f"{when}: partial batch, {sum(present)} of {len(present)} stored")
                ok = False
        return ok

    def resend(self, store: Store, acked: dict, unacked: list, report: Report, case: Case) -> None:
        for batch in unacked:
            results = store.append(batch)
            new = {r.duplicate for a, r in zip(batch, results) if a.record_id not in acked}
            if new == {True}:
                report.raised_but_stored[case.key] += 1
            if len(new) > 1:
                report.partial_batches += 1
                report.note(case, "a resent batch came back part duplicate, part new")
            for a, r in zip(batch, results):
                acked[a.record_id] = r.seq
        unacked.clear()

    def run_case(self, case: Case, report: Report) -> None:
        vfs = self.vfs
        path = self.fresh()
        vfs.sync_failure = case.sync_failure
        vfs.injected.clear()
        vfs.arm_fault(case.kind, case.nth, case.error, case.persist)
        store, acked, unacked = self.workload(path, report, case)
        report.cases += 1
        report.faults_injected += bool(vfs.injected)
        vfs.clear_faults()
        key = case.key

        # The fault has cleared: does the same Store carry on?
        if store is not None and vfs.injected:
            probe = [Append(f"p-{self.serial}-1", "event", b'{"probe":1}')]
            try:
                self.resend(store, acked, unacked, report, case)
                for a, r in zip(probe, store.append(probe)):
                    acked[a.record_id] = r.seq
                report.same_store_continued += 1
                report.after.setdefault(key, Counter())["ok"] += 1
            except Exception as exc:  # noqa: BLE001
                report.same_store_failed += 1
                report.after.setdefault(key, Counter())[f"raised {_describe(exc)}"] += 1
        if store is not None:
            try:
                store.close()
            except Exception:  # noqa: BLE001
                pass

        # Reopened: everything acknowledged is there, the rest whole or absent, appends work.
        if not self.check(path, acked, unacked, report, case, "after the fault"):
            return
        try:
            store = self.open(path)
        except Exception as exc:  # noqa: BLE001
            report.reopen_failures += 1
            report.note(case, f"reopen: {_describe(exc)}: {exc}")
            return
        try:
            self.resend(store, acked, unacked, report, case)
            probe = [Append(f"p-{self.serial}-2", "event", b'{"probe":2}')]
            for a, r in zip(probe, store.append(probe)):
                acked[a.record_id] = r.seq
        except Exception as exc:  # noqa: BLE001
            report.append_after_reopen_failures += 1
            report.note(case, f"append after reopen: {_describe(exc)}: {exc}")
        # Power loss keeping only what was synced: every acknowledgement was durable.
        vfs.crash()
        try:
            store.close()
        except Exception:  # noqa: BLE001
            pass
        vfs.reboot(mode="drop")
        self.check(path, acked, unacked, report, case, "after a power loss")
        report.acked += len(acked) - len(self.base)
        for leftover in path.parent.glob(path.name + "*"):
            leftover.unlink()


def cases(ops: dict[str, int], *, stride: int = 1, offset: int = 0) -> Iterable[Case]:
    """Every fault case for a workload with these operation counts (every `stride`-th N)."""
    for kind, total in ops.items():
        for nth in range(1 + offset % stride, total + 1, stride):
            for persist in (False, True):
                if kind == "sync":
                    for sf in ("keep", "drop"):
                        yield Case(kind, nth, "ioerr", persist, sf)
                    continue
                yield Case(kind, nth, "ioerr", persist)
                if kind == "write":
                    yield Case(kind, nth, "full", persist)


def run(directory: Path, *, stride: int = 1, offset: int = 0) -> Report:
    """Run every case (every `stride`-th operation index) in `directory`; see the module docstring."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    h = _Harness(directory)
    try:
        report = Report(ops=h.count_ops())
        for case in cases(report.ops, stride=stride, offset=offset):
            h.run_case(case, report)
    finally:
        h.vfs.close()
    return report


__all__ = ["Case", "Report", "cases", "run"]
