"""Query results as text that never loses a value: TSV for a pipe or a file, a wrapped grid for a person.

TSV follows PostgreSQL's COPY text format: a header row of column names, then
one line per row, columns separated by a tab; in a value a backslash, tab,
newline and carriage return are written `\\\\`, `\\t`, `\\n`, `\\r`, and NULL is
`\\N`. Every value is whole, so `cut -f2`, `awk -F'\\t'` or a spreadsheet read it
back exactly (docs/cli.md, "sql").

The grid is for a terminal: each column gets a share of the width, and a value
longer than its column wraps onto more lines (at word boundaries where it
can) instead of being cut. When the columns cannot each get a readable width,
every row is printed as a block of `column  value` lines instead. The widths
come from the first rows (a batch) so the rows stream: a result of any size
starts printing at once and is bounded by the query's time limit. With `wide`
no value wraps: each line is as long as its row needs.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Callable, Iterable, TextIO

BATCH = 200  # rows read before the column widths are fixed
MIN_WIDTH = 8  # the narrowest column a value wraps in; below it, rows print as blocks
READABLE = 24  # a wrapping column gets at least this much when the other columns can give it
GAP = "  "
_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_value(value: Any) -> str:
    """One value in COPY text format (`value` already JSON-ready: text, a number, a list or a dict)."""
    if value is None:
        return "\\N"
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    return str(value).translate(_TSV_ESCAPES)


def write_tsv(out: TextIO, columns: list[str], rows: Iterable[tuple], prepare: Callable[[Any], Any]) -> None:
    if not columns:
        return  # a statement with no result columns: no header, no rows
    out.write("\t".join(tsv_value(c) for c in columns) + "\n")
    for row in rows:
        out.write("\t".join(tsv_value(None if v is None else prepare(v)) for v in row) + "\n")


def cells(text: str) -> int:
    """Terminal cells `text` takes: East Asian wide characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def _break_word(word: str, width: int) -> list[str]:
    pieces, current, used = [], "", 0
    for char in word:
        size = cells(char)
        if used + size > width and current:
            pieces.append(current)
            current, used = "", 0
        current += char
        used += size
    pieces.append(current)
    return pieces


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken at spaces where it can, inside a word where it must.

    Nothing is dropped but the spaces a line break replaces; existing line breaks stay."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        line: str | None = None
        used = 0
        for word in paragraph.split(" "):
            size = cells(word)
            if line is not None and used + 1 + size <= width:
                line, used = f"{line} {word}", used + 1 + size
                continue
            if line is not None:
                out.append(line)
            if size <= width:
                line, used = word, size
            else:
                *whole, line = _break_word(word, width)
                out.extend(whole)
                used = cells(line)
        out.append(line or "")
    return out


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cells(text))


def fit_widths(natural: list[int], total: int) -> list[int] | None:
    """Column widths that fit `total` cells with the gaps, or None when MIN_WIDTH each does not fit.

    Only the widest columns wrap: the fewest of them that leaves each a READABLE
    width (so short values such as ids stay on one line), sharing what the others
    leave; the narrowest of those keep their natural width when it is below the share."""
    room = total - len(GAP) * (len(natural) - 1)
    if sum(natural) <= room:
        return list(natural)
    if len(natural) * MIN_WIDTH > room:
        return None
    order = sorted(range(len(natural)), key=lambda i: natural[i], reverse=True)
    for k in range(1, len(order) + 1):
        wrapped, kept = order[:k], order[k:]
        rest = room - sum(natural[i] for i in kept)
        if rest // k >= READABLE or k == len(order):
            break
    widths = list(natural)
    pending = sorted(wrapped, key=lambda i: natural[i])
    while pending:
        share = rest // len(pending)
        i = pending[0]
        if natural[i] <= share:
            rest -= natural[i]
            pending.pop(0)
            continue
        for n, i in enumerate(pending):
            widths[i] = share + (1 if n < rest - share * len(pending) else 0)
        break
    return widths


def write_grid(out: TextIO, columns: list[str], rows: Iterable[tuple], text: Callable[[Any], str],
               width: int, wide: bool = False) -> int:
    """Print `rows` as a grid (or blocks) fitting `width` cells; returns the number of rows."""
    iterator = iter(rows)
    count = 0
    widths: list[int] | None = None
    blocks = False
    header = [text(c) for c in columns]
    if not header:
        return sum(1 for _ in iterator)  # a statement with no result columns prints nothing
    while True:
        batch = []
        for row in iterator:
            batch.append([text(v) for v in row])
            if len(batch) >= BATCH:
                break
        if widths is None and not blocks:
            natural = [max([cells(h)] + [max(map(cells, r[i].split("\n"))) for r in batch])
                       for i, h in enumerate(header)]  # fmt: skip
            fitted = natural if wide else fit_widths(natural, width)
            if fitted is None:
                blocks = True
            else:
                widths = fitted
                _grid_lines(out, [header], widths, wide)
                out.write(GAP.join("─" * w for w in widths) + "\n")
        if blocks:
            for r in batch:
                count += 1
                _block(out, count, header, r, width)
        else:
            assert widths is not None
            _grid_lines(out, batch, widths, wide)
            count += len(batch)
        if len(batch) < BATCH:
            return count


def _grid_lines(out: TextIO, batch: list[list[str]], widths: list[int], wide: bool) -> None:
    for row in batch:
        wrapped = [v.split("\n") if wide else wrap(v, w) for v, w in zip(row, widths)]
        for k in range(max(map(len, wrapped))):
            parts = [_pad(lines[k] if k < len(lines) else "", w) for lines, w in zip(wrapped, widths)]
            out.write(GAP.join(parts).rstrip() + "\n")


def _block(out: TextIO, number: int, header: list[str], row: list[str], width: int) -> None:
    label = max(map(cells, header))
    value_width = max(MIN_WIDTH, width - label - len(GAP))
    out.write(f"── row {number} " + "─" * max(0, min(width, 40) - 8 - len(str(number))) + "\n")
    for name, value in zip(header, row):
        for k, line in enumerate(wrap(value, value_width)):
            out.write((_pad(name, label) if k == 0 else " " * label) + GAP + line + "\n")
