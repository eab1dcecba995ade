"""Commands that read the store for a person or a consumer: `path`, `sql`, `tail`, `reconcile`, `sessions`, `show`, `export`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, SocketOpt, StoreOpt, app, fail, interrupted
from agentwatch.errors import AgentwatchError


@app.command("path")
def path_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the store path, to open it with other SQLite tools."""
    from agentwatch import config
    from agentwatch.cli import render

    try:
        resolved = config.load({"store": store}).store
    except AgentwatchError as exc:
        fail(exc)
    render.emit_path(resolved, json_out)


@app.command("sql")
def sql_cmd(
    query: str = typer.Argument(..., help="One read-only SQL statement, e.g. \"SELECT * FROM events LIMIT 5\"."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
    csv_out: bool = typer.Option(False, "--csv", help="CSV with a header row on stdout."),
    tsv_out: bool = typer.Option(False, "--tsv", help="Tab-separated values (the default into a pipe or a file)."),
    wide: bool = typer.Option(False, "--wide", help="A table whose lines are as long as their rows (no wrapping), also into a pipe."),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.001, metavar="SECONDS", help="Stop the query after this long (reading its rows included)."
    ),
    max_memory: int = typer.Option(
        512, "--max-memory", min=1, metavar="MB", help="Stop the query when SQLite would need more memory than this."
    ),
    pg: Optional[str] = typer.Option(None, "--pg", metavar="URL", help="Query the fleet server instead (postgresql://..., a read-only login)."),
) -> None:
    """Run a read-only SQL query against the store (writes and ATTACH are refused).

    Tables and views: `events` (one row per harness event), `chain` (hashes as
    sha256:hex), `records` (every row, with forensic columns). See docs/schema.md.
    Reading pragmas work, `pragma table_info(events)` and
    `SELECT * FROM pragma_table_info('events')` included.

    No value is ever cut. On a terminal, a table whose long values wrap in
    their column (a row per block when the columns do not fit); --wide keeps
    each row on one line. Into a pipe or a file, tab-separated values: a
    header row, then a line per row, with backslash, tab, newline and carriage
    return written \\\\, \\t, \\n, \\r and NULL as \\N (PostgreSQL's COPY text format).

    Exactly one statement: several are refused before any runs. --timeout
    bounds the whole command, the printing of the rows included. A query that
    passes --timeout or --max-memory is stopped and exits 2; Ctrl-C exits 130.
    Exit 3 when the store cannot be read.
    With --pg, the query runs on the fleet server, read-only by role: the login
    must be a reading one (a member of agentwatch_read), and `events`,
    `tool_calls`, `sources`, `findings` name the fleet's views (docs/fleet.md).
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import sql as sqlquery
    from agentwatch.store import db

    if json_out + csv_out + tsv_out + wide > 1:
        fail("choose one of --json, --csv, --tsv and --wide", 2)
    fmt = ("json" if json_out else "csv" if csv_out else "tsv" if tsv_out else
           "table" if wide or render.is_terminal() else "tsv")  # fmt: skip
    try:
        if pg is not None:
            from agentwatch.fleet import sql as fleet_sql

            columns, rows = fleet_sql.run(pg, query)
            render.emit_rows(columns, rows, fmt, wide=wide)
        else:
            resolved = config.load({"store": store}).store
            with db.store_errors(resolved):
                columns, rows = sqlquery.run(resolved, query, timeout=timeout, max_memory_mb=max_memory)
                render.emit_rows(columns, rows, fmt, wide=wide)
    except AgentwatchError as exc:
        fail(exc)


@app.command("tail")
def tail_cmd(
    store: Optional[Path] = StoreOpt,
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep following new commits until Ctrl-C."),
    from_seq: Optional[int] = typer.Option(None, "--from", min=1, metavar="SEQ", help="Start at this seq (default: the last 10 rows, or the consumer's cursor)."),
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Durable named consumer: resume after its acknowledged seq, and acknowledge what is printed."),
    kind: Optional[list[str]] = typer.Option(None, "--kind", metavar="KIND", help="Only rows of this kind (event, attestation, gap); repeatable."),
    all_kinds: bool = typer.Option(False, "--all", help="Also the recorder's attestation rows (hidden by default when no --kind, --consumer or --json)."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object per record (seq, record_id, kind, hash, payload)."),
    socket_path: Optional[Path] = SocketOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="At most N rows, then stop (without --from: the last N); the next page is --from the last seq + 1."),
) -> None:
    """Print committed records in seq order, and follow new ones with -f.

    One line per record, fitted to the terminal's width: time, seq, harness,
    session, event and tool (the date and the row's hash too when there is
    room). The recorder's own attestation rows are left out unless --all,
    --kind, --consumer or --json is given: a consumer and a script see every row.

    Subscribes on the daemon's socket when a daemon answers there (records are
    pushed as they commit), else reads the store directly (read-only); either
    way never ahead of what is committed. With --consumer NAME, each printed batch is logged and acknowledged in the
    consumer's durable cursor, so a killed consumer resumes after its last
    acknowledged seq (at-least-once delivery, exactly-once accounting by seq;
    see `agentwatch reconcile --consumer`). Ctrl-C exits 130 after a line
    saying what the consumer acknowledged.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import tail
    from agentwatch.store import db

    if all_kinds and kind:
        fail("choose one of --all and --kind", 2)
    if not (kind or all_kinds or consumer or json_out):
        kind = ["event", "gap"]  # what a person follows; the recorder's attestations only with --all
    try:
        cfg = config.load({"store": store, "socket": socket_path})
        resolved = cfg.store
        # A catch-up bar only when the records go elsewhere (a pipe), never into the screen it draws on.
        with db.store_errors(resolved), \
                render.progress("catching up", enabled=not json_out and not render.is_terminal()) as update:
            next_from = tail.run_tail(
                resolved, follow=follow, from_seq=from_seq, consumer=consumer,
                kinds=kind, emit=render.tail_printer(json_out),
                socket_path=cfg.socket, progress=update, limit=limit,
            )
        if next_from is not None and from_seq is not None:
            from agentwatch.readers import paging

            typer.echo(paging.more_remain("--from", next_from), err=True)
    except KeyboardInterrupt:
        interrupted(f"consumer {consumer}: acknowledged up to the last batch printed" if consumer
                    else "tail only reads: nothing to commit", document=False)
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)


@app.command("reconcile")
def reconcile_cmd(
    store: Optional[Path] = StoreOpt,
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Check this consumer's deliveries against the store."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", metavar="FILE", help="Sender ledger (JSON lines: record_id, outcome, seq)."),
    pg: Optional[str] = typer.Option(None, "--pg", metavar="URL", help="Reconcile the fleet server's copy instead (postgresql://...)."),
    source: Optional[str] = typer.Option(None, "--source", metavar="STORE_ID", help="With --pg: only this source."),
    silent_after: float = typer.Option(900.0, "--silent-after", metavar="SECONDS", help="With --pg: a source that has not reported for this long is silent."),
    json_out: bool = JsonOpt,
) -> None:
    """Account for every record at every boundary, exactly.

    Predicates: chain_ok, contiguous, no_loss (every ledger record_id stored,
    acked at the stored seq), exactly_once (no record_id twice; the consumer's
    delivered set equals the stored set over its range), within_bounds (all
    hold), store_identity (the store remembered at this path, its schema as
    shipped). Counts by kind keep the recorder's own rows apart from events.
    With --pg, each source on the fleet server instead: chain_ok (every hash
    recomputed in PostgreSQL), contiguous, head, lag, last report, last
    checkpoint and findings; within bounds when the chain verifies, it is
    contiguous, it has no findings of its own login, it reported within
    --silent-after, replaces no live store and copies no other (docs/fleet.md).
    Exit 0 within bounds, 1 a predicate failed, 2 usage, 3 store or server unreachable,
    4 replaced, 5 rolled_back, 6 truncated, 7 schema_changed.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import reconcile
    from agentwatch.store import db

    if pg is not None:
        from agentwatch.fleet import reconcile as fleet_reconcile

        if consumer is not None or ledger is not None:
            fail("--consumer and --ledger reconcile a local store; not with --pg", 2)
        try:
            central = fleet_reconcile.reconcile(pg, source, silent_after_s=silent_after)
        except AgentwatchError as exc:
            fail(exc)
        render.emit_fleet_reconcile(central, json_out)
        raise typer.Exit(0 if central.within_bounds else 1)
    if source is not None:
        fail("--source names a source on the fleet server; use it with --pg", 2)
    try:
        resolved = config.load({"store": store}).store
        with db.store_errors(resolved), render.progress("verifying the chain", enabled=not json_out) as update:
            result = reconcile.reconcile(resolved, consumer=consumer, ledger=ledger, progress=update)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_reconcile(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("sessions")
def sessions_cmd(
    store: Optional[Path] = StoreOpt,
    since: Optional[str] = typer.Option(None, "--since", metavar="AGE|TIME", help="Only sessions active since then: an age (30m, 2h, 7d) or an ISO 8601 time (UTC unless it names a zone)."),
    harness: Optional[str] = typer.Option(None, "--harness", metavar="HARNESS", help="Only sessions of this harness (claude-code, codex, ...)."),
    json_out: bool = JsonOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=0, metavar="N", help="Only the N sessions whose last event is newest (default: every session; a page: read back from the head, fast on any store)."),
    before: Optional[int] = typer.Option(None, "--before", min=1, metavar="SEQ", help="Only sessions whose last event is before this seq: the next page is --before the smallest last_seq of this one."),
) -> None:
    """List recorded sessions: one row per session, oldest first.

    Columns: harness, session id, working directory, start (UTC), duration
    (first to last event), prompts, tool calls, failed calls, denials
    (permission decisions `deny` and denied calls) and the last event's name.
    `agentwatch show SESSION` prints one session's timeline.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import sessions
    from agentwatch.record.adapters import HARNESSES

    try:
        since_ns = sessions.parse_since(since) if since is not None else None
        found, next_before = sessions.sessions_page(config.load({"store": store}).store, since_ns=since_ns,
                                                    harness=harness, limit=limit, before_seq=before)
    except AgentwatchError as exc:
        fail(exc)
    if not found and harness is not None and harness not in HARNESSES:  # a misspelt name, not an empty result
        fail(f"no sessions of harness {harness!r}, which agentwatch does not know (one of: {', '.join(HARNESSES)})", 2)
    render.emit_sessions(found, json_out)
    if next_before is not None:
        from agentwatch.readers import paging

        typer.echo(paging.more_remain("--before", next_before), err=True)


@app.command("show")
def show_cmd(
    session: str = typer.Argument(..., metavar="SESSION", help="A session id, or an unambiguous prefix of one (see `agentwatch sessions`)."),
    store: Optional[Path] = StoreOpt,
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep printing new lines as the session goes on, until Ctrl-C."),
    harness: Optional[str] = typer.Option(None, "--harness", metavar="HARNESS", help="The session's harness, when two harnesses used the same id."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document (with -f: one JSON object per line)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="Only the session's last N lines (default: every line); the next page is --before the first line's seq."),
    before: Optional[int] = typer.Option(None, "--before", min=1, metavar="SEQ", help="Only lines whose seq is below SEQ (the next page of --limit)."),
) -> None:
    """Print a session's timeline: one line per prompt, per tool call and per notable event.

    Each line: time (UTC), seq, the tool or event, a short summary of the input
    (long ones folded), the outcome and the duration. A tool call's start and end
    are one line; with -f a call still running shows `open` and is printed again
    when it ends. Redaction masks stay visible; a line whose record an integrity
    finding names is marked `!KIND`. Recorded text is printed with control and
    bidi characters made visible, so it cannot drive the terminal.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import paging, sessions

    if follow and before is not None:
        fail("--before pages back through what is stored; -f follows what comes next: choose one", 2)
    try:
        resolved = config.load({"store": store}).store
        harness, session_id, head, items = sessions.timeline(resolved, session, harness)
        coverage = sessions.coverage_of(resolved, harness, session_id)
        items, next_before = paging.page_back(items, lambda i: i.seq, limit=limit, before=before)
        if next_before is not None:
            typer.echo(paging.more_remain("--before", next_before), err=True)
        if json_out and not follow:
            render.print_json({"harness": harness, "session_id": session_id, "items": [i.to_json() for i in items],
                               "coverage": coverage, "next": {"before": next_before} if next_before else None})
            return
        render.emit_timeline_header(harness, session_id, json_out, coverage)
        emit = render.timeline_printer(json_out)
        emit(items)
        if follow:
            for batch in sessions.follow_timeline(resolved, harness, session_id, after_seq=head):
                emit(batch)
    except KeyboardInterrupt:
        interrupted("show only reads: nothing to commit")
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)


@app.command("export")
def export_cmd(
    fmt: str = typer.Option(..., "--format", metavar="jsonl|otlp", help="jsonl: one record per line on stdout; otlp: OpenTelemetry traces over OTLP/HTTP."),
    store: Optional[Path] = StoreOpt,
    from_seq: Optional[int] = typer.Option(None, "--from", min=1, metavar="SEQ", help="Start at this seq (default 1, or the consumer's cursor)."),
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Durable named consumer: resume after what it acknowledged; bound to its format and endpoint."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", metavar="URL", help="OTLP/HTTP endpoint, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)."),
    content: bool = typer.Option(False, "--content", help="otlp: also send tool arguments and results and prompt text (off by default: they may hold what a telemetry backend should not)."),
    resend_uncertain: bool = typer.Option(False, "--resend-uncertain", help="Send again a batch whose answer was never logged (same span ids)."),
    skip_uncertain: bool = typer.Option(False, "--skip-uncertain", help="Acknowledge such a batch without sending it."),
    json_out: bool = typer.Option(False, "--json", help="otlp: a JSON report on stdout (jsonl writes records there)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="At most N records (default: up to the head); the next page is --from the last seq + 1."),
    state_dir: Optional[Path] = typer.Option(None, "--state-dir", metavar="DIR", show_default=False, help="Where the consumer's cursor and delivery log live, under consumers/ (config state_dir)."),
) -> None:
    """Export committed records, up to the head at the start, as JSON lines or OTLP traces.

    otlp follows the OpenTelemetry GenAI semantic conventions: a trace per
    session, an `invoke_agent` span per turn with the prompt, permission
    decisions and compactions as span events, and an `execute_tool` span per
    tool call (`gen_ai.tool.name`, `gen_ai.tool.call.id`). With --consumer NAME
    each run resumes after the last batch the endpoint acknowledged, so no
    record is sent twice to one endpoint. Exit 0 done, 1 an unsettled batch
    (see --resend-uncertain), 2 usage, 3 store or endpoint unreachable.
    See docs/export.md.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import export

    if fmt == "jsonl" and json_out:
        fail("--json is for --format otlp (jsonl already writes JSON lines)", 2)
    try:
        cfg = config.load({"store": store, "state_dir": state_dir})
        resolved = cfg.store
        with render.progress("exporting", enabled=not json_out and fmt == "otlp") as update:
            report = export.export(
                resolved, fmt=fmt, out=sys.stdout.buffer, endpoint=endpoint or export.default_endpoint(),
                from_seq=from_seq, consumer=consumer, content=content, resend_uncertain=resend_uncertain,
                skip_uncertain=skip_uncertain, progress=update, limit=limit, state_dir=cfg["state_dir"],
            )
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)
    render.emit_export(report, json_out)
    if report.next_from is not None:
        from agentwatch.readers import paging

        typer.echo(paging.more_remain("--from", report.next_from) if consumer is None else
                   f"agentwatch: more remain; the next page: the same command (consumer {consumer} resumes at seq "
                   f"{report.next_from})", err=True)
