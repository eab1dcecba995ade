"""The daemon's sweeper: incremental chain verification beside the writer, never in its way.

A thread with its own read-only connection calls `verify.verify_range` on
bounded chunks, each in one short read transaction (WAL gives it a snapshot;
no transaction outlives a call, so checkpoints are never pinned). It starts
from the store's verify anchor when there is one (re-checking the anchored
row), else from genesis, and then only ever verifies rows it has not seen:
the steady-state cost is O(new rows). It takes no lock the writer needs and
shares nothing with it but `Writer.head_seq`, a plain int it reads to know
whether there is anything new. Catching up on a large store is paced (a duty
cycle) so its hashing does not starve the event loop and writer of the GIL.

It does not write the anchor (`agentwatch verify` owns that) and does not
write rows. A finding is sticky: the sweeper reports it in `health` and on
stderr and stops; the daemon keeps recording.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from . import db
from .anchors import anchor_path, read_anchor
from .chain import GENESIS, format_hash
from .verify import Finding, read_store_id, verify_range

CHUNK_ROWS = 5000
DUTY = 0.25  # at most this share of wall time spent verifying while catching up


class Sweeper:
    def __init__(
        self, store: Path, head_seq: Callable[[], int], *, interval: float = 5.0, state_dir: Optional[Path] = None
    ):
        self.store = Path(store)
        self._head_seq = head_seq
        self.interval = interval
        self.state_dir = state_dir
        self.state = "starting"  # starting | ok | broken | error
        self.started_from = None  # "anchor" | "genesis"
        self.verified_seq = 0
        self.verified_hash = GENESIS
        self.rows_verified = 0
        self.finding: Optional[Finding] = None
        self.last_error: Optional[str] = None
        self.last_round_ns = 0
        self._store_id = b""
        self._looked = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentwatch-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def health(self) -> dict:
        head = self._head_seq()
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
                    if self._sweep(conn):
                        return  # a finding: nothing further is trustworthy to report as verified
                    self.state = "ok"
                    self.last_error = None
                except Exception as exc:  # report, then retry on a fresh connection
                    self.state = "error"
                    self.last_error = f"{type(exc).__name__}: {exc}"
                    if conn is not None:
                        _close(conn)
                        conn = None
                self._stop.wait(self.interval)
        finally:
            if conn is not None:
                _close(conn)

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

    def _sweep(self, conn) -> bool:
        """Verify up to the head as it is now. True on a finding."""
        look = not self._looked  # the first round always looks: it re-checks the anchored row
        while not self._stop.is_set():
            if not look and self._head_seq() <= self.verified_seq:
                break  # nothing new
            look = False
            self._looked = True
            began = time.monotonic()
            result = verify_range(conn, self._store_id, self.verified_seq, self.verified_hash, CHUNK_ROWS)
            self.last_round_ns = time.time_ns()
            self.verified_seq, self.verified_hash = result.last_seq, result.last_hash
            self.rows_verified += result.rows
            if result.finding is not None:
                self.finding = result.finding
                self.state = "broken"
                print(
                    f"agentwatch serve: chain verification found {result.finding.kind} at seq "
                    f"{result.finding.seq}: {result.finding.detail}",
                    file=sys.stderr,
                    flush=True,
                )
                return True
            if result.rows < CHUNK_ROWS:
                break  # caught up with this snapshot
            # Catching up: leave the GIL to the loop and the writer most of the time.
            self._stop.wait((time.monotonic() - began) * (1 - DUTY) / DUTY)
        return False


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:
        pass
