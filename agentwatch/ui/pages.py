"""The review pages as HTML strings: sessions, one session, one record, the store, SQL.

Every value that came from the store goes through `text.esc` (control characters dropped,
then html.escape with quotes), so neither markup nor a terminal-style escape in recorded
text can drive the browser. The
pages carry no script; styling comes from /static/app.css (the Content-Security-Policy
allows nothing else).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence
from urllib.parse import urlencode

from agentwatch.readers.sessions import OUTCOMES, Item, SessionSummary
from agentwatch.ui import timeline
from agentwatch.ui.text import esc

PAGE_SIZE = 50
MAX_SHOWN = 64 * 1024  # characters of one recorded value shown on a page; the record page links the rest


def clip(text: str, limit: int = MAX_SHOWN) -> tuple[str, int]:
    """(the first `limit` characters, how many were left out)."""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def when(ns: Optional[int]) -> str:
    if not ns:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ns / 1e9)) + "Z"


@dataclass
class Nav:
    """Where the pages live: every link carries the per-run token prefix."""

    base: str  # "/<token>"

    def url(self, path: str, **query: Any) -> str:
        q = {k: v for k, v in query.items() if v not in (None, "")}
        return f"{self.base}{path}" + (f"?{urlencode(q)}" if q else "")


def page(nav: Nav, title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{esc(title)} · agentwatch</title>"
        f"<link rel=\"stylesheet\" href=\"{esc(nav.url('/static/app.css'))}\"></head><body>"
        f"<nav><a href=\"{esc(nav.url('/'))}\">sessions</a> <a href=\"{esc(nav.url('/store'))}\">store</a> "
        f"<a href=\"{esc(nav.url('/sql'))}\">sql</a> <span class=\"ro\">read-only</span></nav>"
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )


def error_page(nav: Nav, title: str, message: str) -> str:
    return page(nav, title, f"<p class=\"error\">{esc(message)}</p>")


# -- sessions --------------------------------------------------------------------------

SORTS = {
    "started": lambda s: s.started_ns, "last": lambda s: s.last_ns, "calls": lambda s: s.tool_calls,
    "failures": lambda s: s.failures, "denials": lambda s: s.denials, "events": lambda s: s.events,
}
OUTCOME_FILTERS = ("failed", "denied", "clean")
COVERAGE_FILTERS = ("missing", "complete", "unchecked")


def coverage_state(s: SessionSummary) -> str:
    """`missing`, `complete` or `unchecked`, from the session's newest coverage row (its summary)."""
    summary = getattr(s, "coverage", None)
    if not summary:
        return "unchecked"
    return "missing" if "missing" in summary else "complete"


def filter_sessions(sessions: Iterable[SessionSummary], outcome: Optional[str],
                    coverage: Optional[str] = None) -> list[SessionSummary]:
    out = list(sessions)
    if coverage:
        out = [s for s in out if coverage_state(s) == coverage]
    if outcome == "failed":
        out = [s for s in out if s.failures]
    elif outcome == "denied":
        out = [s for s in out if s.denials]
    elif outcome == "clean":
        out = [s for s in out if not s.failures and not s.denials]
    return out


def sessions_page(nav: Nav, sessions: Sequence[SessionSummary], *, harness: str, since: str, outcome: str,
                  sort: str, order: str, page_no: int, harnesses: Sequence[str], coverage: str = "",
                  paged: Optional[tuple[Optional[int], Optional[int]]] = None) -> str:
    """The sessions table. `paged` (this page's `before` seq, the next older page's): the default
    newest-first view read a page at a time from the head; otherwise every session, sorted here."""
    rows = filter_sessions(sessions, outcome or None, coverage or None)
    rows.sort(key=SORTS.get(sort, SORTS["last"]), reverse=order != "asc")
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    page_no = min(max(page_no, 1), pages)
    shown = rows[(page_no - 1) * PAGE_SIZE: page_no * PAGE_SIZE]
    keep = {"harness": harness, "since": since, "outcome": outcome, "coverage": coverage}

    def sort_link(key: str, label: str) -> str:
        flip = "asc" if sort == key and order != "asc" else "desc"
        return f"<a href=\"{esc(nav.url('/', **keep, sort=key, order=flip))}\">{esc(label)}</a>"

    options = "".join(f"<option value=\"{esc(h)}\"{' selected' if h == harness else ''}>{esc(h)}</option>"
                      for h in ["", *harnesses])
    outcomes = "".join(f"<option value=\"{o}\"{' selected' if o == outcome else ''}>{o or 'any'}</option>"
                       for o in ("", *OUTCOME_FILTERS))
    coverages = "".join(f"<option value=\"{c}\"{' selected' if c == coverage else ''}>{c or 'any'}</option>"
                        for c in ("", *COVERAGE_FILTERS))
    form = (f"<form method=\"get\" action=\"{esc(nav.url('/'))}\" class=\"filters\">"
            f"<label>harness <select name=\"harness\">{options}</select></label> "
            f"<label>since <input name=\"since\" value=\"{esc(since)}\" placeholder=\"7d or 2026-01-31\"></label> "
            f"<label>outcome <select name=\"outcome\">{outcomes}</select></label> "
            f"<label>coverage <select name=\"coverage\">{coverages}</select></label> "
            "<button type=\"submit\">filter</button></form>")
    head = ("<tr><th>harness</th><th>session</th><th>cwd</th>"
            f"<th>{sort_link('started', 'started')}</th><th>{sort_link('last', 'last event')}</th>"
            f"<th>{sort_link('events', 'events')}</th><th>prompts</th><th>{sort_link('calls', 'calls')}</th>"
            f"<th>{sort_link('failures', 'failed')}</th><th>{sort_link('denials', 'denied')}</th>"
            "<th>coverage</th></tr>")
    body_rows = "".join(
        f"<tr class=\"session\"><td>{esc(s.harness)}</td>"
        f"<td><a href=\"{esc(nav.url('/session', harness=s.harness, id=s.session_id))}\">{esc(s.session_id)}</a></td>"
        f"<td class=\"path\">{esc(s.cwd)}</td><td>{esc(when(s.started_ns))}</td><td>{esc(when(s.last_ns))}</td>"
        f"<td class=\"n\">{s.events}</td><td class=\"n\">{s.prompts}</td><td class=\"n\">{s.tool_calls}</td>"
        f"<td class=\"n{' bad' if s.failures else ''}\">{s.failures}</td>"
        f"<td class=\"n{' warn' if s.denials else ''}\">{s.denials}</td>"
        f"<td class=\"coverage {coverage_state(s)}\">{esc(getattr(s, 'coverage', None) or '-')}</td></tr>"
        for s in shown
    )
    if paged is not None:
        before, older = paged
        pager = f"<p class=\"pager\">{len(rows)} sessions, newest first "
        if before is not None:
            pager += f"<a rel=\"first\" href=\"{esc(nav.url('/', **keep))}\">newest</a> "
        if older is not None:
            pager += f"<a rel=\"next\" href=\"{esc(nav.url('/', **keep, before=older))}\">older</a>"
        pager += "</p>"
        return page(nav, "sessions", form + f"<table class=\"sessions\">{head}{body_rows}</table>" + pager)
    pager = f"<p class=\"pager\">{len(rows)} sessions · page {page_no} of {pages} "
    if page_no > 1:
        pager += f"<a rel=\"prev\" href=\"{esc(nav.url('/', **keep, sort=sort, order=order, page=page_no - 1))}\">newer</a> "
    if page_no < pages:
        pager += f"<a rel=\"next\" href=\"{esc(nav.url('/', **keep, sort=sort, order=order, page=page_no + 1))}\">older</a>"
    pager += "</p>"
    return page(nav, "sessions", form + f"<table class=\"sessions\">{head}{body_rows}</table>" + pager)


# -- one session -----------------------------------------------------------------------

def _pre(value: Any, cls: str) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    shown, cut = clip(text)
    more = f"<p class=\"cut\">{cut} more characters on the record page</p>" if cut else ""
    return f"<pre class=\"{cls}\">{esc(shown)}</pre>{more}"


def coverage_section(coverage: Optional[dict]) -> str:
    """What the harness's own transcript says the record misses (the session's newest coverage row)."""
    if not coverage:
        return "<p class=\"meta\">coverage: not checked against the harness's transcript</p>"
    out = [f"<p class=\"meta\">coverage: <span class=\"coverage {'missing' if (coverage.get('counts') or {}).get('missing') else 'complete'}\">"
           f"{esc(coverage.get('summary'))}</span> (coverage row seq {esc(coverage.get('seq'))})</p>"]
    missing = coverage.get("missing") or []
    if missing:
        out.append("<table class=\"missing\"><tr><th>missing call</th><th>tool</th><th>transcript</th></tr>")
        for call in missing:
            where = f"{call.get('file') or ''}:{call.get('line') or ''}"
            out.append(f"<tr class=\"missing-call\"><td class=\"mono\">{esc(call.get('call_id'))}</td>"
                       f"<td>{esc(call.get('tool'))}</td><td class=\"mono\">{esc(where)}</td></tr>")
        out.append("</table>")
    return "".join(out)


def session_page(nav: Nav, harness: str, session_id: str, items: Sequence[Item],
                 docs: dict[int, dict], head_ns: Optional[int], coverage: Optional[dict] = None) -> str:
    calls = [i for i in items if i.kind == "tool"]
    counts = {o: sum(1 for c in calls if c.outcome == o) for o in OUTCOMES}
    legend = " ".join(f"<span class=\"legend {o}\">{o} {counts[o]}</span>" for o in OUTCOMES)
    findings = sum(1 for i in items if i.findings)
    summary = (f"<p class=\"meta\">{esc(harness)} · {len(calls)} tool calls · "
               f"{sum(1 for i in items if i.kind == 'prompt')} prompts · {legend}"
               + (f" · <span class=\"bad\">{findings} lines named by a finding</span>" if findings else "") + "</p>")
    picture = timeline.svg(items, end_ns=head_ns, link=nav.url("/record/"))
    lines = []
    for item in items:
        cls = f"item {item.kind}" + (f" {item.outcome}" if item.outcome else "") + (" finding" if item.findings else "")
        head = (f"<a href=\"{esc(nav.url(f'/record/{item.seq}'))}\">{item.seq}</a> {esc(when(item.at_ns))} "
                f"<b>{esc(item.name or item.kind)}</b>")
        if item.kind == "tool":
            dur = "" if item.duration_ms is None else f" {item.duration_ms:.0f} ms"
            head += f" <span class=\"outcome {esc(item.outcome)}\">{esc(item.outcome)}</span>{esc(dur)}"
        extra = ""
        if item.kind == "tool":
            start = docs.get(item.seq) or {}
            end = docs.get(item.end_seq) if item.end_seq is not None else None
            tool = start.get("tool") or (end or {}).get("tool") or {}
            extra += _pre(tool.get("input"), "input")
            if end is not None:
                extra += _pre((end.get("tool") or {}).get("response"), "output")
        elif item.summary:
            extra += f"<p class=\"summary\">{esc(clip(item.summary)[0])}</p>"
        for key, value in item.detail.items():
            extra += f"<p class=\"detail\">{esc(key)}: {esc(value)}</p>"
        for finding in item.findings:
            extra += f"<p class=\"bad\">finding: {esc(json.dumps(finding, sort_keys=True))}</p>"
        lines.append(f"<details class=\"{cls}\" data-seq=\"{item.seq}\"><summary>{head}</summary>{extra}</details>")
    return page(nav, f"session {session_id}",
                summary + coverage_section(coverage) + f"<div class=\"picture\">{picture}</div>"
                f"<section class=\"calls\">{''.join(lines)}</section>")


# -- one record ------------------------------------------------------------------------

def record_page(nav: Nav, fields: dict[str, Any], document: Optional[dict]) -> str:
    rows = "".join(f"<tr><th>{esc(k)}</th><td class=\"mono\">{esc(v)}</td></tr>" for k, v in fields.items())
    seq = fields.get("seq")
    links = (f"<p><a download href=\"{esc(nav.url(f'/record/{seq}/proof.json'))}\">inclusion proof "
             "(the `agentwatch prove` bundle)</a></p>")
    doc = "<p class=\"meta\">payload erased (its digest is kept)</p>" if document is None else _pre(document, "doc")
    return page(nav, f"record {seq}", f"<table class=\"fields\">{rows}</table>{links}<h2>document</h2>{doc}")


# -- the store -------------------------------------------------------------------------

def store_page(nav: Nav, verify: dict[str, Any], checkpoint: Optional[dict[str, Any]], health: dict[str, Any],
               recorder: Optional[dict[str, Any]] = None) -> str:
    status = verify.get("status", "unknown")
    parts = [f"<h2>verify</h2><p class=\"verdict {esc(status)}\">{esc(status)}</p>",
             _pre({k: v for k, v in verify.items() if k != "status"}, "doc"),
             "<h2>signed checkpoint</h2>",
             _pre(checkpoint, "doc") if checkpoint else "<p class=\"meta\">none signed yet</p>",
             "<h2>what the record misses</h2>", _pre(recorder, "doc") if recorder else "<p class=\"meta\">no config or "
             "coverage row in the store</p>",
             f"<h2>daemon</h2><p class=\"verdict {esc(health.get('status'))}\">{esc(health.get('status'))}</p>",
             _pre(health.get("detail"), "doc")]
    return page(nav, "store", "".join(parts))


# -- SQL -------------------------------------------------------------------------------

def sql_page(nav: Nav, query: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *,
             error: Optional[str] = None, cut: int = 0) -> str:
    form = (f"<form method=\"get\" action=\"{esc(nav.url('/sql'))}\"><textarea name=\"q\" rows=\"4\" cols=\"100\">"
            f"{esc(query)}</textarea><br><button type=\"submit\">run (read-only)</button></form>")
    if error:
        return page(nav, "sql", form + f"<p class=\"error\">{esc(error)}</p>")
    if not query:
        return page(nav, "sql", form + "<p class=\"meta\">one read-only statement; the same limits as "
                    "`agentwatch sql` (time, memory, no writes, no ATTACH)</p>")
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class=\"mono\">{esc(clip(_cell(v), 4096)[0])}</td>" for v in row) + "</tr>"
                   for row in rows)
    more = f"<p class=\"cut\">{cut} more rows not shown (use `agentwatch sql --csv`)</p>" if cut else ""
    return page(nav, "sql", form + f"<p class=\"meta\">{len(rows) + cut} rows</p>"
                f"<table class=\"rows\"><tr>{head}</tr>{body}</table>{more}")


def _cell(value: Any) -> str:
    if isinstance(value, bytes):
        return value.hex()
    return "NULL" if value is None else str(value)
