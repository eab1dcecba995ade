"""The `agentwatch` command: thin over the library.

Each command parses its options, calls one library function, renders the
result and maps errors to exit codes (0 ok, 1 a check found a problem, 2 usage
or config error, 3 store or daemon unreachable). Data goes to stdout,
diagnostics and progress to stderr. rich is imported only by `render`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn, Optional

import typer

from . import __version__, paths
from .errors import AgentwatchError

app = typer.Typer(
    name="agentwatch",
    help="Tamper-evident flight recorder for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

StoreOpt = typer.Option(
    None, "--store", envvar="AGENTWATCH_STORE", help="Store path [default: $XDG_DATA_HOME/agentwatch/store.db]."
)
SocketOpt = typer.Option(
    None,
    "--socket",
    envvar="AGENTWATCH_SOCKET",
    help="Daemon socket [default: $XDG_RUNTIME_DIR/agentwatch/agentwatch.sock].",
)
JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")


def fail(error: AgentwatchError | str, code: int | None = None) -> NoReturn:
    """Print one clear line on stderr and exit with the error's code."""
    message = str(error)
    exit_code = code if code is not None else getattr(error, "exit_code", 2)
    print(f"agentwatch: {message}", file=sys.stderr)
    raise typer.Exit(exit_code)


def version_callback(value: bool) -> None:
    if value:
        print(f"agentwatch {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True, help="Print the version."),
) -> None:
    """Tamper-evident flight recorder for AI coding agents."""


@app.command("path")
def path_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the store path, to open it with other SQLite tools."""
    from . import render

    resolved = paths.resolve_store(store)
    render.emit_path(resolved, json_out)


@app.command("sql")
def sql_cmd(
    query: str = typer.Argument(..., help="One read-only SQL statement, e.g. \"SELECT * FROM events LIMIT 5\"."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
    csv_out: bool = typer.Option(False, "--csv", help="CSV with a header row on stdout."),
) -> None:
    """Run a read-only SQL query against the store (writes and ATTACH are refused).

    Tables and views: `events` (one row per harness event), `chain` (hashes as
    sha256:hex), `records` (every row, with forensic columns). See docs/schema.md.
    """
    from . import render, sqlquery

    if json_out and csv_out:
        fail("choose one of --json and --csv", 2)
    try:
        columns, rows = sqlquery.run(paths.resolve_store(store), query)
        render.emit_rows(columns, rows, fmt="json" if json_out else "csv" if csv_out else "table")
    except AgentwatchError as exc:
        fail(exc)


@app.command("import")
def import_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="JSON lines: harness payloads or append envelopes."),
    store: Optional[Path] = StoreOpt,
    harness: str = typer.Option("unknown", "--harness", help="Harness name for lines that are bare payloads."),
    batch_size: int = typer.Option(1000, "--batch-size", min=1, max=100_000, help="Rows per transaction."),
    json_out: bool = JsonOpt,
) -> None:
    """Append JSON lines to a store, in batches, creating it if needed.

    A line is either a wire-protocol append envelope (has "record_id",
    "harness" and one of "payload"/"payload_text"/"payload_b64") or a bare
    harness payload (wrapped with a fresh record_id and --harness). Malformed
    lines are reported with their line numbers on stderr and do not stop the
    good ones; the exit code is 1 when any line was rejected.
    """
    from . import importer, render

    try:
        report = importer.import_lines(paths.resolve_store(store), source, harness=harness, batch_size=batch_size)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_import(report, json_out)
    raise typer.Exit(1 if report.rejected else 0)


@app.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook_cmd(
    ctx: typer.Context,
    harness: Optional[str] = typer.Argument(None, help="claude-code, codex, gemini-cli, cursor, copilot, vscode, cline, openhands."),
    event: Optional[str] = typer.Option(None, "--event", help="Event name, when the harness passes it outside the payload."),
) -> None:
    """Record one hook invocation (input on stdin); always exits 0. See docs/hook.md.

    Same as `agentwatch-hook`. Hooks should run the faster file form that
    `install` writes: `python -I -S /abs/path/agentwatch/hook.py HARNESS`.
    """
    from . import hook

    argv = [harness, *(["--event", event] if event is not None else []), *ctx.args] if harness else []
    hook.run(argv)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
