"""Records as OpenTelemetry traces, after the GenAI semantic conventions.

Mapping (docs/export.md):

- one trace per session: trace id from (store id, harness, session id);
- one `invoke_agent {harness}` span (kind INTERNAL) per turn: from a prompt to the
  `stop` that ends it (or the next prompt, or the session's end); the prompt, the
  permission decisions and the compactions inside it are its span events;
- one `execute_tool {tool}` span (kind INTERNAL) per tool call, start and end as
  one span (the `tool_calls` view pairs them), a child of the turn it started in,
  with `gen_ai.tool.name` and `gen_ai.tool.call.id`; its arguments and result
  only when the user opts in (`content=True`), since they may hold what a person
  would not send to a telemetry backend.

Each span is made at exactly one record: the one that closes it (a tool call's
end, a turn's stop). A reader that consumes records in seq order therefore
makes each span exactly once, and one that resumes after seq N makes exactly
the spans closed after N. Span and trace ids are derived from the store, so the
same span always has the same ids.

This module builds plain `Span` values; `encode` turns them into an OTLP
`ExportTraceServiceRequest` with the OpenTelemetry project's protobuf classes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import apsw

from agentwatch import __version__
from agentwatch.readers import sessions
from agentwatch.store import db
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries

# Where a harness implies who serves the model (gen_ai.provider.name); others leave it out.
PROVIDERS = {"claude-code": "anthropic", "codex": "openai", "gemini-cli": "gcp.gemini"}
KIND_INTERNAL = 1
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
TURN_EVENT_KINDS = ("prompt", "permission", "compact")
EVENT_NAMES = {"prompt": "agentwatch.prompt", "permission": "agentwatch.permission", "compact": "agentwatch.compaction"}


@dataclass
class Event:
    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Span:
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    status: int = STATUS_UNSET
    status_message: str = ""
    closed_by: int = 0  # the seq of the record that made this span


def _digest(*parts: Any) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big") + data)
    return h.digest()


def trace_id(store_id: bytes, harness: str, session_id: str) -> bytes:
    return _digest(b"agentwatch-otlp-trace-v1", store_id, harness, session_id)[:16]


def turn_span_id(store_id: bytes, harness: str, session_id: str, prompt_seq: Optional[int]) -> bytes:
    return _digest(b"agentwatch-otlp-turn-v1", store_id, harness, session_id, prompt_seq or 0)[:8]


def tool_span_id(store_id: bytes, first_seq: int) -> bytes:
    return _digest(b"agentwatch-otlp-tool-v1", store_id, first_seq)[:8]


def _when(doc: dict, recorded_at_ns: int) -> int:
    """The moment an event happened: the hook's clock when it sent one, else the commit time."""
    observed = (doc.get("client") or {}).get("ts_observed_ns")
    return observed if isinstance(observed, int) and observed > 0 else recorded_at_ns


class Mapper:
    """Spans closed by the records of a batch, read with one read-only connection."""

    def __init__(self, conn: apsw.Connection, store_id: bytes, *, content: bool = False):
        self.conn = conn
        self.store_id = store_id
        self.content = content

    def spans(self, records: Iterable) -> list[Span]:
        out: list[Span] = []
        ends: dict[tuple[str, str], list[int]] = {}
        for record in records:
            if record.kind != "event":
                continue
            doc = json.loads(record.payload)
            harness, session_id = doc.get("harness"), doc.get("session_id")
            if not isinstance(harness, str) or not isinstance(session_id, str):
                continue
            kind = (doc.get("event") or {}).get("kind")
            if kind in ("tool_post", "tool_error"):
                ends.setdefault((harness, session_id), []).append(record.seq)
            elif kind in ("stop", "session_end", "prompt"):
                turn = self._turn_closed_by(harness, session_id, record.seq, kind)
                if turn is not None:
                    out.append(turn)
        for (harness, session_id), seqs in ends.items():
            prompts = self._prompt_seqs(harness, session_id, max(seqs))
            for call in sessions.calls_ending_at(self.conn, harness, session_id, seqs):
                out.append(self._tool_span(harness, session_id, call, prompts))
        out.sort(key=lambda s: (s.closed_by, s.name))
        return out

    # -- turns -------------------------------------------------------------------------

    def _turn_closed_by(self, harness: str, session_id: str, seq: int, kind: str) -> Optional[Span]:
        """The turn a stop or session end closes; a prompt closes the turn before it if nothing else did."""
        rows = self.conn.execute(
            "SELECT seq, event_kind FROM records WHERE session_id = ? AND harness = ? AND kind = 'event' "
            "AND seq < ? AND event_kind IN ('prompt', 'stop', 'session_end') ORDER BY seq DESC LIMIT 1",
            (session_id, harness, seq),
        ).fetchone()
        last_seq, last_kind = rows if rows else (None, None)
        if kind == "prompt":
            if last_kind != "prompt":
                return None  # the turn before was closed already (or there was none)
            return self._turn(harness, session_id, last_seq, self._last_before(harness, session_id, seq), seq)
        if last_kind in ("stop", "session_end"):
            return None  # a second stop (or an end after a stop) closes nothing new
        return self._turn(harness, session_id, last_seq, seq, seq)

    def _last_before(self, harness: str, session_id: str, seq: int) -> int:
        return db.one(self.conn.execute(
            "SELECT max(seq) FROM records WHERE session_id = ? AND harness = ? AND kind = 'event' AND seq < ?",
            (session_id, harness, seq),
        ))[0]

    def _turn(self, harness: str, session_id: str, prompt_seq: Optional[int], last_seq: int, closed_by: int) -> Span:
        first = prompt_seq
        if first is None:  # a turn before any prompt: from the session's first event
            first = db.one(self.conn.execute(
                "SELECT min(seq) FROM records WHERE session_id = ? AND harness = ? AND kind = 'event'",
                (session_id, harness),
            ))[0]
        rows: list[Any] = self.conn.execute(
            f"SELECT seq, recorded_at_ns, event_kind, {DOCUMENT_COLUMNS} FROM records WHERE session_id = ? AND harness = ? "
            "AND kind = 'event' AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, harness, first, last_seq),
        ).fetchall()
        document = Dictionaries.of(self.conn).document
        docs = [(seq, at, kind, json.loads(document(payload, dict_id, z))) for seq, at, kind, payload, dict_id, z in rows]
        start = _when(docs[0][3], docs[0][1])
        end = max(start, _when(docs[-1][3], docs[-1][1]))
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": harness,
            "gen_ai.conversation.id": session_id,
        }
        if harness in PROVIDERS:
            attrs["gen_ai.provider.name"] = PROVIDERS[harness]
        for _, _, _, doc in docs:
            if isinstance(doc.get("model"), str):
                attrs["gen_ai.request.model"] = doc["model"]
                break
        for _, _, _, doc in docs:
            if isinstance(doc.get("turn_id"), str):
                attrs["agentwatch.turn.id"] = doc["turn_id"]
                break
        attrs["agentwatch.seq.first"] = first
        attrs["agentwatch.seq.last"] = last_seq
        span = Span(trace_id(self.store_id, harness, session_id),
                    turn_span_id(self.store_id, harness, session_id, prompt_seq), b"",
                    f"invoke_agent {harness}", start, end, attrs, closed_by=closed_by)
        for seq, at, kind, doc in docs:
            if kind in TURN_EVENT_KINDS:
                span.events.append(self._event(seq, at, kind, doc))
        if docs[-1][2] == "stop" and (docs[-1][3].get("event") or {}).get("name") == "StopFailure":
            span.status, span.status_message = STATUS_ERROR, "StopFailure"
            attrs["error.type"] = "StopFailure"
        return span

    def _event(self, seq: int, at: int, kind: str, doc: dict) -> Event:
        attrs: dict[str, Any] = {"agentwatch.seq": seq, "agentwatch.event.name": (doc.get("event") or {}).get("name")}
        if kind == "prompt":
            prompt = doc.get("prompt") or {}
            if "length" in prompt:
                attrs["agentwatch.prompt.length"] = prompt["length"]
            if "sha256" in prompt:
                attrs["agentwatch.prompt.sha256"] = prompt["sha256"]
            text = sessions.prompt_text(doc)
            if self.content and text is not None:
                attrs["agentwatch.prompt.text"] = text
        elif kind == "permission":
            decision = doc.get("decision") or {}
            tool = doc.get("tool") or {}
            for key, value in (("agentwatch.decision", decision.get("value")),
                               ("agentwatch.decision.source", decision.get("source")),
                               ("gen_ai.tool.name", tool.get("name")),
                               ("gen_ai.tool.call.id", tool.get("call_id"))):
                if isinstance(value, str):
                    attrs[key] = value
        return Event(EVENT_NAMES[kind], _when(doc, at), {k: v for k, v in attrs.items() if v is not None})

    # -- tool calls --------------------------------------------------------------------

    def _tool_span(self, harness: str, session_id: str, call: "sessions.Call", prompts: list[int]) -> Span:
        start_doc, end_doc = call.start_doc, call.end_doc
        assert end_doc is not None and call.end_ns is not None and call.end_seq is not None, "a span ends a call"
        start = _when(start_doc, call.start_ns) if start_doc and call.start_ns is not None else _when(end_doc, call.end_ns)
        end = _when(end_doc, call.end_ns)
        if call.duration_ms is not None:
            end = start + int(call.duration_ms * 1_000_000)
        end = max(start, end)
        tool = (start_doc or end_doc or {}).get("tool") or {}
        end_tool = (end_doc or {}).get("tool") or {}
        name = tool.get("name") if isinstance(tool.get("name"), str) else "unknown"
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "extension" if tool.get("mcp_server") else "function",
            "gen_ai.agent.name": harness,
            "gen_ai.conversation.id": session_id,
        }
        if call.call_id:
            attrs["gen_ai.tool.call.id"] = call.call_id
        for key, value in (("agentwatch.tool.category", tool.get("category")),
                           ("agentwatch.tool.mcp_server", tool.get("mcp_server")),
                           ("agentwatch.seq.start", call.start_seq), ("agentwatch.seq.end", call.end_seq),
                           ("agentwatch.outcome", call.outcome)):
            if value is not None:
                attrs[key] = value
        if self.content:
            if "input" in tool:
                attrs["gen_ai.tool.call.arguments"] = _json_text(tool["input"])
            if "response" in end_tool and call.outcome == "ok":
                attrs["gen_ai.tool.call.result"] = _json_text(end_tool["response"])
        span = Span(trace_id(self.store_id, harness, session_id), tool_span_id(self.store_id, call.first_seq),
                    turn_span_id(self.store_id, harness, session_id, _last_at_or_before(prompts, call.first_seq)),
                    f"execute_tool {name}", start, end, attrs, closed_by=call.end_seq)
        if call.outcome in ("error", "denied", "interrupted"):
            attrs["error.type"] = call.outcome if call.outcome != "error" else "tool_error"
            span.status = STATUS_ERROR
            span.status_message = sessions.result_summary(end_tool.get("response"))[:256] if self.content else call.outcome
        return span

    def _prompt_seqs(self, harness: str, session_id: str, upto: int) -> list[int]:
        """The seqs of a session's prompts up to `upto`, in order: one read per session and batch."""
        return [seq for (seq,) in self.conn.execute(
            "SELECT seq FROM records WHERE session_id = ? AND harness = ? AND kind = 'event' "
            "AND event_kind = 'prompt' AND seq <= ? ORDER BY seq",
            (session_id, harness, upto),
        )]


def _last_at_or_before(seqs: list[int], seq: int) -> Optional[int]:
    """The turn a call started in: the last prompt at or before it (None: before any prompt)."""
    i = bisect.bisect_right(seqs, seq)
    return seqs[i - 1] if i else None


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


# -- protobuf ------------------------------------------------------------------------


def encode(spans: list[Span], store_id: bytes) -> bytes:
    """An OTLP ExportTraceServiceRequest holding `spans`, serialized."""
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2

    request = trace_service_pb2.ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    _attributes(rs.resource.attributes, {"service.name": "agentwatch", "agentwatch.store_id": store_id.hex()},
                common_pb2)
    ss = rs.scope_spans.add()
    ss.scope.name = "agentwatch"
    ss.scope.version = __version__
    for s in spans:
        span = ss.spans.add()
        span.trace_id = s.trace_id
        span.span_id = s.span_id
        if s.parent_span_id:
            span.parent_span_id = s.parent_span_id
        span.name = s.name
        span.kind = trace_pb2.Span.SPAN_KIND_INTERNAL
        span.start_time_unix_nano = s.start_ns
        span.end_time_unix_nano = s.end_ns
        _attributes(span.attributes, s.attributes, common_pb2)
        for e in s.events:
            event = span.events.add()
            event.name = e.name
            event.time_unix_nano = e.time_ns
            _attributes(event.attributes, e.attributes, common_pb2)
        span.status.code = s.status
        if s.status_message:
            span.status.message = s.status_message
    return request.SerializeToString()


def _attributes(target, attrs: dict[str, Any], common_pb2) -> None:
    for key, value in attrs.items():
        kv = target.add()
        kv.key = key
        _set_value(kv.value, value)


def _set_value(any_value, value: Any) -> None:
    if isinstance(value, bool):
        any_value.bool_value = value
    elif isinstance(value, int) and -(1 << 63) <= value < (1 << 63):
        any_value.int_value = value
    elif isinstance(value, float):
        any_value.double_value = value
    else:
        any_value.string_value = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def decode_response(body: bytes) -> int:
    """The number of spans an OTLP receiver says it rejected (partial success), 0 when it says nothing."""
    if not body:
        return 0
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    response = trace_service_pb2.ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:  # a receiver's body that is not the response message: nothing to count
        return 0
    return response.partial_success.rejected_spans
