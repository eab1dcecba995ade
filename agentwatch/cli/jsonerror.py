"""With `--json`, a command that fails prints one JSON error document on stdout.

    {"error": {"code": 3, "kind": "unreachable", "message": "...", "next": "..."}}

`code` is the exit code, `kind` its name (KINDS), `message` the line stderr carries (without
the `agentwatch: ` prefix), `next` the step to take (a command, or null when there is none to
name). The person's line stays on stderr; the exit code is the one the command has without
--json. A script reading stdout so always gets a document: the command's own, or this one.
A command whose failure is itself its document (`health` with no daemon: `status: stopped`)
prints that one. Usage errors the command line itself finds (a bad option value, a missing
argument) get the document too when `--json` was among the arguments. docs/json.md, "Errors".

The root group (Group) also turns what no command handles into these: click's usage errors,
Ctrl-C, and a number too large for a store or a clock (OverflowError: exit 2, one line); and a
stdout whose reader went away (`| head`) into exit 0 for a listing, and into 141 for a command
whose exit code is its verdict (VERDICTS), which never says 0 for a verdict nobody received.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from typer import Exit, core
from typer._click import exceptions as click_exceptions
from typer._click.globals import get_current_context

# Each exit code's name in the document (errors.py, app.EXIT_INTERRUPTED).
KINDS = {1: "problem", 2: "usage", 3: "unreachable", 4: "replaced", 5: "rolled_back", 6: "truncated",
         7: "schema_changed", 130: "interrupted", 141: "pipe_closed"}


# What Ctrl-C leaves when the command did not say more (app.main prints it on stderr).
INTERRUPTED = "interrupted (Ctrl-C); what was committed before stays, nothing is half-written"


def document(code: int, message: str, next_step: str | None) -> dict[str, Any]:
    return {"error": {"code": code, "kind": KINDS.get(code, "error"), "message": message, "next": next_step}}


def _json_param(command: Any) -> str | None:
    """The name of the command's `--json` parameter, or None when it has none."""
    for param in getattr(command, "params", ()):
        if "--json" in getattr(param, "opts", ()):
            return param.name
    return None


def failed(code: int, message: str, next_step: str | None) -> None:
    """A running command failed: print the document when it was given --json."""
    ctx = get_current_context(silent=True)
    if ctx is None:
        return
    name = _json_param(ctx.command)
    if name is None or not ctx.params.get(name):
        return
    if next_step is None and code == 2:
        next_step = f"{ctx.command_path} --help"
    _print(document(code, message, next_step))


def _print(doc: dict[str, Any]) -> None:
    try:
        print(json.dumps(doc), flush=True)
    except BrokenPipeError:
        pass  # nobody reads stdout any more; stderr still says it


def _leaf(group: Any, args: list[str]) -> tuple[Any, str]:
    """The command the arguments name under the root group and its path (None when they name none)."""
    command, path = group, [group.name or "agentwatch"]
    for token in args:
        commands = getattr(command, "commands", None)
        if commands is None:
            break
        command = commands.get(token)
        if command is None:
            return None, ""
        path.append(token)
    return (None, "") if hasattr(command, "commands") else (command, " ".join(path))


def flush_stdout() -> None:
    """Flush stdout before the process exits; a reader gone (`| head`) is no error to report."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_nowhere()


def _stdout_to_nowhere() -> None:
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass  # not a file descriptor (a test's capture): nothing is flushed into a closed pipe there


# Commands whose exit code is their answer (docs/cli.md): cut short by a closed pipe, they exit
# PIPE_CLOSED rather than 0, so `agentwatch verify | head` under `set -o pipefail` never passes.
VERDICT_COMMANDS = ("verify", "coverage", "processes", "reconcile", "health", "checkpoint")
VERDICTS = frozenset(f"agentwatch {name}" for name in VERDICT_COMMANDS)
PIPE_CLOSED = 141


class Group(core.TyperGroup):
    """The root command: a usage error in a command given `--json` is a document on stdout too,
    and so is a Ctrl-C the command did not handle itself (it said nothing on stdout then)."""

    def invoke(self, ctx: Any) -> Any:
        args = [*ctx._protected_args, *ctx.args]
        given = args[:args.index("--")] if "--" in args else args
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a reader gone by now is the case below, not an error at exit
            return result
        except BrokenPipeError:
            # Whoever read stdout stopped (`| head`) and has what it wanted: a listing exits 0, as
            # `tail` and `export` do, with nothing more said (the rest of stdout goes nowhere). A
            # command whose exit code is a verdict never says "ok" for a verdict it could not
            # deliver: it exits 141, the shell's code for a writer ended by a closed pipe.
            _stdout_to_nowhere()
            command, path = _leaf(self, args)
            raise Exit(PIPE_CLOSED if path in VERDICTS else 0) from None
        except click_exceptions.ClickException as exc:
            command, path = _leaf(self, args)  # the error's ctx is missing for some parser errors
            if "--json" in given and _json_param(command) is not None:
                _print(document(exc.exit_code, exc.format_message(), f"{path} --help"))
            raise
        except OverflowError as exc:
            # A number past what a store, a clock or SQLite holds (a seq of 30 digits, an age of
            # 10^11 days, --settle 1e400): a usage error, said in one line, not a traceback.
            command, path = _leaf(self, args)
            message = f"a value given is out of range ({exc})"
            print(f"agentwatch: {message}", file=sys.stderr)
            if "--json" in given and _json_param(command) is not None:
                _print(document(2, message, f"{path} --help"))
            raise Exit(2) from None
        except KeyboardInterrupt:
            if "--json" in given and _json_param(_leaf(self, args)[0]) is not None:
                _print(document(130, INTERRUPTED, None))
            raise


def attach(app: Any) -> None:
    app.info.cls = Group


__all__ = ["KINDS", "Group", "attach", "document", "failed"]
