"""Retention passes and legal-hold requests while the daemon serves (docs/retention.md).

The daemon is the store's one writer, so it applies the retention policy itself: every
`retention.interval_s` it hands the writer one chore after another, each a transaction that
retains at most `retention.max_rows` rows (store/retention.py), until nothing older than the
cutoff is left. Between chores the writer commits hooks as usual, so a pass never holds the
hot path longer than one chore, and the pass paces itself so that it takes at most
WRITER_SHARE of the writer's time while it runs. Holds placed or released through the socket (`op: hold`,
`agentwatch hold` while the daemon serves) are attestation rows committed like any other.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from agentwatch.daemon.writer import Chore, Job
from agentwatch.store import db
from agentwatch.store.actors import check_reason
from agentwatch.store.append import Append, Store
from agentwatch.store.retention import (
    MAX_ROWS,
    Pass,
    Policy,
    Step,
    archived_row,
    find_hold,
    frontier,
    hold_row,
    release_row,
    retain_once,
)

log = logging.getLogger(__name__)

# The share of the writer's time a pass may take while it runs: after a chore that held the
# writer d seconds, the pass waits d × (1 − SHARE) / SHARE before the next, so hooks keep at
# least 1 − SHARE of the writer during a pass, however many rows it removes.
WRITER_SHARE = 0.05


@dataclass
class RetentionStats:
    passes: int = 0  # completed passes (each one or more chores)
    rows_retained: int = 0
    bytes_freed: int = 0
    rows_held: int = 0  # rows past the cutoff a hold kept, in the last pass that removed any
    last_pass_ns: int = 0
    last_error: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"passes": self.passes, "rows_retained": self.rows_retained, "bytes_freed": self.bytes_freed,
                "rows_held": self.rows_held, "last_pass_ns": self.last_pass_ns, "last_error": self.last_error}


@dataclass
class Retainer:
    """Runs retention passes through the writer on a schedule."""

    submit: Callable[[list[Job]], None]  # the server's admission.submit
    policy: Policy
    interval_s: float
    max_rows: int = MAX_ROWS
    clock: Callable[[], int] = time.time_ns
    stats: RetentionStats = field(default_factory=RetentionStats)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.pass_now()
            except Exception as exc:  # a failed pass is retried at the next interval
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("retention pass failed: %s", self.stats.last_error)

    async def pass_now(self) -> list[Pass]:
        """One pass: chores until nothing older than the cutoff is left; the transactions it made."""
        loop = asyncio.get_running_loop()
        now = self.clock()
        after: Optional[int] = None  # read from the store by the first chore (retention.frontier)
        done: list[Pass] = []
        held = 0
        while True:
            result: asyncio.Future = loop.create_future()
            steps: list[Step] = []

            def chore(store: Store, after: Optional[int] = after, steps: list[Step] = steps) -> list:
                start = frontier(store.conn) if after is None else after
                step = retain_once(store, self.policy, now, after_seq=start, max_rows=self.max_rows,
                                   who={"by": "agentwatch serve (retention policy)"})
                steps.append(step)
                return step.appended

            def finished(appended, refusal, result=result) -> None:
                if not result.done():
                    result.set_result(refusal)

            began = loop.time()
            self.submit([Job(Chore(chore), finished)])
            refusal = await result
            took = loop.time() - began
            if refusal is not None:
                raise RuntimeError(refusal.message)
            step = steps[0]
            if step.done is not None:
                done.append(step.done)
                held += step.done.held
            after = step.resume
            if step.finished:
                break
            await asyncio.sleep(took * (1 - WRITER_SHARE) / WRITER_SHARE)
        stats = self.stats
        stats.passes += 1
        stats.rows_retained += sum(p.rows for p in done)
        stats.bytes_freed += sum(p.bytes_freed for p in done)
        if done:
            stats.rows_held = held
        stats.last_pass_ns = time.time_ns()
        stats.last_error = None
        if done:
            log.info("retention: %d rows' payloads removed in %d transactions", sum(p.rows for p in done), len(done))
        return done


def operator_request(request: dict, *, store_path, own_uid: int, peer_uid: Optional[int]) -> Append:
    """The attestation row for an `op: retention` request, or ValueError saying why it is refused.

    `action` is `hold` (place a legal hold), `release` (end one) or `archived` (an archive of
    rows was written: its digest and range). Only the daemon's own account (or root) may ask:
    in the service deployment the developers' hooks reach the same socket, and these are the
    operator's.
    """
    if peer_uid not in (own_uid, 0):
        raise ValueError("holds are placed by the account that runs the recorder (or root)")
    action = request.get("action")
    by = request.get("by")
    if by is not None and (not isinstance(by, str) or not by.strip() or len(by) > 200):
        raise ValueError("by must be 1 to 200 characters")
    who: dict[str, Any] = {"uid": peer_uid, "via": "socket"}
    if by is not None:
        who["by"] = by
    reason = request.get("reason")
    if not isinstance(reason, str):
        raise ValueError("a hold needs a reason")
    try:
        if action == "archived":
            return archived_row(request.get("archive"), reason, who)
        if action == "hold":
            scope = request.get("scope")
            if not isinstance(scope, dict):
                raise ValueError("scope must be an object")
            return hold_row(scope, reason, who)[1]
        if action == "release":
            hold_id = request.get("hold_id")
            if not isinstance(hold_id, str):
                raise ValueError("hold_id must be a string")
            conn = db.open_reader(store_path)
            try:
                found = find_hold(conn, hold_id)
            finally:
                conn.close()
            if not found.active:
                raise ValueError(f"hold {hold_id} was released already (seq {found.released_by_seq})")
            return release_row(found, check_reason(reason), who)
    except ValueError:
        raise
    except Exception as exc:  # UsageError and the store's errors: a refusal naming them
        raise ValueError(str(exc)) from None
    raise ValueError("action must be hold, release or archived")


# --- the commands' side: through the daemon when it serves the store, else under its lock ----------


def submit_operator(store_path, socket_path, request: dict) -> dict:
    """Write an operator's row (`request` as for `op: retention`); {"seq", "record_id", "via"}.

    With no daemon serving the store it is written here, under the store's lock, as `erase`
    writes; with one, the daemon writes it (the store has one writer) through its socket.
    """
    from agentwatch.daemon import health, runfiles
    from agentwatch.errors import StoreMissing, UsageError

    if not store_path.exists():  # no daemon serves it either; and a release reads the store (exit 3, not 2)
        raise StoreMissing(f"{store_path}: store does not exist")
    lock = runfiles.LockFile(runfiles.lock_path(store_path), f"store {store_path}")
    try:
        lock.acquire()
    except runfiles.AlreadyServing:
        serving = True
    else:
        serving = False
    if serving:
        reply = health.request(socket_path, {"op": "retention", **request}, timeout=30.0)
        if reply.get("ok") is not True:
            raise UsageError(f"the daemon refused it: {reply.get('message') or reply.get('error')}")
        return {"seq": reply["seq"], "record_id": reply["record_id"], "via": "daemon"}
    try:
        try:
            row = operator_request(request, store_path=store_path, own_uid=os.getuid(), peer_uid=os.getuid())
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        with Store(store_path, create=False) as store:
            (appended,) = store.append([row])
        return {"seq": appended.seq, "record_id": appended.record_id, "via": "store"}
    finally:
        lock.release()


def retain_offline(store_path, policy: Policy, *, max_rows: int = MAX_ROWS, by: Optional[str] = None,
                   now_ns: Optional[int] = None) -> list[Pass]:
    """A retention pass on a store no daemon serves (the daemon runs its own on a schedule)."""
    from agentwatch.daemon import runfiles
    from agentwatch.errors import StoreMissing, StoreUnreachable
    from agentwatch.store.actors import actor
    from agentwatch.store.retention import retain

    if not store_path.exists():
        raise StoreMissing(f"{store_path}: store does not exist")
    lock = runfiles.LockFile(runfiles.lock_path(store_path), f"store {store_path}")
    try:
        lock.acquire()
    except runfiles.AlreadyServing as exc:
        raise StoreUnreachable(f"{exc}; the daemon applies retention.payload_days itself every "
                               "retention.interval_s (see `agentwatch health`)") from None
    try:
        with Store(store_path, create=False) as store:
            return retain(store, policy, now_ns, max_rows=max_rows, who=actor(by))
    finally:
        lock.release()
