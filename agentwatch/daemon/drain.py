"""The daemon's spool drainer: spooled envelopes go through the same writer path.

Hooks that got no ack left their envelope in `spool/new/` (agentwatch.daemon.spool
describes the layout). The drainer runs at start and every `spool_poll`
seconds. Each pass reads and normalizes up to FILES_PER_PASS files on a
worker thread, hands the rows to the writer like any socket request, waits
for the answers, and only then touches the files, again on a worker thread:
a committed record (or a duplicate of one) deletes its file; a file that
cannot become a record was recorded as a `gap` row (reason, size, sha256) and
is moved to `spool/bad/` once that row is committed; so is a file whose
record the store itself refused (`bad_request` from the writer). A commit
refused as `unavailable` leaves the file for a later pass. Nothing leaves the
spool without a committed row.

Junk cannot starve real records: names a hook writes are taken first
(spool.HOOK_NAME), and when one pass meets more than JUNK_DETAIL unusable files
they are set aside in bulk, under one summarizing `gap` row (reason
`spool_junk`: how many, their bytes, the first JUNK_LISTED by name, size, sha256
and error, and a digest over all of them) instead of a row each.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from agentwatch.daemon.connection import Host  # the one view of the server its parts share
from agentwatch.daemon.spool import Spool, SpoolFile
from agentwatch.daemon.writer import Job, Refusal
from agentwatch.record.normalize import gap_append
from agentwatch.store.append import Append, Appended

log = logging.getLogger(__name__)


FILES_PER_PASS = 512
JUNK_DETAIL = 8  # up to this many unusable files in one pass get a gap row each; more share one
JUNK_LISTED = 50  # files named one by one in a summarizing row
STATS_EVERY_S = 2.0  # spool.stats() stats every file in new/: not on every pass


@dataclass(slots=True)
class Spooled:
    """One spool file and the row it becomes: its record, or a gap row for an unusable file."""

    file: SpoolFile
    row: Append
    error: Optional[str]  # why the file is unusable (then `row` is the gap row), else None
    result: Optional[Appended] = None
    refusal: Optional[Refusal] = None
    files: tuple = ()  # a summarizing row: (SpoolFile, error) of every unusable file it sets aside


class SpoolDrainer:
    def __init__(self, server: Host, root: Path, normalize: Callable[..., Append]):
        self.server = server
        self.spool = Spool(root)
        self._normalize = normalize  # normalize.to_append, bound to the daemon's redaction policy
        self.inflight: set[str] = set()  # file names handed to the writer and not yet settled
        self.refused_by_store: dict[str, str] = {}  # file name -> why the writer refused its row
        self._stats: dict = {}
        self._stats_at = 0.0
        self._stopping = False
        self._wake: Optional[asyncio.Event] = None
        self._pass_done: Optional[asyncio.Event] = None

    def prepare(self) -> None:
        self.spool.prepare()
        self._stats = self.spool.stats().as_dict()  # health has the spool's counts from the start

    def stats(self) -> dict:
        return {**self._stats, "inflight": len(self.inflight)}

    async def run(self) -> None:
        self._wake = asyncio.Event()
        self._pass_done = asyncio.Event()
        poll = self.server.config.spool_poll
        while not self._stopping:
            self._pass_done.clear()
            try:
                more = await self._pass()
            except Exception as exc:  # a spool problem must not stop the daemon; the next pass retries
                log.exception("spool drain: %r", exc)
                more = False
            finally:
                self._pass_done.set()
            if not more and not self._stopping:
                try:
                    await asyncio.wait_for(self._wake.wait(), poll)
                except asyncio.TimeoutError:
                    pass

    async def stop(self) -> None:
        """Let the pass in progress finish (rows committed, files settled); start no other."""
        self._stopping = True
        if self._wake is not None and self._pass_done is not None:
            self._wake.set()
            await self._pass_done.wait()

    async def _pass(self) -> bool:
        """One look at spool/new. True when more files wait than this pass took."""
        server = self.server
        budget = min(FILES_PER_PASS, server.admission.free())
        if budget == 0:
            await asyncio.sleep(0.05)
            return True
        items, more = await asyncio.to_thread(self._read_some, budget, frozenset(self.inflight))
        if not items:
            return more
        loop = asyncio.get_running_loop()
        answered = loop.create_future()
        outstanding = len(items)

        def answer(item: Spooled, result: Optional[Appended], refusal: Optional[Refusal]) -> None:
            nonlocal outstanding
            item.result, item.refusal = result, refusal
            if refusal is not None and refusal.code == "bad_request" and item.error is None:
                # The store will never take this record: next pass records the file as a gap.
                self.refused_by_store[item.file.path.name] = refusal.message
            outstanding -= 1
            if outstanding == 0:
                answered.set_result(None)

        jobs = []
        for item in items:
            self.inflight.add(item.file.path.name)
            self.inflight.update(f.path.name for f, _ in item.files)
            jobs.append(Job(item.row, functools.partial(answer, item)))
        server.admission.submit(jobs)
        await answered
        self._count(items)  # committed is what counts; the files follow
        try:
            await asyncio.to_thread(self._settle, items)
        finally:
            for item in items:
                self.inflight.discard(item.file.path.name)
                for f, _ in item.files:
                    self.inflight.discard(f.path.name)
        return more

    def _count(self, items: list[Spooled]) -> None:
        counters = self.server.counters
        for item in items:
            result = item.result
            if result is None:
                continue
            if item.error is not None:
                counters.spool_quarantined += len(item.files) or 1
            elif result.duplicate:
                counters.duplicates += 1
                counters.spool_duplicates += 1
                counters.replayed_from_spool += 1
            else:
                counters.accepted += 1
                counters.replayed_from_spool += 1

    # -- on a worker thread ------------------------------------------------------------

    def _read_some(self, budget: int, skip: frozenset) -> tuple[list[Spooled], bool]:
        spool = self.spool
        spool.adopt_stale_tmp()
        paths = spool.ready(limit=budget + 1, skip=skip)
        more = len(paths) > budget
        items = []
        for path in paths[:budget]:
            file = spool.read(path)
            if file is not None:
                items.append(self._row(file))
        unusable = [item for item in items if item.error is not None]
        if len(unusable) > JUNK_DETAIL:
            items = [item for item in items if item.error is None] + [_summary(unusable)]
        now = time.monotonic()
        if now - self._stats_at >= STATS_EVERY_S or not self._stats:
            self._stats = spool.stats().as_dict()
            self._stats_at = now
        return items, more

    def _row(self, file: SpoolFile) -> Spooled:
        error = file.error
        refused = self.refused_by_store.pop(file.path.name, None)
        if error is None and refused is not None:
            error = refused
            return Spooled(file, gap_append(file.gap_record_id, "spool_refused", file.gap_detail(error)), error)
        if error is None and file.envelope is not None:
            envelope = dict(file.envelope)
            envelope["delivery"] = "spool"
            try:
                return Spooled(file, self._normalize(envelope, uid=file.uid), None)
            except (ValueError, RecursionError) as exc:  # BadEnvelope is a ValueError
                error = f"bad envelope: {exc}"
        row = gap_append(file.gap_record_id, "spool_unparsable", file.gap_detail(error))
        return Spooled(file, row, error)

    def _settle(self, items: list[Spooled]) -> None:
        for item in items:
            if item.result is None:
                continue  # not committed: the file stays for a later pass
            path = item.file.path
            if item.files:
                for f, error in item.files:
                    try:
                        self.spool.quarantine(f.path, error)
                    except FileNotFoundError:
                        pass
            elif item.error is None:
                self.spool.mark_done(path)
            else:
                try:
                    self.spool.quarantine(path, item.error)
                except FileNotFoundError:
                    pass
        if any(item.result is not None for item in items):
            self._stats_at = 0.0  # refresh the backlog figures on the next pass


def _summary(unusable: list[Spooled]) -> Spooled:
    """One `gap` row for many unusable files of one pass (spool_junk); its record_id is derived from
    theirs, so a pass replayed after a crash stores it once."""
    import hashlib

    files = [(item.file, item.error or "unusable") for item in unusable]
    digest = hashlib.sha256("\n".join(sorted(f.gap_record_id for f, _ in files)).encode()).hexdigest()
    detail = {
        "files": len(files),
        "bytes": sum(f.size for f, _ in files),
        "listed": [{"file": f.path.name, "size": f.size, "sha256": f.sha256, "error": error}
                   for f, error in files[:JUNK_LISTED]],
        "digest": "sha256:" + digest,
        "quarantined_to": "bad/",
    }
    row = gap_append(f"gap-spool-junk-{digest}", "spool_junk", detail)
    return Spooled(files[0][0], row, f"set aside with {len(files) - 1} other unusable spool files",
                   files=tuple(files))


__all__ = ["SpoolDrainer", "Spooled", "FILES_PER_PASS", "JUNK_DETAIL"]
