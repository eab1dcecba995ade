"""All terminal output. The only module that imports rich, and only when needed.

Data goes to stdout; diagnostics and progress go to stderr. rich styles only
when the stream is a terminal, and NO_COLOR is honoured.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, no_color="NO_COLOR" in os.environ, highlight=False, soft_wrap=True)


def json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return value


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=json_value) + "\n")


def emit_path(path: Path, as_json: bool) -> None:
    if as_json:
        print_json({"store": str(path), "exists": path.exists()})
    else:
        print(path)


def emit_rows(columns: list[str], rows: Iterable[tuple], fmt: str) -> None:
    if fmt == "json":
        # A JSON array written row by row, so a large result never sits in memory.
        out = sys.stdout
        out.write("[")
        for i, row in enumerate(rows):
            out.write(("," if i else "") + "\n" + json.dumps(dict(zip(columns, map(json_value, row))), ensure_ascii=False))
        out.write("\n]\n")
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([json_value(v) for v in row])
    else:
        from rich.table import Table

        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*("NULL" if v is None else str(json_value(v)) for v in row))
        _console().print(table)


def emit_import(report, as_json: bool) -> None:
    for line_no, reason in report.rejected:
        print(f"agentwatch: line {line_no}: {reason}", file=sys.stderr)
    if as_json:
        print_json(report.to_json())
    else:
        print(
            f"{report.stored} stored, {report.duplicates} duplicates, {len(report.rejected)} rejected "
            f"(of {report.lines} lines) into {report.store}",
            file=sys.stderr,
        )


@contextmanager
def progress(label: str, enabled: bool) -> Iterator:
    """A progress callback (done, total) drawing a rich bar on stderr, or a no-op."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=_console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
