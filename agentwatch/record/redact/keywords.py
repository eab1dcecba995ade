"""Where the redaction rules' keywords occur in a text: one pass in C, or a plain scan.

A rule runs on a string only when one of its keywords occurs in it, and the
recorder's fast path asks the same question of a whole record (rules.py). This
module answers it for UTF-8 bytes, with three backends that give the same
occurrences: Hyperscan where it imports, pyahocorasick's Aho-Corasick automaton,
or `bytes.find` per keyword.
"""

from __future__ import annotations

import re
import threading
from typing import Callable, Iterable

_KEYWORD_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class KeywordIndex:
    """Where the rules' keywords occur in a text (UTF-8 bytes): every occurrence, overlapping ones too.

    Three backends give the same occurrences for every text (tests check this on
    generated strings): Hyperscan where it imports, else pyahocorasick's
    automaton, both reading the text once in C; else a plain scan that calls
    bytes.find per keyword. Case-insensitive keywords match ASCII letters of
    either case; case-sensitive ones (token prefixes) match as written.
    """

    BACKENDS = ("hyperscan", "ahocorasick", "python")

    def __init__(self, keywords: Iterable[tuple[str, bool, Iterable[int]]], *, backend: str | None = None) -> None:
        table: dict[tuple[bytes, bool], set[int]] = {}
        for kw, case_sensitive, ids in keywords:
            if not kw or not _KEYWORD_CHARS.issuperset(kw):
                raise ValueError(f"keyword {kw!r}: printable ASCII without quotes or backslashes only")
            key = (kw.encode("ascii") if case_sensitive else kw.translate(_ASCII_LOWER).encode("ascii"), case_sensitive)
            table.setdefault(key, set()).update(ids)
        self.keywords: tuple[tuple[bytes, bool, tuple[int, ...]], ...] = tuple(
            (kw, cs, tuple(sorted(ids))) for (kw, cs), ids in sorted(table.items()))
        self.backend = "python"
        self._scan: Callable[[bytes], list[tuple[int, int]]] = self._scan_python
        for name in (self.BACKENDS if backend is None else (backend,)):
            maker = getattr(self, f"_make_{name}")
            scan = maker()
            if scan is not None:
                self.backend, self._scan = name, scan
                break

    def hits(self, data: bytes) -> list[tuple[int, int]]:
        """(start, keyword index) of every occurrence, sorted."""
        return sorted(self._scan(data))

    def rules_in(self, data: bytes) -> set[int]:
        out: set[int] = set()
        for _, k in self._scan(data):
            out.update(self.keywords[k][2])
        return out

    # -- backends ---------------------------------------------------------------------------------
    def _scan_python(self, data: bytes) -> list[tuple[int, int]]:
        low = data.lower()
        out = []
        for k, (kw, cs, _) in enumerate(self.keywords):
            text = data if cs else low
            i = text.find(kw)
            while i >= 0:
                out.append((i, k))
                i = text.find(kw, i + 1)
        return out

    def _make_python(self) -> Callable[[bytes], list[tuple[int, int]]]:
        return self._scan_python

    def _make_ahocorasick(self) -> Callable[[bytes], list[tuple[int, int]]] | None:
        try:
            import ahocorasick
        except ImportError:
            return None
        automaton = ahocorasick.Automaton()
        words: dict[str, list[int]] = {}
        for k, (kw, _, _) in enumerate(self.keywords):
            words.setdefault(kw.lower().decode("ascii"), []).append(k)
        for word, ks in words.items():
            automaton.add_word(word, (len(word), tuple(ks)))
        automaton.make_automaton()
        keywords = self.keywords

        def scan(data: bytes) -> list[tuple[int, int]]:
            out = []
            # bytes read as Latin-1 are one character each: offsets stay byte offsets
            for end, (n, ks) in automaton.iter(data.lower().decode("latin-1")):
                start = end - n + 1
                for k in ks:
                    kw, cs, _ = keywords[k]
                    if not cs or data.startswith(kw, start):
                        out.append((start, k))
            return out

        return scan

    def _make_hyperscan(self) -> Callable[[bytes], list[tuple[int, int]]] | None:
        try:
            import hyperscan
        except ImportError:
            return None
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(
            expressions=[re.escape(kw.decode("ascii")).encode("ascii") for kw, _, _ in self.keywords],
            ids=list(range(len(self.keywords))),
            elements=len(self.keywords),
            flags=[0 if cs else hyperscan.HS_FLAG_CASELESS for _, cs, _ in self.keywords],
        )
        scratch = hyperscan.Scratch(database)
        lengths = [len(kw) for kw, _, _ in self.keywords]
        lock = threading.Lock()  # one scratch space: scans do not overlap

        def scan(data: bytes) -> list[tuple[int, int]]:
            out: list[tuple[int, int]] = []

            def found(k: int, start: int, end: int, flags: int, context: object) -> None:
                out.append((end - lengths[k], k))

            with lock:
                database.scan(data, match_event_handler=found, scratch=scratch)
            return out

        return scan


