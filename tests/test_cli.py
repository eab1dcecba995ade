import csv
import io
import json
import sqlite3

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app

runner = CliRunner()


def run(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


LINES = [
    '{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}',
    "this is not json",
    "",
    '{"record_id":"r-1","harness":"claude-code","payload":{"hook_event_name":"Stop","session_id":"s1"}}',
    '{"record_id":"r-1","harness":"claude-code","payload":{"hook_event_name":"Stop","session_id":"s1"}}',
    '{"record_id":"r-2","harness":"claude-code","payload_text":"{\\"hook_event_name\\":\\"SessionEnd\\"}"}',
]


def write_lines(path, lines, tail=b""):
    path.write_bytes("\n".join(lines).encode() + b"\n" + tail)


def kinds(store):
    conn = sqlite3.connect(store)
    try:
        return conn.execute("SELECT kind, count(*) FROM records GROUP BY kind ORDER BY kind").fetchall()
    finally:
        conn.close()


def test_import_reports_bad_lines_by_number_and_keeps_good_ones(tmp_path, store_path):
    source = tmp_path / "in.jsonl"
    write_lines(source, LINES, tail=b"\xff\xfe\n")
    result = run("import", "--store", store_path, source, "--harness", "claude-code")
    assert result.exit_code == 1
    assert "line 2: not valid JSON" in result.stderr
    assert "line 7: not valid UTF-8" in result.stderr
    assert "3 stored, 1 duplicates, 2 rejected (of 6 lines)" in result.stderr
    # Rejected lines are recorded as gap rows: the store says what it was not given.
    assert kinds(store_path) == [("event", 3), ("gap", 2)]


def test_import_json_report(tmp_path, store_path):
    source = tmp_path / "in.jsonl"
    write_lines(source, LINES)
    result = run("import", "--store", store_path, source, "--json")
    report = json.loads(result.stdout)
    assert report["lines"] == 5 and report["stored"] == 3 and report["duplicates"] == 1 and report["rejected"] == 1
    assert report["errors"] == [{"line": 2, "reason": "not valid JSON: Expecting value: line 1 column 1 (char 0)"}]


def test_import_from_stdin_in_small_batches(store_path):
    lines = [json.dumps({"hook_event_name": "Notification", "n": i}) for i in range(25)]
    result = run("import", "--store", store_path, "-", "--batch-size", "7", input="\n".join(lines) + "\n")
    assert result.exit_code == 0, result.stderr
    assert kinds(store_path) == [("event", 25)]


def test_import_missing_file_is_a_usage_error(tmp_path, store_path):
    result = run("import", "--store", store_path, tmp_path / "absent.jsonl")
    assert result.exit_code == 2
    assert "absent.jsonl: no such file" in result.stderr
    assert result.stdout == ""


@pytest.fixture
def filled_store(tmp_path, store_path):
    source = tmp_path / "in.jsonl"
    write_lines(source, LINES)
    assert run("import", "--store", store_path, source, "--harness", "claude-code").exit_code == 1
    return store_path


def test_sql_json(filled_store):
    result = run("sql", "--store", filled_store, "SELECT seq, harness, event_name FROM events ORDER BY seq", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [
        {"seq": 1, "harness": "claude-code", "event_name": "PreToolUse"},
        {"seq": 3, "harness": "claude-code", "event_name": "Stop"},
        {"seq": 4, "harness": "claude-code", "event_name": "SessionEnd"},
    ]


def test_sql_csv(filled_store):
    result = run("sql", "--store", filled_store, "SELECT seq, kind FROM records ORDER BY seq", "--csv")
    assert list(csv.reader(io.StringIO(result.stdout))) == [["seq", "kind"], ["1", "event"], ["2", "gap"], ["3", "event"], ["4", "event"]]


def test_sql_table_by_default(filled_store):
    result = run("sql", "--store", filled_store, "SELECT tool_name FROM events WHERE seq = 1")
    assert result.exit_code == 0
    assert "tool_name" in result.stdout and "Bash" in result.stdout


def test_sql_chain_view_prints_hashes(filled_store):
    result = run("sql", "--store", filled_store, "SELECT prev_hash, hash FROM chain WHERE seq = 1", "--json")
    row = json.loads(result.stdout)[0]
    assert row["prev_hash"] == "sha256:" + "0" * 64
    assert row["hash"].startswith("sha256:") and len(row["hash"]) == 71


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM records",
        "UPDATE records SET kind = 'gap'",
        "INSERT INTO _agentwatch_meta VALUES ('k', 'v')",
        "CREATE TABLE x (y)",
        "DROP TRIGGER records_append_only_delete",
        "PRAGMA query_only = 0",
        "PRAGMA user_version = 7",
        "BEGIN IMMEDIATE",
    ],
)
def test_sql_refuses_writes(filled_store, query):
    before = filled_store.read_bytes()
    result = run("sql", "--store", filled_store, query)
    assert result.exit_code == 2
    assert "only reading is allowed" in result.stderr
    assert filled_store.read_bytes() == before
    assert kinds(filled_store) == [("event", 3), ("gap", 1)]


def test_sql_refuses_attach(tmp_path, filled_store):
    other = tmp_path / "other.db"
    result = run("sql", "--store", filled_store, f"ATTACH '{other}' AS other")
    assert result.exit_code == 2
    assert "ATTACH is refused" in result.stderr
    assert not other.exists()


def test_sql_errors_are_clear(filled_store, tmp_path):
    result = run("sql", "--store", filled_store, "SELECT * FROM nowhere")
    assert result.exit_code == 2 and "no such table: nowhere" in result.stderr
    result = run("sql", "--store", tmp_path / "absent.db", "SELECT 1")
    assert result.exit_code == 3 and "does not exist" in result.stderr
    result = run("sql", "--store", filled_store, "SELECT 1; SELECT 2")
    assert result.exit_code == 2 and "one statement per query" in result.stderr


def test_path_defaults_to_xdg_and_honours_overrides(isolated_env, monkeypatch, tmp_path):
    result = run("path")
    assert result.stdout.strip() == str(isolated_env / "data" / "agentwatch" / "store.db")
    monkeypatch.setenv("AGENTWATCH_STORE", str(tmp_path / "env.db"))
    assert run("path").stdout.strip() == str(tmp_path / "env.db")
    assert run("path", "--store", tmp_path / "flag.db").stdout.strip() == str(tmp_path / "flag.db")
    assert json.loads(run("path", "--json", "--store", tmp_path / "flag.db").stdout) == {
        "store": str(tmp_path / "flag.db"),
        "exists": False,
    }


def _commands(group, prefix=()):
    import typer.main

    click_group = typer.main.get_command(group)
    for name, command in click_group.commands.items():
        yield prefix + (name,), command
        if hasattr(command, "commands"):
            for sub, subcommand in command.commands.items():
                yield prefix + (name, sub), subcommand


def test_every_command_has_help():
    for path, command in _commands(app):
        assert command.help and command.help.strip(), f"{' '.join(path)} has no help"
        result = run(*path, "--help")
        assert result.exit_code == 0, path
        assert "Usage" in result.stdout


def test_import_applies_the_configured_privacy_mode(isolated_env, tmp_path, store_path):
    config_dir = isolated_env / "config" / "agentwatch"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('privacy = "metadata-only"\n')
    source = tmp_path / "in.jsonl"
    source.write_text('{"hook_event_name":"PreToolUse","session_id":"s1","tool_name":"Bash","tool_input":{"command":"cat notes-4471.txt"}}\n')
    result = run("import", "--store", store_path, source, "--harness", "claude-code")
    assert result.exit_code == 0, result.stderr
    payload = sqlite3.connect(store_path).execute("SELECT payload FROM records").fetchone()[0]
    assert "notes-4471" not in payload
    assert json.loads(payload)["tool"]["name"] == "Bash"


def test_import_default_mode_masks_secrets(tmp_path, store_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"hook_event_name": "PreToolUse", "tool_input": {"command": f"git push https://x:{token}@example.com"}}) + "\n")
    assert run("import", "--store", store_path, source, "--harness", "claude-code").exit_code == 0
    assert token not in sqlite3.connect(store_path).execute("SELECT payload FROM records").fetchone()[0]
