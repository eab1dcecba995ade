"""Pair a session's transcript with its recorded tool calls (docs/record.md, "Coverage").

`session_coverage` is the library function: one session in, a SessionCoverage
out, with the calls found in both, the **missing** ones (in the transcript,
never recorded: each with its transcript file and line), the **extra** ones
(recorded, not in the transcript) and the **mismatched** ones (tool, outcome
or input differ), and a `findings` list that other sources (a process
witness, say) extend with findings of their own kinds.

Pairing rule: by the harness's call id where both the transcript and the
records carry it (Claude Code, Codex, Cline); otherwise (Gemini CLI,
OpenHands: their hooks send no id) per tool name, in order, a recorded call
first taking the transcript call with the same input, then the earliest left.
Calls of tools the harness runs no hook for (Codex's update_plan, say) are
counted as `not_hooked`, never as missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import apsw

from agentwatch.store.chain import canonical_json
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries

from . import transcripts
from .transcripts import Call, Transcript, TranscriptProblem

COMPLETE, MISSING, UNKNOWN, UNAVAILABLE = "complete", "missing", "unknown", "unavailable"


@dataclass
class Finding:
    kind: str  # missing | extra | mismatched | a transcripts.PROBLEMS code | another source's kind
    detail: str
    call_id: Optional[str] = None
    tool: Optional[str] = None
    file: Optional[str] = None
    line: Optional[int] = None
    seq: Optional[int] = None
    source: str = "transcript"

    def to_json(self) -> dict:
        return {k: v for k, v in (("kind", self.kind), ("detail", self.detail), ("call_id", self.call_id),
                                  ("tool", self.tool), ("file", self.file), ("line", self.line),
                                  ("seq", self.seq), ("source", self.source)) if v is not None}


@dataclass
class Recorded:
    """One row of the tool_calls view, with what pairing needs of its records."""

    call_id: Optional[str]
    tool: str
    outcome: str
    first_seq: int
    input: Any = None
    has_input: bool = False
    subagent: bool = False  # made by a subagent (the record names an agent), whose calls the harness may keep apart

    def to_json(self) -> dict:
        return {"call_id": self.call_id, "tool": self.tool, "outcome": self.outcome, "seq": self.first_seq}


@dataclass
class SessionCoverage:
    harness: str
    session_id: str
    transcript: Optional[Transcript] = None
    problem: Optional[Finding] = None  # why the transcript could not be paired
    both: int = 0
    recorded: int = 0
    not_hooked: int = 0
    subagent_unpaired: int = 0
    missing: list[Call] = field(default_factory=list)
    extra: list[Recorded] = field(default_factory=list)
    mismatched: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    supplied_by: Optional[dict] = None  # the service deployment: who handed the daemon the call list

    @property
    def status(self) -> str:
        if self.problem is not None:
            return UNAVAILABLE if self.problem.kind == "no_transcript" else UNKNOWN
        return MISSING if self.missing else COMPLETE

    @property
    def transcript_calls(self) -> int:
        return self.both + len(self.missing)

    def summary(self) -> str:
        """`20/20 recorded`, `17/20 · 3 missing`, or what stopped the pairing."""
        if self.problem is not None:
            return self.problem.kind
        text = f"{self.both}/{self.transcript_calls} recorded"
        if self.missing:
            text = f"{self.both}/{self.transcript_calls} · {len(self.missing)} missing"
        extras = [f"{len(self.extra)} extra"] if self.extra else []
        extras += [f"{len(self.mismatched)} mismatched"] if self.mismatched else []
        return " · ".join([text, *extras])

    def to_json(self) -> dict:
        return {
            "harness": self.harness,
            "session_id": self.session_id,
            "status": self.status,
            "summary": self.summary(),
            "transcript": self.transcript.to_json() if self.transcript else None,
            "problem": self.problem.to_json() if self.problem else None,
            "counts": {"transcript": self.transcript_calls, "recorded": self.recorded, "both": self.both,
                       "missing": len(self.missing), "extra": len(self.extra),
                       "mismatched": len(self.mismatched), "not_hooked": self.not_hooked,
                       "subagent_unpaired": self.subagent_unpaired},
            "missing": [c.to_json() | {"file": c.file or (self.transcript.path if self.transcript else None)}
                        for c in self.missing],
            "extra": [r.to_json() for r in self.extra],
            "mismatched": self.mismatched,
            "findings": [f.to_json() for f in self.findings],
            **({"supplied_by": self.supplied_by} if self.supplied_by else {}),
        }

    def row_document(self) -> dict:
        """The `coverage` attestation's body: the transcript's path and digest, the counts, the missing ids."""
        doc = self.to_json()
        doc["missing_call_ids"] = [c.call_id for c in self.missing]
        return doc


# ---------------------------------------------------------------- the store side


def recorded_calls(conn: apsw.Connection, harness: str, session_id: str) -> list[Recorded]:
    rows: list[Any] = conn.execute(
        "SELECT call_id, coalesce(tool_name, ''), outcome, first_seq, start_seq, end_seq FROM tool_calls "
        "WHERE session_id = ? AND harness = ? ORDER BY first_seq", (session_id, harness)).fetchall()
    out = []
    for call_id, tool, outcome, first_seq, start_seq, end_seq in rows:
        rec = Recorded(call_id, tool, outcome, first_seq)
        doc = _doc(conn, start_seq if start_seq is not None else end_seq)
        tool_doc = doc.get("tool") if isinstance(doc, dict) else None
        if isinstance(tool_doc, dict) and "input" in tool_doc:
            rec.input, rec.has_input = tool_doc["input"], True
        rec.subagent = isinstance(doc, dict) and isinstance(doc.get("agent"), dict)
        out.append(rec)
    return out


def _doc(conn: apsw.Connection, seq: Optional[int]) -> Optional[dict]:
    if seq is None:
        return None
    row = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM records WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        return None
    try:
        doc = json.loads(Dictionaries.of(conn).document(*row))
    except (TypeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def named_transcript(conn: apsw.Connection, harness: str, session_id: str) -> Optional[str]:
    """The transcript path the session's latest event names (the hook payload's transcript_path)."""
    for (seq,) in conn.execute(
            "SELECT seq FROM records WHERE kind = 'event' AND session_id = ? AND harness = ? ORDER BY seq DESC "
            "LIMIT 200", (session_id, harness)):
        doc = _doc(conn, seq)
        path = doc.get("transcript_path") if doc else None
        if isinstance(path, str) and path:
            return path
    return None


# ---------------------------------------------------------------- pairing


def session_coverage(conn: apsw.Connection, harness: str, session_id: str, *,
                     transcript_path: Optional[str] = None, transcript: Optional[Transcript] = None,
                     check_root: bool = True, max_bytes: int = transcripts.MAX_BYTES) -> SessionCoverage:
    """The coverage of one session: its transcript (read, or as `transcript` supplied) against its records."""
    result = SessionCoverage(harness, session_id)
    recorded = recorded_calls(conn, harness, session_id)
    result.recorded = len(recorded)
    if transcript is None:
        path = transcripts.locate(harness, session_id, transcript_path or named_transcript(conn, harness, session_id))
        if path is None:
            if harness in transcripts.PARSERS:  # the harness keeps one, but no record named it
                result.problem = Finding("transcript_not_named", f"no record of {harness} session {session_id} "
                                         "names its transcript")
            else:
                result.problem = Finding("no_transcript", f"{harness} keeps no transcript agentwatch can read")
            result.findings.append(result.problem)
            return result
        try:
            transcript = transcripts.read(harness, path, check_root=check_root, max_bytes=max_bytes,
                                          session_id=session_id)
        except TranscriptProblem as exc:
            result.problem = Finding(exc.code, exc.detail, file=path)
            result.findings.append(result.problem)
            return result
    result.transcript = transcript
    pair(result, transcript, recorded)
    return result


def pair(result: SessionCoverage, transcript: Transcript, recorded: list[Recorded]) -> None:
    calls = [c for c in transcript.calls if c.hooked]
    result.not_hooked = len(transcript.calls) - len(calls)
    by_id = transcript.has_ids and any(r.call_id for r in recorded)
    matches: list[tuple[Call, Recorded]] = []
    left = list(recorded)
    unmatched: list[Call] = []
    if by_id:
        index = {r.call_id: r for r in recorded if r.call_id}
        for call in calls:
            rec = index.pop(call.call_id, None) if call.call_id else None
            if rec is None:
                unmatched.append(call)
            else:
                matches.append((call, rec))
        used = {id(r) for _, r in matches}
        left = [r for r in recorded if id(r) not in used]
    else:
        unmatched = list(calls)
    if unmatched and left:
        # No ids (or calls without one): the same tool, the same input first; then in order.
        for exact in (True, False):
            for call in list(unmatched):
                for rec in left:
                    if rec.tool != call.tool:
                        continue
                    if exact and not (transcript.input_comparable and rec.has_input
                                      and call_digest(call) == _digest(rec.input)):
                        continue
                    matches.append((call, rec))
                    unmatched.remove(call)
                    left.remove(rec)
                    break
    result.both = len(matches)
    result.missing = sorted(unmatched, key=lambda c: (c.file, c.line))
    # Claude Code keeps a subagent's calls in the subagent's own transcript: a recorded call of a
    # subagent that the session's transcript lacks is not an extra call.
    result.extra = [r for r in left if not r.subagent]
    result.subagent_unpaired = len(left) - len(result.extra)
    for call, rec in matches:
        differs = []
        if call.tool != rec.tool:
            differs.append({"field": "tool", "transcript": call.tool, "recorded": rec.tool})
        if call.outcome is not None and rec.outcome in ("ok", "error", "denied", "interrupted"):
            if (call.outcome == "ok") != (rec.outcome == "ok"):
                differs.append({"field": "outcome", "transcript": call.outcome, "recorded": rec.outcome})
        if (transcript.input_comparable and rec.has_input and (call.input is not None or call.input_digest)
                and call_digest(call) != _digest(rec.input)):
            differs.append({"field": "input", "transcript": call_digest(call), "recorded": _digest(rec.input)})
        if differs:
            result.mismatched.append({"call_id": call.call_id, "tool": call.tool, "line": call.line,
                                      "seq": rec.first_seq, "differs": differs})
    for call in result.missing:
        result.findings.append(Finding("missing", f"{call.tool} call in the transcript has no record",
                                       call.call_id, call.tool, call.file or transcript.path, call.line))
    for rec in result.extra:
        result.findings.append(Finding("extra", f"recorded {rec.tool} call is not in the transcript",
                                       rec.call_id, rec.tool, seq=rec.first_seq))
    for m in result.mismatched:
        fields = ", ".join(d["field"] for d in m["differs"])
        result.findings.append(Finding("mismatched", f"{m['tool']} call differs in {fields}", m["call_id"], m["tool"],
                                       transcript.path, m["line"], m["seq"]))


def call_digest(call: Call) -> str:
    return call.input_digest or _digest(call.input)


def _digest(value: Any) -> str:
    import hashlib

    try:
        data = canonical_json(value)
    except ValueError:
        data = repr(value).encode("utf-8", "backslashreplace")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sessions_in(conn: apsw.Connection, *, session: Optional[str] = None,
                since_ns: Optional[int] = None) -> list[tuple[str, str]]:
    """(harness, session_id) of the sessions to check: one by id (or id prefix), or those active since."""
    if session is not None:
        rows: list[Any] = conn.execute(
            "SELECT DISTINCT harness, session_id FROM records WHERE kind = 'event' AND session_id = ?",
            (session,)).fetchall()
        if not rows:
            rows = conn.execute(
                "SELECT DISTINCT harness, session_id FROM records WHERE kind = 'event' AND session_id LIKE ? "
                "ESCAPE '\\'", (session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",)
            ).fetchall()
        return [(str(h), str(s)) for h, s in rows]
    args: list[Any] = []
    having = ""
    if since_ns is not None:
        having = "HAVING max(recorded_at_ns) >= ?"
        args.append(since_ns)
    rows2: list[Any] = conn.execute(
        "SELECT harness, session_id FROM records WHERE kind = 'event' AND session_id IS NOT NULL "
        f"GROUP BY harness, session_id {having} ORDER BY min(seq)", args).fetchall()
    return [(h, s) for h, s in rows2]


MAX_SUPPLIED_CALLS = 20_000


def supplied_document(transcript: Transcript) -> dict:
    """What the user's side hands the daemon (the service deployment): the transcript's digest and call list,
    each call's input as a digest only."""
    return {"path": transcript.path, "format": transcript.format, "sha256": transcript.sha256,
            "bytes": transcript.bytes, "has_ids": transcript.has_ids, "input_comparable": transcript.input_comparable,
            "calls": [{"call_id": c.call_id, "tool": c.tool, "outcome": c.outcome, "line": c.line,
                       "input_sha256": call_digest(c), **({"file": c.file} if c.file else {}),
                       **({} if c.hooked else {"hooked": False})} for c in transcript.calls]}


def supplied_transcript(harness: str, doc: Any) -> Transcript:
    """A transcript as the user's side supplied it. Raises ValueError for a document of another shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("calls"), list):
        raise ValueError("transcript must be an object with a calls list")
    if len(doc["calls"]) > MAX_SUPPLIED_CALLS:
        raise ValueError(f"more than {MAX_SUPPLIED_CALLS} calls")
    calls = []
    for i, c in enumerate(doc["calls"]):
        if not isinstance(c, dict) or not isinstance(c.get("tool"), str):
            raise ValueError(f"calls[{i}] has no tool name")
        line = c.get("line")
        digest = c.get("input_sha256")
        calls.append(Call(c.get("call_id") if isinstance(c.get("call_id"), str) else None, c["tool"], None,
                          c.get("outcome") if c.get("outcome") in ("ok", "error") else None,
                          line if isinstance(line, int) else i + 1, str(c.get("file") or ""),
                          c.get("hooked", True) is not False, digest if isinstance(digest, str) else None))
    return Transcript(harness, str(doc.get("path") or ""), str(doc.get("format") or "supplied"),
                      str(doc.get("sha256") or ""), doc["bytes"] if isinstance(doc.get("bytes"), int) else 0, calls,
                      doc.get("has_ids") is not False, doc.get("input_comparable") is True)


# Another source of evidence (a process witness, say) adds its findings to each session's result.
Source = Callable[[apsw.Connection, SessionCoverage], None]


def sessions_page_in(conn: apsw.Connection, *, since_ns: Optional[int], limit: Optional[int],
                     before_seq: Optional[int]) -> tuple[list[tuple[str, str]], Optional[int]]:
    """A page of sessions, as `agentwatch sessions` pages them: the `limit` whose last event is newest
    (and below `before_seq`), ordered by their last event, and the next page's `before_seq` (this
    page's smallest last seq) when another session remains, else None."""
    where: list[str] = ["kind = 'event'", "session_id IS NOT NULL"]
    args: list[Any] = []
    having: list[str] = []
    if before_seq is not None:
        having.append("max(seq) < ?")
        args.append(before_seq)
    if since_ns is not None:
        having.append("max(recorded_at_ns) >= ?")
        args.append(since_ns)
    rows: list[Any] = conn.execute(
        f"SELECT harness, session_id, max(seq) FROM records WHERE {' AND '.join(where)} GROUP BY harness, session_id "
        f"{'HAVING ' + ' AND '.join(having) if having else ''} ORDER BY max(seq) DESC"
        f"{' LIMIT ?' if limit is not None else ''}", [*args, *([limit + 1] if limit is not None else [])]).fetchall()
    more = limit is not None and len(rows) > limit
    page = rows[:limit] if limit is not None else rows
    page.reverse()
    next_before = (page[0][2] if page else before_seq) if more else None
    return [(h, s) for h, s, _ in page], next_before


def coverage(store: Any, *, session: Optional[str] = None, since_ns: Optional[int] = None,
             check_root: bool = True, sources: Sequence[Source] = (), limit: Optional[int] = None,
             before_seq: Optional[int] = None, page: Optional[list] = None) -> list[SessionCoverage]:
    """Coverage of one session (id or prefix), or of every session active since `since_ns` (None: all).

    Each of `sources` is called with the read connection and every session's result, and may
    append Findings of its own kinds (with its own `source` name) to `result.findings`.
    With `limit` or `before_seq`, one page of the sessions (`sessions_page_in`); the next page's
    `before_seq`, or None, is appended to `page` when one is given.
    """
    from agentwatch.errors import UsageError
    from agentwatch.store import db

    conn = db.open_reader(store)
    try:
        if limit is not None or before_seq is not None:
            if session is not None:
                raise UsageError("--limit and --before page the list of sessions; not with SESSION")
            found, next_before = sessions_page_in(conn, since_ns=since_ns, limit=limit, before_seq=before_seq)
            if page is not None:
                page.append(next_before)
        else:
            found = sessions_in(conn, session=session, since_ns=since_ns)
        if session is not None and not found:
            raise UsageError(f"no session {session!r} in this store (see `agentwatch sessions`)")
        results = [session_coverage(conn, h, s, check_root=check_root) for h, s in found]
        for extend in sources:
            for result in results:
                extend(conn, result)
        return results
    finally:
        conn.close()
