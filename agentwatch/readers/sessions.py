"""Sessions and their timelines, read from the store: the one place that queries them.

`list_sessions` gives one summary per (harness, session_id); `timeline` gives one
item per prompt, per tool call (a start and its end as one item, through the
`tool_calls` view, docs/schema.md) and per other event of note. Everything
that knows the `tool_calls` view's columns is in this module, so a change of
the view changes this file only. The columns read: `harness`, `session_id`,
`first_seq`, `tool_name`, `call_id`, `start_seq`, `end_seq`, `outcome` (`ok`,
`error`, `denied`, `interrupted`, `open`) and `duration_ms`.

Reads are short statements on a read-only connection (readers never migrate
and never pin the WAL for long).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, cast

import apsw

from agentwatch.coverage import rows as coverage_rows
from agentwatch.errors import UsageError
from agentwatch.readers import schema_guard
from agentwatch.store import db
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries

# Outcomes a tool call can have (the tool_calls view's `outcome`).
OUTCOMES = ("ok", "error", "denied", "interrupted", "open")
# Event kinds that get a line of their own in a timeline, besides prompts and tool calls.
NOTABLE_KINDS = ("session_start", "session_end", "permission", "compact", "stop", "subagent_start",
                 "subagent_end", "notification")
TOOL_KINDS = ("tool_pre", "tool_post", "tool_error")


@dataclass
class SessionSummary:
    harness: str
    session_id: str
    cwd: Optional[str]
    started_ns: int
    last_ns: int
    events: int
    prompts: int
    tool_calls: int = 0
    failures: int = 0
    denials: int = 0
    last_event: Optional[str] = None
    first_seq: int = 0
    last_seq: int = 0
    coverage: Optional[str] = None  # the newest coverage row's summary ("20/20 recorded"), None: not checked
    erased: int = 0  # its records whose payload was erased (docs/erasure.md): they stay counted

    @property
    def duration_s(self) -> float:
        return (self.last_ns - self.started_ns) / 1e9

    def to_json(self) -> dict:
        return {
            "harness": self.harness, "session_id": self.session_id, "cwd": self.cwd,
            "started_ns": self.started_ns, "last_ns": self.last_ns, "duration_s": round(self.duration_s, 3),
            "events": self.events, "prompts": self.prompts, "tool_calls": self.tool_calls,
            "failures": self.failures, "denials": self.denials, "last_event": self.last_event,
            "first_seq": self.first_seq, "last_seq": self.last_seq, "coverage": self.coverage,
            "erased": self.erased,
        }


def parse_since(since: str, now_ns: Optional[int] = None) -> int:
    """`--since`: an age (30s, 30m, 2h, 7d) before now, or an ISO 8601 time (UTC unless it names a zone)."""
    import re
    from datetime import datetime, timezone

    m = re.fullmatch(r"(\d+)\s*([smhd])", since.strip())
    if m:
        seconds = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return (time.time_ns() if now_ns is None else now_ns) - seconds * 1_000_000_000
    try:
        when = datetime.fromisoformat(since.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since {since!r}: expected an age (30m, 2h, 7d) or an ISO 8601 time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


@schema_guard.store_errors
def list_sessions(store: Path, *, since_ns: Optional[int] = None, harness: Optional[str] = None,
                  limit: Optional[int] = None, before_seq: Optional[int] = None) -> list[SessionSummary]:
    """One summary per session that has an event at or after `since_ns`, oldest first.

    With `limit`, only the `limit` sessions whose last event is newest (and before `before_seq`,
    the previous page's smallest `last_seq`, when given): found by reading the records back from
    the head, so a page costs what its sessions hold, not what the store holds.
    """
    if limit is not None or before_seq is not None:
        return _page(store, since_ns, harness, limit, before_seq)[0]
    conn = schema_guard.open_reader(store)
    try:
        where: list[str] = ["kind = 'event'", "session_id IS NOT NULL"]
        args: list[Any] = []
        if harness is not None:
            where.append("harness = ?")
            args.append(harness)
        having = ""
        if since_ns is not None:
            having = "HAVING max(recorded_at_ns) >= ?"
            args.append(since_ns)
        rows: list[Any] = conn.execute(
            f"""SELECT harness, session_id, min(recorded_at_ns), max(recorded_at_ns), count(*),
                       sum(event_kind = 'prompt'),
                       sum(json_extract(payload, '$.decision.value') = 'deny'),
                       min(seq), max(seq)
                FROM records WHERE {' AND '.join(where)}
                GROUP BY harness, session_id {having}
                ORDER BY min(seq)""",
            args,
        ).fetchall()
        erased, covered = _erased_by_session(conn), coverage_rows.coverage_by_session(conn)
        return [_summary(conn, row, erased, covered) for row in rows]
    finally:
        conn.close()


def _erased_by_session(conn: apsw.Connection) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for erasure in erasures(conn):
        key = (erasure["harness"] or "", erasure["session_id"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _summary(conn: apsw.Connection, row: Any, erased: dict[tuple[str, str], int], covered: dict) -> SessionSummary:
    h, sid, first_ns, last_ns, events, prompts, denials, first_seq, last_seq = row
    cwd, last_event = db.one(conn.execute(
        "SELECT (SELECT json_extract(payload, '$.cwd') FROM records WHERE session_id = ?1 AND harness = ?2 "
        "        AND kind = 'event' AND json_extract(payload, '$.cwd') IS NOT NULL ORDER BY seq LIMIT 1), "
        "       (SELECT event_name FROM records WHERE seq = ?3)",
        (sid, h, last_seq),
    ))
    summary = SessionSummary(h or "", sid, cwd, first_ns, last_ns, events, prompts or 0,
                             denials=denials or 0, last_event=last_event, first_seq=first_seq,
                             last_seq=last_seq)
    summary.coverage = (covered.get((h or "", sid)) or {}).get("summary")
    calls = _call_outcomes(conn, h, sid)
    summary.tool_calls = sum(calls.values())
    summary.failures = calls.get("error", 0)
    if calls.get("denied"):
        summary.denials = _denials(conn, h, sid)
    summary.erased = erased.get((h or "", sid), 0)
    return summary


_PAGE_READ = 4096  # records read back from the head at a time while a page is filled


def sessions_page(store: Path, *, since_ns: Optional[int] = None, harness: Optional[str] = None,
                  limit: Optional[int] = None, before_seq: Optional[int] = None
                  ) -> tuple[list[SessionSummary], Optional[int]]:
    """list_sessions, and where the next page starts (`before_seq` for it: this page's smallest
    `last_seq`) when sessions remain past a page of `limit`, else None."""
    if limit is None and before_seq is None:
        return list_sessions(store, since_ns=since_ns, harness=harness), None
    return _page(store, since_ns, harness, limit, before_seq)


def _page(store: Path, since_ns: Optional[int], harness: Optional[str], limit: Optional[int],
          before_seq: Optional[int]) -> tuple[list[SessionSummary], Optional[int]]:
    """The newest `limit` sessions (by last event) before `before_seq`, oldest first, and the next
    page's `before_seq` when another session remains (one more is looked for, not summarized)."""
    conn = schema_guard.open_reader(store)
    try:
        erased, covered = _erased_by_session(conn), coverage_rows.coverage_by_session(conn)
        cursor = before_seq if before_seq is not None else _head(conn) + 1
        seen: set[tuple[str, str]] = set()
        found: list[tuple[str, str]] = []
        done = limit is not None and limit <= 0
        while not done:
            rows: list[Any] = conn.execute(
                "SELECT seq, harness, session_id, recorded_at_ns FROM records WHERE seq < ? AND kind = 'event' "
                "AND session_id IS NOT NULL ORDER BY seq DESC LIMIT ?", (cursor, _PAGE_READ)).fetchall()
            if not rows:
                break
            for _seq, h, sid, at_ns in rows:
                if since_ns is not None and at_ns < since_ns:
                    done = True  # records are in time order: every later one is older still
                    break
                key = (h, sid)
                if key in seen or (harness is not None and h != harness):
                    continue
                seen.add(key)
                if before_seq is not None and conn.execute(
                        "SELECT 1 FROM records WHERE session_id = ? AND harness IS ? AND kind = 'event' AND seq >= ? "
                        "LIMIT 1", (sid, h, before_seq)).fetchone():
                    continue  # its last event is on an earlier page
                found.append(key)
                if limit is not None and len(found) > limit:
                    done = True
                    break
            cursor = rows[-1][0]
        more = limit is not None and len(found) > limit
        found = found[:limit] if limit is not None else found
        summaries = []
        for h, sid in found:
            row = db.one(conn.execute(
                "SELECT harness, session_id, min(recorded_at_ns), max(recorded_at_ns), count(*), "
                "sum(event_kind = 'prompt'), sum(json_extract(payload, '$.decision.value') = 'deny'), "
                "min(seq), max(seq) FROM records WHERE session_id = ? AND harness IS ? AND kind = 'event'",
                (sid, h)))
            summaries.append(_summary(conn, row, erased, covered))
        summaries.sort(key=lambda summary: summary.first_seq)
        if not more:
            return summaries, None
        return summaries, (min(x.last_seq for x in summaries) if summaries else
                           before_seq if before_seq is not None else _head(conn) + 1)
    finally:
        conn.close()


def _call_outcomes(conn: apsw.Connection, harness: str, session_id: str) -> dict[str, int]:
    # The view partitions every window by session_id, so this filter reaches the index.
    return dict(cast(Any, conn.execute(
        "SELECT outcome, count(*) FROM tool_calls "
        "WHERE session_id = ? AND harness = ? GROUP BY 1",
        (session_id, harness),
    ).fetchall()))


def _denials(conn: apsw.Connection, harness: str, session_id: str) -> int:
    """Records that deny: a permission decision `deny`, or the end of a call the view calls denied;
    one record that is both counts once."""
    return db.one(conn.execute(
        "SELECT count(*) FROM ("
        " SELECT seq FROM records WHERE session_id = ?1 AND harness = ?2 AND kind = 'event'"
        "  AND json_extract(payload, '$.decision.value') = 'deny'"
        " UNION SELECT coalesce(end_seq, start_seq) FROM tool_calls WHERE session_id = ?1 AND harness = ?2"
        "  AND outcome = 'denied')",
        (session_id, harness),
    ))[0]


# -- one session's timeline ------------------------------------------------------------


@dataclass
class Item:
    """One timeline line: a prompt, a tool call (start and end together) or another event."""

    kind: str  # "prompt", "tool" or an event kind from NOTABLE_KINDS
    seq: int  # the item's first seq (a tool call's start, else its end)
    at_ns: int
    harness: str
    name: Optional[str] = None  # the tool name, or the event name
    summary: str = ""  # what it was about: the prompt, the tool input, a decision
    outcome: Optional[str] = None  # for tools: one of OUTCOMES
    duration_ms: Optional[float] = None
    end_seq: Optional[int] = None
    call_id: Optional[str] = None
    findings: list[dict] = field(default_factory=list)  # integrity findings naming one of its seqs
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def seqs(self) -> tuple[int, ...]:
        return (self.seq,) if self.end_seq is None or self.end_seq == self.seq else (self.seq, self.end_seq)

    def to_json(self) -> dict:
        doc = {"kind": self.kind, "seq": self.seq, "at_ns": self.at_ns, "harness": self.harness, "name": self.name,
               "summary": self.summary}
        if self.kind == "tool":
            doc.update(outcome=self.outcome, duration_ms=self.duration_ms, end_seq=self.end_seq, call_id=self.call_id)
        if self.findings:
            doc["findings"] = self.findings
        if self.detail:
            doc["detail"] = self.detail
        return doc


def resolve_session(conn: apsw.Connection, session: str, harness: Optional[str] = None) -> tuple[str, str]:
    """(harness, session_id) for a full id or an unambiguous prefix of one (of `harness`, when given)."""
    if not session.strip():
        raise UsageError("an empty session id: give a session id or a prefix of one (see `agentwatch sessions`)")
    rows: list[Any] = conn.execute(
        "SELECT DISTINCT harness, session_id FROM records WHERE session_id = ? AND kind = 'event'", (session,)
    ).fetchall()
    if not rows:
        # A prefix: a range on the index, never a scan of payloads.
        candidates: list[Any] = conn.execute(
            "SELECT DISTINCT harness, session_id FROM records WHERE session_id >= ? AND session_id < ? "
            "AND kind = 'event' LIMIT 10",
            (session, session + "\U0010ffff"),
        ).fetchall()
        rows = [r for r in candidates if r[1].startswith(session)]
    rows = sorted(tuple(r) for r in rows if harness is None or r[0] == harness)
    if not rows:
        raise UsageError(f"no session {session!r} in this store (see `agentwatch sessions`)")
    if len(rows) > 1:
        names = ", ".join(f"{h}:{s}" for h, s in rows[:3])
        raise UsageError(f"session {session!r} is ambiguous ({names}); give more of the id, or --harness")
    return rows[0][0], rows[0][1]


@schema_guard.store_errors
def resolve(store: Path, session: str, harness: Optional[str] = None) -> tuple[str, str]:
    """(harness, session_id) in the store for a full id or an unambiguous prefix (resolve_session)."""
    conn = schema_guard.open_reader(store)
    try:
        return resolve_session(conn, session, harness)
    finally:
        conn.close()


@schema_guard.store_errors
def timeline(store: Path, session: str, harness: Optional[str] = None) -> tuple[str, str, int, list[Item]]:
    """(harness, session_id, head seq read, items up to it in seq order) for one session."""
    conn = schema_guard.open_reader(store)
    try:
        harness, session_id = resolve_session(conn, session, harness)
        head = _head(conn)
        return harness, session_id, head, items(conn, harness, session_id, upto_seq=head)
    finally:
        conn.close()


def _head(conn: apsw.Connection) -> int:
    return db.one(conn.execute("SELECT coalesce(max(seq), 0) FROM records"))[0]


def follow_timeline(store: Path, harness: str, session_id: str, *, after_seq: int,
                    stop: Optional[threading.Event] = None) -> Iterator[list[Item]]:
    """New timeline items as they commit, until `stop`: each read is one short statement set,
    and between reads it waits for `PRAGMA data_version` to say another connection committed."""
    conn = schema_guard.open_reader(store)
    try:
        waiter = db.CommitWaiter(conn, _MIN_WAIT_S, _MAX_WAIT_S)
        while waiter.wait_for_commit(stop):
            head = _head(conn)
            if head > after_seq:
                batch = items(conn, harness, session_id, after_seq=after_seq, upto_seq=head)
                after_seq = head
                waiter.reset()
                if batch:
                    yield batch
    finally:
        conn.close()


_MIN_WAIT_S = 0.01
_MAX_WAIT_S = 0.25


def items(conn: apsw.Connection, harness: str, session_id: str, *, after_seq: int = 0,
          upto_seq: Optional[int] = None) -> list[Item]:
    """The timeline of one session for records in (after_seq, upto_seq]; a tool call sits where it starts.

    A call that started at or before `after_seq` and ended inside the range is
    given again, now with its outcome (a live follower prints its end); a call
    whose end is past `upto_seq` is `open`.
    """
    upto = _head(conn) if upto_seq is None else upto_seq
    findings = _findings(conn)
    out: list[Item] = []
    document = Dictionaries.of(conn).document
    for seq, at_ns, kind, name, payload, dict_id, z in conn.execute(
        f"SELECT seq, recorded_at_ns, event_kind, event_name, {DOCUMENT_COLUMNS} FROM records "
        "WHERE session_id = ? AND harness = ? AND kind = 'event' AND seq > ? AND seq <= ? "
        f"AND event_kind IN ('prompt', {','.join(repr(k) for k in NOTABLE_KINDS)}) ORDER BY seq",
        (session_id, harness, after_seq, upto),
    ):
        doc = json.loads(document(payload, dict_id, z))
        item = Item(kind, seq, at_ns, harness, name=name, summary=_event_summary(kind, doc))
        if kind == "permission":
            decision = doc.get("decision") or {}
            if decision.get("value"):
                item.detail["decision"] = decision.get("value")
        out.append(item)
    for row in _calls(conn, harness, session_id, after_seq, upto):
        out.append(row)
    for erasure in erasures(conn):
        # An erased record has lost the columns that placed it in this session; its erasure row
        # still names them, so it stays a marked line (docs/erasure.md).
        if (erasure["session_id"], erasure["harness"]) != (session_id, harness):
            continue
        if not after_seq < erasure["seq"] <= upto:
            continue
        name = erasure["tool_name"] or erasure["event_name"]
        out.append(Item("erased", erasure["seq"], erasure["at_ns"], harness, name=name,
                        summary=f"{name or 'a record'}: payload erased by seq {erasure['erasure_seq']}"
                                f" ({erasure['by']}): {erasure['reason']}",
                        detail={"erasure_seq": erasure["erasure_seq"], "by": erasure["by"],
                                "reason": erasure["reason"]}))
    for item in out:
        item.findings = [f for s in item.seqs for f in findings.get(s, [])]
    out.sort(key=lambda i: i.seq)
    return out


def erasures(conn: apsw.Connection) -> list[dict[str, Any]]:
    """Every erasure the store records (its erasure rows, read through their partial index: the `+`
    keeps SQLite from scanning the whole table in seq order instead), oldest
    first: the erased seq, when that record was recorded, what it was (harness, session, event, tool),
    the erasure row's seq and time, who erased it and why."""
    out = []
    try:
        rows = conn.execute(
            "SELECT e.seq, e.recorded_at_ns, CAST(e.payload AS BLOB), r.recorded_at_ns FROM records AS e "
            "LEFT JOIN records AS r ON r.seq = e.erased_seq WHERE e.erased_seq IS NOT NULL ORDER BY +e.seq").fetchall()
    except apsw.SQLError:
        return []  # a store from before erasure
    for erasure_seq, erased_at_ns, payload, at_ns in cast(Any, rows):
        try:
            doc = json.loads(payload)
        except (TypeError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("type") != "erasure" or type(doc.get("erased_seq")) is not int:
            continue
        described: dict = doc["described"] if isinstance(doc.get("described"), dict) else {}
        who: dict = doc["actor"] if isinstance(doc.get("actor"), dict) else {}
        by = who.get("by") or who.get("user") or (f"uid {who['uid']}" if "uid" in who else "unknown")
        out.append({"seq": doc["erased_seq"], "at_ns": at_ns or 0, "erasure_seq": erasure_seq,
                    "erased_at_ns": erased_at_ns, "harness": described.get("harness"),
                    "session_id": described.get("session_id"), "event_name": described.get("event_name"),
                    "tool_name": described.get("tool_name"), "by": str(by), "reason": str(doc.get("reason") or "")})
    return out


def _calls(conn: apsw.Connection, harness: str, session_id: str, after_seq: int, upto: int) -> Iterator[Item]:
    """Tool calls with a record in (after_seq, upto], from the `tool_calls` view."""
    for (first_seq, tool, call_id, start_seq, end_seq, outcome, duration_ms) in conn.execute(
        "SELECT first_seq, tool_name, call_id, start_seq, end_seq, outcome, duration_ms FROM tool_calls "
        "WHERE session_id = ?1 AND harness = ?2 AND first_seq <= ?4 "
        "AND (first_seq > ?3 OR (end_seq > ?3 AND end_seq <= ?4)) ORDER BY first_seq",
        (session_id, harness, after_seq, upto),
    ):
        if end_seq is not None and end_seq > upto:
            end_seq, duration_ms = None, None  # its end is past what this read covers
        outcome = call_outcome(outcome, end_seq)
        start = _doc(conn, start_seq)
        end = _doc(conn, end_seq)
        tool = (start or end or {}).get("tool") or {}
        at_ns = db.one(conn.execute("SELECT recorded_at_ns FROM records WHERE seq = ?", (first_seq,)))[0]
        item = Item("tool", first_seq, at_ns, harness, name=tool_name(tool), summary=input_summary(tool),
                    outcome=outcome, duration_ms=duration_ms, end_seq=end_seq, call_id=call_id)
        if start_seq is None:
            item.detail["unpaired"] = "end without a recorded start"
        if end is not None and outcome in ("error", "denied"):
            item.detail["error"] = result_summary(((end.get("tool") or {}).get("response")))
        yield item


def call_outcome(outcome: str, end_seq: Optional[int]) -> str:
    """The outcome to show: a call whose end lies past what was read is still `open`."""
    if end_seq is None and outcome in ("ok", "error"):
        return "open"
    return outcome


@dataclass
class Call:
    """One row of the tool_calls view with both records read: what an exporter needs."""

    first_seq: int
    call_id: Optional[str]
    start_seq: Optional[int]
    end_seq: Optional[int]
    outcome: str
    duration_ms: Optional[float]
    start_ns: Optional[int]
    end_ns: Optional[int]
    start_doc: Optional[dict]
    end_doc: Optional[dict]


def calls_ending_at(conn: apsw.Connection, harness: str, session_id: str, end_seqs: list[int]) -> list[Call]:
    """The tool calls of one session that the records `end_seqs` end, in seq order of their ends."""
    wanted = sorted(set(end_seqs))
    out = []
    for first_seq, call_id, start_seq, end_seq, outcome, duration_ms in conn.execute(
        "SELECT first_seq, call_id, start_seq, end_seq, outcome, duration_ms FROM tool_calls "
        f"WHERE session_id = ? AND harness = ? AND end_seq IN ({','.join('?' * len(wanted))}) ORDER BY end_seq",
        (session_id, harness, *wanted),
    ):
        start_ns = _recorded_at(conn, start_seq)
        end_ns = _recorded_at(conn, end_seq)
        out.append(Call(first_seq, call_id, start_seq, end_seq, call_outcome(outcome, end_seq),
                        duration_ms, start_ns, end_ns,
                        _doc(conn, start_seq), _doc(conn, end_seq)))
    return out


def _recorded_at(conn: apsw.Connection, seq: Optional[int]) -> Optional[int]:
    if seq is None:
        return None
    return db.one(conn.execute("SELECT recorded_at_ns FROM records WHERE seq = ?", (seq,)))[0]


def tool_name(tool: dict) -> Optional[str]:
    name = tool.get("name")
    return name if isinstance(name, str) else None


def _doc(conn: apsw.Connection, seq: Optional[int]) -> Optional[dict]:
    if seq is None:
        return None
    row = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM records WHERE seq = ?", (seq,)).fetchone()
    return json.loads(Dictionaries.of(conn).document(*row)) if row else None


def _findings(conn: apsw.Connection) -> dict[int, list[dict]]:
    """Integrity findings recorded in the store (integrity_break attestations), by the seq they name."""
    out: dict[int, list[dict]] = {}
    for (text,) in conn.execute(
        "SELECT json_extract(payload, '$.finding') FROM records WHERE kind = 'attestation' "
        "AND json_extract(payload, '$.type') = 'integrity_break'"
    ):
        try:
            finding = json.loads(text)
        except (TypeError, ValueError):
            continue
        if isinstance(finding, dict) and isinstance(finding.get("seq"), int):
            out.setdefault(finding["seq"], []).append(finding)
    return out


# -- short summaries -------------------------------------------------------------------

# Keys of a tool input that say best what a call did, in order of preference.
_INPUT_KEYS = ("command", "cmd", "file_path", "absolute_path", "path", "filePath", "files", "pattern", "query",
               "url", "prompt", "description", "server_name")


def input_summary(tool: dict) -> str:
    """One line about a tool's input: its most telling field, else compact JSON."""
    value = tool.get("input")
    if isinstance(value, dict):
        for key in _INPUT_KEYS:
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
            if isinstance(value.get(key), list) and value[key] and all(isinstance(v, str) for v in value[key]):
                return " ".join(value[key])
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True) if value else ""
    if value is None:
        digest = tool.get("input_sha256")
        return f"(input not stored: {digest})" if digest else ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def result_summary(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("error", "message", "stderr", "textResultForLlm"):
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def prompt_text(doc: dict) -> Optional[str]:
    """The prompt as the harness sent it (it is kept only in `raw`, redacted like the rest)."""
    raw = doc.get("raw")
    if not isinstance(raw, dict):
        return None
    for holder in (raw, raw.get("userPromptSubmit"), raw.get("data")):
        if isinstance(holder, dict):
            for key in ("prompt", "message", "initialPrompt"):
                if isinstance(holder.get(key), str):
                    return holder[key]
    return None


def _raw_text(doc: dict, keys: tuple[str, ...]) -> str:
    """The first of `keys` the harness sent as text (it is kept in `raw`, redacted like the rest)."""
    raw = doc.get("raw")
    if isinstance(raw, dict):
        for holder in (raw, raw.get("data")):
            if isinstance(holder, dict):
                for key in keys:
                    if isinstance(holder.get(key), str) and holder[key]:
                        return holder[key]
    return ""


def _event_summary(kind: str, doc: dict) -> str:
    if kind == "prompt":
        text = prompt_text(doc)
        if text is not None:
            return text
        prompt = doc.get("prompt") or {}
        return f"({prompt.get('length', '?')} characters, not stored)" if prompt else ""
    if kind == "permission":
        decision = doc.get("decision") or {}
        tool = doc.get("tool") or {}
        parts = [decision.get("value") or "asks", tool_name(tool) or "", input_summary(tool)]
        if decision.get("reason"):
            parts.append(f"(reason: {decision['reason']})")  # why it was denied, as the harness said
        return " ".join(str(p) for p in parts if p)
    if kind == "notification":
        return _raw_text(doc, ("message", "title", "notification_type", "notificationType"))
    if kind in ("subagent_start", "subagent_end"):
        agent = doc.get("agent") or {}
        return " ".join(str(v) for v in (agent.get("type"), agent.get("id")) if v)
    if kind == "session_start":
        return " ".join(str(v) for v in (doc.get("model"), doc.get("cwd")) if v)
    return ""


def coverage_of(store: Path, harness: str, session_id: str) -> Optional[dict]:
    """The newest `coverage` row of one session (its summary, counts and missing calls), None when unchecked."""
    conn = db.open_reader(store)
    try:
        return coverage_rows.coverage_by_session(conn, harness, session_id).get((harness, session_id))
    finally:
        conn.close()
