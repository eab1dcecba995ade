"""A session's timeline as an SVG picture, drawn on the server (the page runs no script).

Each tool call is one bar from its start to its end on a row of its own, its class naming
its outcome; an open call runs to the end of what was read, drawn open. Prompts and
subagent starts and ends are marks on the time axis; a call or mark named by an integrity
or coverage finding carries the class `finding`. Every recorded string reaches the picture
only through `text.esc`, inside a `<title>` (the browser's tooltip).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from agentwatch.readers.sessions import OUTCOMES, Item
from agentwatch.ui.text import esc as escape

WIDTH = 1100
LABEL_W = 180  # the left column with the tool names
ROW_H = 18
BAR_H = 12
AXIS_H = 34  # the marks' band and the axis labels above the bars
MIN_BAR_W = 3.0  # a call shorter than a pixel is still a visible bar
MARK_KINDS = {"prompt": "prompt", "subagent_start": "subagent", "subagent_end": "subagent"}


@dataclass(frozen=True)
class Bar:
    """One call as drawn: its row, its span in the picture and what it is."""

    item: Item
    x: float
    width: float
    row: int
    open: bool


def _span(items: Sequence[Item], end_ns: Optional[int]) -> tuple[int, int]:
    starts = [i.at_ns for i in items]
    ends = [i.at_ns + int((i.duration_ms or 0) * 1e6) for i in items]
    lo = min(starts)
    hi = max(ends + [end_ns or 0])
    return lo, max(hi, lo + 1)


def layout(items: Sequence[Item], end_ns: Optional[int] = None) -> tuple[list[Bar], list[tuple[float, Item]], int, int]:
    """(bars for the calls, (x, item) for the marks, t0, t1): where each thing goes, without drawing it."""
    if not items:
        return [], [], 0, 0
    t0, t1 = _span(items, end_ns)
    scale = (WIDTH - LABEL_W - 10) / (t1 - t0)
    bars: list[Bar] = []
    marks: list[tuple[float, Item]] = []
    for item in items:
        x = LABEL_W + (item.at_ns - t0) * scale
        if item.kind == "tool":
            # An open call runs to the end of what was read; an end with no recorded start is a
            # call of unknown length, drawn at its end with the least width.
            is_open = item.outcome == "open"
            end = t1 if is_open else item.at_ns + int((item.duration_ms or 0) * 1e6)
            bars.append(Bar(item, x, max((end - item.at_ns) * scale, MIN_BAR_W), len(bars), is_open))
        elif item.kind in MARK_KINDS:
            marks.append((x, item))
    return bars, marks, t0, t1


def _seconds(ns: int) -> str:
    s = ns / 1e9
    return f"{s:.3f} s" if s < 10 else f"{s:.1f} s" if s < 600 else f"{s / 60:.1f} min"


def _tip(item: Item) -> str:
    parts = [f"seq {item.seq}", item.name or item.kind]
    if item.kind == "tool":
        parts.append(item.outcome or "")
        if item.duration_ms is not None:
            parts.append(f"{item.duration_ms:.0f} ms")
    if item.summary:
        parts.append(item.summary[:300])
    for finding in item.findings:
        parts.append(f"finding: {finding.get('kind') or finding.get('type') or 'named'}")
    return " · ".join(p for p in parts if p)


def svg(items: Iterable[Item], end_ns: Optional[int] = None, link: Optional[str] = None) -> str:
    """The picture of `items` (one session, seq order); `link` is the record page's URL prefix."""
    items = list(items)
    bars, marks, t0, t1 = layout(items, end_ns)
    height = AXIS_H + max(len(bars), 1) * ROW_H + 8
    out = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="tool calls over time">']
    if not items:
        out.append('<text x="10" y="20" class="axis">no events</text></svg>')
        return "".join(out)
    out.append(f'<text x="{LABEL_W}" y="12" class="axis">0</text>')
    out.append(f'<text x="{WIDTH - 10}" y="12" class="axis end">{escape(_seconds(t1 - t0))}</text>')
    out.append(f'<line x1="{LABEL_W}" y1="{AXIS_H - 4}" x2="{WIDTH - 10}" y2="{AXIS_H - 4}" class="axisline"/>')
    for x, item in marks:
        cls = MARK_KINDS[item.kind] + (" finding" if item.findings else "")
        out.append(f'<g class="mark {cls}" data-seq="{item.seq}"><title>{escape(_tip(item))}</title>'
                   f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{height - 4}"/>'
                   f'<path d="M{x - 5:.1f},16 L{x + 5:.1f},16 L{x:.1f},24 Z"/></g>')
    for bar in bars:
        item = bar.item
        outcome = item.outcome if item.outcome in OUTCOMES else "open"
        y = AXIS_H + bar.row * ROW_H
        cls = f"bar {outcome}" + (" open" if bar.open else "") + (" finding" if item.findings else "")
        label = escape((item.name or "?")[:28])
        rect = (f'<rect class="{cls}" data-seq="{item.seq}" data-outcome="{outcome}" x="{bar.x:.1f}" '
                f'y="{y + (ROW_H - BAR_H) / 2:.1f}" width="{bar.width:.1f}" height="{BAR_H}">'
                f'<title>{escape(_tip(item))}</title></rect>')
        if link is not None:
            rect = f'<a href="{escape(link)}{item.seq}">{rect}</a>'
        out.append(f'<text x="4" y="{y + ROW_H - 5}" class="name">{label}</text>{rect}')
    out.append("</svg>")
    return "".join(out)
