"""docs/cli.md and docs/json.md, generated from the code so they cannot go stale.

    make reference                                   # rewrite both
    .venv/bin/python tests/support/reference_docs.py --check   # what `make lint` runs

cli.md lists every command's usage, help and options, read from the typer app.
json.md lists the fields of every `--json` document and the JSON types each was seen
with, found by running each command on a store made here in a temporary directory (a real
daemon answers `health`, a local OTLP receiver `export`). A field whose name is data (a
count per kind, a path) is listed with that data as it appears for the store made here.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[2]
CLI_MD = REPO / "docs" / "cli.md"
JSON_MD = REPO / "docs" / "json.md"


# --- cli.md ----------------------------------------------------------------------------------------

def commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    import typer.main

    from agentwatch.cli import app

    def walk(group: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        for name, command in sorted(group.commands.items()):
            if hasattr(command, "commands"):
                yield from walk(command, prefix + (name,))
            else:
                yield prefix + (name,), command

    yield from walk(typer.main.get_command(app), ())


def _type_name(param: Any) -> str:
    import typing

    annotation = param.type_descriptor.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is not None and args:
        annotation = args[0]
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is list and args:
        annotation = args[0]
    return getattr(annotation, "__name__", str(annotation)).upper()


def _option_row(param: Any) -> str:
    names = ", ".join(f"`{o}`" for o in [*param.opts, *getattr(param, "secondary_opts", [])])
    metavar = getattr(param, "metavar", None) or ("" if getattr(param, "is_flag", False) else _type_name(param))
    default = param.default
    shown = "" if default in (None, False, ()) or callable(default) or not getattr(param, "show_default", True) \
        else f" (default: `{default}`)"
    text = " ".join((getattr(param, "help", None) or "").split()).replace("|", "\\|")
    return f"| {names} | {metavar.replace('|', '/')} | {text}{shown} |"


def cli_markdown() -> str:
    lines = ["# Command reference", "",
             "Generated from the code by `make reference` (tests/support/reference_docs.py); `make lint`",
             "fails when it is stale. Every command also answers `-h`/`--help`. Settings a command does",
             "not take as an option come from the environment and the config file (docs/config.md).", "",
             "**Pages.** Every command that prints a list takes `--limit N` (default: the whole list, or",
             "as its help says). Lists read back from the newest (`sessions`, `show`, `coverage`,",
             "`processes`, `hold list`) take `--before SEQ` for the next page; lists read forward in seq",
             "order (`tail`, `export`) take `--from SEQ`. When rows remain past a page, one line on",
             "stderr names the next page (`agentwatch: more remain; the next page: --before 41`); stdout",
             "is the list alone, and a `--json` that is one object also carries `\"next\"`",
             "(`{\"before\": 41}`, `{\"from\": 42}`, or null on the last page). `install --list` and",
             "`config show` print fixed, short lists (one row per harness or setting) and take no",
             "`--limit`.", ""]
    for path, command in commands():
        name = "agentwatch " + " ".join(path)
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        options = [p for p in command.params if p.param_type_name == "option"]
        shown_options = command.options_metavar if getattr(command, "options_metavar", None) else "[OPTIONS]"
        usage = " ".join([name, *([shown_options] if options or shown_options != "[OPTIONS]" else []),
                          *(f"[{a.name.upper()}]" if not a.required else a.name.upper() for a in arguments)])
        lines += [f"## `{name}`", "", f"    {usage}", "", inspect.cleandoc(command.help or "").strip(), ""]
        if arguments:
            lines += ["| argument | help |", "|---|---|"]
            lines += [f"| `{a.name.upper()}` | {' '.join((getattr(a, 'help', None) or '').split())} |" for a in arguments]
            lines.append("")
        if options:
            lines += ["| option | value | help |", "|---|---|---|", *(_option_row(o) for o in options), ""]
    return "\n".join(lines).rstrip() + "\n"


# --- json.md ---------------------------------------------------------------------------------------

def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def shape(value: Any, path: str, out: dict[str, set[str]], tmp: str) -> None:
    out[path or "(document)"].add(_kind(value))
    if isinstance(value, dict):
        for key, item in value.items():
            key = str(key).replace(tmp, "<tmp>")
            shape(item, f"{path}.{key}" if path else key, out, tmp)
    elif isinstance(value, list):
        for item in value:
            shape(item, f"{path}[]", out, tmp)


class Run:
    """Commands run in-process in an environment of their own under a temporary directory."""

    def __init__(self, tmp: Path):
        from typer.testing import CliRunner

        self.tmp = tmp
        self.runner = CliRunner()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTWATCH_")}
        self.env.update(HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "data"), XDG_STATE_HOME=str(tmp / "state"),
                        XDG_CONFIG_HOME=str(tmp / "config"), XDG_RUNTIME_DIR=str(tmp / "run"))
        for var in ("HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
            Path(self.env[var]).mkdir(mode=0o700, parents=True, exist_ok=True)
        self.docs: dict[str, list[Any]] = {}

    def __call__(self, label: str, *args: str, lines: bool = False, ok: tuple[int, ...] = (0,)) -> Any:
        from agentwatch.cli import app

        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)
        try:
            result = self.runner.invoke(app, list(args))
        finally:
            os.environ.clear()
            os.environ.update(saved)
        if result.exit_code not in ok:
            raise SystemExit(f"{' '.join(args)}: exit {result.exit_code}: {result.stderr or result.stdout}")
        docs = [json.loads(line) for line in result.stdout.splitlines() if line.strip()] if lines \
            else [json.loads(result.stdout)]
        self.docs.setdefault(label, []).extend(docs)
        return docs[-1] if docs else None


EVENTS = [
    {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": "/src/p", "prompt": "list the files"},
    {"hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/src/p", "tool_name": "Bash",
     "tool_use_id": "toolu_1", "tool_input": {"command": "ls"}},
    {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": "/src/p", "tool_name": "Bash",
     "tool_use_id": "toolu_1", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a.py"}},
    {"hook_event_name": "Stop", "session_id": "s1", "cwd": "/src/p"},
]


ERRORS = "(errors)"  # the label of the error documents collected


def collect(tmp: Path) -> dict[str, list[Any]]:
    from support.otlpreceiver import Receiver

    run = Run(tmp)
    store = str(tmp / "store.db")
    # The session's transcript where Claude Code writes it: toolu_1 as hooked, and toolu_2 whose
    # hooks never ran, so `coverage` names one missing call.
    transcript = Path(run.env["HOME"]) / ".claude" / "projects" / "-src-p" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(json.dumps({
        "type": "assistant", "uuid": f"a{n}", "sessionId": "s1", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": "ls"}}]}}) + "\n"
        for n in (1, 2)))
    source = tmp / "events.jsonl"
    source.write_text("".join(json.dumps(dict(e, transcript_path=str(transcript))) + "\n" for e in EVENTS))
    run("import", "import", source.as_posix(), "--store", store, "--harness", "claude-code", "--json")
    run("init", "init", "--store", store, "--json")
    run("path", "path", "--store", store, "--json")
    run("sql", "sql", "--store", store, "--json", "SELECT seq, kind, session_id FROM records WHERE seq <= 2")
    run("tail", "tail", "--store", store, "--json", lines=True)
    run("sessions", "sessions", "--store", store, "--json")
    run("show", "show", "s1", "--store", store, "--json")
    run("coverage", "coverage", "--store", store, "--json", ok=(1,))
    run("reconcile", "reconcile", "--store", store, "--json")
    run("processes", "processes", "--store", store, "--settle", "0", "--json")
    run("verify", "verify", "--store", store, "--json")
    key = run("key", "key", "--store", store, "--json")
    run("checkpoint", "checkpoint", "--store", store, "--json")
    bundle = tmp / "bundle.json"
    _prove(run, store, bundle)
    run("verify-bundle", "verify-bundle", str(bundle), "--key", key["verifier_key"], "--json")
    run("config show", "config", "show", "--store", store, "--json")
    run("install", "install", "claude-code", "--json")
    run("uninstall", "uninstall", "claude-code", "--json")
    # The system service's plans (--dry-run changes nothing; the paths are the test's own).
    where = ["--user", "awref", "--base", str(tmp / "svc"), "--runtime-dir", str(tmp / "svc-run"),
             "--unit-path", str(tmp / "agentwatch.service")]
    run("service install", "service", "install", "--system", "--kind", "systemd", "--dry-run", *where, "--json")
    run("service uninstall", "service", "uninstall", "--system", "--kind", "systemd", "--dry-run", *where, "--json")
    with Receiver() as receiver:
        run("export", "export", "--format", "otlp", "--store", store, "--endpoint", receiver.endpoint, "--json")
    hold = run("hold add", "hold", "add", "--session", "s1", "--reason", "an example", "--store", store, "--json")
    run("hold list", "hold", "list", "--all", "--store", store, "--json")
    run("hold release", "hold", "release", str(hold["hold_id"]), "--reason", "an example", "--store", store, "--json")
    run("retention run", "retention", "run", "--days", "30", "--store", store, "--json")
    run("archive", "archive", "--before", "2000-01-01T00:00:00Z", "--output", str(tmp / "a.archive"),
        "--store", store, "--json")
    run("erase", "erase", "2", "--reason", "an example", "--store", store, "--json")
    _health(run, tmp, store)
    # Failures: a store that is not there, and a usage error the command line finds.
    run(ERRORS, "sql", "--store", str(tmp / "absent.db"), "--json", "SELECT 1", ok=(3,))
    run(ERRORS, "tail", "--store", store, "--from", "0", "--json", ok=(2,))
    run(ERRORS, "import", "-", "--store", store, "--batch-size", "0", "--json", ok=(2,))
    keyless = str(tmp / "keyless.db")
    run("init", "init", "--store", keyless, "--json")
    run(ERRORS, "key", "--store", keyless, "--json", ok=(1,))  # no next step to name: `next` is null
    return run.docs


def _prove(run: Run, store: str, bundle: Path) -> None:
    from agentwatch.cli import app

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(run.env)
    try:
        result = run.runner.invoke(app, ["prove", "2", "--store", store, "--output", str(bundle)])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if result.exit_code != 0:
        raise SystemExit(f"prove: exit {result.exit_code}: {result.stderr}")


def _health(run: Run, tmp: Path, store: str) -> None:
    sock = Path(tempfile.mkdtemp(prefix="aw-ref-")) / "agentwatch.sock"
    env = {**run.env, "AGENTWATCH_STORE": store, "AGENTWATCH_SOCKET": str(sock)}
    log = open(tmp / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "serve", "--attest-interval", "0",
                             "--verify-interval", "0", "--checkpoint-interval", "0"],  # no timing in the document
                            env=env, stdout=log, stderr=log, cwd=tmp)
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("serve did not start: " + (tmp / "serve.log").read_text())
            time.sleep(0.05)
        run.env["AGENTWATCH_SOCKET"] = str(sock)
        run("health", "health", "--json")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        log.close()
        shutil.rmtree(sock.parent, ignore_errors=True)
        run.env.pop("AGENTWATCH_SOCKET", None)


def not_run(name: str) -> str | None:
    """Why a command's --json document is not generated here, or None."""
    if name == "ship" or name.startswith("fleet "):
        return "needs a fleet server (docs/fleet.md)"
    return None


def json_markdown() -> str:
    from agentwatch.cli import jsonerror

    tmp = Path(tempfile.mkdtemp(prefix="agentwatch-ref-"))
    try:
        docs = collect(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = ["# `--json` documents", "",
             "Generated by `make reference` (tests/support/reference_docs.py), which runs each command on a",
             "store of four events it makes (a real daemon answers `health`); `make lint` fails when this page",
             "is stale. Each row is a field path (`[]`: every element of an array) and the JSON types it",
             "had. A document may add fields; these are the ones every reader can rely on today. Where a",
             "field's name is data (a count per kind, a redaction type), the names seen here are listed.", ""]
    with_json = sorted(" ".join(path) for path, c in commands()
                       if any("--json" in getattr(p, "opts", []) for p in c.params))
    for name in with_json:
        lines += [f"## `agentwatch {name} --json`", ""]
        if not_run(name):
            lines += [f"Not generated here: {not_run(name)}.", ""]
            continue
        if name not in docs:
            raise SystemExit(f"no example run of `agentwatch {name} --json`: add one to collect() in "
                             "tests/support/reference_docs.py (or a reason to not_run())")
        fields: dict[str, set[str]] = defaultdict(set)
        for doc in docs[name]:
            shape(doc, "", fields, str(tmp))
        if name == "tail":
            lines += ["One JSON object per line, one per record.", ""]
        lines += ["| field | type |", "|---|---|", *(f"| `{p}` | {' or '.join(sorted(t))} |"
                                                  for p, t in sorted(fields.items())), ""]
    errors: dict[str, set[str]] = defaultdict(set)
    for doc in docs.pop(ERRORS):
        shape(doc, "", errors, str(tmp))
    lines += ["## Errors", "",
              "A command given `--json` that fails prints one error document on stdout instead of its own, and",
              "exits with the code it has without `--json`; the person's line stays on stderr. `code` is",
              "the exit code and `kind` its name:",
              ", ".join(f"{c} `{k}`" for c, k in jsonerror.KINDS.items()) + ".",
              "`message` is what stderr says (without the `agentwatch: ` prefix) and `next` the step to take",
              "(a command; `agentwatch COMMAND --help` for a usage error), or null. Usage errors the command",
              "line itself finds (a bad option value, a missing argument) are documents too when `--json` is",
              "among the arguments (before any `--`). `health` with no daemon answering prints its own",
              "document (`status` `stopped`, exit 3). `tail --json` ends its lines with this document when",
              "it fails; Ctrl-C, the way a follow ends, adds nothing to them (every line stays a record;",
              "exit 130 and the line on stderr say it was interrupted).", "",
              "| field | type |", "|---|---|", *(f"| `{p}` | {' or '.join(sorted(t))} |"
                                              for p, t in sorted(errors.items())), ""]
    missing = set(docs) - set(with_json)
    if missing:
        raise SystemExit(f"documents collected for commands without --json: {sorted(missing)}")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    pages = {CLI_MD: cli_markdown(), JSON_MD: json_markdown()}
    if "--check" in argv:
        stale = [str(p.relative_to(REPO)) for p, text in pages.items() if not p.exists() or p.read_text() != text]
        if stale:
            import difflib

            for path, text in pages.items():
                old = path.read_text().splitlines() if path.exists() else []
                sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(
                    old, text.splitlines(), str(path.relative_to(REPO)), "generated", lineterm=""))
            print(f"stale: {', '.join(stale)}; run `make reference` and commit the result", file=sys.stderr)
            return 1
        return 0
    for path, text in pages.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file: `support` from tests/
    sys.exit(main(sys.argv[1:]))
