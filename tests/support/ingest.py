"""The ingest soak: real hook processes against a real daemon, on a store the soak owns.

The two lessons of docs/architecture.md, as a test. A background verifier that held the append
lock once made a recorder drop ~10% of 10,000 events at 20,000 rows while
telling every caller "sent"; and a soak pointed at a live store once counted
the recorder's own attestation rows as deliveries. So ``run()``:

1. creates a fresh store and pre-fills it (``Store.append`` in batches, before
   the daemon starts), remembering every pre-filled record_id;
2. starts ``agentwatch serve`` on it with the sweeper at an aggressive interval
   and periodic attestations on (rows of another kind the counts must exclude);
3. runs several sender threads, each spawning real hook processes in sequence
   (``python -I -S <abs>/agentwatch/hook.py claude-code`` with a PostToolUse
   payload on stdin), every one writing the sender ledger;
4. waits until the spool is drained and the sweeper has caught up, reads the
   daemon's health (counters, the writer's longest commit and queue wait),
   stops the daemon, and counts each boundary from its own source.

``SoakReport.problems()`` is the exact gate: the set of record_ids in the
ledger equals the set of non-prefill event record_ids in the store, nothing is
stored twice, every acknowledged seq is the stored seq, the chain verifies,
and ``reconcile`` holds. Nothing here is timed; the wall time is printed only.
Used by soak/test_ingest_soak.py (10,000 sends) and
tests/test_ingest_soak_quick.py (a short run in the default suite).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import agentwatch
from agentwatch.daemon import health
from agentwatch.evidence.audit import verify_store
from agentwatch.readers.reconcile import reconcile
from agentwatch.record.ids import new_record_id
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

HOOK = Path(agentwatch.__file__).resolve().parent / "hook.py"
DEADLINE_S = 120.0  # for conditions that are polled (start, drain), never a timing gate


def hook_cmd(harness: str = "claude-code") -> list[str]:
    """The command line `install` writes: this interpreter, isolated, on the file."""
    return [sys.executable, "-I", "-S", str(HOOK), harness]


def post_tool_use(marker: str) -> bytes:
    """A Claude Code PostToolUse hook input (~1.5 KB), made unique by `marker`."""
    return json.dumps(
        {
            "session_id": "3f1c6a52-2d7e-4c55-9b1e-6a8f0d2c7e41",
            "transcript_path": "/home/dev/.claude/projects/p/3f1c6a52.jsonl",
            "cwd": "/home/dev/project",
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"ls -la src  # {marker}", "description": "List files"},
            "tool_response": {
                "stdout": "total 48\n" + "-rw-r--r-- 1 dev dev 1234 a.py\n" * 30,
                "stderr": "",
                "interrupted": False,
            },
            "tool_use_id": f"toolu_{marker}",
        }
    ).encode()


def append_line(record_id: str, payload: bytes, harness: str = "claude-code") -> bytes:
    """A wire-protocol append as the hook client frames it (payload as raw text)."""
    now = time.time_ns()
    frame = {
        "op": "append", "v": 1, "record_id": record_id, "harness": harness, "event": None,
        "payload_text": payload.decode("utf-8"), "orig_bytes": len(payload), "truncated": False,
        "ts_observed_ns": now, "ts_mono_ns": time.monotonic_ns(), "pid": os.getpid(), "ppid": os.getppid(),
        "delivery": "socket",
    }  # fmt: skip
    return json.dumps(frame, separators=(",", ":")).encode() + b"\n"


_PREFILL_DOC = {
    "schema": 1,
    "harness": "claude-code",
    "session_id": "0b8e7c1a-5d2f-4e61-8a90-1c2d3e4f5a6b",
    "event": {"name": "PostToolUse", "kind": "tool_post"},
    "tool": {"name": "Read", "category": "read", "call_id": "toolu_prefill", "input": {"file_path": "README.md"}},
    "cwd": "/home/dev/project",
    "client": {"pid": 4242, "ppid": 4241, "delivery": "socket"},
    "raw": {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_response": "x" * 600},
}


def prefill(store_path: Path, rows: int, batch: int = 1000) -> set[str]:
    """Append `rows` event rows in batches; returns their record_ids. The store must not be served."""
    ids: set[str] = set()
    with Store(store_path) as store:
        done = 0
        while done < rows:
            n = min(batch, rows - done)
            chunk = []
            for i in range(done, done + n):
                record_id = new_record_id()
                ids.add(record_id)
                chunk.append(Append(record_id, "event", canonical_json({**_PREFILL_DOC, "n": i})))
            store.append(chunk)
            done += n
    return ids


class ServeProcess:
    """`agentwatch serve` as a subprocess on the paths given; a context manager."""

    def __init__(self, store: Path, socket: Path, spool: Path, log: Path, *, verify_interval: float = 5.0,
                 attest_interval: float = 0.0, idle_timeout: float = 30.0, env: Optional[dict] = None):
        self.store, self.socket, self.spool, self.log = store, socket, spool, log
        self.argv = [
            sys.executable, "-m", "agentwatch.cli", "serve",
            "--store", str(store), "--socket", str(socket), "--spool", str(spool),
            "--verify-interval", str(verify_interval), "--attest-interval", str(attest_interval),
            "--idle-timeout", str(idle_timeout),
        ]  # fmt: skip
        self.env = env
        self.proc: Optional[subprocess.Popen] = None
        self.returncode: Optional[int] = None

    def start(self) -> "ServeProcess":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=self.env)
        give_up = time.monotonic() + DEADLINE_S
        while not health.answers(self.socket):
            if self.proc.poll() is not None:
                raise RuntimeError(f"agentwatch serve exited {self.proc.returncode} before serving:\n{self.output()}")
            if time.monotonic() > give_up:
                self.stop()
                raise RuntimeError(f"agentwatch serve did not answer within {DEADLINE_S:g} s:\n{self.output()}")
            time.sleep(0.05)
        return self

    def health(self) -> dict:
        return health.query(self.socket, timeout=30.0)

    def stop(self) -> int:
        """SIGTERM, then wait for the drain; the exit code (0 after a clean drain)."""
        if self.proc is not None and self.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.returncode = self.proc.wait(DEADLINE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.returncode = -9
        return self.returncode if self.returncode is not None else 0

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def __enter__(self) -> "ServeProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def wait_until(condition, what: str, deadline_s: float = DEADLINE_S, every: float = 0.1):
    """Poll `condition()` until it is truthy; fail (AssertionError) naming `what` after the deadline."""
    give_up = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out after {deadline_s:g} s waiting for {what}")
        time.sleep(every)


@dataclass(frozen=True)
class SoakConfig:
    prefill: int = 20_000
    sends: int = 10_000
    senders: int = 8
    verify_interval: float = 0.05  # the sweeper, aggressive on purpose
    attest_interval: float = 1.0  # attestation rows the counts must leave out
    hook_timeout_ms: Optional[int] = None  # None: the client's default (250 ms)
    # Every Nth send of each sender gets a 1 ms deadline, so the timed-out-and-spooled
    # path (and the committed-but-not-acked duplicate at drain) runs in every soak.
    short_deadline_every: int = 0


@dataclass
class SoakReport:
    config: SoakConfig
    spawned: int = 0  # hook processes the senders ran
    short_deadline: int = 0  # of which ran with a 1 ms deadline (short_deadline_every)
    hook_errors: list[str] = field(default_factory=list)  # a non-zero exit or anything on stderr
    ledger_lines: int = 0
    ledger_malformed: int = 0
    ledger_ids: int = 0  # distinct record_ids in the ledger
    outcomes: Counter = field(default_factory=Counter)  # acked / spooled / failed
    reasons: Counter = field(default_factory=Counter)  # why not acked (timeout, no_daemon, ...)
    latency_us: list[int] = field(default_factory=list)
    by_kind: dict = field(default_factory=dict)  # store rows per kind, prefill included
    attestations: dict = field(default_factory=dict)  # attestation rows per type (start, stop, periodic, ...)
    prefill_intact: bool = False  # the prefill ids are exactly the events at seq 1..prefill
    stored: int = 0  # non-prefill events in the store
    stored_via_spool: int = 0  # of those, client.delivery == "spool"
    missing: int = 0  # in the ledger, not stored
    unexpected: int = 0  # stored, not in the ledger
    duplicated: int = 0  # record_ids stored more than once, or in more than one ledger line
    ack_seq_mismatch: int = 0
    chain_ok: bool = False
    chain_rows: int = 0
    chain_detail: str = ""
    reconciliation: dict = field(default_factory=dict)
    health: dict = field(default_factory=dict)  # the daemon's, after the drain, before the stop
    daemon_exit: Optional[int] = None
    wall_s: float = 0.0  # from the first spawn to the last exit
    drain_s: float = 0.0  # from the last exit to an empty spool and a caught-up sweeper

    # -- the gate ---------------------------------------------------------------------

    def problems(self) -> list[str]:
        cfg, found = self.config, []
        counters = self.health.get("counters", {})
        writer = self.health.get("writer", {})
        sweeper = self.health.get("sweeper", {})

        def check(ok: bool, message: str) -> None:
            if not ok:
                found.append(message)

        check(self.spawned == cfg.sends, f"{self.spawned} hook processes ran, {cfg.sends} planned")
        check(not self.hook_errors, f"{len(self.hook_errors)} hook runs failed or wrote stderr: {self.hook_errors[:3]}")
        check(self.ledger_lines == cfg.sends and self.ledger_malformed == 0,
              f"{self.ledger_lines} ledger lines ({self.ledger_malformed} malformed) for {cfg.sends} sends")
        check(self.ledger_ids == cfg.sends, f"{self.ledger_ids} distinct record_ids in the ledger, {cfg.sends} sends")
        check(self.outcomes["failed"] == 0, f"{self.outcomes['failed']} records neither acknowledged nor spooled")
        check(self.stored == cfg.sends, f"stored {self.stored} != sent {cfg.sends}")
        check(self.missing == 0, f"{self.missing} ledger records missing from the store")
        check(self.unexpected == 0, f"{self.unexpected} stored events not in the ledger")
        check(self.duplicated == 0, f"{self.duplicated} record_ids duplicated")
        check(self.ack_seq_mismatch == 0, f"{self.ack_seq_mismatch} acknowledged seqs differ from the stored seq")
        check(self.prefill_intact, "the pre-filled rows are not exactly seq 1..prefill")
        check(self.chain_ok, f"chain does not verify: {self.chain_detail}")
        check(self.reconciliation.get("within_bounds") is True, f"reconcile: {self._failed_predicates()}")
        check(self.by_kind.get("gap", 0) == 0, f"{self.by_kind.get('gap')} gap rows")
        check(counters.get("accepted") == self.stored, f"daemon accepted {counters.get('accepted')} != stored {self.stored}")
        check(counters.get("replayed_from_spool") == self.outcomes["spooled"],
              f"daemon replayed {counters.get('replayed_from_spool')} spool files, ledger spooled {self.outcomes['spooled']}")
        check(self.stored_via_spool == counters.get("replayed_from_spool", 0) - counters.get("spool_duplicates", 0),
              f"{self.stored_via_spool} events stored from the spool, daemon counted "
              f"{counters.get('replayed_from_spool')} replayed - {counters.get('spool_duplicates')} duplicates")
        check(writer.get("state") == "ok" and counters.get("commit_failures") == 0,
              f"writer {writer.get('state')}, {counters.get('commit_failures')} commit failures")
        check(sweeper.get("state") == "ok" and sweeper.get("verified_seq") == self.health.get("head_seq"),
              f"sweeper {sweeper.get('state')} at {sweeper.get('verified_seq')} of {self.health.get('head_seq')}")
        check(self.daemon_exit == 0, f"daemon exited {self.daemon_exit}")
        return found  # fmt: skip

    def _failed_predicates(self) -> str:
        preds = self.reconciliation.get("predicates", {})
        return "; ".join(f"{name}: {p['detail']}" for name, p in preds.items() if p["ok"] is False) or "not run"

    # -- the report -------------------------------------------------------------------

    def summary(self) -> str:
        cfg, h = self.config, self.health
        counters, writer, sweeper = h.get("counters", {}), h.get("writer", {}), h.get("sweeper", {})
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.reasons.items())) or "none"
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.by_kind.items()))
        lat = sorted(self.latency_us)
        pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] / 1000 if lat else float("nan")  # noqa: E731
        preds = self.reconciliation.get("predicates", {})
        problems = self.problems()
        rows = [
            ("sends attempted (ledger)", f"{self.ledger_ids:,}",
             f"{self.ledger_lines:,} lines; {self.spawned:,} processes spawned ({self.short_deadline} with a 1 ms "
             f"deadline), {len(self.hook_errors)} failed"),
            ("acknowledged (ledger: acked)", f"{self.outcomes['acked']:,}", ""),
            ("timed out / not acked, spooled", f"{self.outcomes['spooled']:,}", f"ledger reasons: {reasons}"),
            ("failed (ledger)", f"{self.outcomes['failed']:,}", "neither acknowledged nor spooled"),
            ("replayed from spool (store)", f"{self.stored_via_spool:,}",
             f"events with client.delivery == spool; daemon: replayed_from_spool "
             f"{counters.get('replayed_from_spool')}, of which duplicates {counters.get('spool_duplicates')}"),
            ("stored (store, non-prefill events)", f"{self.stored:,}",
             f"daemon accepted {counters.get('accepted')}; rows by kind: {kinds} (prefill {cfg.prefill:,})"),
            ("missing (ledger, not stored)", f"{self.missing:,}", ""),
            ("unexpected (stored, not in ledger)", f"{self.unexpected:,}", ""),
            ("duplicated", f"{self.duplicated:,}", ""),
            ("acked seq != stored seq", f"{self.ack_seq_mismatch:,}", ""),
            ("chain (verify_store, full)", "ok" if self.chain_ok else "BROKEN", self.chain_detail),
            ("reconcile", "within_bounds" if self.reconciliation.get("within_bounds") else "OUT OF BOUNDS",
             ", ".join(f"{n} {'ok' if p['ok'] else p['ok']}" for n, p in preds.items() if n != "within_bounds")),
        ]  # fmt: skip
        width = max(len(r[0]) for r in rows)
        lines = [
            f"ingest soak: {cfg.sends:,} sends from {cfg.senders} senders (real hook processes) into a store "
            f"pre-filled with {cfg.prefill:,} rows; sweeper every {cfg.verify_interval:g} s, attestations every "
            f"{cfg.attest_interval:g} s, hook timeout {cfg.hook_timeout_ms or '250 (default)'} ms; {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.2f}"
        ]
        lines += [f"  {name:<{width}}  {value:>13}   {note}".rstrip() for name, value, note in rows]
        lines += [
            f"  writer: {writer.get('commits')} commits, largest batch {writer.get('largest_batch')}, "
            f"longest commit {writer.get('longest_commit_ms')} ms, longest queue wait {writer.get('longest_queue_wait_ms')} ms",
            f"  sweeper: {sweeper.get('state')}, verified_seq {sweeper.get('verified_seq')} of head {h.get('head_seq')}, "
            f"{sweeper.get('rows_verified')} rows verified",
            f"  hook latency (ledger, client start to outcome): p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
            f"max {pct(1.0):.1f} ms",
            f"  sends took {self.wall_s:.1f} s ({cfg.sends / self.wall_s if self.wall_s else 0:.0f}/s); drain and "
            f"catch-up {self.drain_s:.1f} s; daemon exit {self.daemon_exit}",
            "  GATE: pass (stored == sent, exactly once, acked seqs stored, chain verifies)" if not problems
            else "  GATE: FAIL\n" + "\n".join(f"    - {p}" for p in problems),
        ]  # fmt: skip
        return "\n".join(lines)


def run(root: Path, config: SoakConfig = SoakConfig()) -> SoakReport:
    """Run one soak in `root` (created; the caller owns it) and return its report."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    report = SoakReport(config)
    store, spool, ledger = root / "store.db", root / "spool", root / "ledger.jsonl"
    sock_dir = Path(tempfile.mkdtemp(prefix="aw-soak-"))  # AF_UNIX paths stop at 107 bytes
    try:
        prefill_ids = prefill(store, config.prefill)
        daemon = ServeProcess(store, sock_dir / "agentwatch.sock", spool, root / "daemon.log",
                              verify_interval=config.verify_interval, attest_interval=config.attest_interval)  # fmt: skip
        env = dict(os.environ, AGENTWATCH_SOCKET=str(daemon.socket), AGENTWATCH_SPOOL=str(spool),
                   AGENTWATCH_LEDGER=str(ledger))  # fmt: skip
        if config.hook_timeout_ms is not None:
            env["AGENTWATCH_HOOK_TIMEOUT_MS"] = str(config.hook_timeout_ms)
        with daemon:
            began = time.monotonic()
            _send(report, env, config)
            report.wall_s = time.monotonic() - began
            report.health = wait_until(lambda: _settled(daemon.health(), spool),
                                       "the spool to drain and the sweeper to catch up")  # fmt: skip
            report.drain_s = time.monotonic() - began - report.wall_s
        report.daemon_exit = daemon.returncode
        if daemon.returncode != 0:
            report.hook_errors.append(f"daemon log:\n{daemon.output()[-2000:]}")
        _count(report, store, ledger, prefill_ids, config.prefill)
        return report
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


def _send(report: SoakReport, env: dict, config: SoakConfig) -> None:
    lock = threading.Lock()
    cmd = hook_cmd("claude-code")
    every = config.short_deadline_every
    short_env = dict(env, AGENTWATCH_HOOK_TIMEOUT_MS="1")

    def sender(index: int, count: int) -> None:
        for i in range(count):
            short = every > 0 and i % every == every - 1
            done = subprocess.run(cmd, input=post_tool_use(f"s{index}-{i}"), env=short_env if short else env,
                                  capture_output=True, timeout=60)  # fmt: skip
            with lock:
                report.spawned += 1
                report.short_deadline += short
                if done.returncode != 0 or done.stderr:
                    report.hook_errors.append(f"exit {done.returncode}: {done.stderr[:200]!r}")

    share, extra = divmod(config.sends, config.senders)
    threads = [
        threading.Thread(target=sender, args=(i, share + (1 if i < extra else 0)), name=f"soak-sender-{i}")
        for i in range(config.senders)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _settled(doc: dict, spool_dir: Path) -> Optional[dict]:
    """The health document once nothing is pending anywhere, else None.

    Health's spool backlog is refreshed once in a while, not on every request, so
    the spool directories themselves are looked at too: the drainer counts a file
    as replayed before it deletes it, so an empty new/ means every file is counted.
    """
    spool, sweeper = doc.get("spool", {}), doc.get("sweeper", {})
    on_disk = any(any((spool_dir / sub).iterdir()) for sub in ("new", "tmp") if (spool_dir / sub).exists())
    pending = on_disk or spool.get("backlog") or spool.get("inflight") or spool.get("tmp") or doc.get("inflight")
    caught_up = sweeper.get("state") == "off" or sweeper.get("verified_seq") == doc.get("head_seq")
    return doc if not pending and caught_up else None


def _count(report: SoakReport, store: Path, ledger: Path, prefill_ids: set[str], prefill_rows: int) -> None:
    # The sender ledger: one line per hook process.
    acked_seq: dict[str, int] = {}
    seen: Counter = Counter()
    with ledger.open("rb") as lines:
        for raw in lines:
            report.ledger_lines += 1
            try:
                entry = json.loads(raw)
                record_id, outcome = entry["record_id"], entry["outcome"]
            except (ValueError, KeyError, TypeError):
                report.ledger_malformed += 1
                continue
            seen[record_id] += 1
            report.outcomes[outcome] += 1
            if outcome != "acked":
                report.reasons[entry.get("reason") or "none"] += 1
            else:
                acked_seq[record_id] = entry.get("seq")
            if isinstance(entry.get("latency_us"), int):
                report.latency_us.append(entry["latency_us"])
    report.ledger_ids = len(seen)
    report.duplicated += sum(n - 1 for n in seen.values() if n > 1)

    # The store, counted by kind; the soak's events are the non-prefill ones.
    conn = db.open_reader(store)
    try:
        report.by_kind = dict(conn.execute("SELECT kind, count(*) FROM records GROUP BY kind"))
        report.attestations = dict(conn.execute(
            "SELECT payload ->> '$.type', count(*) FROM records WHERE kind = 'attestation' GROUP BY 1"))
        stored: dict[str, int] = {}
        stored_twice = via_spool = 0
        prefill_seqs: set[int] = set()
        query = "SELECT seq, record_id, payload ->> '$.client.delivery' FROM records WHERE kind = 'event'"
        for seq, record_id, delivery in conn.execute(query):
            if record_id in prefill_ids:
                prefill_seqs.add(seq)
                continue
            if record_id in stored:
                stored_twice += 1
                continue
            stored[record_id] = seq
            via_spool += delivery == "spool"
    finally:
        conn.close()
    report.prefill_intact = prefill_seqs == set(range(1, prefill_rows + 1))
    report.stored, report.stored_via_spool = len(stored), via_spool
    report.duplicated += stored_twice
    report.missing = len(seen.keys() - stored.keys())
    report.unexpected = len(stored.keys() - seen.keys())
    report.ack_seq_mismatch = sum(1 for rid, seq in acked_seq.items() if stored.get(rid) != seq)

    checked = verify_store(store, full=True, update_anchor=False)
    report.chain_ok, report.chain_rows = checked.ok, checked.rows_checked
    finding = checked.finding
    report.chain_detail = (
        f"{checked.rows_checked:,} rows verified" if checked.ok else f"seq {finding.seq}: {finding.kind}: {finding.detail}"
    )
    report.reconciliation = reconcile(store, ledger=ledger).to_json()
