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


def emit_verify(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    evidence = getattr(result, "evidence", None)
    signed = f", {len(evidence.checkpoints)} signed checkpoints consistent" if evidence and evidence.checkpoints else ""
    if result.ok:
        print(
            f"ok: {result.mode} verify of {result.store}: {result.rows_checked} rows checked, "
            f"verified through seq {result.verified_through}, head {result.head_hash or '(empty)'}{signed}"
        )
    else:
        f = result.finding
        print(f"FAILED: {result.store}: first break at seq {f.seq}: {f.kind}: {f.detail}")
        for other in getattr(result, "findings", ()):
            if other != f:
                print(f"  also at seq {other.seq}: {other.kind}: {other.detail}")


def _short(value, width: int) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def tail_line(record) -> str:
    """time  #seq  kind/harness  session  event  tool  short hash"""
    import time as _time

    doc = json.loads(record.payload)
    secs, ns = divmod(record.recorded_at_ns, 1_000_000_000)
    stamp = _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(secs)) + f".{ns // 1_000_000:03d}Z"
    short_hash = record.hash.hex()[:12]
    if record.kind == "event":
        event = doc.get("event") or {}
        tool = doc.get("tool") or {}
        middle = (
            f"{_short(doc.get('harness'), 12):<12} {_short(doc.get('session_id'), 12):<12} "
            f"{_short(event.get('name'), 20):<20} {_short(tool.get('name'), 16):<16}"
        )
    else:
        what = doc.get("type") or doc.get("reason")
        middle = f"{record.kind:<12} {'':<12} {_short(what, 20):<20} {'':<16}"
    return f"{stamp} #{record.seq:<7} {middle} {short_hash}"


def tail_printer(as_json: bool):
    """A function printing one batch of tail records and flushing, as JSON lines or readable lines."""
    out = sys.stdout
    if as_json:
        def emit_json(batch) -> None:
            out.write("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in batch))
            out.flush()
        return emit_json
    if out.isatty():
        console = _console()

        def emit_rich(batch) -> None:
            for r in batch:
                style = {"attestation": "cyan", "gap": "bold red"}.get(r.kind)
                console.print(tail_line(r), style=style, markup=False)
        return emit_rich

    def emit(batch) -> None:
        out.write("".join(tail_line(r) + "\n" for r in batch))
        out.flush()
    return emit


def emit_reconcile(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    from rich.table import Table

    table = Table("predicate", "ok", "detail", title=f"reconcile {result.store} (head seq {result.head_seq})")
    for p in result.predicates:
        mark = "skipped" if p.ok is None else ("yes" if p.ok else "NO")
        table.add_row(p.name, mark, p.detail)
    counts = Table("boundary", "count", title="counts")
    for key, value in result.counts.items():
        counts.add_row(key, json.dumps(value) if isinstance(value, (dict, list)) else str(value))
    console = _console()
    console.print(table)
    console.print(counts)


def emit_install(result, as_json: bool) -> None:
    """install/uninstall: the outcome (or, with --dry-run, the diff) on stdout, notes on stderr."""
    if as_json:
        print_json(result.to_json())
    elif result.dry_run:
        sys.stdout.write(result.diff())
        verb = {"already_installed": "nothing to change", "not_installed": "nothing to remove"}.get(
            result.status, f"would {result.operation}"
        )
        print(f"agentwatch: dry run, {result.harness} ({result.scope}): {verb}; nothing written", file=sys.stderr)
    else:
        print(f"{result.status}: {result.harness} ({result.scope} scope)")
        for change in result.files:
            backup = f", backup {change.backup}" if change.backup else ""
            print(f"  {change.action}: {change.path}{backup}")
        if result.events:
            print(f"  events: {', '.join(result.events)}")
        if result.command:
            print(f"  command: {result.command}")
    if result.operation == "install" and result.status != "already_installed":
        for note in result.notes:
            print(f"agentwatch: note: {note}", file=sys.stderr)


def emit_install_list(rows, as_json: bool) -> None:
    """install --list: per harness and scope, a rich table (or a JSON array)."""
    if as_json:
        print_json([row.to_json() for row in rows])
        return
    from rich.table import Table

    table = Table()
    for column in ("harness", "scope", "state"):
        table.add_column(column, no_wrap=True)
    for column in ("file", "events", "command"):
        table.add_column(column, overflow="fold")
    for row in rows:
        detail = row.error or (row.commands[0] if row.commands else "")
        if len(row.commands) > 1:
            detail += f"  (+{len(row.commands) - 1} more)"
        table.add_row(row.harness, row.scope, row.state, row.path, ", ".join(row.events), detail)
    _console().print(table)
