"""`agentwatch coverage`: each session's transcript against its recorded tool calls (docs/record.md, "Coverage")."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, SocketOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError


@app.command("coverage")
def coverage_cmd(
    session: Optional[str] = typer.Argument(None, metavar="[SESSION]", help="A session id or an unambiguous prefix (default: every session)."),
    since: Optional[str] = typer.Option(None, "--since", metavar="AGE|TIME", help="Only sessions active since then: an age (30m, 2h, 7d) or an ISO 8601 time."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
    submit: bool = typer.Option(False, "--submit", help="Also hand each transcript's digest and call list to the daemon, which records a coverage row saying who supplied it (the service deployment: the daemon cannot read your files)."),
    socket_path: Optional[Path] = SocketOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="Only the N sessions whose last event is newest (default: every session); the next page is --before the smallest last seq of this one."),
    before: Optional[int] = typer.Option(None, "--before", min=1, metavar="SEQ", help="Only sessions whose last event is before this seq (the next page of --limit)."),
) -> None:
    """Pair each session's transcript with its recorded tool calls.

    Reads the transcript the harness wrote (where it writes them, bounded in
    size and time) and reports per session the calls in both, the calls
    **missing** from the record (with the transcript's file and line), the
    **extra** recorded calls the transcript lacks, and **mismatched** calls.
    A transcript the parser does not understand is `coverage_unknown_format`.
    Where the process witness ran (Linux, `serve --process-witness`), each
    session also gets its `unrecorded_exec` and `phantom_call` findings
    (docs/reliability.md). Exit 1 when a call is missing, a transcript could
    not be paired (a harness that keeps no transcript is listed, and does
    not count), or the witness names a finding.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.coverage import pairing
    from agentwatch.readers import processes, sessions

    try:
        cfg = config.load({"store": store, "socket": socket_path})
        since_ns = sessions.parse_since(since) if since is not None else None
        # The process witness's trees (Linux, readers/processes.py) are a second source beside the
        # transcript: a shell call no process ran, a process no call reported.
        page: list = []
        results = pairing.coverage(cfg.store, session=session, since_ns=since_ns,
                                   sources=[processes.coverage_source()], limit=limit, before_seq=before, page=page)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_coverage(results, json_out)
    if page and page[0] is not None:
        from agentwatch.readers import paging

        typer.echo(paging.more_remain("--before", page[0]), err=True)
    if submit:
        from agentwatch.daemon import health

        for r in results:
            if r.transcript is None:
                continue
            message = {"op": "coverage", "harness": r.harness, "session_id": r.session_id,
                       "transcript": pairing.supplied_document(r.transcript)}
            try:
                reply = health.request(cfg.socket, message, configured=cfg.sources["socket"] != "default")
            except AgentwatchError as exc:
                fail(exc)
            if reply.get("ok") is not True:
                fail(f"the daemon refused the coverage of {r.session_id}: {reply.get('message')}", 1)
    witnessed = any(f.source == "process_witness" for r in results for f in r.findings)
    raise typer.Exit(1 if witnessed or any(r.status not in (pairing.COMPLETE, pairing.UNAVAILABLE) for r in results)
                     else 0)
