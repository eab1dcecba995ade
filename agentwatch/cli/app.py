"""The `agentwatch` command: thin over the library.

Each command parses its options, resolves its settings with config.load, calls
one library function, renders the result and maps errors to exit codes (0 ok,
1 a check found a problem, 2 usage or config error, 3 store or daemon
unreachable, 4-7 a store replaced, rolled back, truncated or with a changed
schema; errors.py). Data goes to stdout,
diagnostics and progress to stderr. rich is imported only by `render`.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from agentwatch import __version__
from agentwatch.errors import AgentwatchError

app = typer.Typer(
    name="agentwatch",
    help="Tamper-evident flight recorder for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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
    app()
