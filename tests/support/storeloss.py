"""The store deleted, its WAL deleted, the store replaced, under load from real hooks (tests/ and soak/).

One case: a daemon records what sender threads and real hook processes send (each attempt a
line in the sender ledger, tests/support/faultload.py); then the store is attacked:

- `delete_running`: `rm store.db store.db-wal store.db-shm` while the daemon serves;
- `wal_after_kill`: SIGKILL, then `rm store.db-wal`;
- `replace_stopped`: a clean stop, then another store moved onto the path.

The daemon is started again: it refuses the path (exit 4 replaced, 5 rolled_back) unless
nothing acknowledged was lost; `agentwatch init --new-store` accepts the store there; a
daemon serves it and drains the spool while the senders go on.

The gate: every acknowledged record is stored at its acked seq, or named by a finding the
operator accepted (kept in the remembered state's history: kind, seq .. through_seq); every
record that was not acknowledged is stored exactly once (from the spool); nothing is stored
twice; the spool is empty; the final store verifies.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agentwatch.store.append import Store
from agentwatch.verify import known_stores
from support.daemon import Daemon, wait_for
from support.faultload import HookProcessSender, Ledger, SocketSender, spool_files, wait_spool_empty

SCENARIOS = ("delete_running", "wal_after_kill", "replace_stopped")


@dataclass
class CaseResult:
    scenario: str
    refused_with: int  # the exit code of the first start after the attack (0: it was not refused)
    sent: int = 0
    acked: int = 0
    spooled: int = 0
    stored: int = 0
    named: int = 0  # acknowledged, gone with the attacked store, named by an accepted finding
    recovered: int = 0  # of those, found in the copy the daemon made of its deleted store
    lost: int = 0  # acknowledged or spooled, neither stored nor named: must be 0
    duplicates: int = 0
    seq_mismatch: int = 0
    findings: list = field(default_factory=list)  # (kind, seq, through_seq) accepted
    verify_exit: int = -1

    def line(self) -> str:
        return (f"{self.scenario}: refused with exit {self.refused_with}, findings {self.findings}; sent {self.sent}, "
                f"acked {self.acked}, spooled {self.spooled}, stored {self.stored}, named {self.named}, "
                f"recovered {self.recovered}, lost {self.lost}, duplicates {self.duplicates}, seq mismatches {self.seq_mismatch}, "
                f"final verify exit {self.verify_exit}")


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True,
                          timeout=120)


def attack(d: Daemon, scenario: str, root: Path) -> Path:
    """Attack the store; returns where a copy of what was lost is kept for the gate.

    The copy is the test's evidence, not the product's: a record the old daemon committed
    from the spool was acknowledged to its drainer, not to a sender, so only the old
    store can say at which seq it was, and whether a finding names it.
    """
    store = str(d.store)
    evidence = root / "evidence"
    evidence.mkdir()
    kept = evidence / "old.db"
    if scenario == "delete_running":
        # Hard links keep the data for the gate; the paths the daemon watches go all the same.
        for suffix in ("", "-wal"):
            if os.path.exists(store + suffix):
                os.link(store + suffix, f"{kept}{suffix}")
        for suffix in ("", "-wal", "-shm"):
            remove(store + suffix)
        wait_for(lambda: d.health()["status"] == "stopped", "the daemon to see its store gone")
        time.sleep(0.3)  # senders meanwhile are answered `unavailable` and spool
        code = d.stop()
        assert code == 3, d.output()  # the stop attestation has nowhere to go
    elif scenario == "wal_after_kill":
        d.send_signal(signal.SIGKILL)
        d.wait()
        shutil.copyfile(store, kept)
        if os.path.exists(store + "-wal"):
            shutil.copyfile(store + "-wal", f"{kept}-wal")
        remove(store + "-wal")
    elif scenario == "replace_stopped":
        assert d.stop() == 0, d.output()
        Store(root / "other.db").close()
        for suffix in ("-wal", "-shm"):
            remove(store + suffix)
        os.replace(store, kept)
        os.replace(root / "other.db", store)
    else:
        raise ValueError(scenario)
    return kept


def run_case(root: Path, scenario: str, *, seed: int, up_s: tuple[float, float] = (0.6, 1.5),
             socket_senders: int = 1, hook_senders: int = 1) -> CaseResult:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    d = Daemon(root, verify_interval=0.3).start()
    ledger = Ledger(root / "ledger.jsonl")
    senders = [SocketSender(d.socket, d.spool, ledger, pause=0.005) for _ in range(socket_senders)]
    senders += [HookProcessSender(d.socket, d.spool, ledger) for _ in range(hook_senders)]
    try:
        for s in senders:
            s.start()
        time.sleep(rng.uniform(*up_s))
        kept = attack(d, scenario, root)
        time.sleep(rng.uniform(0.0, 0.3))  # hooks find no daemon and spool
        first = Daemon(root, verify_interval=0.3)
        first.spawn()
        deadline = time.monotonic() + 30
        refused_with = 0
        while time.monotonic() < deadline:
            if first.proc.poll() is not None:
                refused_with = first.proc.returncode
                break
            if first._ready():
                break
            time.sleep(0.05)
        if refused_with:
            accepted = cli("init", "--store", str(d.store), "--new-store")
            assert accepted.returncode == 0, accepted.stderr
            first = Daemon(root, verify_interval=0.3).start()
        d = first
        time.sleep(rng.uniform(*up_s))  # recording goes on in the accepted store
    finally:
        for s in senders:
            s.stop()
    wait_spool_empty(d)
    result = gate(d, ledger, scenario, refused_with, kept)
    assert d.stop() == 0, d.output()
    result.verify_exit = cli("verify", "--store", str(d.store), "--full").returncode
    return result


def gate(d: Daemon, ledger: Ledger, scenario: str, refused_with: int, kept: Path) -> CaseResult:
    outcome: dict[str, str] = {}
    acked_seq: dict[str, int] = {}
    for e in ledger.entries():
        assert e["outcome"] in ("acked", "spooled"), e
        outcome[e["record_id"]] = e["outcome"]
        if e["outcome"] == "acked":
            acked_seq[e["record_id"]] = e["seq"]
    events = d.rows("event")
    stored = Counter(r["record_id"] for r in events)
    seq_of = {r["record_id"]: r["seq"] for r in events}
    known = known_stores.load(d.store)
    ranges = [(f["kind"], f["seq"], f["through_seq"]) for h in (known.history if known else [])
              for f in h["findings"]]
    old_seq = _old_seqs(kept)
    copies: dict[str, int] = {}
    for h in (known.history if known else []):
        for c in h.get("salvaged", []):
            copies.update(_old_seqs(Path(c["path"])))
    result = CaseResult(scenario, refused_with, sent=len(outcome), acked=len(acked_seq),
                        spooled=len(outcome) - len(acked_seq), stored=len(stored),
                        duplicates=sum(n - 1 for n in stored.values()), findings=ranges)
    for rid, how in outcome.items():
        if rid in stored:
            if how == "acked" and seq_of[rid] != acked_seq[rid]:
                result.seq_mismatch += 1
            continue
        # Gone with the attacked store: acknowledged to a sender (its acked seq) or to the old
        # daemon's spool drainer (its seq there); either way a finding must name that seq.
        seq = acked_seq.get(rid, old_seq.get(rid))
        if seq is not None and any(lo <= seq <= hi for _, lo, hi in ranges):
            result.named += 1
            result.recovered += copies.get(rid) == seq
        else:
            result.lost += 1
    return result


def _old_seqs(kept: Path) -> dict[str, int]:
    """record_id -> seq in the copy of the attacked store (empty when there is none)."""
    if not kept.exists():
        return {}
    con = sqlite3.connect(kept)
    try:
        return dict(con.execute("SELECT record_id, seq FROM records WHERE kind = 'event'"))
    finally:
        con.close()


def assert_gate(r: CaseResult, d_spool: Path) -> None:
    assert r.sent > 0 and r.acked > 0, r.line()
    assert (r.lost, r.duplicates, r.seq_mismatch) == (0, 0, 0), r.line()
    assert r.stored + r.named == r.sent, r.line()
    assert r.verify_exit == 0, r.line()
    assert spool_files(d_spool) == {"new": [], "tmp": [], "bad": []}
    # A deleted or replaced store is always refused; a deleted WAL only when it held acknowledged rows.
    assert r.refused_with in {"delete_running": (4,), "replace_stopped": (4,), "wal_after_kill": (0, 5)}[r.scenario]
    if r.refused_with == 0:
        assert r.named == 0, r.line()
    if r.scenario == "delete_running":
        # The daemon held the deleted files open and copied them out: nothing named is missing there.
        assert r.recovered == r.named, r.line()
