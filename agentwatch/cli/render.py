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


def emit_document(doc: Any) -> None:
    """A JSON document as the evidence and health commands print it (ASCII, one line)."""
    print(json.dumps(doc))


def emit_text_or_json(doc: dict, text: str, as_json: bool) -> None:
    """`doc` as one JSON line, or `text` as it is (a key, a signed note)."""
    if as_json:
        emit_document(doc)
    else:
        sys.stdout.write(text)


def emit_config(cfg: Any, as_json: bool) -> None:
    """`config show`: each key, its value and its source, then the digest; or the JSON document."""
    if as_json:
        doc = {"config": cfg.as_dict(), "sources": dict(cfg.sources), "files": list(cfg.files), "digest": cfg.digest()}
        print(json.dumps(doc, indent=2))
        return
    width = max(map(len, cfg.values))
    for key, value in cfg.as_dict().items():
        print(f"{key:<{width}}  {json.dumps(value)}  ({cfg.sources[key]})")
    print(f"{'digest':<{width}}  {cfg.digest()}")


def bundle_text(doc: Any) -> str:
    """A proof bundle as `prove` writes it: indented, keys sorted."""
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def emit_rows(columns: list[str], rows: Iterable[tuple], fmt: str, *, wide: bool = False) -> None:
    """Query results on stdout, every value whole: json, csv, tsv (COPY text format) or a grid.

    The grid (`table`) wraps long values in their column at the terminal's width,
    or with `wide` leaves every line as long as its row; see cli/rows.py."""
    from agentwatch.cli import rows as rowtext

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
    elif fmt == "tsv":
        # Escaped by the format itself; on a terminal the other controls are made visible too.
        prepare = (lambda v: _safe_value(json_value(v))) if sys.stdout.isatty() else json_value
        rowtext.write_tsv(sys.stdout, columns, rows, prepare)
    else:
        import shutil

        def text(v: Any) -> str:
            if v is None:
                return "NULL"
            return neutralize(_plain_value(json_value(v)), keep_lines=True).replace("\t", "    ")

        width = shutil.get_terminal_size((100, 24)).columns
        rowtext.write_grid(sys.stdout, columns, rows, text, width, wide=wide)


def _plain_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)


def _safe_value(value: Any) -> Any:
    return neutralize(_plain_value(value), keep_lines=True) if isinstance(value, (str, dict, list)) else value


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
    """A progress callback (done, total) drawing a rich bar on stderr, or a no-op.

    Drawn only on a terminal, and never where the caller asks for JSON (`enabled`
    false). The bar goes away once done reaches total (a catch-up that then follows)."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=_console(stderr=True),
        transient=True, redirect_stdout=False, redirect_stderr=False,  # data on stdout is never drawn into the bar
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)
            if total is not None and done >= total:
                bar.stop()

        yield update


@contextmanager
def import_progress(report, enabled: bool) -> Iterator:
    """import's bar on stderr: events read, their rate, and the time left (from the bytes read of the file)."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    started = time.monotonic()
    with Progress(
        TextColumn("importing"), BarColumn(), TextColumn("{task.fields[events]}"), TextColumn("ETA"),
        TimeRemainingColumn(), console=_console(stderr=True), transient=True, redirect_stdout=False,
        redirect_stderr=False,
    ) as bar:
        task = bar.add_task("importing", total=None, events="0 events")

        def update(done: int, total: int | None) -> None:
            rate = report.lines / max(time.monotonic() - started, 1e-3)
            bar.update(task, completed=done, total=total, events=f"{report.lines:,} events, {rate:,.0f}/s")

        yield update


def say(text: str) -> None:
    """One statement on stdout. On a terminal it is folded at spaces to the width (each further
    line indented two more than the first), so no word is broken where the terminal wraps; into
    a pipe or a file it stays one line, for scripts."""
    if not is_terminal():
        print(text)
        return
    import shutil
    import textwrap

    width = shutil.get_terminal_size((80, 24)).columns
    indent = " " * (len(text) - len(text.lstrip(" ")) + 2)
    print("\n".join(textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=True,
                                  break_on_hyphens=False, drop_whitespace=True)) or "")


def _plural(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def emit_verify(result, as_json: bool) -> None:
    if as_json:
        print_json(result.to_json())
        return
    erased = ""
    if result.erased:
        erased = f"; erased: {', '.join(f'seq {seq} (by seq {by})' for seq, by in result.erased)}"
    if getattr(result, "retained", 0):
        erased += f"; {result.retained} rows retained (payloads removed by policy, digests kept)"
    evidence = getattr(result, "evidence", None)
    signed = f", {len(evidence.checkpoints)} signed checkpoints consistent" if evidence and evidence.checkpoints else ""
    if result.ok:
        say(
            f"ok: {result.mode} verify of {result.store}: {_plural(result.rows_checked, 'row')} checked, "
            f"verified through seq {result.verified_through}, head {result.head_hash or '(empty)'}{signed}{erased}"
        )
    else:
        for f in result.findings or (result.finding,):
            where = f"break at seq {f.seq}" if f.seq else "the store as a whole"
            say(f"FAILED: {result.store}: {where}: {f.kind}: {neutralize(str(f.detail))}{erased}")
    if evidence is not None and evidence.trust:
        from agentwatch.evidence.trust import explain

        say(explain(evidence.trust))
    for old in evidence.history if evidence else ():
        say(f"history: store {old['store_id']} was replaced at this path (accepted by `init --new-store` at "
              f"{old['accepted_at']}); {old['source']} still holds its evidence")
    _emit_recorder(getattr(result, "recorder", None))


def _emit_recorder(summary: dict | None) -> None:
    """What the record says it misses (hook-config findings, sessions with missing calls), one line each."""
    if not summary:
        return
    from agentwatch.coverage.rows import findings

    for line in findings(summary):
        say(f"recorder: {neutralize(line)}")


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


_TAIL_FULL = 112  # the width of tail's whole line: date and time, seq, harness, session, event, tool, hash


def tail_line(record, width: int | None = None) -> str:
    """time  #seq  kind/harness  session  event  tool  short hash; narrower than the whole line, one line
    of `width`: the time without its date, no hash, a shorter session, the tool taking what is left."""
    if width is not None and width < _TAIL_FULL:
        return _tail_narrow(record, width)
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


def _tail_narrow(record, width: int) -> str:
    import time as _time

    doc = json.loads(record.payload) or {"erased": True}
    secs, ns = divmod(record.recorded_at_ns, 1_000_000_000)
    stamp = _time.strftime("%H:%M:%S", _time.gmtime(secs)) + f".{ns // 1_000_000:03d}"
    if record.kind == "event":
        event = doc.get("event") or {}
        cells = [_short(doc.get("harness"), 11), _short(doc.get("session_id"), 12),
                 _short(event.get("name") or ("(erased)" if doc.get("erased") else None), 16)]
        tool = (doc.get("tool") or {}).get("name")
    else:
        what = doc.get("type") or doc.get("reason") or ("(erased)" if doc.get("erased") else None)
        cells, tool = [record.kind, "", _short(what, 16)], None
    head = f"{stamp} #{record.seq:<6} {cells[0]:<11} {cells[1]:<12} {cells[2]:<16} "
    room = width - len(head)
    return (head + (_short(tool, room) if tool and room > 1 else "")).rstrip()[:width]


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
                console.print(tail_line(r, console.width), style=style, markup=False, crop=True, overflow="crop",
                              no_wrap=True)
        return emit_rich

    def emit(batch) -> None:
        out.write("".join(tail_line(r) + "\n" for r in batch))
        out.flush()
    return emit


def emit_fleet_reconcile(result, as_json: bool) -> None:
    """`reconcile --pg`: a few short lines per source (a 32-digit store_id leaves no room for a wide table)."""
    if as_json:
        print_json(result.to_json())
        return
    lines = [f"fleet {result.target} (schema {result.schema_version})"]
    for s in result.sources:
        verdict = "ok" if s.within_bounds else "OUT OF BOUNDS"
        lines.append(f"{s.store_id}  {verdict}")
        lines.append(f"  host {s.host}, login {s.login}" + (f", retired {s.retired_at}" if s.retired_at else ""))
        chain = "ok" if s.chain_ok else f"NO ({s.chain_problem})"
        lines.append(f"  chain {chain}, contiguous {'yes' if s.contiguous else 'NO'}, head {s.head_seq}, "
                     f"lag {s.lag_rows} rows / {s.lag_s} s")
        report = f"{s.last_report_at} ({s.silent_s} s ago)" if s.last_report_at else "never"
        lines.append(f"  last report {report}" + (" SILENT" if s.silent else ""))
        checkpoint = str(s.last_checkpoint["tree_size"]) if s.last_checkpoint else "none"
        findings = ", ".join(f"{kind} {n}" for kind, n in s.findings.items()) or "none"
        lines.append(f"  checkpoint {checkpoint}, findings {findings}")
        for other in s.replaces:
            lines.append(f"  REPLACES {other} (retire it if gone)")
        for other, n in s.duplicates_of.items():
            lines.append(f"  DUPLICATES {n} record_ids of {other}")
        for role, kinds in s.other_logins.items():
            lines.append(f"  findings by login {role}: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
        if s.findings_before_change:
            lines.append("  before the last claim change: "
                         + ", ".join(f"{k} {n}" for k, n in s.findings_before_change.items()))
    for role, kinds in result.logins.items():
        lines.append(f"login {role} outside its own sources: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    if result.unattributed_findings:
        lines.append(f"findings tied to no source: {result.unattributed_findings}")
    lines.append(f"denied writes from the server log: {result.denials}")
    lines.append("within bounds" if result.within_bounds else "OUT OF BOUNDS")
    sys.stdout.write("".join(neutralize(line) + "\n" for line in lines))


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
    if status.checkpoint_refused:
        refused = status.checkpoint_refused
        print(f"agentwatch: refused: checkpoint {refused['size']}: {refused['kind']}: {refused['detail']}",
              file=sys.stderr)


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
        if result.added:
            print(f"  added: {', '.join(result.added)}")
        if result.removed:
            print(f"  removed: {', '.join(result.removed)}")
        if result.command:
            print(f"  command: {result.command}")
    if result.operation == "install" and result.status != "already_installed":
        for note in result.notes:
            print(f"agentwatch: note: {note}", file=sys.stderr)


def emit_install_list(rows, as_json: bool) -> None:
    """install --list: a JSON array, or one plain line per harness and scope that fits 80 columns.

    Each line: harness, scope, state, the file (under the home directory as ~/...)
    and how many events go to agentwatch; a config that cannot be read adds its
    reason on the next line. Events and commands whole: --json."""
    if as_json:
        print_json([row.to_json() for row in rows])
        return
    import shutil

    from agentwatch.cli import rows as rowtext

    home, here = str(Path.home()), str(Path.cwd())

    def where(path: str) -> str:
        """A path as short as it reads: ./ under the current directory, ~/ under the home directory
        (the nearer of the two where both hold it: ~/ for a home inside the current directory)."""
        under = [(len(prefix), short, prefix) for prefix, short in ((here, "."), (home, "~"))
                 if prefix not in ("", "/") and path.startswith(prefix + "/")]
        if not under:
            return path
        _, short, prefix = max(under)
        return short + path[len(prefix):]

    cells = [(r.harness, r.scope, r.state.replace("_", " "), neutralize(where(r.path))
              + (f" ({len(r.events)} event{'s' * (len(r.events) != 1)})" if r.events else "")) for r in rows]
    widths = [max(len(c[i]) for c in cells + [("harness", "scope", "state", "")]) for i in range(3)]
    width = shutil.get_terminal_size((80, 24)).columns if is_terminal() else 10_000
    out = [rowtext.GAP.join(h.ljust(w) for h, w in zip(("harness", "scope", "state"), widths)) + rowtext.GAP + "file"]
    indent = sum(widths) + 3 * len(rowtext.GAP)
    for row, (harness, scope, state, file) in zip(rows, cells):
        head = rowtext.GAP.join(v.ljust(w) for v, w in zip((harness, scope, state), widths)) + rowtext.GAP
        lines = rowtext.wrap(file, max(20, width - indent))
        out.append(head + lines[0])
        out += [" " * len(head) + line for line in lines[1:]]
        if row.error:
            reason = neutralize(row.error.replace(row.path, where(row.path)))
            out += ["    " + line for line in rowtext.wrap(reason, max(20, width - 4))]
        if row.state == "not_installed" and getattr(row, "shared_with", None):
            said = f"the entries here are {' and '.join(row.shared_with)}'s install; {row.harness} runs them too"
            out += ["    " + line for line in rowtext.wrap(said, max(20, width - 4))]
        for finding in getattr(row, "findings", None) or []:
            said = neutralize(f"{finding['kind']}: {finding['detail']}")
            out += ["    " + line for line in rowtext.wrap(said, max(20, width - 4))]
    out.append("")
    out.append("events and hook commands: agentwatch install --list --json")
    sys.stdout.write("\n".join(out) + "\n")


def is_terminal(stream=None) -> bool:
    """True when `stream` (stdout by default) is a terminal: rich tables, colour; else plain text."""
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_LEVEL_STYLE = {"ok": "", "info": "", "warn": "yellow", "bad": "bold red"}
_STATUS_STYLE = {"recording": "bold green", "degraded": "bold yellow", "stopped": "bold red"}


def _fit(text: str, width: int, lines: int, keep_end: bool = False) -> str:
    """`text` in at most `lines` lines of `width`, with an ellipsis where it was cut."""
    if keep_end and len(text) > width * lines:
        text = "…" + text[-(width * lines - 1):]
    import textwrap

    wrapped = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return "\n".join(wrapped)


def emit_health(doc: dict, *, verbose: bool, as_json: bool) -> None:
    """health: the JSON document, or a summary (and with verbose every field, grouped)."""
    if as_json:
        print_json(doc)
        return
    from agentwatch.readers import health_view

    status, rows = health_view.summary(doc)
    groups = health_view.groups(doc) if verbose else []
    if not is_terminal():
        # `label: value`, one per line: greppable, and no box drawing off a terminal.
        lines = [f"status: {status}"] + [f"{r.label}: {r.value}" for r in rows]
        for group, items in groups:
            lines.append("")
            lines.append(f"[{group}]")
            prefix = "" if group == "recorder" else f"{group}."
            lines += [f"{prefix}{k}: {v}" for k, v in items]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    title = Text.assemble(("agentwatch ", "bold"), (status.upper(), _STATUS_STYLE.get(status, "bold")))
    table = Table(box=box.ROUNDED, show_header=False, title=title, title_justify="left", expand=False)
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    console = _console()
    # One screen: a reason may take two lines, any other row one; what is cut ends in "…"
    # (the store's path keeps its end). --verbose, --json and plain output carry it whole.
    value_width = max(20, console.width - max(len(r.label) for r in rows) - 7)
    for r in rows:
        value = _fit(r.value, value_width, 2 if r.label in ("reason", "start it") else 1, keep_end=r.label == "store")
        table.add_row(r.label, Text(value, style=_LEVEL_STYLE.get(r.level, "")))
    console.print(table)
    for group, items in groups:
        sub = Table(box=box.SIMPLE, show_header=False, title=group, title_justify="left", pad_edge=False)
        sub.add_column("key", style="dim", no_wrap=True)
        sub.add_column("value", overflow="fold")
        for k, v in items:
            sub.add_row(k, v)
        console.print(sub)


def emit_reconcile(result, as_json: bool) -> None:
    """reconcile: the predicates, then one row per boundary count."""
    if as_json:
        print_json(result.to_json())
        return
    from agentwatch.readers.reconcile import boundaries

    marks = {True: "holds", False: "FAILS", None: "skipped"}
    preds = [(p.name, marks[p.ok], p.detail) for p in result.predicates]
    rows = boundaries(result)
    heading = f"reconcile {result.store} (head seq {result.head_seq})"
    if not is_terminal():
        lines = [heading, ""]
        w = max(len(n) for n, _, _ in preds)
        lines += [f"{n:<{w}}  {m:<7}  {neutralize(d)}" for n, m, d in preds]
        lines.append("")
        bw = max(len(b) for b, _, _ in rows)
        cw = max(len(c) for _, c, _ in rows)
        lines += [f"{b:<{bw}}  {c:>{cw}}  {s}" for b, c, s in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    styles = {"holds": "green", "FAILS": "bold red", "skipped": "yellow"}
    table = Table("predicate", "result", "detail", title=heading, title_justify="left", box=box.ROUNDED)
    table.columns[2].overflow = "fold"
    for n, m, d in preds:
        table.add_row(n, Text(m, style=styles[m]), neutralize(d, keep_lines=True))
    counts = Table("boundary", "count", "source", title="counts", title_justify="left", box=box.ROUNDED)
    counts.columns[1].justify = "right"
    for b, c, s in rows:
        counts.add_row(b, c, Text(s, style="dim"))
    console = _console()
    console.print(table)
    console.print(counts)


def emit_processes(report, as_json: bool) -> None:
    """processes: the counts, then one line per finding."""
    if as_json:
        print_json(report.to_json())
        return
    lines = [f"processes {report.store}: {_plural(report.sessions_followed, 'session')} followed, "
             f"{_plural(report.roots, 'harness process', 'harness processes')}, "
             f"{_plural(report.trees, 'process tree')} ({report.hook_trees} of them hooks), "
             f"{_plural(report.calls_checked, 'shell call')} checked"]
    if report.calls_unfollowed:
        lines.append(f"{_plural(report.calls_unfollowed, 'shell call')} in sessions the witness did not follow "
                     "(not checked)")
    if report.unsettled:
        lines.append(f"{_plural(report.unsettled, 'tree or call', 'trees or calls')} too recent to judge (--settle)")
    if report.lost_events:
        lines.append(f"the witness lost {_plural(report.lost_events, 'kernel event')}: findings near a loss may be "
                     "the loss")
    for f in report.findings:
        loss = " (near a loss)" if f.during_loss else ""
        lines.append(f"{f.kind} at seq {f.seq}, session {neutralize(str(f.session_id))}: {neutralize(f.detail)}{loss}")
    if not report.findings:
        lines.append("no findings")
    for line in lines:
        say(line)


def _clock(ns: int, with_date: bool = False) -> str:
    import time as _time

    secs, rest = divmod(ns, 1_000_000_000)
    fmt = "%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S"
    return _time.strftime(fmt, _time.gmtime(secs)) + ("" if with_date else f".{rest // 1_000_000:03d}")


def emit_sessions(summaries, as_json: bool) -> None:
    """sessions: one row per session; on a terminal the columns fit its width."""
    if as_json:
        print_json([s.to_json() for s in summaries])
        return
    from agentwatch.readers.health_view import duration

    terminal = is_terminal()
    console = _console() if terminal else None
    width = console.width if console is not None else 0
    wide = width >= 100 or not terminal
    header = ["harness", "session", "cwd", "started (UTC)", "duration", "prompts", "tools", "fail", "deny",
              "last event", "coverage"]
    rows = []
    for s in summaries:
        sid = neutralize(s.session_id)
        if terminal:
            keep = 13 if wide else 9
            sid = sid if len(sid) <= keep else sid[: keep - 1] + "…"
        started = _clock(s.started_ns, True)
        rows.append([s.harness, sid, neutralize(s.cwd or "-"), started if wide else started[5:16],
                     duration(s.duration_s), str(s.prompts), str(s.tool_calls), str(s.failures), str(s.denials),
                     neutralize(s.last_event or "-"), getattr(s, "coverage", None) or "-"])
    if any(getattr(s, "erased", 0) for s in summaries):
        # Erased records stay counted (docs/erasure.md); the column shows once a session has one.
        header.insert(9, "erased")
        numeric_extra = True
        for s, r in zip(summaries, rows):
            r.insert(9, str(s.erased))
    else:
        numeric_extra = False
    if not wide:
        header[4], header[5] = "dur", "prom"
        header[-1] = "cov"  # at 80 columns: "17/20" says what "17/20 · 3 missing" does
        for r in rows:
            del r[2]
            r[-1] = r[-1].split(" · ")[0]
        del header[2]
    gap = 2 if wide else 1
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    if terminal and wide and sum(widths) + gap * (len(widths) - 1) > width:
        # The working directory gives way first: its end says most, so it keeps that.
        room = max(8, width - (sum(widths) - widths[2]) - gap * (len(widths) - 1))
        for r in rows:
            if len(r[2]) > room:
                r[2] = "…" + r[2][-(room - 1):]
        widths[2] = room
    numeric = {"prompts", "prom", "tools", "fail", "deny"} | ({"erased"} if numeric_extra else set())

    def line(cells) -> str:
        return (" " * gap).join(c.rjust(w) if h in numeric else c.ljust(w)
                                for c, w, h in zip(cells, widths, header)).rstrip()

    if console is None:
        sys.stdout.write("\n".join([line(header)] + [line(r) for r in rows]) + "\n")
        return
    from rich.text import Text

    console.print(Text(line(header), style="bold"), markup=False, highlight=False, crop=False, no_wrap=True)
    fail_col, deny_col = header.index("fail"), header.index("deny")
    for s, r in zip(summaries, rows):
        text = Text(line(r))
        at = 0
        for i, w in enumerate(widths):
            if (i == fail_col and s.failures) or (i == deny_col and s.denials):
                text.stylize("red" if i == fail_col else "yellow", at, at + w)
            at += w + gap
        console.print(text, markup=False, highlight=False, crop=False, no_wrap=True)


# -- show: a session's timeline ------------------------------------------------------

_FOLD_LINES = 3  # a long summary takes at most this many lines, then an ellipsis
_OUTCOME_STYLE = {"ok": "green", "error": "bold red", "denied": "yellow", "interrupted": "yellow",
                  "open": "cyan", "unpaired": "magenta"}
_MASK = r"\[REDACTED:[a-z0-9_]+:hmac-sha256:[0-9a-f]+\]|hmac-sha256:[0-9a-f]{32}"


def _ms(value) -> str:
    if value is None:
        return ""
    if value < 1000:
        return f"{value:.0f} ms"
    from agentwatch.readers.health_view import duration

    return duration(value / 1000)


_EVENT_LABEL = {"session_start": "started", "session_end": "ended", "subagent_start": "subagent",
                "subagent_end": "subagent end", "notification": "notice"}


def _fold(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken after a space where one is near,
    never inside a redaction mask that fits a line."""
    import re

    words = [w for w in re.split(f"({_MASK}| )", text) if w]
    pieces: list[str] = [""]
    for word in words:
        atomic = len(word) <= width
        if atomic and len(pieces[-1]) + len(word) > width and pieces[-1]:
            pieces.append("")
            if word == " ":
                continue
        if atomic:
            pieces[-1] += word
            continue
        for ch in word:
            if len(pieces[-1]) + 1 > width:
                pieces.append("")
            pieces[-1] += ch
    return [p.rstrip() if i < len(pieces) - 1 else p for i, p in enumerate(pieces)]


def timeline_cells(item, millis: bool = True) -> tuple[str, str, str, str, str, str]:
    """(time, seq, what, outcome, duration, summary) of one item; recorded text neutralized."""
    what = item.name if item.kind == "tool" else _EVENT_LABEL.get(item.kind, item.kind)
    if item.kind == "permission" and item.detail.get("decision") == "deny":
        what = "denied"
    summary = neutralize(item.summary or "")
    if item.detail.get("unpaired"):
        summary = "(no start) " + summary
    if item.detail.get("error"):  # why the call failed or was refused, as its end said
        summary = f"{summary}; {item.outcome or 'error'}: {neutralize(str(item.detail['error']))}".lstrip("; ")
    outcome = item.outcome or ""
    if item.findings:
        outcome = (outcome + " " if outcome else "") + "!" + ",".join(f.get("kind", "?") for f in item.findings)
    clock = _clock(item.at_ns)
    return clock if millis else clock[:8], f"#{item.seq}", neutralize(what or "-"), outcome, _ms(item.duration_ms), summary


def timeline_printer(as_json: bool):
    """A function printing a batch of timeline items (show, show -f).

    Columns: time, seq, tool or event, outcome, duration, then the summary, last so
    that off a terminal it is printed whole and on a terminal it folds under itself
    (at most three lines, then an ellipsis).
    """
    out = sys.stdout
    if as_json:
        def emit_json(batch) -> None:
            out.write("".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n" for i in batch))
            out.flush()
        return emit_json
    console = _console() if is_terminal() else None
    width = console.width if console is not None else 0
    wide = console is None or width >= 100
    widths = (12 if wide else 8, 5, 16 if wide else 12, 8, 7)
    indent = sum(widths) + 2 * len(widths)

    def head(cells) -> str:
        t, s, w, o, d = cells
        w = w if len(w) <= widths[2] else w[: widths[2] - 1] + "…"  # whole at the summary's start (emit)
        return f"{t:<{widths[0]}}  {s:>{widths[1]}}  {w:<{widths[2]}}  {o:<{widths[3]}}  {d:>{widths[4]}}  "

    def emit(batch) -> None:
        for item in batch:
            *cells, summary = timeline_cells(item, millis=wide)
            if console is not None and len(cells[2]) > widths[2]:
                summary = f"{cells[2]}: {summary}" if summary else cells[2]  # the name the column cut, whole
            prefix = head(cells)
            if console is None:
                out.write((prefix + summary).rstrip() + "\n")
                continue
            from rich.text import Text

            pieces = _fold(summary, max(10, width - indent)) if summary else [""]
            if len(pieces) > _FOLD_LINES:
                pieces = pieces[:_FOLD_LINES]
                pieces[-1] = pieces[-1][:-1] + "…"
            text = Text(prefix + pieces[0])
            for piece in pieces[1:]:
                text.append("\n" + " " * indent + piece)
            text.highlight_regex(_MASK, "reverse magenta")
            outcome = cells[3]
            if outcome:
                at = prefix.find(outcome, len(cells[0]) + len(cells[1]) + 4)
                style = "bold red" if item.findings else _OUTCOME_STYLE.get(item.outcome or "", "")
                if at >= 0 and style:
                    text.stylize(style, at, at + len(outcome))
            if item.kind == "prompt":
                text.stylize("bold")
            elif item.kind != "tool":
                text.stylize("dim")
            console.print(text, markup=False, highlight=False, crop=False, overflow="ignore", no_wrap=True)
        out.flush()
    return emit


def emit_timeline_header(harness: str, session_id: str, as_json: bool, coverage: dict | None = None) -> None:
    if as_json:
        return
    line = f"session {neutralize(session_id)} ({harness})"
    if coverage is not None:
        line += f" · coverage {coverage.get('summary')}"
        for call in coverage.get("missing") or []:
            line += (f"\n  missing: {neutralize(str(call.get('tool')))} {neutralize(str(call.get('call_id') or '-'))}"
                     f" at {neutralize(str(call.get('file')))}:{call.get('line')}")
    if is_terminal():
        _console().print(line, style="bold", markup=False, highlight=False)
    else:
        sys.stdout.write(line + "\n")


def emit_export(report, as_json: bool) -> None:
    """export: the report as JSON on stdout (otlp), or one line on stderr (stdout may carry the records)."""
    if as_json:
        print_json(report.to_json())
        return
    what = f"{report.records} records"
    if report.format == "otlp":
        what += f" as {report.spans} spans in {report.requests} requests"
    where = f" (seq {report.first_seq}..{report.last_seq})" if report.first_seq is not None else ""
    print(f"agentwatch: exported {what} to {report.destination}{where}", file=sys.stderr)
    if report.rejected_spans:
        print(f"agentwatch: the endpoint rejected {report.rejected_spans} spans (partial success)", file=sys.stderr)
    if report.resent:
        print(f"agentwatch: sent seq {report.resent[0]}..{report.resent[1]} again", file=sys.stderr)
    if report.skipped:
        print(f"agentwatch: acknowledged seq {report.skipped[0]}..{report.skipped[1]} without sending", file=sys.stderr)


def emit_coverage(results, as_json: bool) -> None:
    """coverage: one line per session, then one per missing, extra or mismatched call."""
    if as_json:
        print_json([r.to_json() for r in results])
        return
    for r in results:
        where = f" ({neutralize(r.transcript.path)})" if r.transcript else ""
        say(f"{r.harness} {neutralize(r.session_id)}: {r.summary()}{where}")
        if r.problem is not None:
            say(f"  {r.problem.kind}: {neutralize(r.problem.detail)}")
        for f in r.findings:
            if f.kind in ("missing", "extra", "mismatched"):
                at = f" at {neutralize(str(f.file))}:{f.line}" if f.file else f" seq {f.seq}"
                say(f"  {f.kind}: {neutralize(str(f.tool))} {neutralize(str(f.call_id or '-'))}{at}")
            elif f.source == "process_witness":
                say(f"  {f.kind} (process witness, seq {f.seq}): {neutralize(f.detail)}")
