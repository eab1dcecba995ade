"""All terminal output. The only module that imports rich, and only when needed.

Data goes to stdout; diagnostics and progress go to stderr. rich styles only
when the stream is a terminal, and NO_COLOR is honoured.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

# What recorded content may not send to a terminal as it is: C0 controls (ESC starts every CSI and
# OSC sequence: cursor movement, line erase, window title, OSC 8 links; BEL ends an OSC; CR and
# backspace overwrite), DEL, the C1 controls (0x9b and 0x9d are CSI and OSC in one byte), the
# Unicode marks that reorder or hide text (bidi overrides and isolates, as in "Trojan Source"),
# line and paragraph separators, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_OR_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _visible(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def neutralize(text: str, *, keep_lines: bool = False) -> str:
    """`text` safe to print on a terminal: every control or escape character becomes visible text.

    ESC becomes the four characters `\\x1b`, U+202E becomes `\\u202e`, a
    newline `\\n`, and so on, so recorded content can neither move the cursor,
    erase lines, set the window title nor plant a link, and what it tried
    stays readable. With `keep_lines`, newlines and tabs stay (a table cell
    may span lines). Every command that prints recorded content for a person
    calls this; JSON output does not.
    """
    pattern = _UNSAFE if keep_lines else _UNSAFE_OR_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)


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
        # CSV keeps the exact text for a file or a pipe; on a terminal a person reads it.
        cell = (lambda v: neutralize(str(v), keep_lines=True)) if sys.stdout.isatty() else (lambda v: v)
        writer = csv.writer(sys.stdout)
        writer.writerow([cell(c) for c in columns])
        for row in rows:
            writer.writerow([cell(json_value(v)) if v is not None else v for v in row])
    else:
        from rich.table import Table

        table = Table(*(neutralize(c, keep_lines=True) for c in columns), show_lines=False)
        for row in rows:
            table.add_row(*("NULL" if v is None
                            else neutralize(json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list))
                                            else str(json_value(v)), keep_lines=True) for v in row))
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
    erased = ""
    if result.erased:
        erased = f"; erased: {', '.join(f'seq {seq} (by seq {by})' for seq, by in result.erased)}"
    if result.ok:
        print(
            f"ok: {result.mode} verify of {result.store}: {result.rows_checked} rows checked, "
            f"verified through seq {result.verified_through}, head {result.head_hash or '(empty)'}{erased}"
        )
    else:
        for f in result.findings or (result.finding,):
            where = f"first break at seq {f.seq}" if f.seq else "the store as a whole"
            print(f"FAILED: {result.store}: {where}: {f.kind}: {neutralize(str(f.detail))}{erased}")


def emit_erase(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    for e in result.erased:
        what = "erased" if e.status == "erased" else "already erased"
        print(f"{what}: seq {e.seq} ({e.kind} {neutralize(e.record_id)}), payload {e.payload_sha256.hex()[:16]}…, "
              f"erasure row seq {e.erasure_seq}")
    if not result.wal_truncated:
        print(
            f"agentwatch: the WAL still holds {result.wal_bytes} bytes (a reader kept it from being emptied); "
            "run the same erase again once readers are done",
            file=sys.stderr,
        )


def emit_init(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    if result.status == "refused":
        for f in result.findings:
            print(f"refused: {result.store}: {f.kind}: {neutralize(str(f.detail))}")
        print("run again with --new-store to accept the store that is there now (the loss stays named)")
        return
    print(f"{result.status}: {result.store}: store {result.store_id}, head seq {result.head_seq}")


def _short(value, width: int) -> str:
    text = "-" if value is None else neutralize(str(value))
    return text if len(text) <= width else text[: width - 1] + "…"


def tail_line(record) -> str:
    """time  #seq  kind/harness  session  event  tool  short hash"""
    import time as _time

    doc = json.loads(record.payload) or {"erased": True}  # an erased row's payload is null (docs/erasure.md)
    secs, ns = divmod(record.recorded_at_ns, 1_000_000_000)
    stamp = _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(secs)) + f".{ns // 1_000_000:03d}Z"
    short_hash = record.hash.hex()[:12]
    if record.kind == "event":
        event = doc.get("event") or {}
        tool = doc.get("tool") or {}
        middle = (
            f"{_short(doc.get('harness'), 12):<12} {_short(doc.get('session_id'), 12):<12} "
            f"{_short(event.get('name') or ('(erased)' if doc.get('erased') else None), 20):<20} "
            f"{_short(tool.get('name'), 16):<16}"
        )
    else:
        what = doc.get("type") or doc.get("reason") or ("(erased)" if doc.get("erased") else None)
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
        table.add_row(p.name, mark, neutralize(p.detail, keep_lines=True))
    counts = Table("boundary", "count", title="counts")
    for key, value in result.counts.items():
        counts.add_row(key, json.dumps(value) if isinstance(value, (dict, list)) else str(value))
    console = _console()
    console.print(table)
    console.print(counts)


def emit_fleet_reconcile(result, as_json: bool) -> None:
    """`reconcile --pg`: one row per source, then what stands outside any source."""
    if as_json:
        print_json(result.to_json())
        return
    from rich.table import Table

    table = Table("source", "host", "chain_ok", "contiguous", "head", "lag rows", "lag s", "checkpoint", "findings",
                  title=f"fleet {result.target} (schema {result.schema_version})")
    for s in result.sources:
        checkpoint = str(s.last_checkpoint["tree_size"]) if s.last_checkpoint else "none"
        findings = ", ".join(f"{kind} {n}" for kind, n in s.findings.items()) or "none"
        table.add_row(s.store_id, s.host, "yes" if s.chain_ok else f"NO ({s.chain_problem})",
                      "yes" if s.contiguous else "NO", str(s.head_seq), str(s.lag_rows), str(s.lag_s), checkpoint,
                      findings)
    console = _console()
    console.print(table)
    if result.unattributed_findings:
        console.print(f"findings tied to no source: {result.unattributed_findings}")
    console.print(f"denied writes from the server log: {result.denials}")
    console.print("within bounds" if result.within_bounds else "OUT OF BOUNDS")


def ship_progress(status) -> None:
    """`agentwatch ship`: one line on stderr per change of state."""
    if status.state in ("shipping", "stopped"):
        return
    detail = status.last_error if status.state in ("backoff", "refused") else (
        f"central head {status.central_head_seq}, local head {status.local_head_seq}")
    print(f"agentwatch ship: {status.state}: {detail}", file=sys.stderr)


def emit_ship(status, as_json: bool) -> None:
    if as_json:
        print_json(status.to_json())
        return
    print(f"{status.rows_shipped} rows shipped to {status.target} as {status.host}; central head "
          f"{status.central_head_seq}, local head {status.local_head_seq}")
    if status.refused:
        print(f"agentwatch: refused: {status.refused['kind']} at seq {status.refused['seq']}: "
              f"{status.refused['detail']}", file=sys.stderr)
    elif status.last_error and status.failing_since_ns:
        print(f"agentwatch: {status.last_error}", file=sys.stderr)


def emit_fleet_init(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    applied = ", ".join(result.applied) or "nothing (up to date)"
    print(f"fleet schema {result.version} in {result.target}: applied {applied}")
    if result.roles_created:
        print(f"  roles created: {', '.join(result.roles_created)}")
    print(f"  denied writes: {result.denials}")


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
