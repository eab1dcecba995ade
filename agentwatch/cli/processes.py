"""`agentwatch processes`: the process witness's rows reconciled with the reported tool calls."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError


@app.command("processes")
def processes_cmd(
    store: Optional[Path] = StoreOpt,
    session: Optional[str] = typer.Option(None, "--session", metavar="ID", help="Only this session (an id or an unambiguous prefix of one)."),
    settle: float = typer.Option(2.0, "--settle", min=0.0, metavar="SECONDS",
                                 help="Leave unjudged what started or ended this recently (the witness's rows lag)."),
    json_out: bool = JsonOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="Only the N newest findings (default: every finding); the next page is --before the smallest seq of this one."),
    before: Optional[int] = typer.Option(None, "--before", min=1, metavar="SEQ", help="Only findings whose seq is below SEQ (the next page of --limit)."),
) -> None:
    """Pair what the kernel saw run under each harness with the shell tool calls its hooks reported.

    Needs a daemon that ran with the process witness (`serve --process-witness`, docs/reliability.md).
    Findings: unrecorded_exec (a process tree the harness started that no tool call covers) and
    phantom_call (a shell call whose command never started a process). Only sessions the witness
    followed are checked. Exit 0 no finding, 1 findings, 2 usage, 3 store unreachable.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.readers import paging, processes, sessions
    from agentwatch.store import db

    try:
        resolved = config.load({"store": store}).store
        if session is not None:  # a prefix, as `show` takes; a session not in the store is an error, not "no findings"
            session = sessions.resolve(resolved, session)[1]
        with db.store_errors(resolved):
            report = processes.reconcile(resolved, session, settle_s=settle)
    except AgentwatchError as exc:
        fail(exc)
    found = bool(report.findings)  # the exit code is the whole report's, whichever page is printed
    report.findings, report.next_before = paging.page_back(report.findings, lambda f: f.seq, limit=limit, before=before)
    render.emit_processes(report, json_out)
    if report.next_before is not None:
        typer.echo(paging.more_remain("--before", report.next_before), err=True)
    raise typer.Exit(1 if found else 0)
