"""Power-loss simulation at store level: crash, reboot, check that nothing acknowledged is lost.

``run(directory, crashes=N, seed=S)`` drives Store.append through a FaultVFS
(support.faultvfs) and cuts the power at a random operation: while
the store is being created or reopened, mid-commit, inside a checkpoint, during
a clean restart, or while idle. After each simulated reboot it checks, against
what the run itself recorded:

* every acknowledged record (Store.append returned it) is stored, at its seq;
* the chain verifies from genesis (verify_store, full, with its anchor);
* the batch whose append raised is stored whole or not at all, and resending
  it (what a client does with a record it was not acknowledged) acknowledges
  every record exactly once: all duplicates, or all new;
* no row appears that the run never sent;
* a Store opens and appends again.

``synchronous="OFF"`` is the control: the same run with the commit not synced,
which must lose acknowledged records, or the simulation could not see a loss.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from support.faultvfs import FaultVFS

CYCLES_PER_STORE = 25  # crashes a store lives through before the run starts a fresh one
MAX_OPS = 160  # a crash point is drawn from 0..MAX_OPS mutating operations after the last reboot
MAX_PROBLEMS = 20  # problem messages kept in the report


@dataclass
class Report:
    synchronous: str
    seed: int
    crashes: int = 0
    stores: int = 0
    acked: int = 0  # records acknowledged over the run
    acked_checked: int = 0  # acknowledged records checked after a reboot (summed over reboots)
    in_doubt_batches: int = 0  # checks after a reboot of a batch whose append raised
    in_doubt_stored: int = 0  # ... that found it stored (whole)
    crashes_losing_acks: int = 0
    acks_lost: int = 0  # acknowledged records missing or at another seq after a reboot
    partial_batches: int = 0
    phantom_rows: int = 0
    verify_failures: int = 0
    reopen_failures: int = 0
    unexpected_errors: int = 0  # an exception while the power was on
    by_site: Counter = field(default_factory=Counter)  # what the store was doing when the power went
    by_point: Counter = field(default_factory=Counter)  # the I/O the power went before ("sync wal", "idle")
    by_mode: Counter = field(default_factory=Counter)  # what reboot() kept of unsynced writes
    unsynced_ops: int = 0
    unsynced_kept: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return (
            self.acks_lost + self.partial_batches + self.phantom_rows + self.verify_failures
            + self.reopen_failures + self.unexpected_errors
        )

    def note(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"crash {self.crashes}: {message}")

    def summary(self) -> str:
        return (
            f"power loss, synchronous={self.synchronous}, seed {self.seed}: {self.crashes} crashes over "
            f"{self.stores} stores; {self.acked} records acknowledged, {self.acked_checked} acknowledged-record "
            f"checks after reboots; {self.crashes_losing_acks} crashes lost {self.acks_lost} acknowledged records; "
            f"unacknowledged batches checked {self.in_doubt_batches} ({self.in_doubt_stored} found stored "
            f"whole, {self.partial_batches} partial); phantom rows {self.phantom_rows}; verify failures "
            f"{self.verify_failures}; reopen failures {self.reopen_failures}; unexpected errors "
            f"{self.unexpected_errors}; unsynced ops at crash {self.unsynced_ops} ({self.unsynced_kept} reached "
            f"disk anyway); sites {dict(sorted(self.by_site.items()))}; points {dict(sorted(self.by_point.items()))}; "
            f"modes {dict(sorted(self.by_mode.items()))}"
        )


class _Run:
    def __init__(self, directory: Path, seed: int, synchronous: str, modes: tuple[str, ...]):
        self.dir = Path(directory)
        self.rng = random.Random(seed)
        self.sync = synchronous
        self.modes = modes
        self.vfs = FaultVFS()
        self.report = Report(synchronous, seed)
        self.serial = 0
        self.totals: list[int] = []  # acknowledged records of each finished store
        self.acked: dict[str, int] = {}
        self.unacked: list[list[Append]] = []  # batches whose append raised, oldest first

    # -- the store as the daemon would use it ------------------------------------------

    def open(self) -> Store:
        store = Store(self.path, vfs=self.vfs.name)
        # Small autocheckpoint thresholds put checkpoints (db writes and syncs) inside the crash window.
        store.conn.pragma("wal_autocheckpoint", self.rng.choice((2, 8, 32, 1000)))
        if self.sync != "FULL":
            store.conn.pragma("synchronous", self.sync)  # the control's knob; the product never does this
        return store

    def batch(self) -> list[Append]:
        rows = []
        for _ in range(self.rng.randint(1, 6)):
            self.serial += 1
            pad = "x" * self.rng.choice((0, 10, 300, 2000, 6000))  # 6000 spills into overflow pages
            payload = canonical_json({"n": self.serial, "pad": pad})
            rows.append(Append(f"s{self.report.stores}-r{self.serial}", "event", payload))
        if self.acked and self.rng.random() < 0.2:  # a client's replay of a record it was acknowledged
            rid = self.rng.choice(sorted(self.acked))
            rows.insert(self.rng.randint(0, len(rows)), Append(rid, "event", b"{}"))
        return rows

    def take(self, batch: list[Append], results) -> None:
        for a, r in zip(batch, results):
            if a.record_id in self.acked and r.seq != self.acked[a.record_id]:
                self.report.note(f"{a.record_id} acknowledged at seq {r.seq}, earlier at {self.acked[a.record_id]}")
                self.report.unexpected_errors += 1
            self.acked[a.record_id] = r.seq
        self.report.acked = sum(self.totals) + len(self.acked)

    # -- one store's life -----------------------------------------------------------------

    def new_store(self) -> None:
        self.report.stores += 1
        self.path = self.dir / f"store-{self.report.stores}.db"
        self.state = self.dir / f"state-{self.report.stores}"
        self.vfs.forget()
        self.acked = {}
        self.unacked = []
        self.unacked: list[list[Append]] = []  # batches whose append raised, oldest first

    def resend(self, store: Store) -> None:
        """Append the batches that were never acknowledged, as a client's spool would."""
        while self.unacked:
            batch = self.unacked[0]
            results = store.append(batch)
            new = {r.duplicate for a, r in zip(batch, results) if a.record_id not in self.acked}
            if len(new) > 1:
                self.report.partial_batches += 1
                self.report.note("a resent batch came back part duplicate, part new")
            self.take(batch, results)
            self.unacked.pop(0)

    def cycle(self, store: Optional[Store]) -> tuple[Optional[Store], bool]:
        """Run until the power goes, reboot, check. Returns (store, whether this store is still usable)."""
        rng, vfs, report = self.rng, self.vfs, self.report
        vfs.arm_crash(rng.randint(0, MAX_OPS))
        site = "open"
        try:
            if store is None:
                store = self.open()
                site = "append"
                self.resend(store)
            while not vfs.crashed:
                roll = rng.random()
                if roll < 0.85:
                    site, batch = "append", self.batch()
                    self.unacked.append(batch)
                    self.resend(store)
                    if rng.random() < 0.05:
                        site = "idle"
                        vfs.crash()
                elif roll < 0.92:
                    site = "checkpoint"
                    store.conn.pragma("wal_checkpoint", rng.choice(("PASSIVE", "TRUNCATE")))
                else:
                    site = "restart"
                    store.close()
                    store = None
                    store = self.open()
        except Exception as exc:  # noqa: BLE001 - the power went, or something is wrong
            if not vfs.crashed:
                report.unexpected_errors += 1
                report.note(f"{site}: {type(exc).__name__}: {exc} with the power on")
                vfs.crash()
                vfs.crash_point = "after an error"
        if store is not None:
            try:
                store.close()
            except Exception:  # noqa: BLE001 - a dead machine's close fails; its files are closed
                pass
        mode = rng.choice(self.modes)
        reboot = vfs.reboot(rng, mode, sector=rng.choice((512, 4096)))
        report.crashes += 1
        report.by_site[site] += 1
        report.by_point[vfs.crash_point] += 1
        report.by_mode[mode] += 1
        report.unsynced_ops += reboot.unsynced_ops
        report.unsynced_kept += reboot.kept_ops
        return self.after_reboot()

    def after_reboot(self) -> tuple[Optional[Store], bool]:
        report = self.report
        failures = report.failures
        rows = self.check_disk()
        if report.failures != failures:
            return None, False  # this store has lost something: the run goes on with a fresh one
        if rows is None or self.rng.random() < 0.25:
            # None: nothing to reopen yet. Otherwise, sometimes: the next cycle reopens with the power armed.
            return None, True
        try:
            store = self.open()
            self.resend(store)
            probe = self.batch()
            self.take(probe, store.append(probe))
        except Exception as exc:  # noqa: BLE001
            report.reopen_failures += 1
            report.note(f"reopen after reboot: {type(exc).__name__}: {exc}")
            return None, False
        return store, report.failures == failures

    def check_disk(self) -> Optional[dict[str, int]]:
        """What a reboot left: verify the chain, then compare rows with what was acknowledged."""
        report, path = self.report, self.path
        if not path.exists() or path.stat().st_size == 0:
            if self.acked:
                report.crashes_losing_acks += 1
                report.acks_lost += len(self.acked)
                report.note(f"the store file is gone or empty; {len(self.acked)} acknowledged records lost")
            return None
        try:
            verdict = verify_store(path, full=True, state_dir=self.state)
            conn = db.open_reader(path)
            try:
                rows = dict(conn.execute("SELECT record_id, seq FROM records"))
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001
            if not self.acked:
                # The power went before the store was fully created (a reader cannot open it
                # before a writer finishes that); nothing was acknowledged, and the next open
                # must succeed, which the next cycle checks.
                return None
            report.verify_failures += 1
            report.note(f"cannot verify after reboot: {type(exc).__name__}: {exc}")
            report.acks_lost += len(self.acked)
            report.crashes_losing_acks += 1
            return None
        if not verdict.ok:
            report.verify_failures += 1
            report.note(f"verify: {verdict.finding.kind} at seq {verdict.finding.seq}: {verdict.finding.detail}")
        report.acked_checked += len(self.acked)
        lost = [rid for rid, seq in self.acked.items() if rows.get(rid) != seq]
        if lost:
            report.crashes_losing_acks += 1
            report.acks_lost += len(lost)
            report.note(f"{len(lost)} acknowledged records lost, e.g. {lost[0]} (seq {self.acked[lost[0]]})")
        sent = set(self.acked)
        for batch in self.unacked:
            doubt = [a.record_id for a in batch if a.record_id not in self.acked]
            sent.update(doubt)
            if not doubt:
                continue
            report.in_doubt_batches += 1
            present = [rid in rows for rid in doubt]
            if all(present):
                report.in_doubt_stored += 1
                seqs = [rows[rid] for rid in doubt]
                if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
                    report.partial_batches += 1
                    report.note(f"an unacknowledged batch is stored at non-contiguous seqs {seqs}")
            elif any(present):
                report.partial_batches += 1
                report.note(f"partial batch: {sum(present)} of {len(present)} records stored")
        phantoms = set(rows) - sent
        if phantoms:
            report.phantom_rows += len(phantoms)
            report.note(f"{len(phantoms)} rows never sent, e.g. {sorted(phantoms)[0]}")
        if verdict.ok and not lost and verdict.head_seq != len(rows):
            report.verify_failures += 1
            report.note(f"head seq {verdict.head_seq} but {len(rows)} rows")
        return rows


def run(
    directory: Path,
    *,
    crashes: int,
    seed: int = 0,
    synchronous: str = "FULL",
    modes: tuple[str, ...] = ("drop", "prefix", "torn", "torn"),
    cycles_per_store: int = CYCLES_PER_STORE,
) -> Report:
    """Simulate `crashes` power losses; see the module docstring. Files go under `directory`."""
    r = _Run(directory, seed, synchronous, modes)
    try:
        while r.report.crashes < crashes:
            r.new_store()
            store, usable, cycles = None, True, 0
            while usable and cycles < cycles_per_store and r.report.crashes < crashes:
                store, usable = r.cycle(store)
                cycles += 1
            if store is not None:
                store.close()
            r.totals.append(len(r.acked))
    finally:
        r.vfs.close()
    r.report.acked = sum(r.totals)
    return r.report


__all__ = ["Report", "run"]
