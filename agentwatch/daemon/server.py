"""`agentwatch serve`: the daemon that turns socket frames into committed rows.

Threads: the asyncio event loop reads sockets, parses and normalizes each
line (all before the queue) and writes replies; one writer thread
(`writer.Writer`) owns the store and commits in groups. In-flight records are
bounded: when the bound is reached the loop stops reading sockets
(backpressure) and nothing is dropped. An ack goes out only after COMMIT
returned. docs/daemon.md describes the whole design.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

import apsw

try:  # libuv's event loop: accept, transports and socket I/O run in C (docs/daemon.md)
    import uvloop
except ImportError:  # a platform without uvloop: the standard loop serves the same protocol
    uvloop = None  # type: ignore[assignment]

from agentwatch import __version__, platform_layer, safefs
from agentwatch.daemon import fairness, health, integrity, logs, runfiles, workers
from agentwatch.daemon.admission import Admission
from agentwatch.daemon.connection import Connection
from agentwatch.daemon.drain import SpoolDrainer
from agentwatch.daemon.procwitness import ProcessWitness
from agentwatch.daemon.recorder_watch import RecorderWatch
from agentwatch.daemon.retention import Retainer
from agentwatch.daemon.settings import Counters, ServeConfig
from agentwatch.daemon.shipping import ShipSupervisor
from agentwatch.daemon.subscriptions import Hub
from agentwatch.daemon.writer import Job, Refusal, Writer, foreign_gap_row
from agentwatch.errors import AgentwatchError, StoreUnreachable, UsageError
from agentwatch.evidence import trust
from agentwatch.evidence.checkpoints import CheckpointError, CheckpointTimer, Notary
from agentwatch.evidence.witness import DirectoryWitness
from agentwatch.record import normalize, redact
from agentwatch.store import db, erasure
from agentwatch.store.append import Append, Appended, Store
from agentwatch.store.chain import canonical_json, format_hash
from agentwatch.store.retention import Policy
from agentwatch.store.wal import Checkpointer
from agentwatch.verify import identity, known_stores
from agentwatch.verify.findings import Finding
from agentwatch.verify.sweeper import Sweeper

log = logging.getLogger(__name__)

class Server:
    """The daemon, built whole by its constructor and then run by `run()`.

    The constructor is the startup: it takes the locks, opens the store, writes the start
    attestation and builds every part (the writer, the live-tail hub, the signer, the sweeper,
    the process witness, retention, shipping), waits for the normalizing workers (launched
    right after the locks, they start beside all that) and only then binds the socket, so a hook that connects the moment the socket appears is served by a
    daemon that can normalize its record. What is `Optional` here is optional by configuration
    (or by a failure health reports), never because it is filled in later. `run()` serves until
    SIGTERM/SIGINT and releases everything the constructor took.
    """

    def __init__(self, config: ServeConfig):
        self.config = config
        self.uid = os.getuid()
        self.pid = os.getpid()
        self.counters = Counters()
        self.started_ns = time.time_ns()
        self.conns: set[Connection] = set()
        self.last_data = 0.0  # monotonic time of the last bytes read from any socket
        self.stopping = False  # SIGTERM/SIGINT came: no new connections, what was sent is answered
        self._dirty: set[Connection] = set()
        self._config_digest = config.digest()
        self.head_file_error: Optional[str] = None
        self.salvaged: Optional[str] = None  # where a store deleted or replaced under the writer was copied
        self.checkpoint_error: Optional[str] = None
        # Released in reverse order by run(), or here when the startup fails half way.
        self._resources = contextlib.ExitStack()
        try:
            self._start(config)
        except BaseException:
            self._resources.close()
            raise

    def _start(self, cfg: ServeConfig) -> None:
        res = self._resources
        # The loop exists from the start (it runs only in run()): the writer's and the sweeper's
        # threads hand their results to it, and the workers start on it before the socket binds.
        self._runner = res.enter_context(asyncio.Runner(loop_factory=uvloop.new_event_loop if uvloop else None))
        self.loop = self._runner.get_loop()
        self._stop = asyncio.Event()
        # From here on SIGTERM/SIGINT ask for a clean stop: the socket appears at the end of this
        # startup, and a client may stop the daemon at once. Noted here, acted on once the loop
        # runs (its own handlers can miss a signal that comes while it is not running).
        self._stop_asked = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._ask_stop)
        res.callback(self._remove_signal_handlers)
        gid = _socket_gid(cfg.socket_group)
        try:
            # A directory another user owns or can write is refused as unsafe (exit 2); one
            # that cannot be written (read-only) leaves the store unopenable, exit 3
            # (docs/daemon.md, "Exit codes").
            safefs.private_dir(cfg.store.parent, "store directory")
            store_lock = integrity.acquire(cfg.store)  # before the store is opened: one writer
        except safefs.UnsafePath:
            raise
        except (OSError, UsageError) as exc:
            message = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise StoreUnreachable(f"{cfg.store}: cannot open the store ({message})") from None
        res.callback(store_lock.release)
        if gid is None:
            runfiles.private_dir(cfg.socket.parent)
        else:
            runfiles.group_dir(cfg.socket.parent, gid)
        sock_lock = runfiles.LockFile(runfiles.lock_path(cfg.socket), f"socket {cfg.socket}").acquire()
        res.callback(sock_lock.release)
        runfiles.clear_socket_path(cfg.socket, health.answers)

        # Loaded once: a per-record lookup of the salt file cost a third of normalization.
        self.policy = cfg.policy or redact.default_policy()
        self.normalize = _normalizer(self.policy)
        # Normalization off the loop (workers.py); None: on the loop, as tests of the loop alone run it.
        self.pool = pool = workers.Pool(self.policy, cfg.normalize_workers) if cfg.normalize_workers > 0 else None
        if pool is not None:  # they start beside the rest of this startup and are awaited before the socket binds
            pool.launch()
            res.callback(lambda: None if pool.stopping else self._runner.run(pool.stop()))
        self.drainer = SpoolDrainer(self, cfg.spool, self.normalize, self.pool)
        self.drainer.prepare()
        self.self_test = self._check_redaction()
        self.witness: Optional[ProcessWitness] = None  # the process witness, when configured (procwitness.py)
        if cfg.process_witness:
            self.witness = ProcessWitness(self.policy, cfg.process_witness_buffer)
            if self.witness.open():
                self.normalize = self.witness.observe(self.normalize)

        # A path that held a store is never silently given a new one (docs/reliability.md).
        identity.check_missing(cfg.store)
        try:
            store = Store(cfg.store, group_readable=gid is not None, pack=cfg.packing)
        except apsw.Error as exc:
            raise StoreUnreachable(f"{cfg.store}: cannot open the store ({type(exc).__name__}: {exc})") from None
        res.callback(store.close)  # the store this startup opened; the writer's own, when it reopened one, below
        store_lock.lock_store()  # a store created just now: lock the file itself too
        known_findings = identity.check_serving(cfg.store, store.conn)
        self.erased = erasure.summary(store.conn)  # erase never runs beside the daemon: counted once
        store.foreign_gap = foreign_gap_row
        integrity.adopt_stop_head(store, cfg.store, checkpoint_dir=cfg.state_dir)  # written while none ran
        try:
            store.append([self._attestation("start", store.head(), start=True)])
        except Exception as exc:
            raise StoreUnreachable(f"{cfg.store}: cannot write the start attestation ({exc})") from None
        self.start_commit_ns = time.time_ns()  # the writer's commit times begin after it
        self.sync_settings = db.sync_settings(store.conn)  # the writer connection's durability pragmas
        self._remember(store.store_id, store.head())
        self.head_file = known_stores.HeadFile(cfg.store, store.store_id)  # the head, remembered after every commit
        res.callback(self.head_file.close)
        self.head_file.write(*store.head())

        self.writer = writer = Writer(store, self._deliver_from_writer, batch_max=cfg.batch_max,
                                      checkpointer=Checkpointer(cfg.store), on_head=self._remember_head,
                                      on_pending=self._remember_pending,
                                      salvage=self._salvage, guard=store_lock.check,
                                      remember=integrity.remembering(cfg.store, store.store_id),
                                      known_findings=known_findings)
        # The start attestation is this start's first commit: counted, so that a fresh store's head seq
        # and `rows_committed` agree (health counts what this start committed).
        writer.stats.commits, writer.stats.rows_committed = 1, 1
        self._writer_findings_recorded: set[tuple[int, str]] = set()
        res.callback(writer.close_store)
        res.callback(writer.stop)  # a no-op when it already ended; never leave it running
        # The one count of records handed to the writer and not yet answered.
        self.admission = Admission(cfg.max_inflight, writer.submit, window=fairness.writer_window(cfg.batch_max))
        if self.pool is not None:
            self.pool.backlog, self.admission.on_room = self.admission.ready, self.pool.dispatch
        self.subscriptions = Hub(cfg.store, store.store_id, writer.head_seq, max_buffer=cfg.subscriber_buffer)
        self.notary = self._notary(store) if cfg.checkpoints else None  # signs checkpoints (None: off, or failed)
        self.checkpoint_timer: Optional[CheckpointTimer] = None
        if self.notary is not None:
            self.checkpoint_timer = CheckpointTimer(self.notary, lambda: writer.head_seq,
                                                    interval=cfg.checkpoint_interval, rows=cfg.checkpoint_rows)
            writer.after_commit = self.checkpoint_timer.rows_committed
        self.sweeper: Optional[Sweeper] = None
        if cfg.verify_interval > 0:
            self.sweeper = Sweeper(cfg.store, lambda: writer.head_seq, interval=cfg.verify_interval,
                                   full_interval=cfg.full_verify_interval,
                                   on_finding=self._found_by_sweeper,
                                   writer_findings=writer.findings)
        self.retainer: Optional[Retainer] = None  # retention passes (config retention.*; None: off)
        if cfg.retention_days > 0:
            self.retainer = Retainer(self.admission.submit, Policy(cfg.retention_days),
                                     cfg.retention_interval, cfg.retention_max_rows)
        # Hook configs and transcript coverage: `config` and `coverage` rows (recorder_watch.py).
        self.recorder_watch = RecorderWatch(cfg.store, self._record_attestation,
                                            manifest_path=cfg.install_manifest,
                                            interval=cfg.hook_watch_interval, periodic=cfg.attest_interval,
                                            coverage_delay=cfg.coverage_delay)
        self.shipping: Optional[ShipSupervisor] = None  # the fleet shipper's child process, when ship_url is set
        if cfg.ship_url:
            self.shipping = ShipSupervisor(cfg.store, cfg.ship_url, host=cfg.ship_host,
                                           batch_rows=cfg.ship_batch_rows, head_seq=lambda: writer.head_seq,
                                           state_dir=cfg.state_dir)
            self.shipping.start()
            # Released before the writer: after the stop attestation, which the shipper ships before it exits.
            res.callback(self.shipping.stop)

        # The workers first, then the socket: a hook that connects the moment the socket
        # appears finds every part it needs (before, it timed out and spooled while they started).
        if pool is not None:
            self._runner.run(pool.start())
        self.listener = runfiles.bind_socket(cfg.socket, gid)
        res.callback(runfiles.remove_socket, cfg.socket)
        res.callback(self.listener.close)

    # -- lifecycle --------------------------------------------------------------------

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT; return the exit code. Releases what the constructor took."""
        with self._resources:
            cfg = self.config
            log.info("pid %d, store %s, socket %s, spool %s", self.pid, cfg.store, cfg.socket, cfg.spool)
            self._runner.run(self._serve())
            return self._finish()

    # -- the store's identity (verify/identity.py, verify/known_stores.py) --------------------

    def _remember(self, store_id: bytes, head: tuple[int, bytes]) -> None:
        try:
            known_stores.remember(self.config.store, store_id, head[0], head[1])
        except (OSError, AgentwatchError) as exc:
            log.warning(f"cannot remember the store's head: {exc}")

    def _remember_pending(self, seq: int, digest: bytes) -> None:
        """On the writer thread, inside a commit's transaction: the head it is about to commit, so
        that a crash before the committed head is written leaves the rows still the writer's own."""
        self._remember_head(seq, digest, pending=True)

    def _remember_head(self, seq: int, digest: bytes, *, pending: bool = False) -> None:
        """On the writer thread, after a commit and before its acks: the head, outside the store."""
        try:
            self.head_file.write(seq, digest, pending=pending)
        except OSError as exc:
            if self.head_file_error is None:
                log.warning(f"cannot write the remembered head: {exc}")
            self.head_file_error = f"{type(exc).__name__}: {exc}"

    def _salvage(self, store: Store) -> None:
        """On the thread that owns the store: its files were deleted or replaced at the path. Copy
        what the open connection still holds (every row acknowledged from it) beside the path."""
        dest = store.path.with_name(f"{store.path.name}.lost-{store.store_id.hex()}-{time.time_ns()}")
        old = os.umask(0o077)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        finally:
            os.umask(old)
        store.copy_to(dest)
        head = store.head()[0]
        log.warning(f"the store's rows through seq {head} are copied to {dest}")
        self.salvaged = str(dest)
        known_stores.note_salvage(self.config.store, store.store_id, dest, head)

    def _finish(self) -> int:
        """After the loop ended and the writer thread stopped: the stop attestation, in this thread."""
        writer = self.writer
        stop = Job(lambda w: self._attestation("stop", (w.head_seq, w.head_hash)), lambda r, e: None)
        ((_, _, error),) = writer.commit_now([stop])
        if error is None:
            self._remember(writer.store_id, (writer.head_seq, writer.head_hash))
        if error is not None:
            log.error("could not write the stop attestation: %s", writer.stats.last_error)
            return 3
        if self.notary is not None:
            # The last checkpoint covers the stop attestation: rows after it were not written by us.
            try:
                signed = self.notary.sign()
                log.info("signed checkpoint %d", signed.checkpoint.size)
            except Exception as exc:
                log.warning("could not sign the stop checkpoint: %s", exc)
        log.info("stopped; %d accepted", self.counters.accepted)
        return 0

    def _ask_stop(self, signum: int, frame: object) -> None:
        self._stop_asked = True

    def _remove_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            if not self.loop.is_closed():
                self.loop.remove_signal_handler(sig)
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)

    async def _serve(self) -> None:
        loop = self.loop
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        if self._stop_asked:  # a signal came during the startup
            self._stop.set()
        self.writer.start()
        if self.witness is not None:
            self.witness.start(lambda jobs: loop.call_soon_threadsafe(self.admission.submit, jobs))
        if self.checkpoint_timer is not None:
            self.checkpoint_timer.start()
        if self.sweeper is not None:
            self.sweeper.start()
        server = await loop.create_unix_server(lambda: Connection(self), sock=self.listener,
                                               backlog=runfiles.BACKLOG)
        tasks = [
            asyncio.create_task(self._idle_sweep()),
            asyncio.create_task(self.drainer.run()),
        ]
        if self.config.attest_interval > 0:
            tasks.append(asyncio.create_task(self._attest_periodically()))
        if self.config.hook_watch_interval > 0:
            tasks.append(asyncio.create_task(self.recorder_watch.run()))
        if self.retainer is not None:
            tasks.append(asyncio.create_task(self.retainer.run()))
        await self._stop.wait()
        self.stopping = True
        server.close()  # stop accepting; clients now spool
        if self.sweeper is not None:
            await asyncio.to_thread(self.sweeper.stop)
        await self.drainer.stop()
        if self.witness is not None:
            await asyncio.to_thread(self.witness.stop)
        await self._finish_reading()
        await self.recorder_watch.stop()
        if self.pool is not None:
            await self.pool.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.writer.stop()
        if self.checkpoint_timer is not None:
            await asyncio.to_thread(self.checkpoint_timer.stop)
        await asyncio.sleep(0)  # run the writer's last hand-overs before the loop closes

    async def _finish_reading(self) -> None:
        """Read what connections already sent, commit and answer it, then close them."""
        cfg = self.config
        give_up = time.monotonic() + cfg.stop_max
        self.last_data = max(self.last_data, time.monotonic())
        while time.monotonic() < give_up:
            await asyncio.sleep(0.02)
            quiet = time.monotonic() - self.last_data >= cfg.stop_quiet
            if quiet and not any(c.paused for c in self.conns):
                break
        for conn in list(self.conns):
            conn.stop_reading()
        while self.admission.inflight or any(c.has_work() for c in self.conns):
            await asyncio.sleep(0.005)
        for conn in list(self.conns):
            conn.close()
        give_up = time.monotonic() + 2.0  # a peer that never reads its replies cannot hold the exit
        while self.conns and time.monotonic() < give_up:
            await asyncio.sleep(0.01)
        for conn in list(self.conns):
            conn.abort()

    # -- records in and out of the writer --------------------------------------------

    def _deliver_from_writer(self, outcomes: list) -> None:
        # Runs on the writer thread: one hop onto the loop per batch.
        self.loop.call_soon_threadsafe(self._on_commit, outcomes, self.writer.take_committed())

    def _on_commit(self, outcomes: list, committed: list) -> None:
        # The acks, then the committed rows to live-tail subscribers, in one callback: a client
        # that subscribes on its ack always finds the hub's head at or past its record.
        self._on_results(outcomes)
        if committed:
            self.subscriptions.publish(committed)
            self.recorder_watch.committed(committed)
        self._record_writer_findings()

    def _record_writer_findings(self) -> None:
        """On the loop: record each finding the writer made (read from it) once as a row; those it
        holds from earlier runs were recorded by the run that made them."""
        for finding, found_by in self.writer.findings():
            key = (finding.seq, finding.kind)
            if found_by == "writer" and key not in self._writer_findings_recorded:
                self._writer_findings_recorded.add(key)
                self._record_break(finding, found_by)

    def _on_results(self, outcomes: list) -> None:
        self.admission.settle(outcomes)
        dirty, self._dirty = self._dirty, set()
        for conn in dirty:
            conn.flush()
        self.admission.wake_waiting()

    def mark_dirty(self, conn: Connection) -> None:
        self._dirty.add(conn)

    # -- attestations -----------------------------------------------------------------

    def _attestation(
        self, kind: str, head: tuple[int, bytes], record_id: Optional[str] = None, extra: Optional[dict] = None,
        *, start: bool = False,
    ) -> Append:
        """An attestation row; `start`: the start row, committed before the writer exists."""
        payload = {
            "schema": 1,
            "type": kind,
            "version": __version__,
            "pid": self.pid,
            "started_at_ns": self.started_ns,
            "config_digest": self._config_digest,
            "head_seq": head[0],
            "head_hash": format_hash(head[1]),
            "counters": self.counters.snapshot(None if start else self.writer),
            **(extra or {}),
        }
        return Append(record_id or f"attest-{uuid.uuid4()}", "attestation", canonical_json(payload))

    def _found_by_sweeper(self, finding: Finding, found_by: str) -> None:
        """On the sweeper's thread: hand the finding to the loop."""
        self.loop.call_soon_threadsafe(self._sweeper_finding, finding, found_by)

    def _sweeper_finding(self, finding: Finding, found_by: str) -> None:
        """On the loop: a finding of the sweeper's walk; a truncation is remembered outside the store."""
        if finding.kind == "truncated":
            try:
                known_stores.add_finding(self.config.store, self.writer.store_id, finding, self.writer.head_seq)
            except (OSError, AgentwatchError) as exc:
                log.warning(f"cannot remember the truncation: {exc}")
        self._record_break(finding, found_by)

    def _record_break(self, finding: Finding, found_by: str, unique: bool = False) -> None:
        """On the loop: commit one `integrity_break` attestation for a sweeper finding.

        Its record_id is derived from the finding, so the same break is stored once
        even when it is found again after a restart or a commit whose outcome was unknown.
        Clients cannot use ids in the recorder's namespace (record/ids.py); should a row of
        another kind hold the id all the same (stored before that rule), the store refuses
        it as a duplicate and the break is recorded under an id of its own (`unique`).
        """
        if finding.kind == "schema_changed":
            self.writer.halt(f"schema_changed: {finding.detail}")

        def row(w: Writer) -> Append:
            record_id = f"attest-integrity-break-{finding.seq}-{finding.kind}"
            if unique:
                record_id += f"-{uuid.uuid4()}"
            extra = {"finding": finding.to_json(), "found_by": found_by}
            return self._attestation("integrity_break", (w.head_seq, w.head_hash), record_id, extra)

        def done(result: Optional[Appended], error: Optional[Refusal]) -> None:
            if error is not None and error.code == "bad_request" and not unique:
                self._record_break(finding, found_by, unique=True)
                return
            if result is not None:
                if self.sweeper is not None:
                    self.sweeper.recorded(finding, result.seq)
            elif found_by == "writer":
                self._writer_findings_recorded.discard((finding.seq, finding.kind))  # tried at the next commit
            elif self.sweeper is not None:
                self.sweeper.unreported(finding)  # tried again when the sweeper finds it again

        self.admission.submit([Job(row, done)])

    def _record_attestation(self, kind: str, body: dict) -> None:
        """On the loop: commit one attestation of `kind` (config, coverage) carrying `body`."""
        row = lambda w: self._attestation(kind, (w.head_seq, w.head_hash), extra=body)  # noqa: E731
        self.admission.submit([Job(row, _ignore)])

    async def _attest_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.config.attest_interval)
            # Built on the writer thread, so head_* is the head the writer sees just before it.
            row = lambda w: self._attestation("periodic", (w.head_seq, w.head_hash))  # noqa: E731
            self.admission.submit([Job(row, _ignore)])

    # -- connections ------------------------------------------------------------------

    async def _idle_sweep(self) -> None:
        timeout = self.config.idle_timeout
        while True:
            await asyncio.sleep(min(1.0, timeout / 4))
            now = time.monotonic()
            for conn in list(self.conns):
                if now - conn.last_line > timeout and conn.is_idle():
                    self.counters.timeouts += 1
                    conn.time_out(timeout)

    def _notary(self, store: Store) -> Optional[Notary]:
        """The checkpoint signer, its key made on first use; None (and a message) when it cannot work."""
        cfg = self.config
        try:
            witnesses = [DirectoryWitness(d, cosign=True) for d in cfg.witness_dirs]
            writer = self.writer

            def tree_head() -> tuple[int, bytes]:
                if writer.tree_head is None:  # the start row, committed before the writer exists, gives it one
                    raise CheckpointError("the writer has no tree head yet")
                return writer.tree_head

            notary = Notary(cfg.store, store.store_id, tree_head, state_dir=cfg.state_dir, witnesses=witnesses)
            for witness in witnesses:
                witness.trust(notary.verifier, os.path.abspath(cfg.store))
            notary.on_finding = self._signer_finding
            return notary
        except Exception as exc:  # recording goes on without checkpoints; health says so
            self.checkpoint_error = f"{type(exc).__name__}: {exc}"
            log.warning("checkpoints are off: %s", self.checkpoint_error)
            return None

    def _signer_finding(self, finding: Finding) -> None:
        """On the signer's thread: its record went missing or backwards; the store records it."""
        self.loop.call_soon_threadsafe(self._record_break, finding, "signer")

    def _checkpoint_health(self) -> dict:
        notary = self.notary
        if notary is None:
            return {"state": "off" if not self.config.checkpoints else "failing",
                    "last_error": self.checkpoint_error}
        return {"state": "failing" if notary.last_error else "ok", "signed": notary.signed,
                "last_size": notary.last_size, "last_error": notary.last_error,
                "verifier_key": notary.verifier.encode(), "findings": [f.to_json() for f in notary.findings]}

    def health(self) -> dict:
        writer = self.writer
        writer.check_store()  # a deleted or swapped store file shows before any commit does
        outage = writer.outage
        stats = writer.stats
        wal_checkpoints = writer.checkpointer.stats.as_dict() if writer.checkpointer else None
        cfg = self.config
        doc = {
            "ok": True,
            "op": "health",
            "version": __version__,
            "pid": self.pid,
            "uptime_s": round((time.time_ns() - self.started_ns) / 1e9, 3),
            "store": str(cfg.store),
            "socket": str(cfg.socket),
            "spool_path": str(cfg.spool),
            "config_digest": self._config_digest,
            "event_loop": "uvloop" if uvloop is not None else "asyncio",
            "durability": {"mode": cfg.durability, "sqlite": self.sync_settings},
            "head_seq": writer.head_seq,
            "head_hash": format_hash(writer.head_hash),
            "writer": {
                "state": "stopped" if writer.halted else "ok" if outage is None else "failing",
                "stopped_reason": writer.halted,
                "remembered_head_error": self.head_file_error,
                "salvaged_to": self.salvaged,
                "failing_since_ns": outage.first_ns if outage else None,
                "failing_since": _iso(outage.first_ns) if outage else None,
                "last_error": stats.last_error,
                "commits": stats.commits,
                "rows_committed": stats.rows_committed,
                "largest_batch": stats.largest_batch,
                "rows_refused_by_store": stats.rows_refused_by_store,
                "last_commit_ns": stats.last_commit_ns,
                "longest_commit_ms": round(stats.commit_max_ns / 1e6, 3),
                "longest_queue_wait_ms": round(stats.queue_wait_max_ns / 1e6, 3),
                # SQLite's WAL checkpoints, off the commit path (store/wal.py); not the signed checkpoints.
                "wal_checkpoints": wal_checkpoints,
                "checkpoints": wal_checkpoints,  # its old name, kept for --json readers
                "queued": writer.queued(),
                "foreign_rows": list(stats.foreign_rows),
            },
            "inflight": self.admission.inflight,
            "max_inflight": cfg.max_inflight,
            "max_inflight_per_connection": cfg.max_inflight_per_connection,
            "connections_open": len(self.conns),
            "normalizing": self.pool.health() if self.pool is not None else {"workers": 0},
            "subscriptions": self.subscriptions.health(),
            "stopping": self.stopping,
            "draining": self.stopping,  # its old name, kept for --json readers; "drain" is the spool's replay
            "spool": self.drainer.stats(),
            "signed_checkpoints": self._checkpoint_health(),
            "erased": self.erased,
            "evidence_trust": trust.level([Path(d) for d in cfg.witness_dirs], fleet=bool(cfg.ship_url)),
            "retention": (dict(self.retainer.stats.to_json(), payload_days=self.retainer.policy.payload_days)
                          if self.retainer is not None else {"payload_days": 0}),
            "sweeper": self.sweeper.health() if self.sweeper is not None else {"state": "off"},
            "ship": self.shipping.health() if self.shipping is not None else {"state": "off"},
            "process_witness": self.witness.health() if self.witness is not None else {"state": "off"},
            "recorder": self.recorder_watch.health(),
            "counters": self.counters.snapshot(writer),
            "limits": {
                "max_line_bytes": cfg.max_line,
                "idle_timeout_s": cfg.idle_timeout,
                "attest_interval_s": cfg.attest_interval,
                "verify_interval_s": cfg.verify_interval,
                "full_verify_interval_s": cfg.full_verify_interval,
                "batch_max": cfg.batch_max, "max_batch": cfg.batch_max,  # max_batch: the old name, kept for --json readers
            },
        }
        # The operator's summary: reachable (it answered), how fresh the last commit is, how big
        # the WAL has grown, whether the redactor passed its self-test; then status and reasons.
        last_commit_ns = max(stats.last_commit_ns, self.start_commit_ns)
        doc["reachable"] = True
        doc["last_commit_age_s"] = round((time.time_ns() - last_commit_ns) / 1e9, 3) if last_commit_ns else None
        doc["wal_bytes"] = _file_size(Path(f"{cfg.store}-wal"))
        doc["redaction"] = {
            "mode": self.policy.mode,
            "self_test": self.self_test.as_dict(),
        }
        doc["status"], doc["reasons"] = health.assess(doc)
        return doc

    def _check_redaction(self) -> redact.SelfTestResult:
        """Run the redaction self-test once, before the store is opened and any record is read.

        A redactor that fails it could store a secret in rows that can never be deleted,
        so the daemon refuses to start (exit 2) unless privacy is `full`, where the rules
        are not applied anyway; hooks spool meanwhile, and the drain redacts those records
        once a fixed daemon runs. In `full` mode it starts, and health says degraded.
        """
        result = redact.self_test(self.policy)
        if result.ok:
            return result
        message = f"redaction self-test failed ({len(result.failures)} of {result.checked} checks): " + "; ".join(
            result.failures[:3]
        )
        if self.policy.mode != redact.FULL:
            raise RedactionBroken(f"{message}; refusing to record in privacy mode {self.policy.mode!r}")
        log.warning("%s; privacy is 'full', so nothing is redacted anyway", message)
        return result


class RedactionBroken(AgentwatchError):
    """The redaction self-test failed at start (exit 2): recording could store secrets."""


def _socket_gid(group: str) -> Optional[int]:
    """The socket group's gid (the service deployment), None when hooks of the owner only connect."""
    if not group:
        return None
    import grp

    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise AgentwatchError(f"serve.socket_group: no group named {group!r}") from None


def _file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _normalizer(policy: redact.Policy) -> Callable[..., Append]:
    """The envelope-to-row function every socket and spool record goes through."""
    return functools.partial(normalize.to_append, policy=policy)


def _ignore(result: Optional[Appended], error: Optional[Refusal]) -> None:
    pass


def _iso(ns: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns / 1e9))


def serve(config: ServeConfig) -> int:
    """Run the daemon in this process until SIGTERM/SIGINT. Returns the exit code."""
    if config.idle_timeout <= 0:
        raise AgentwatchError("idle timeout must be positive")
    if config.verify_interval < 0:
        raise AgentwatchError("verify interval must be zero (off) or positive")
    if config.full_verify_interval < 0:
        raise AgentwatchError("full verify interval must be zero (off) or positive")
    if config.attest_interval < 0:
        raise AgentwatchError("attest interval must be zero (off) or positive")
    try:
        platform_layer.require_peer_credentials()
    except platform_layer.PlatformUnsupported as exc:
        raise AgentwatchError(str(exc)) from None
    logs.configure(config.log_level, config.log_format)
    return Server(config).run()


