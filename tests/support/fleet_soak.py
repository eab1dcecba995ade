"""The fleet soak: three recorders ship to one PostgreSQL while one daemon dies and the server restarts.

``run()``:

1. starts a PostgreSQL server of its own (tests/support/postgres.py), runs
   `fleet init`, and makes one shipping login per recorder (three machines)
   and one reading login;
2. starts three `agentwatch serve` daemons, each on its own store, socket and
   spool, each with `ship.url` set, so each ships through its own child process;
3. sends every recorder `events` real hook events: real hook processes
   (`python -I -S hook.py claude-code`, a PostToolUse payload on stdin), each
   writing the recorder's sender ledger;
4. midway through recorder 0's sends, SIGKILLs recorder 0's daemon (its hooks
   spool meanwhile), restarts the PostgreSQL server (immediate mode: a crash
   and recovery), and starts recorder 0's daemon again, which drains its spool;
5. waits until every spool is drained and every shipper reports the central
   head equal to its store's head, and stops the daemons (each ships what it
   committed last before it exits);
6. on recorder 1 (the eraser), erases rows before and after they ship
   (docs/fleet.md, "Erasure"): `agentwatch erase` of `erase` shipped event rows;
   the daemon started with a fleet URL that reaches nothing, 2 x `erase` more hook
   events, stopped, `erase` of those rows (not shipped yet) erased; the daemon
   started with the real URL, caught up and stopped; then counts.

``FleetSoakReport.problems()`` is the exact gate, per recorder: every ledger
record_id is stored once locally (the local reconcile with the ledger), the
central copy equals the local store row for row (every column, seq 1..head),
every record_id is there exactly once, the chain verifies in PostgreSQL, and
`reconcile --pg` has the source within bounds (chain ok, contiguous, no findings);
on the eraser, exactly the erased rows hold `null` locally and centrally, the
server keeping each one's digest.
Nothing is timed; wall times are printed only.
"""

from __future__ import annotations

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

from agentwatch.fleet import reconcile as fleet_reconcile
from agentwatch.readers.reconcile import reconcile as local_reconcile
from agentwatch.store import db
from agentwatch.store.packing import Dictionaries
from support import postgres
from support.ingest import ServeProcess, _settled, hook_cmd, post_tool_use, wait_until

DEADLINE_S = 300.0  # for polled conditions (drain, catch-up), never a timing gate


@dataclass(frozen=True)
class FleetSoakConfig:
    recorders: int = 3
    events: int = 10_000  # real hook events per recorder
    senders: int = 2  # hook-process threads per recorder
    kill_at: float = 0.5  # share of recorder 0's sends after which its daemon is killed
    erase: int = 3  # rows recorder 1 erases after they shipped, and as many before

    def planned(self, index: int) -> int:
        """Hook events recorder `index` takes: the eraser takes 2 x erase more, while its shipping is cut off."""
        return self.events + (2 * self.erase if index == ERASER and self.erase else 0)


ERASER = 1  # the recorder whose rows are erased before and after they ship


@dataclass
class RecorderReport:
    name: str
    store_id: str = ""
    spawned: int = 0
    hook_errors: list[str] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    ledger_ids: int = 0
    local_rows: int = 0
    local_within_bounds: bool = False
    local_detail: str = ""
    central_rows: int = 0
    rows_differ: int = 0  # seqs whose central row is not the local row, column for column
    ledger_missing_centrally: int = 0
    central_duplicates: int = 0  # record_ids stored more than once centrally
    chain: tuple = ()  # agentwatch.verify_chain: rows_checked, head_seq, head_hash, bad_seq, problem
    fleet: dict = field(default_factory=dict)  # this source in reconcile --pg
    daemon_exits: list = field(default_factory=list)
    ship_restarts: int = 0
    erased: list[int] = field(default_factory=list)  # seqs erased (after shipping, then before)
    null_local: list[int] = field(default_factory=list)  # seqs whose local payload is null
    null_central: list[int] = field(default_factory=list)  # seqs the server holds erased (digest kept)

    def problems(self, config: FleetSoakConfig) -> list[str]:
        found = []

        def check(ok: bool, message: str) -> None:
            if not ok:
                found.append(f"{self.name}: {message}")

        index = int(self.name.rsplit("-", 1)[1])
        planned = config.planned(index)
        check(self.spawned == planned, f"{self.spawned} hook processes ran, {planned} planned")
        check(not self.hook_errors, f"{len(self.hook_errors)} hook runs failed: {self.hook_errors[:3]}")
        check(self.ledger_ids == planned, f"{self.ledger_ids} record_ids in the ledger, {planned} sent")
        check(self.outcomes["failed"] == 0, f"{self.outcomes['failed']} records neither acknowledged nor spooled")
        check(self.local_within_bounds, f"local reconcile: {self.local_detail}")
        check(self.central_rows == self.local_rows, f"central rows {self.central_rows} != local rows {self.local_rows}")
        check(self.rows_differ == 0, f"{self.rows_differ} central rows differ from the local ones")
        check(self.ledger_missing_centrally == 0, f"{self.ledger_missing_centrally} ledger records not central")
        check(self.central_duplicates == 0, f"{self.central_duplicates} record_ids twice centrally")
        check(self.chain[:2] == (self.local_rows, self.local_rows) and self.chain[3:] == (None, None),
              f"verify_chain in PostgreSQL: {self.chain}")
        check(self.fleet.get("within_bounds") is True, f"reconcile --pg: {self.fleet}")
        killed = [-9] if self.name == "recorder-0" else []  # SIGKILLed midway, then stopped cleanly
        stops = [0, 0, 0] if index == ERASER and config.erase else [0]  # the eraser's daemon ran three times
        check(self.daemon_exits == killed + stops, f"daemon exits {self.daemon_exits}, expected {killed + stops}")
        erased = len(self.erased) if index == ERASER else 0
        check(erased == (2 * config.erase if index == ERASER else 0), f"{erased} rows erased")
        check(self.null_local == self.erased, f"local null payloads at {self.null_local}, erased {self.erased}")
        check(self.null_central == self.erased, f"central erased rows {self.null_central}, erased {self.erased}")
        return found


@dataclass
class FleetSoakReport:
    config: FleetSoakConfig
    recorders: list[RecorderReport] = field(default_factory=list)
    killed_at: int = 0  # recorder 0's sends done when its daemon was SIGKILLed
    server_restarted: bool = False
    unattributed_findings: dict = field(default_factory=dict)
    wall_s: float = 0.0
    settle_s: float = 0.0

    def problems(self) -> list[str]:
        found = [p for r in self.recorders for p in r.problems(self.config)]
        if not self.server_restarted:
            found.append("the PostgreSQL server was not restarted midway")
        if self.killed_at == 0:
            found.append("recorder 0's daemon was not killed midway")
        if self.unattributed_findings:
            found.append(f"findings tied to no source: {self.unattributed_findings}")
        return found

    def summary(self) -> str:
        cfg = self.config
        lines = [f"fleet soak: {cfg.recorders} recorders x {cfg.events:,} real hook events ({cfg.senders} senders each), "
                 f"recorder 0 SIGKILLed after {self.killed_at:,} sends, PostgreSQL restarted (immediate); "
                 f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"]
        for r in self.recorders:
            lines.append(
                f"  {r.name}: ledger {r.ledger_ids:,} ({dict(r.outcomes)}), local rows {r.local_rows:,}, central rows "
                f"{r.central_rows:,}, differing {r.rows_differ}, missing centrally {r.ledger_missing_centrally}, "
                f"duplicated {r.central_duplicates}, chain in PG {r.chain[4] or 'ok'} ({r.chain[0]:,} rows), "
                f"reconcile --pg {'within bounds' if r.fleet.get('within_bounds') else 'OUT OF BOUNDS'}, "
                f"daemon exits {r.daemon_exits}, shipper restarts {r.ship_restarts}"
                + (f", erased {r.erased} (null locally {r.null_local}, centrally {r.null_central})" if r.erased else ""))
        lines.append(f"  sends took {self.wall_s:.1f} s; drain, catch-up and stop {self.settle_s:.1f} s")
        problems = self.problems()
        lines.append("  GATE: pass (every record central exactly once, every chain verifies in PostgreSQL)" if not problems
                     else "  GATE: FAIL\n" + "\n".join(f"    - {p}" for p in problems))
        return "\n".join(lines)


def run(root: Path, config: FleetSoakConfig, bindir: Path) -> FleetSoakReport:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    report = FleetSoakReport(config)
    server = postgres.Server(bindir)
    sock_dir = Path(tempfile.mkdtemp(prefix="aw-fleet-soak-"))  # AF_UNIX paths stop at 107 bytes
    daemons: list[ServeProcess] = []
    try:
        dbname = server.create_database()
        from agentwatch.fleet import schema

        schema.init(f"postgresql://{postgres.ADMIN}@/{dbname}?host={server.dir}&port={server.port}")
        roles = [server.create_role("agentwatch_ship", "soak_ship") for _ in range(config.recorders)]
        reader = server.create_role("agentwatch_read", "soak_read")
        passfile = server.passfile(root / "pgpass", *roles, reader)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        base_env["PGPASSFILE"] = str(passfile)
        recorders, envs = [], []
        for i, role in enumerate(roles):
            rdir = root / f"recorder-{i}"
            rdir.mkdir()
            env = dict(base_env, AGENTWATCH_SHIP_URL=server.url(role.name, dbname), AGENTWATCH_SHIP_HOST=f"recorder-{i}")
            daemon = ServeProcess(rdir / "store.db", sock_dir / f"r{i}.sock", rdir / "spool", rdir / "daemon.log",
                                  verify_interval=1.0, env=env)
            daemons.append(daemon.start())
            recorders.append(RecorderReport(f"recorder-{i}"))
            envs.append(dict(env, AGENTWATCH_SOCKET=str(daemon.socket), AGENTWATCH_SPOOL=str(daemon.spool),
                             AGENTWATCH_LEDGER=str(rdir / "ledger.jsonl")))
        report.recorders = recorders

        began = time.monotonic()
        kill_after = max(1, int(config.events * config.kill_at))
        killed = threading.Event()
        lock = threading.Lock()

        def crash_and_recover() -> None:
            victim = daemons[0]
            report.killed_at = recorders[0].spawned
            victim.proc.send_signal(signal.SIGKILL)
            victim.proc.wait()
            recorders[0].daemon_exits.append(victim.proc.returncode)
            victim.returncode = victim.proc.returncode
            server.restart("immediate")
            report.server_restarted = True
            again = ServeProcess(victim.store, victim.socket, victim.spool, victim.log, verify_interval=1.0,
                                 env=victim.env)
            daemons[0] = again.start()

        def sender(r: int, index: int, count: int) -> None:
            cmd = hook_cmd("claude-code")
            for n in range(count):
                done = subprocess.run(cmd, input=post_tool_use(f"r{r}-s{index}-{n}"), env=envs[r],
                                      capture_output=True, timeout=60)
                crash = False
                with lock:
                    rec = recorders[r]
                    rec.spawned += 1
                    if done.returncode != 0 or done.stderr:
                        rec.hook_errors.append(f"exit {done.returncode}: {done.stderr[:200]!r}")
                    if r == 0 and rec.spawned >= kill_after and not killed.is_set():
                        killed.set()
                        crash = True
                if crash:
                    crash_and_recover()  # this sender pauses meanwhile; the other keeps spooling

        threads = []
        for r in range(config.recorders):
            share, extra = divmod(config.events, config.senders)
            for s in range(config.senders):
                count = share + (1 if s < extra else 0)
                threads.append(threading.Thread(target=sender, args=(r, s, count), name=f"fleet-soak-{r}-{s}"))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        report.wall_s = time.monotonic() - began

        for daemon in daemons:
            wait_until(lambda d=daemon: _caught_up(d), f"{d_name(daemon)} to drain and ship everything",
                       DEADLINE_S, every=0.2)
        for rec, daemon in zip(recorders, daemons):
            rec.ship_restarts = daemon.health().get("ship", {}).get("restarts", -1)
            rec.daemon_exits.append(daemon.stop())
        if config.erase:
            daemons[ERASER] = _erase_before_and_after_shipping(config, daemons[ERASER], recorders[ERASER],
                                                                envs[ERASER], lock, server.port, dbname)
        report.settle_s = time.monotonic() - began - report.wall_s

        read_url = f"{server.url(reader.name, dbname)}?passfile={passfile}"
        fleet = fleet_reconcile.reconcile(read_url)
        by_source = {s.store_id: s.to_json() for s in fleet.sources}
        report.unattributed_findings = fleet.unattributed_findings
        for rec, daemon in zip(recorders, daemons):
            _count(rec, daemon, read_url, by_source)
        return report
    finally:
        for daemon in daemons:
            if daemon.proc is not None and daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.proc.wait()
        server.destroy()
        shutil.rmtree(sock_dir, ignore_errors=True)


def _erase_before_and_after_shipping(config: FleetSoakConfig, daemon: ServeProcess, rec: RecorderReport,
                                     env: dict, lock: threading.Lock, port: int, dbname: str) -> ServeProcess:
    """Step 6: erase shipped rows; record more with shipping cut off, erase some of them; ship it all."""
    shipped = _event_seqs(daemon.store, after=0)[: config.erase]
    _erase(daemon.store, shipped, env)
    head = _head(daemon.store)
    nowhere = dict(daemon.env, AGENTWATCH_SHIP_URL=f"postgresql://nobody@127.0.0.1:1/{dbname}")
    cut_off = ServeProcess(daemon.store, daemon.socket, daemon.spool, daemon.log, verify_interval=1.0,
                           env=nowhere).start()
    cmd = hook_cmd("claude-code")
    for n in range(2 * config.erase):
        done = subprocess.run(cmd, input=post_tool_use(f"r{ERASER}-late-{n}"), env=env, capture_output=True,
                              timeout=60)
        with lock:
            rec.spawned += 1
            if done.returncode != 0 or done.stderr:
                rec.hook_errors.append(f"exit {done.returncode}: {done.stderr[:200]!r}")
    wait_until(lambda: _settled(cut_off.health(), cut_off.spool), "the late events to be stored", DEADLINE_S)
    rec.daemon_exits.append(cut_off.stop())
    unshipped = _event_seqs(daemon.store, after=head)[: config.erase]
    _erase(daemon.store, unshipped, env)
    rec.erased = shipped + unshipped
    again = ServeProcess(daemon.store, daemon.socket, daemon.spool, daemon.log, verify_interval=1.0,
                         env=daemon.env).start()
    wait_until(lambda: _caught_up(again), "the eraser to ship its erasures", DEADLINE_S, every=0.2)
    rec.daemon_exits.append(again.stop())
    return again


def _event_seqs(store: Path, after: int) -> list[int]:
    con = db.open_reader(store)
    try:
        return [seq for (seq,) in con.execute("SELECT seq FROM records WHERE kind = 'event' AND seq > ? ORDER BY seq",
                                              (after,))]
    finally:
        con.close()


def _head(store: Path) -> int:
    con = db.open_reader(store)
    try:
        return con.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0]
    finally:
        con.close()


def _erase(store: Path, seqs: list[int], env: dict) -> None:
    """`agentwatch erase`, as an operator runs it, with the daemon stopped."""
    done = subprocess.run([sys.executable, "-m", "agentwatch", "erase", *map(str, seqs), "--store", str(store),
                           "--reason", "fleet soak: a secret in a tool response", "--json"],
                          env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"agentwatch erase failed ({done.returncode}): {done.stderr.strip() or done.stdout}")


def d_name(daemon: ServeProcess) -> str:
    return daemon.store.parent.name


def _caught_up(daemon: ServeProcess):
    doc = _settled(daemon.health(), daemon.spool)
    if doc is None:
        return None
    ship = doc.get("ship", {})
    return doc if ship.get("central_head_seq") == doc.get("head_seq") and ship.get("state") == "caught_up" else None


def _count(rec: RecorderReport, daemon: ServeProcess, read_url: str, by_source: dict) -> None:
    import json

    import psycopg

    ledger = daemon.store.parent / "ledger.jsonl"
    ids = set()
    for line in ledger.read_bytes().splitlines():
        entry = json.loads(line)
        ids.add(entry["record_id"])
        rec.outcomes[entry["outcome"]] += 1
    rec.ledger_ids = len(ids)
    local = local_reconcile(daemon.store, ledger=ledger)
    rec.local_within_bounds = local.within_bounds
    rec.local_detail = "; ".join(f"{p.name}: {p.detail}" for p in local.predicates if p.ok is False)
    con = db.open_reader(daemon.store)
    try:
        rec.store_id = con.execute("SELECT value FROM _agentwatch_meta WHERE key = 'store_id'").fetchone()[0]
        # The rows as the chain covers them: a packed row's document, not its stored projection.
        document = Dictionaries.of(con).document
        local_rows = [(*r[:4], document(r[4], r[7], r[8]), r[5], r[6]) for r in con.execute(
            "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict,"
            " payload_z FROM records ORDER BY seq")]
    finally:
        con.close()
    rec.local_rows = len(local_rows)
    rec.null_local = [row[0] for row in local_rows if row[4] == b"null"]
    with psycopg.connect(read_url, autocommit=True) as conn:
        central = conn.execute("SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash"
                               " FROM agentwatch.records WHERE store_id = %s ORDER BY seq", (rec.store_id,)).fetchall()
        rec.central_rows = len(central)
        by_seq = {row[0]: row for row in central}
        rec.rows_differ = sum(1 for row in local_rows if by_seq.get(row[0]) != row)
        stored_ids = Counter(row[1] for row in central)
        rec.central_duplicates = sum(1 for n in stored_ids.values() if n > 1)
        rec.ledger_missing_centrally = len(ids - stored_ids.keys())
        rec.null_central = [seq for (seq,) in conn.execute(
            "SELECT seq FROM agentwatch.records WHERE store_id = %s AND payload = 'null'::bytea"
            " AND payload_sha256 IS NOT NULL AND doc IS NULL ORDER BY seq", (rec.store_id,))]
        rec.chain = conn.execute("SELECT rows_checked, head_seq, NULL, bad_seq, problem"
                                 " FROM agentwatch.verify_chain(%s)", (rec.store_id,)).fetchone()
    rec.fleet = by_source.get(rec.store_id, {})
