"""Admission: the daemon's one count of records handed to the writer and not yet answered.

Every record is counted in by `Admission.hold` or `Admission.submit`, reaches the writer only
through `submit`, and is answered and counted out only through `Admission.settle`. Connections and the spool
drainer ask `has_capacity(peer)` / `free()` before reading more and wait in `waiting` when
their peer's share is reached; `wake_waiting` resumes them. A miscount here would stop the daemon reading
for good, so the pair is kept small and tested on its own (tests/test_admission.py).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Callable, Iterable, Optional, Protocol

from agentwatch.daemon.fairness import Peer, RoundRobin, share
from agentwatch.daemon.writer import Job, Refusal

log = logging.getLogger(__name__)

Outcome = tuple  # (job, Appended | None, Refusal | None)


class Waiter(Protocol):
    def resume(self) -> None: ...


class Admission:
    """The in-flight count, shared fairly between peers (fairness.py).

    A record is counted in when it is read from a peer (`hold`, before it is normalized) or
    handed in finished (`submit`), and out when it is answered (`settle`), whether it reached
    the writer or not. With a `window`, at most that many records are at the writer at once,
    taken one per peer in turn: a hook's record waits behind a group commit or two, never
    behind every record a flooder got admitted.
    """

    def __init__(self, limit: int, hand_to_writer: Callable[[list[Job]], bool], window: Optional[int] = None):
        self.limit = limit
        self.inflight = 0
        self.held: dict[Peer, int] = {}  # in flight, per peer (a peer holding none is not a key)
        self.waiting: deque[Waiter] = deque()  # paused until their peer has capacity again
        self._hand_to_writer = hand_to_writer
        self.window = window  # records at the writer at once (None: each as it comes)
        self.at_writer = 0
        self._sent: set[int] = set()  # id() of the jobs at the writer
        self._ready: RoundRobin[Job] = RoundRobin()  # counted in, finished, waiting for the window
        self.on_room: Optional[Callable[[], None]] = None  # told after records were answered (the workers)

    def has_capacity(self, peer: Optional[Peer] = None) -> bool:
        """May a record be read (from this peer)? A peer holding none may always send one."""
        if peer is None:
            return self.inflight < self.limit
        held = self.held.get(peer, 0)
        if held == 0:
            return True
        return self.inflight < self.limit and held < share(self.limit, len(self.held))

    def free(self) -> int:
        return max(0, self.limit - self.inflight)

    def hold(self, job: Job) -> None:
        """Count in a record read from its peer; it reaches the writer later through `submit(held=True)`."""
        self.inflight += 1
        self.held[job.peer] = self.held.get(job.peer, 0) + 1

    def submit(self, jobs: list[Job], held: bool = False) -> None:
        """Count the jobs in (unless `hold` did) and hand them to the writer; a writer that refuses them answers them now."""
        if not jobs:
            return
        if not held:
            for job in jobs:
                self.hold(job)
        if self.window is None:
            self._hand(jobs)
            return
        for job in jobs:
            self._ready.push(job.peer, job)
        self._pump()

    def _pump(self) -> None:
        ready, window = self._ready, self.window
        assert window is not None, "only a windowed admission queues records"
        while ready and self.at_writer < window:
            jobs: list[Job] = []
            while ready and self.at_writer + len(jobs) < window:
                job = ready.pop()
                assert job is not None
                jobs.append(job)
            self._hand(jobs)

    def _hand(self, jobs: list[Job]) -> None:
        self.at_writer += len(jobs)
        self._sent.update(map(id, jobs))
        try:
            accepted = self._hand_to_writer(jobs)
        except Exception:
            log.exception("handing records to the writer failed")
            accepted = False
        if not accepted:
            refusal = Refusal("shutting_down", "the daemon is stopping; spool the record")
            self.settle([(job, None, refusal) for job in jobs])

    def settle(self, outcomes: Iterable[Outcome]) -> None:
        """Answer each job once and count it out, even when an answer callback fails."""
        held, sent = self.held, self._sent
        for job, result, error in outcomes:
            self.inflight -= 1
            n = held[job.peer] - 1
            if n:
                held[job.peer] = n
            else:
                del held[job.peer]
            if id(job) in sent:
                sent.discard(id(job))
                self.at_writer -= 1
            try:
                job.done(result, error)
            except Exception:
                log.exception("answering a record failed")
        if self.window is not None:
            self._pump()
        if self.on_room is not None:
            self.on_room()

    def ready(self) -> int:
        """Finished records waiting for the writer's window."""
        return len(self._ready)

    def wake_waiting(self) -> None:
        waiting = self.waiting
        for _ in range(len(waiting)):  # a waiter that still has no capacity (or pauses again) goes to the back
            waiter = waiting.popleft()
            if self.has_capacity(getattr(waiter, "peer", None)):
                waiter.resume()
            else:
                waiting.append(waiter)
