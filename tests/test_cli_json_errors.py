"""With --json, a failing command prints one JSON error document on stdout (issue 31, item 10):
{"error": {"code", "kind", "message", "next"}}, the person's line still on stderr and the exit code
unchanged. Every command that takes --json, on a store that does not exist and on a bad argument
(the command line's own usage errors included); Ctrl-C too."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from support.reference_docs import commands
from test_cli_interrupts import events_in, payload_lines, wait_for
from typer.testing import CliRunner

from agentwatch.cli import app, jsonerror
from agentwatch.errors import StoreMissing

MISSING_NEXT = StoreMissing.next_step


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in ("HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        (tmp_path / var).mkdir(mode=0o700)
        monkeypatch.setenv(var, str(tmp_path / var))
    for var in ("AGENTWATCH_STORE", "AGENTWATCH_SOCKET", "AGENTWATCH_SPOOL", "AGENTWATCH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def run(*args: str):
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, result.stdout, result.stderr


def error(code: int, kind: str, message: str, next_step: str | None) -> str:
    return json.dumps({"error": {"code": code, "kind": kind, "message": message, "next": next_step}}) + "\n"


# Every command that reads or writes a store it does not create, against a path with no store.
ON_A_STORE = {
    "archive": ["archive", "--before", "90d", "-o", "{tmp}/a.archive"],
    "checkpoint": ["checkpoint"],
    "coverage": ["coverage"],
    "erase": ["erase", "3", "--reason", "a secret"],
    "export": ["export", "--format", "otlp", "--endpoint", "http://127.0.0.1:9"],
    "hold add": ["hold", "add", "--session", "s1", "--reason", "an incident"],
    "hold list": ["hold", "list"],
    "hold release": ["hold", "release", "1", "--reason", "closed"],
    "key": ["key"],
    "processes": ["processes"],
    "reconcile": ["reconcile"],
    "retention run": ["retention", "run", "--days", "3"],
    "sessions": ["sessions"],
    "ship": ["ship", "--to", "postgresql://ship@127.0.0.1:9/aw", "--once"],
    "show": ["show", "s1"],
    "sql": ["sql", "SELECT 1"],
    "tail": ["tail"],
    "verify": ["verify"],
}
# Those that need no store, create one, or only name where it is: their failure is another one
# (the bad argument below), and `health` with no daemon prints its own document (test_cli_next_step).
NO_STORE_TO_MISS = {"config show", "fleet init", "fleet purge", "health", "import", "init", "install", "path",
                    "service install", "service uninstall", "uninstall", "verify-bundle"}


def json_commands() -> set[str]:
    return {" ".join(path) for path, command in commands()
            if any("--json" in getattr(p, "opts", ()) for p in command.params)}


def test_every_json_command_is_tried_here():
    assert set(ON_A_STORE) | NO_STORE_TO_MISS == json_commands()
    assert set(BAD) == json_commands()


@pytest.mark.parametrize("name", sorted(ON_A_STORE))
def test_a_missing_store(home, name):
    store = str(home / "none" / "store.db")
    args = [a.format(tmp=home) for a in ON_A_STORE[name]]
    code, out, err = run(*args, "--store", store)
    message = f"{store}: store does not exist"
    assert (code, out) == (3, error(3, "unreachable", message, MISSING_NEXT))
    assert err == f"agentwatch: {message}\nagentwatch: next: {MISSING_NEXT}\n"


# A bad argument per command: the command line's own checks (a value out of range, a missing
# argument, an unknown option) and the command's (a malformed age, a refused statement).
BAD = {
    "archive": (["archive", "--before", "someday", "-o", "a.archive"],
                "--since 'someday': expected an age (30m, 2h, 7d) or an ISO 8601 time"),
    "checkpoint": (["checkpoint", "extra"], "Got unexpected extra argument(s) (extra)"),
    "config show": (["config", "show", "--bogus"], "No such option: --bogus"),
    "coverage": (["coverage", "--since", "soon"], "--since 'soon': expected an age (30m, 2h, 7d) or an ISO 8601 time"),
    "erase": (["erase", "0", "--reason", "x"], "Invalid value for 'SEQ...': Input should be greater than or equal to 1"),
    "export": (["export", "--format", "xml"], "unknown format 'xml' (expected jsonl or otlp)"),
    "fleet init": (["fleet", "init", "notaurl"],
                   "the fleet server is neither a postgresql:// URL nor a libpq key=value string"),
    "fleet purge": (["fleet", "purge"], "Missing argument 'URL'."),
    "health": (["health", "--timeout", "0"], "Invalid value for '--timeout': Input should be greater than or equal to 0.1"),
    "hold add": (["hold", "add", "--session", "s1"], "Missing option '--reason'."),
    "hold list": (["hold", "list", "--all=3"], "Option '--all' does not take a value."),
    "hold release": (["hold", "release", "--reason", "r"], "Missing argument 'HOLD_ID'."),
    "import": (["import", "-", "--batch-size", "0"],
               "Invalid value for '--batch-size': Input should be greater than or equal to 1"),
    "init": (["init", "--new-store=x"], "Option '--new-store' does not take a value."),
    "install": (["install", "claude-code", "--scope", "nowhere"], "unknown scope 'nowhere'; choose user or project"),
    "key": (["key", "extra"], "Got unexpected extra argument(s) (extra)"),
    "path": (["path", "--bogus"], "No such option: --bogus"),
    "processes": (["processes", "--settle", "-1"], "Invalid value for '--settle': Input should be greater than or equal to 0"),
    "reconcile": (["reconcile", "--ledger", "/nonexistent/ledger.jsonl"],
                  "/nonexistent/ledger.jsonl: cannot read ledger (No such file or directory)"),
    "retention run": (["retention", "run", "--days", "-3"],
                      "Invalid value for '--days': Input should be greater than or equal to 0"),
    "sessions": (["sessions", "--since", "yesterdayish"],
                 "--since 'yesterdayish': expected an age (30m, 2h, 7d) or an ISO 8601 time"),
    "ship": (["ship", "--batch-rows", "0"], "Invalid value for '--batch-rows': Input should be greater than or equal to 1"),
    "service install": (["service", "install", "--dry-run"], "service install installs the system service only: "
                        "add --system (for the login service, `agentwatch service print systemd|launchd`)"),
    "service uninstall": (["service", "uninstall", "--bogus"], "No such option: --bogus (Possible options: --base, --user)"),
    "show": (["show", ""], "an empty session id: give a session id or a prefix of one (see `agentwatch sessions`)"),
    "sql": (["sql", "DELETE FROM records"], "only reading is allowed: this statement would write or change the connection"),
    "tail": (["tail", "--from", "0"], "Invalid value for '--from': Input should be greater than or equal to 1"),
    "uninstall": (["uninstall"], "Missing argument 'HARNESS'."),
    "verify": (["verify", "--bogus"], "No such option: --bogus (Possible options: --jobs)"),
    "verify-bundle": (["verify-bundle", "b.bundle", "--key", "x"], "--key: a verifier key is <name>+<hex key id>+<base64 key>"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("jsonerr") / "store.db"
    assert CliRunner().invoke(app, ["init", "--store", str(path)]).exit_code == 0
    return str(path)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_argument(home, store, monkeypatch, name):
    monkeypatch.setenv("AGENTWATCH_STORE", store)
    monkeypatch.chdir(home)
    args, message = BAD[name]
    code, out, err = run(*args)
    assert (code, out) == (2, error(2, "usage", message, f"agentwatch {name} --help"))
    assert message in err  # the person's line, on stderr as without --json


def test_without_json_stdout_stays_empty(home):
    result = CliRunner().invoke(app, ["sql", "SELECT 1", "--store", str(home / "none.db")])
    assert (result.exit_code, result.stdout) == (3, "")
    result = CliRunner().invoke(app, ["tail", "--from", "0"])
    assert (result.exit_code, result.stdout) == (2, "")


def test_json_after_a_double_dash_is_an_argument_not_the_option(home):
    result = CliRunner().invoke(app, ["sql", "--store", str(home / "none.db"), "--timeout", "x", "--", "--json"])
    assert (result.exit_code, result.stdout) == (2, "")


def test_a_command_without_json_gets_no_document(home):
    result = CliRunner().invoke(app, ["docs", "nosuchpage", "--json"])
    assert (result.exit_code, result.stdout) == (2, "")


def test_ctrl_c_in_import_is_a_document_naming_what_was_committed(tmp_path):
    store = tmp_path / "store.db"
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "import", "-", "--store", str(store),
                             "--harness", "claude-code", "--batch-size", "10", "--json"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("".join(payload_lines(0, 20)))
    proc.stdin.flush()
    wait_for(lambda: events_in(store) == 20, "the two batches to commit")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    said = "interrupted (Ctrl-C); 20 events committed; importing the same input again adds only the rest"
    assert (proc.returncode, out, err) == (130, error(130, "interrupted", said, None), f"agentwatch: {said}\n")


def test_ctrl_c_a_command_does_not_handle_is_a_document_too(home, monkeypatch):
    from agentwatch.readers import sessions

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sessions, "list_sessions", interrupted)  # Ctrl-C while the sessions are read
    code, out, _ = run("sessions")
    assert (code, out) == (130, error(130, "interrupted", jsonerror.INTERRUPTED, None))


def test_ctrl_c_ends_tail_json_lines_with_records_only(tmp_path):
    """Ctrl-C is how a follow ends: a consumer of the JSON lines (`--consumer`, a SIEM shipper)
    reads records only, and learns of the interrupt from the exit code and stderr."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(payload_lines(0, 2)))
    store = tmp_path / "store.db"
    assert CliRunner().invoke(app, ["import", str(source), "--store", str(store), "--harness", "codex"]).exit_code == 0
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "tail", "-f", "--json", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [proc.stdout.readline(), proc.stdout.readline()]  # the two events: tail is following now
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    said = "interrupted (Ctrl-C); tail only reads: nothing to commit"
    assert [json.loads(line)["kind"] for line in lines] == ["event", "event"]
    assert (proc.returncode, out, err) == (130, "", f"agentwatch: {said}\n")
