"""Recorded text made safe for a page: the one escaping every recorded value goes through."""

from __future__ import annotations

from html import escape
from typing import Any

# C0 controls but tab and newline, DEL, and the C1 controls: a terminal-style escape or a bell
# has no business on a page, and a control character is no longer text to a reader.
_CONTROL = {c: None for c in range(32) if c not in (9, 10)} | {0x7F: None} | {c: None for c in range(0x80, 0xA0)}


def esc(value: Any) -> str:
    """A recorded value as text safe in HTML (and SVG) content and in quoted attributes."""
    text = value if isinstance(value, str) else "" if value is None else str(value)
    return escape(text.translate(_CONTROL), quote=True)
