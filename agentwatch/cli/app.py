"""The `agentwatch` command: thin over the library.

Each command parses its options, resolves its settings with config.load, calls
one library function, renders the result and maps errors to exit codes (0 ok,
1 a check found a problem, 2 usage or config error, 3 store or daemon
unreachable, 4-7 a store replaced, rolled back, truncated or with a changed
schema; errors.py; 130 interrupted by Ctrl-C, after one line saying what was committed; 141 a verdict
whose stdout closed before it was written). Data goes to stdout,
diagnostics and progress to stderr. rich is imported only by `render`.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from agentwatch import __version__
from agentwatch.cli import helptext, jsonerror
from agentwatch.errors import AgentwatchError

helptext.install()
helptext.install_argument_names()

app = typer.Typer(
    name="agentwatch",
    help="Tamper-evident flight recorder for AI coding agents.",
    epilog="A help's docs/NAME.md is installed with agentwatch: agentwatch docs NAME.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=jsonerror.Group,  # with --json, a usage error is a JSON document on stdout too
    rich_markup_mode=None,  # plain help: wraps at the width, never cuts an option name (and needs no rich)
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Paths are settings like any other: a command passes the flag (None when not given) to
# config.load, the one resolver, which adds the environment, the config files and the
# defaults in the documented order (docs/config.md).
StoreOpt = typer.Option(
    None, "--store",
    help="Store path (else AGENTWATCH_STORE, config `store`, $XDG_DATA_HOME/agentwatch/store.db).",
)
SocketOpt = typer.Option(
    None,
    "--socket",
    help="Daemon socket (else AGENTWATCH_SOCKET, config `socket`, $XDG_RUNTIME_DIR/agentwatch/agentwatch.sock).",
)
JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON on stdout (a failure: an error document).")


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C ended
_interrupt_said = False  # a command said what Ctrl-C left committed (main adds the line otherwise)


def fail(error: AgentwatchError | str, code: int | None = None, next_step: str | None = None) -> NoReturn:
    """Print one clear line on stderr (and the next step, when there is one) and exit with the error's code.

    With --json, stdout gets the same as one JSON error document (jsonerror).
    """
    global _interrupt_said
    message = str(error)
    exit_code = code if code is not None else getattr(error, "exit_code", 2)
    next_step = next_step or getattr(error, "next_step", None)
    _interrupt_said = _interrupt_said or exit_code == EXIT_INTERRUPTED
    print(f"agentwatch: {message}", file=sys.stderr)
    if next_step:
        print(f"agentwatch: next: {next_step}", file=sys.stderr)
    jsonerror.failed(exit_code, message, next_step)
    raise typer.Exit(exit_code)


def interrupted(committed: str, *, document: bool = True) -> NoReturn:
    """Ctrl-C, the same in every command: one line on stderr saying what was committed, exit 130.

    With --json the error document follows on stdout, except where stdout is a stream of records
    that Ctrl-C is the way to end (`tail -f --json`, a durable consumer): `document=False` keeps
    every line of that stream a record."""
    global _interrupt_said
    _interrupt_said = True
    print(f"agentwatch: interrupted (Ctrl-C); {committed}", file=sys.stderr)
    if document:
        jsonerror.failed(EXIT_INTERRUPTED, f"interrupted (Ctrl-C); {committed}", None)
    raise typer.Exit(EXIT_INTERRUPTED)


def version_callback(value: bool) -> None:
    if value:
        print(f"agentwatch {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True, help="Print the version."),
    schema_changed_ok: bool = typer.Option(
        False, "--schema-changed-ok",
        help="Let sql, sessions, show, tail and export answer from a store whose schema differs from the shipped "
        "one, with a warning each time (they refuse it otherwise, exit 7)."),
) -> None:
    """Tamper-evident flight recorder for AI coding agents."""
    if schema_changed_ok:
        from agentwatch.readers import schema_guard

        schema_guard.allow()


def main() -> None:
    try:
        app()
    except SystemExit as exc:
        # typer ends a command that Ctrl-C stopped with exit 130; one that did not say what it had
        # committed gets the line every command prints: each write is a transaction, whole or absent.
        if exc.code == EXIT_INTERRUPTED and not _interrupt_said:
            print(f"agentwatch: {jsonerror.INTERRUPTED}", file=sys.stderr)
        if exc.code == EXIT_INTERRUPTED:
            _forget_escaped_interrupt()
        jsonerror.flush_stdout()  # with the command's exit code, not Python's complaint about a closed pipe
        raise


def _forget_escaped_interrupt() -> None:
    """Keep exit 130 when run as `python -m agentwatch.cli` (as services and hooks run it).

    CPython marks a KeyboardInterrupt that escapes an `exec` of a string (dataclasses build their
    methods so, when a module is first imported) and keeps the mark after the exception is caught;
    a `-m` run that then exits by SystemExit is ended by SIGINT instead (status -2, not 130) when
    Ctrl-C lands inside such an import. An `exec` of a string that completes clears the mark.
    """
    exec("None")
