"""Admission: the daemon's one count of records handed to the writer and not yet answered.

Every record reaches the writer through `Admission.submit` and is answered through
`Admission.settle`, the only two places that move the count. Connections and the spool
drainer ask `has_capacity()` / `free()` before reading more and wait in `waiting` when
the bound is reached; `settle` wakes them. A miscount here would stop the daemon reading
for good, so the pair is kept small and tested on its own (tests/test_admission.py).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Callable, Iterable, Protocol

from agentwatch.daemon.writer import Job, Refusal

log = logging.getLogger(__name__)

Outcome = tuple  # (job, Appended | None, Refusal | None)


class Waiter(Protocol):
    def resume(self) -> None: ...


class Admission:
    def __init__(self, limit: int, hand_to_writer: Callable[[list[Job]], bool]):
        self.limit = limit
        self.inflight = 0
        self.waiting: deque[Waiter] = deque()  # paused until capacity frees, first come first served
        self._hand_to_writer = hand_to_writer

    def has_capacity(self) -> bool:
        return self.inflight < self.limit

    def free(self) -> int:
        return max(0, self.limit - self.inflight)

    def submit(self, jobs: list[Job]) -> None:
        """Count the jobs in and hand them to the writer; a writer that refuses them answers them now."""
        if not jobs:
            return
        self.inflight += len(jobs)
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
        settled = 0
        for job, result, error in outcomes:
            settled += 1
            try:
                job.done(result, error)
            except Exception:
                log.exception("answering a record failed")
        self.inflight -= settled

    def wake_waiting(self) -> None:
        waiting = self.waiting
        for _ in range(len(waiting)):  # a waiter that pauses again goes to the back
            if not self.has_capacity():
                break
            waiting.popleft().resume()
