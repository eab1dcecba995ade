"""The daemon's watch over what its record could be missing (docs/daemon.md, "Hook config and coverage").

Two jobs, both off the commit path (a thread per look, the result handed to
the writer as an attestation row):

- **Hook config.** Every `interval` seconds the watch stats each file the
  install manifest names (and the manifest itself). Polling, not inotify: the
  set is a handful of files, a stat costs microseconds, and editors and
  `install` itself replace a config by rename, which an inotify watch on the
  file loses (a watch on each parent directory would see every unrelated file
  there); polling behaves the same on Linux and macOS with no dependency.
  When a fingerprint changes, at start, at each session start and every
  `attest_interval`, it reads the configs and records a `config` row; a
  finding is named within one interval of the edit.
- **Coverage.** When a `session_end` event commits, the session's transcript
  is paired with its recorded tool calls after `coverage_delay` seconds (the
  session's last async hooks land first) and a `coverage` row is recorded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Callable, Optional

from agentwatch.coverage import hookconfig, manifest, pairing
from agentwatch.coverage import rows as coverage_rows
from agentwatch.store import db
from agentwatch.store.rows import TailRecord

log = logging.getLogger(__name__)


def _event_doc(payload: bytes) -> Optional[dict]:
    import json

    try:
        doc = json.loads(payload)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("event"), dict) else None

_EVENT_KIND = b'"event":{"kind":"'
_SESSION = b"session_"


class RecorderWatch:
    def __init__(self, store: Path, record: Callable[[str, dict], None], *, manifest_path: Optional[Path] = None,
                 interval: float = 2.0, periodic: float = 60.0, coverage_delay: float = 1.0):
        self.store = store
        self.record = record  # (type, body) -> submit one attestation row (on the loop)
        self.manifest_path = manifest_path or manifest.default_path()
        self.interval = interval
        self.periodic = periodic
        self.coverage_delay = coverage_delay
        self.findings: list[dict] = []
        self.installs = 0
        self.last_look_ns = 0
        self.last_error: Optional[str] = None
        self.sessions_missing: dict[tuple[str, str], int] = {}  # (harness, session) -> missing calls
        self.coverage_runs = 0
        self._fingerprint: Any = None
        self._keys: set[str] = set()
        self._digest: Optional[str] = None
        self._pending: set[asyncio.Task] = set()
        self._covering: set[tuple[str, str]] = set()  # sessions whose pairing is scheduled
        self._wake: Optional[asyncio.Event] = None
        self._trigger = "start"

    # -- the loop ----------------------------------------------------------------------

    async def run(self) -> None:
        self._wake = asyncio.Event()
        last_periodic = time.monotonic()
        try:  # sessions whose newest coverage row, from earlier runs, names missing calls
            for doc in (await asyncio.to_thread(self._recorded_coverage)).values():
                self.note_coverage(doc)
        except Exception as exc:
            log.warning("cannot read earlier coverage rows: %s", exc)
        await self._look("start")
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.interval)
            except asyncio.TimeoutError:
                pass
            trigger = None
            if self._wake.is_set():
                self._wake.clear()
                trigger = self._trigger
            elif self.periodic > 0 and time.monotonic() - last_periodic >= self.periodic:
                trigger = "periodic"
            if trigger in ("periodic", "session_start"):
                last_periodic = time.monotonic()
            await self._look(trigger)

    async def _look(self, trigger: Optional[str]) -> None:
        """Re-read the configs when something changed (or `trigger` asks for a row regardless)."""
        try:
            body = await asyncio.to_thread(self._inspect, trigger is not None)
            for _ in range(3):  # a row that must be written waits out a file being rewritten
                if body is not None or trigger is None:
                    break
                await asyncio.sleep(0.05)
                body = await asyncio.to_thread(self._inspect, True)
        except Exception as exc:  # a look that fails is reported, never fatal
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("hook config look failed: %s", self.last_error)
            return
        if body is None:
            return
        if not body["installs"] and "manifest_problem" not in body and self._digest is None:
            return  # nothing installed, nothing ever was: nothing to attest
        changed = body["digest"] != self._digest or {self._key(f) for f in body["findings"]} != self._keys
        if trigger is None and not changed:
            return
        keys = {self._key(f) for f in body["findings"]}
        restored = sorted(self._keys - keys) if self._digest is not None else []
        if restored:
            body["restored"] = restored
        body["trigger"] = trigger or "change"
        self._keys, self._digest = keys, body["digest"]
        self.findings = body["findings"]
        self.record("config", {"config": body})

    @staticmethod
    def _key(f: dict) -> str:
        return f"{f['kind']}:{f['harness']}:{f['scope']}:{f['path']}:{f.get('event') or ''}"

    def _inspect(self, force: bool) -> Optional[dict]:
        entries, problem = manifest.read(self.manifest_path)
        fingerprint = manifest.fingerprint([str(self.manifest_path), *manifest.watched_paths(entries)])
        self.last_look_ns = time.time_ns()
        if not force and fingerprint == self._fingerprint:
            return None
        self.installs = len(entries)
        self.last_error = None
        body = hookconfig.document(hookconfig.inspect_all(entries), problem)
        if manifest.fingerprint([str(self.manifest_path), *manifest.watched_paths(entries)]) != fingerprint:
            self._fingerprint = None  # written while it was read (a file rewritten in place): look again
            return None
        self._fingerprint = fingerprint
        return body

    # -- what the writer committed -----------------------------------------------------

    def committed(self, rows: list[TailRecord]) -> None:
        """On the loop, for every committed batch: session starts and ends, found without parsing most rows."""
        for row in rows:
            if row.kind != "event":
                continue
            # Canonical JSON sorts keys, so the top-level event comes before the raw payload and
            # the tool: the first match is near the start (a quote inside a string is escaped and
            # cannot match). The parse below decides; this only keeps the parse off most rows.
            at = row.payload.find(_EVENT_KIND)
            if at < 0 or not row.payload.startswith(_SESSION, at + len(_EVENT_KIND)):
                continue
            doc = _event_doc(row.payload)
            kind = doc.get("event", {}).get("kind") if doc else None
            if kind == "session_start":
                self._trigger = "session_start"
                if self._wake is not None:
                    self._wake.set()
            elif kind == "session_end" and doc is not None:
                self._session_ended(doc)

    def _session_ended(self, doc: dict) -> None:
        harness, session = doc.get("harness"), doc.get("session_id")
        if not isinstance(harness, str) or not isinstance(session, str) or (harness, session) in self._covering:
            return  # a second end event of the session while its pairing waits: one row
        self._covering.add((harness, session))
        task = asyncio.get_running_loop().create_task(self._cover(harness, session, doc.get("transcript_path")))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _cover(self, harness: str, session: str, transcript_path: Any) -> None:
        await asyncio.sleep(self.coverage_delay)
        self._covering.discard((harness, session))
        try:
            result = await asyncio.to_thread(self._pair, harness, session,
                                             transcript_path if isinstance(transcript_path, str) else None)
        except Exception as exc:
            log.warning("coverage of %s session %s failed: %s", harness, session, exc)
            return
        if result.problem is not None and result.problem.kind == "no_transcript":
            return  # the harness keeps none: nothing to attest
        self.coverage_runs += 1
        self.note_coverage(result.row_document())
        self.record("coverage", {"coverage": result.row_document()})

    def _pair(self, harness: str, session: str, transcript_path: Optional[str],
              supplied: Optional[Any] = None) -> pairing.SessionCoverage:
        conn = db.open_reader(self.store)
        try:
            return pairing.session_coverage(conn, harness, session, transcript_path=transcript_path,
                                            transcript=supplied)
        finally:
            conn.close()

    def supplied(self, request: dict, uid: Optional[int], pid: Optional[int]) -> None:
        """On the loop: the `coverage` op. The user's side (which can read its transcripts when the daemon,
        a service account, cannot) hands over a transcript's digest and call list; the daemon pairs it
        with its own records and records who supplied it. Raises ValueError for a malformed request."""
        harness, session = request.get("harness"), request.get("session_id")
        if not isinstance(harness, str) or not harness or not isinstance(session, str) or not session:
            raise ValueError("coverage needs harness and session_id strings")
        transcript = pairing.supplied_transcript(harness, request.get("transcript"))
        task = asyncio.get_running_loop().create_task(self._cover_supplied(harness, session, transcript, uid, pid))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _cover_supplied(self, harness: str, session: str, transcript: Any, uid: Optional[int],
                              pid: Optional[int]) -> None:
        try:
            result = await asyncio.to_thread(self._pair, harness, session, None, transcript)
        except Exception as exc:
            log.warning("supplied coverage of %s session %s failed: %s", harness, session, exc)
            return
        result.supplied_by = {"uid": uid, "pid": pid}
        self.coverage_runs += 1
        self.note_coverage(result.row_document())
        self.record("coverage", {"coverage": result.row_document()})

    def _recorded_coverage(self) -> dict:
        conn = db.open_reader(self.store)
        try:
            return coverage_rows.coverage_by_session(conn)
        finally:
            conn.close()

    def note_coverage(self, doc: dict) -> None:
        key = (str(doc.get("harness")), str(doc.get("session_id")))
        missing = (doc.get("counts") or {}).get("missing")
        if missing:
            self.sessions_missing[key] = missing
        else:
            self.sessions_missing.pop(key, None)

    async def stop(self) -> None:
        for task in list(self._pending):
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)

    def health(self) -> dict:
        return {
            "state": "findings" if self.findings else ("error" if self.last_error else "ok"),
            "installs_watched": self.installs,
            "interval_s": self.interval,
            "findings": self.findings,
            "last_look_ns": self.last_look_ns,
            "last_error": self.last_error,
            "coverage_runs": self.coverage_runs,
            "sessions_missing_calls": len(self.sessions_missing),
        }
