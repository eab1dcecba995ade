"""Issue 31, tried again as a new user would, with commands and inputs the first pass did not use:
what misled, each fixed. Screens in tmux at 80 and 120 columns; everything else exact."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support import sessions as fixture_sessions
from support import tmux
from test_views_tmux import WIDTHS, agentwatch, terminal_env
from typer.testing import CliRunner

from agentwatch.cli import app


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in ("HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        (tmp_path / var).mkdir(mode=0o700)
        monkeypatch.setenv(var, str(tmp_path / var))
    return tmp_path


@pytest.fixture(scope="module")
def session_store(tmp_path_factory):
    directory = tmp_path_factory.mktemp("newuser")
    with pytest.MonkeyPatch.context() as mp:
        fixture_sessions.build(directory / "store.db", mp)
    return directory


def own_dirs(root) -> dict[str, str]:
    """HOME and the XDG directories under `root`: what a command remembers stays in the test."""
    return {"HOME": str(root), **{var: str(root / var) for var in (
        "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")}}


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


UNKNOWN = "agentwatch: no session 'nosuch' in this store (see `agentwatch sessions`)\n"


def test_processes_takes_a_prefix_and_refuses_a_session_not_in_the_store(home, session_store):
    store = str(session_store / "store.db")
    code, out, _ = run("processes", "--store", store, "--session", "8a1c", "--json")
    assert (code, json.loads(out)["calls_unfollowed"]) == (0, 2)  # claude-code's two shell calls, by prefix
    assert run("processes", "--store", store, "--session", "nosuch") == (2, "", UNKNOWN)  # was "no findings", 0


def test_coverage_of_an_unknown_session_names_where_the_ids_are(home, session_store):
    assert run("coverage", "nosuch", "--store", str(session_store / "store.db")) == (2, "", UNKNOWN)


def test_a_hold_on_a_prefix_holds_the_session_it_names(home, tmp_path, session_store):
    """`hold add --session 8a1c2f0e` (its own help's example) stored the prefix, which matches no row."""
    store = tmp_path / "store.db"
    store.write_bytes((session_store / "store.db").read_bytes())
    code, out, _ = run("hold", "add", "--store", str(store), "--session", "8a1c", "--reason", "incident")
    assert code == 0 and out.endswith(" on session 8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e\n")
    code, out, _ = run("hold", "list", "--store", str(store), "--json")
    assert [h["scope"] for h in json.loads(out)] == [{"session_id": "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e"}]
    assert run("hold", "add", "--store", str(store), "--session", "nosuch", "--reason", "x") == (2, "", UNKNOWN)


def test_a_hold_before_1970_names_the_option_not_an_internal_field(home, tmp_path, session_store):
    """`hold add --since 0001-01-01` said "since_ns must be a time"."""
    store = tmp_path / "store.db"
    store.write_bytes((session_store / "store.db").read_bytes())
    assert run("hold", "add", "--store", str(store), "--since", "0001-01-01", "--reason", "x") == (
        2, "", "agentwatch: --since (since_ns) must be a time at or after 1970-01-01 UTC\n")


def test_init_makes_a_new_stores_directory(home):
    store = home / "new" / "place" / "store.db"
    code, out, _ = run("init", "--store", str(store), "--json")
    assert (code, json.loads(out)["status"], oct(os.stat(store.parent).st_mode & 0o777)) == (0, "created", "0o700")


BIG = "9" * 30
OUT_OF_RANGE = "agentwatch: a value given is out of range ({})\n"


@pytest.mark.parametrize("args,why", [
    (["tail", "--from", BIG], "int too big to convert"),
    (["tail", "--limit", BIG], "int too big to convert"),
    (["erase", BIG, "--reason", "x"], "int too big to convert"),
    (["sessions", "--before", BIG], "int too big to convert"),
    (["sessions", "--since", "99999999999d"], "int too big to convert"),
    (["sessions", "--since", "0001-01-01"], "int too big to convert"),
    (["coverage", "--since", "99999999999d"], "int too big to convert"),
    (["processes", "--settle", "1e400"], "cannot convert float infinity to integer"),
    (["retention", "run", "--days", "1e400"], "cannot convert float infinity to integer"),
])  # fmt: skip
def test_a_number_too_large_is_a_usage_error_not_a_traceback(home, session_store, tmp_path, args, why):
    store = tmp_path / "store.db"
    store.write_bytes((session_store / "store.db").read_bytes())
    assert run(*args, "--store", str(store)) == (2, "", OUT_OF_RANGE.format(why))
    if args[:2] == ["tail", "--limit"]:
        return  # with --json tail reads every kind, a query that takes any N: the last N is all 57 rows
    code, out, _ = run(*args, "--store", str(store), "--json")
    path = " ".join(args[:2] if args[0] == "retention" else args[:1])
    # The document is stdout's last line (tail --json has printed the records it read by then).
    assert json.loads(out.splitlines()[-1]) == {"error": {"code": 2, "kind": "usage", "message": OUT_OF_RANGE.format(why)[12:-1],
                                         "next": f"agentwatch {path} --help"}}


def test_a_config_error_says_where_the_settings_are_explained(home, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_PRIVACY", "bogus")
    code, _, err = run("path")
    assert code == 2 and err.splitlines()[1] == (
        "agentwatch: next: `agentwatch docs config` lists every setting, its values and where each is read from")


@pytest.mark.parametrize("args", [
    ["sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000) SELECT x FROM c"],
    ["sql", "--json", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000) SELECT x FROM c"],
    ["tail", "--all", "--from", "1"],
    ["export", "--format", "jsonl"],
])  # fmt: skip
def test_piped_into_head_every_command_ends_quietly_with_0(session_store, args):
    """`sql ... | head` exited 1 (tail and export 0); none says anything about the closed pipe."""
    assert closed_after_10_bytes(session_store, args) == 0


def closed_after_10_bytes(session_store, args) -> int:
    env = {**os.environ, **own_dirs(session_store / "home")}
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", *args, "--store", "store.db"],
                            cwd=session_store, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()  # what `head -c 10` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception ignored" not in err, err
    return proc.wait(60)


@pytest.mark.parametrize(("args", "code"), [
    (["reconcile", "--json"], 141),
    (["verify", "--json"], 141),
    (["sql", "--json", "SELECT 1"], 0),
])  # fmt: skip
def test_a_verdict_that_never_reached_its_reader_is_never_ok(session_store, args, code):
    """A check whose exit code is its answer must not say 0 for an answer it could not deliver
    (`agentwatch verify --json | true` under `set -o pipefail`): it exits 141; a listing exits 0."""
    env = {**os.environ, **own_dirs(session_store / "home")}
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", *args, "--store", "store.db"],
                            cwd=session_store, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the command prints a byte
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(60) == code
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception ignored" not in err, err


def test_no_group_cuts_its_commands_summaries():
    """`agentwatch --help` cut 24 of its 28 summaries with `...` even at 120 columns."""
    for width in WIDTHS:
        for group in ([], ["hold"], ["retention"], ["fleet"], ["config"], ["service"]):
            text = CliRunner().invoke(app, [*group, "--help"], terminal_width=width).stdout
            listed = text.split("\nCommands:\n", 1)[1]
            assert "..." not in listed, (width, group, listed)
            assert max(len(line) for line in text.splitlines()) <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_root_help_screen(tmp_path, width):
    with tmux.Terminal(tmp_path, width=width, height=80, env=terminal_env()) as term:
        screen = term.run(f"{agentwatch()} --help", exit_code=0)
    tmux.check_golden(f"help-{width}.txt", screen)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", ["verify --full", "processes", "coverage 8a1c"])
def test_long_statements_fold_at_spaces_on_a_terminal(session_store, tmp_path, width, command):
    """verify's line, processes' summary and coverage's details wrapped mid-word at 80 columns; on
    a terminal they fold at spaces, further lines indented; into a pipe each stays one line."""
    env = {**terminal_env(), **own_dirs(tmp_path)}
    line = f"{agentwatch()} {command} --store store.db"
    with tmux.Terminal(tmp_path, width=width, height=40, env=env) as term:
        screen = term.run(line, cwd=session_store)
    piped = subprocess.run(line, shell=True, cwd=session_store, env=env, capture_output=True, text=True).stdout
    assert max(len(s) for s in screen.splitlines()) <= width
    if max(len(s) for s in piped.splitlines()) > width:
        assert len(screen.splitlines()) > len(piped.splitlines())  # folded on the screen
    assert "".join(screen.split()) == "".join(piped.split())  # nothing lost
    if max(len(w) for w in piped.split()) < width - 4:  # a word longer than a line is cut, where else
        assert screen.split() == piped.split()  # folded at spaces only: not one word broken
    if command != "coverage 8a1c":  # coverage names the home directory's path, this test's own
        # The head's hash differs with each store made (its id is random); the layout does not.
        tmux.check_golden(f"{command.split()[0]}-{width}.txt", re.sub("sha256:[0-9a-f]{64}", "sha256:" + "h" * 64,
                                                                      screen))


def test_the_redaction_defaults_config_writes_out_are_the_redaction_packages():
    from agentwatch import config
    from agentwatch.record import redact

    assert config.KEYS["privacy"].default() == redact.REDACTED
    assert config.KEYS["redaction.salt_file"].default() == redact.default_salt_file()


def test_path_does_not_import_the_redaction_rules(tmp_path):
    """They compile on import (about 0.1 s); `path` resolves settings without them."""
    code = ("import sys; from agentwatch.cli import app; from typer.testing import CliRunner; "
            f"CliRunner().invoke(app, ['path', '--store', {str(tmp_path / 's.db')!r}]); "
            "print('agentwatch.record.redact' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n", done.stderr


def test_an_unwritable_bundle_path_is_a_usage_error_not_a_traceback(home, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"hook_event_name": "Stop", "session_id": "s1"}) + "\n")
    store = str(tmp_path / "store.db")
    assert run("import", str(source), "--store", store, "--harness", "claude-code")[0] == 0  # signs a checkpoint
    out = tmp_path / "absent" / "proof.bundle"
    assert run("prove", "1", "--store", store, "-o", str(out)) == (
        2, "", f"agentwatch: {out}: cannot write the bundle (No such file or directory)\n")


def test_an_archive_into_a_directory_is_refused_by_name(home, tmp_path):
    assert run("archive", "--before", "1d", "-o", str(tmp_path)) == (
        2, "", f"agentwatch: {tmp_path}: is a directory; give the archive's file name (-o DIR/NAME)\n")


@pytest.mark.parametrize("endpoint,said", [
    ("notaurl", "expected http://HOST:PORT or https://HOST (OTLP/HTTP)"),
    ("http://[::1", "not a URL (Invalid IPv6 URL)"),
    ("http://collector:99999", "not a URL (Port out of range 0-65535)"),
])  # fmt: skip
def test_a_malformed_otlp_endpoint_is_a_usage_error_not_a_traceback(home, session_store, endpoint, said):
    assert run("export", "--format", "otlp", "--endpoint", endpoint, "--store", str(session_store / "store.db")) == (
        2, "", f"agentwatch: OTLP endpoint {endpoint!r}: {said}\n")


def test_import_refuses_a_harness_name_no_reader_knows(home, tmp_path):
    """`import --harness claude` stored rows under a name `sessions --harness claude` calls unknown."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"hook_event_name": "Stop", "session_id": "s1"}) + "\n")
    store = tmp_path / "store.db"
    assert run("import", str(source), "--store", str(store), "--harness", "claude") == (
        2, "", "agentwatch: unknown harness 'claude' (one of: claude-code, codex, gemini-cli, cursor, copilot, vscode, "
               "cline, openhands, or unknown)\n")
    assert not store.exists()
    assert run("import", str(source), "--store", str(store), "--harness", "unknown")[0] == 0


def test_a_missing_argument_is_named_as_the_usage_line_spells_it():
    """`sql` without a query said "Missing argument 'query'." under a usage line naming QUERY."""
    code, _, err = run("sql")
    assert (code, err.splitlines()[0], err.splitlines()[-1]) == (
        2, "Usage: agentwatch sql [OPTIONS] QUERY", "Error: Missing argument 'QUERY'.")
