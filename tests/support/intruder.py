"""The intruder soak: a second writer and forged rows under load from real hook processes (issue #24).

While sender threads run real hook processes (`python -I -S hook.py`) against a real
`agentwatch serve`, an intruder running as the same user, as the recorded agent could:

1. deletes the store's lock file and starts a second `agentwatch serve` on the same store
   (another socket), again and again: every one must be refused (exit 3);
2. appends forged event rows through the library (`Store.append`, which chains them
   correctly), one small batch at a time;
3. at the end of the sends, takes the lock file at the path itself after deleting the
   daemon's (a second writer): the daemon must fail closed (health `stopped`), the
   hooks spool; the soak then stops the daemon, drops the intruder's lock and starts a
   fresh daemon, which drains the spool.

The gate (`IntruderReport.problems()`), each from its own source: every record the ledger
sent is stored exactly once, every acknowledged seq is the stored seq, every forged row
is inside a `foreign_rows` gap range and every such range holds only forged rows, every
forged range is a `verify` finding, and every second `serve` was refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.store.writerlock import LockFile, lock_path
from support import ingest


@dataclass(frozen=True)
class IntruderConfig:
    prefill: int = 500
    sends: int = 200
    senders: int = 4
    forged_batches: int = 10  # library appends by the intruder, spread over the sends
    second_serves: int = 3  # second `serve` attempts with the lock file deleted
    fail_closed: bool = True  # end with a second writer holding the lock file (phase 3)


@dataclass
class IntruderReport:
    config: IntruderConfig
    sent: int = 0
    hook_errors: list[str] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    stored: int = 0
    missing: int = 0
    duplicated: int = 0
    ack_seq_mismatch: int = 0
    forged_seqs: set[int] = field(default_factory=set)
    named_seqs: set[int] = field(default_factory=set)  # seqs inside foreign_rows gap ranges
    named_ranges: int = 0
    verify_named: set[int] = field(default_factory=set)  # first seqs of verify's foreign_rows findings
    forged_first_seqs: set[int] = field(default_factory=set)  # first seq of each named range
    second_serve_exits: list[int] = field(default_factory=list)
    stopped_reason: str = ""
    first_exit: int | None = None
    final_exit: int | None = None
    wall_s: float = 0.0

    def problems(self) -> list[str]:
        cfg, found = self.config, []

        def check(ok: bool, message: str) -> None:
            if not ok:
                found.append(message)

        check(not self.hook_errors, f"{len(self.hook_errors)} hook runs failed: {self.hook_errors[:3]}")
        check(self.sent == cfg.sends and self.outcomes["failed"] == 0,
              f"{self.sent} sent of {cfg.sends}, {self.outcomes['failed']} neither acked nor spooled")
        check(self.stored == cfg.sends and self.missing == 0 and self.duplicated == 0,
              f"stored {self.stored} of {cfg.sends}: {self.missing} missing, {self.duplicated} duplicated")
        check(self.ack_seq_mismatch == 0, f"{self.ack_seq_mismatch} acknowledged seqs differ from the stored seq")
        check(len(self.forged_seqs) == cfg.forged_batches * 2, f"{len(self.forged_seqs)} forged rows stored")
        check(self.named_seqs == self.forged_seqs,
              f"foreign_rows gap ranges name {sorted(self.named_seqs ^ self.forged_seqs)[:10]} wrongly "
              f"(forged {len(self.forged_seqs)}, named {len(self.named_seqs)})")
        check(self.verify_named == self.forged_first_seqs,
              f"verify named foreign rows at {sorted(self.verify_named)}, the gap rows at {sorted(self.forged_first_seqs)}")
        check(self.second_serve_exits == [3] * cfg.second_serves, f"second serves exited {self.second_serve_exits}")
        if cfg.fail_closed:
            check(self.stopped_reason.startswith("second_writer: "),
                  f"the daemon did not stop for the second writer: {self.stopped_reason!r}")
        check(self.final_exit == 0, f"the last daemon exited {self.final_exit}")
        return found  # fmt: skip

    def summary(self) -> str:
        return (f"intruder soak: {self.sent} sends from {self.config.senders} senders (real hook processes), "
                f"outcomes {dict(self.outcomes)}; stored {self.stored}, missing {self.missing}, duplicated "
                f"{self.duplicated}, acked seq mismatches {self.ack_seq_mismatch}; forged rows "
                f"{len(self.forged_seqs)} in {self.config.forged_batches} batches, named in {self.named_ranges} "
                f"foreign_rows gap rows, verify named {len(self.verify_named)} ranges; second serves exited "
                f"{self.second_serve_exits}; fail closed: {self.stopped_reason or 'not run'}; "
                f"sends took {self.wall_s:.1f} s; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")


def _forged(n: int) -> Append:
    return Append(f"forged-{n}", "event", canonical_json({
        "schema": 1, "harness": "claude-code", "session_id": "forged-session",
        "event": {"name": "PostToolUse", "kind": "tool_post"}, "tool": {"name": "Bash"}, "n": n}))


def run(root: Path, config: IntruderConfig = IntruderConfig()) -> IntruderReport:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    report = IntruderReport(config)
    store, spool, ledger = root / "store.db", root / "spool", root / "ledger.jsonl"
    sock_dir = Path(tempfile.mkdtemp(prefix="aw-intr-"))
    try:
        ingest.prefill(store, config.prefill)
        daemon = ingest.ServeProcess(store, sock_dir / "agentwatch.sock", spool, root / "daemon.log",
                                     verify_interval=0.2)
        env = dict(os.environ, AGENTWATCH_SOCKET=str(daemon.socket), AGENTWATCH_SPOOL=str(spool),
                   AGENTWATCH_LEDGER=str(ledger))
        soak = ingest.SoakReport(ingest.SoakConfig(prefill=config.prefill, sends=config.sends,
                                                   senders=config.senders))
        daemon.start()
        began = time.monotonic()
        senders = threading.Thread(target=ingest._send, args=(soak, env, soak.config), name="intruder-senders")
        senders.start()
        forged = 0
        attempts = 0
        while senders.is_alive() or forged < config.forged_batches or attempts < config.second_serves:
            if forged < config.forged_batches:
                with Store(store) as intruder:
                    intruder.append([_forged(2 * forged), _forged(2 * forged + 1)])
                forged += 1
            if attempts < config.second_serves:
                try:
                    os.unlink(lock_path(store))
                except FileNotFoundError:
                    pass
                second = subprocess.run(
                    [sys.executable, "-m", "agentwatch.cli", "serve", "--store", str(store),
                     "--socket", str(sock_dir / f"second-{attempts}.sock"), "--spool", str(root / "spool2")],
                    capture_output=True, timeout=60)
                report.second_serve_exits.append(second.returncode)
                attempts += 1
            time.sleep(0.05)
        senders.join()
        report.wall_s = time.monotonic() - began
        report.sent, report.hook_errors = soak.spawned, soak.hook_errors
        if config.fail_closed:
            ingest.wait_until(lambda: ingest._settled(daemon.health(), spool), "the spool to drain")
            try:
                os.unlink(lock_path(store))
            except FileNotFoundError:
                pass
            holder = LockFile(lock_path(store), "store").acquire()  # a second writer's lock file
            try:
                # The next commit group (a hook's record) meets it.
                subprocess.run(ingest.hook_cmd(), input=ingest.post_tool_use("after-second-writer"), env=env,
                               capture_output=True, timeout=60)
                report.sent += 1
                doc = daemon.health()
                report.stopped_reason = doc["writer"].get("stopped_reason") or ""
                report.first_exit = daemon.stop()
            finally:
                holder.release()
            config = IntruderConfig(**{**config.__dict__, "sends": config.sends + 1})
            report.config = config
            daemon = ingest.ServeProcess(store, sock_dir / "agentwatch.sock", spool, root / "daemon2.log",
                                         verify_interval=0.2)
            daemon.start()
        ingest.wait_until(lambda: ingest._settled(daemon.health(), spool), "the spool to drain")
        report.final_exit = daemon.stop()
        _count(report, store, ledger)
        return report
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


def _count(report: IntruderReport, store: Path, ledger: Path) -> None:
    acked: dict[str, int] = {}
    seen: Counter = Counter()
    for raw in ledger.read_bytes().splitlines():
        entry = json.loads(raw)
        seen[entry["record_id"]] += 1
        report.outcomes[entry["outcome"]] += 1
        if entry["outcome"] == "acked":
            acked[entry["record_id"]] = entry["seq"]
    conn = db.open_reader(store)
    try:
        stored: dict[str, int] = {}
        twice = 0
        for seq, record_id in conn.execute("SELECT seq, record_id FROM records WHERE kind = 'event'"):
            if record_id.startswith("forged-"):
                report.forged_seqs.add(seq)
            elif record_id in seen:
                twice += record_id in stored
                stored[record_id] = seq
        for (payload,) in conn.execute("SELECT payload FROM records WHERE kind = 'gap'"):
            doc = json.loads(payload)
            if doc.get("reason") == "foreign_rows":
                report.named_ranges += 1
                report.forged_first_seqs.add(doc["first_seq"])
                report.named_seqs.update(range(doc["first_seq"], doc["last_seq"] + 1))
    finally:
        conn.close()
    report.stored = len(stored)
    report.missing = len(seen.keys() - stored.keys())
    report.duplicated = twice + sum(n - 1 for n in seen.values() if n > 1)
    report.ack_seq_mismatch = sum(1 for rid, seq in acked.items() if stored.get(rid) != seq)
    checked = verify_store(store, full=True, update_anchor=False)
    report.verify_named = {f.seq for f in checked.findings if f.kind == "foreign_rows"}
