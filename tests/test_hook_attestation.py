"""Hook-config attestation: a real daemon watches the config `install` wrote; removing, editing,
narrowing and redirecting the entry are each named in `health`, in a `config` row and by `verify`;
restoring it is recorded too. The hook client refuses a socket the environment names in place of
the configured one, and spools the attempt with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.daemon import Daemon, wait_for
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.coverage import hookconfig, manifest
from agentwatch.store import db

HOOK = Path(__file__).resolve().parent.parent / "agentwatch" / "hook.py"


@pytest.fixture
def installed(isolated_env, monkeypatch):
    """agentwatch installed for Claude Code in the user scope; the settings file it wrote."""
    monkeypatch.setenv("AGENTWATCH_SERVE_HOOK_WATCH_INTERVAL_S", "0.2")
    result = CliRunner().invoke(app, ["install", "claude-code", "--scope", "user"])
    assert result.exit_code == 0, result.output
    return Path(isolated_env) / ".claude" / "settings.json"


def config_rows(store: Path) -> list[dict]:
    conn = db.open_reader(store)
    try:
        return [json.loads(p)["config"] for (p,) in conn.execute(
            "SELECT payload FROM records WHERE kind = 'attestation' AND json_extract(payload, '$.type') = 'config' "
            "ORDER BY seq")]
    finally:
        conn.close()


def _with_findings(health: dict) -> dict | None:
    return health if health["recorder"]["findings"] else None


def _rows_at_least(store: Path, n: int) -> list[dict] | None:
    rows = config_rows(store)
    return rows if len(rows) >= n else None


def _restoring(rows: list[dict]) -> dict | None:
    return rows[-1] if len(rows) > 2 and not rows[-1]["findings"] else None


def kinds(health: dict) -> list[str]:
    return [f["kind"] for f in health["recorder"]["findings"]]


def edit(path: Path, change) -> None:
    """Change the config as an editor does: a new file renamed over the old one."""
    doc = json.loads(path.read_text())
    change(doc)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(path)


def test_install_remembers_what_it_wrote_and_uninstall_forgets_it(installed):
    [entry] = manifest.load()
    assert (entry.harness, entry.scope, entry.path, entry.kind) == ("claude-code", "user", str(installed), "json")
    doc = json.loads(installed.read_text())
    assert {e: doc["hooks"][e][0] for e in entry.expected} == entry.expected
    assert [s.findings for s in hookconfig.inspect_all([entry])] == [[]]
    assert CliRunner().invoke(app, ["uninstall", "claude-code", "--scope", "user"]).exit_code == 0
    assert manifest.load() == []


@pytest.mark.parametrize("tamper, expected", [
    (lambda doc: doc["hooks"].pop("PreToolUse"), ("hook_removed", "PreToolUse")),
    (lambda doc: doc["hooks"]["PostToolUse"][0]["hooks"][0].update(timeout=1), ("hook_changed", "PostToolUse")),
    (lambda doc: doc["hooks"]["PreToolUse"][0].update(matcher="Read"), ("hook_narrowed", "PreToolUse")),
    (lambda doc: doc.update(env={"AGENTWATCH_SOCKET": "/tmp/agent.sock"}), ("hook_redirected", None)),
    (lambda doc: doc.update(disableAllHooks=True), ("hooks_disabled", None)),
], ids=["removed", "edited", "narrowed", "redirected", "disabled"])
def test_the_daemon_names_a_tampered_hook_in_health_rows_and_verify(installed, tmp_path, tamper, expected):
    d = Daemon(tmp_path / "d").start()
    try:
        wait_for(lambda: len(config_rows(d.store)) == 1, "the start config row")
        [start] = config_rows(d.store)
        assert (start["trigger"], start["findings"]) == ("start", [])
        assert d.health()["status"] == "recording"

        edit(installed, tamper)
        health = wait_for(lambda: _with_findings(d.health()), "the finding in health")
        kind, event = expected
        [finding] = health["recorder"]["findings"]
        assert (finding["kind"], finding["event"], finding["harness"], finding["scope"]) == (
            kind, event, "claude-code", "user")
        assert health["status"] == "degraded"
        assert any(r.startswith(f"{kind}: claude-code (user)") for r in health["reasons"])
        rows = wait_for(lambda: _rows_at_least(d.store, 2), "the change's config row")
        assert [(r["trigger"], [f["kind"] for f in r["findings"]]) for r in rows] == [
            ("start", []), ("change", [kind])]

        verify = CliRunner().invoke(app, ["verify", "--store", str(d.store)])
        assert verify.exit_code == 0, verify.output
        assert f"recorder: {kind}: claude-code (user)" in verify.output

        # Restored: the next row has no finding and names what was restored.
        assert CliRunner().invoke(app, ["install", "claude-code", "--scope", "user"]).exit_code == 0
        if kind in ("hook_redirected", "hooks_disabled"):
            edit(installed, lambda doc: [doc.pop("env", None), doc.pop("disableAllHooks", None)])
        wait_for(lambda: not kinds(d.health()), "the finding to clear")
        last = wait_for(lambda: _restoring(config_rows(d.store)), "the restoring row")
        assert (last["trigger"], last["findings"]) == ("change", [])
        assert [r.split(":")[0] for r in last["restored"]] == [kind]
        assert d.health()["status"] == "recording"
    finally:
        assert d.stop() == 0


def test_a_session_start_records_a_config_row_and_a_session_end_a_coverage_row(installed, tmp_path, isolated_env):
    session = json.loads((Path(__file__).parent / "fixtures" / "sessions" / "claude-code.json").read_text())
    sid = session["steps"][0]["payload"]["session_id"]
    transcript = Path(isolated_env) / ".claude" / "projects" / "-home-dev-shop" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes((Path(__file__).parent / "fixtures" / "transcripts" / "claude-code.jsonl").read_bytes())
    d = Daemon(tmp_path / "d").start()
    try:
        wait_for(lambda: len(config_rows(d.store)) == 1, "the start config row")
        skipped = {2, 3}  # toolu_01A's PreToolUse and PostToolUse: never run
        with d.client() as client:
            for i, step in enumerate(session["steps"]):
                if i in skipped:
                    continue
                payload = dict(step["payload"], transcript_path=str(transcript))
                reply = client.append({"op": "append", "v": 1, "record_id": f"s-{i}", "harness": "claude-code",
                                       "event": step["event"], "payload": payload})
                assert reply["ok"] is True, reply
        wait_for(lambda: [r["trigger"] for r in config_rows(d.store)] == ["start", "session_start"],
                 "the session start's config row")
        conn_rows = wait_for(lambda: _coverage_rows(d.store) or None, "the coverage row")
        [row] = conn_rows
        n = len(session["expect"]["tool_calls"])
        assert (row["session_id"], row["status"], row["summary"], row["missing_call_ids"]) == (
            sid, "missing", f"{n - 1}/{n} · 1 missing", ["toolu_01A"])
        assert row["transcript"]["path"] == str(transcript)
        import hashlib

        assert row["transcript"]["sha256"] == "sha256:" + hashlib.sha256(transcript.read_bytes()).hexdigest()
        health = d.health()
        assert health["recorder"]["sessions_missing_calls"] == 1
        assert "1 session(s) with tool calls in the transcript that were never recorded" in " ".join(health["reasons"])

        # The service deployment's path: the user's side hands over the digest and call list.
        submitted = CliRunner().invoke(app, ["coverage", sid, "--store", str(d.store), "--submit",
                                             "--socket", str(d.socket)])
        assert submitted.exit_code == 1, submitted.output  # a call is missing
        rows = wait_for(lambda: _n_rows(_coverage_rows(d.store), 2), "the supplied coverage row")
        assert rows[1]["supplied_by"] == {"uid": os.getuid(), "pid": os.getpid()}
        assert (rows[1]["summary"], rows[1]["missing_call_ids"], rows[1]["transcript"]["sha256"]) == (
            f"{n - 1}/{n} · 1 missing", ["toolu_01A"], row["transcript"]["sha256"])
        with d.client() as client:
            refused = client.request({"op": "coverage", "harness": "claude-code", "session_id": sid,
                                      "transcript": {"calls": [{"call_id": "x"}]}})
        assert (refused["ok"], refused["error"]) == (False, "bad_request")
    finally:
        assert d.stop() == 0
    # No new row kind: the standalone verifier accepts the config and coverage rows as they are.
    standalone = Path(__file__).resolve().parent.parent / "agentwatch" / "standalone_verify.py"
    done = subprocess.run([sys.executable, "-I", "-S", str(standalone), str(d.store)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def _n_rows(rows: list[dict], n: int) -> list[dict] | None:
    return rows if len(rows) == n else None


def _coverage_rows(store: Path) -> list[dict]:
    conn = db.open_reader(store)
    try:
        return [json.loads(p)["coverage"] for (p,) in conn.execute(
            "SELECT payload FROM records WHERE kind = 'attestation' AND json_extract(payload, '$.type') = 'coverage'")]
    finally:
        conn.close()


def _run_hook(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", str(HOOK), "claude-code"], input=b'{"session_id":"s"}',
                          env=env, capture_output=True, timeout=30)


def test_the_hook_refuses_a_socket_the_environment_names_instead_of_the_configured_one(isolated_env, tmp_path):
    d = Daemon(tmp_path / "d", socket_path=Path(os.environ["XDG_RUNTIME_DIR"]) / "agentwatch" / "agentwatch.sock",
               spool=Path(os.environ["XDG_DATA_HOME"]) / "agentwatch" / "spool").start()
    try:
        rogue = tmp_path / "rogue.sock"
        ledger = tmp_path / "ledger.jsonl"
        env = dict(os.environ, AGENTWATCH_SOCKET=str(rogue), AGENTWATCH_SPOOL=str(tmp_path / "rogue-spool"),
                   AGENTWATCH_LEDGER=str(ledger))
        done = _run_hook(env)
        assert done.returncode == 0
        assert b"socket_not_configured" in done.stderr
        [entry] = [json.loads(line) for line in ledger.read_text().splitlines()]
        assert (entry["outcome"], entry["reason"]) == ("spooled", "redirect_refused")
        assert not (tmp_path / "rogue-spool").exists()  # spooled where the configured daemon drains

        def stored():
            conn = db.open_reader(d.store)
            try:
                return [json.loads(p) for (p,) in conn.execute(
                    "SELECT payload FROM records WHERE kind = 'event'")]
            finally:
                conn.close()

        [doc] = wait_for(lambda: stored() or None, "the refused record, drained from the configured spool")
        assert doc["redirect_refused"] == {"socket": str(rogue), "reason": "socket_not_configured"}

        # The configured socket named by the environment is used as before.
        same = _run_hook(dict(os.environ, AGENTWATCH_SOCKET=str(d.socket)))
        assert (same.returncode, same.stderr) == (0, b"")
        wait_for(lambda: len(stored()) == 2, "the record sent to the configured socket")
        assert "redirect_refused" not in stored()[1]

        # A path of any length is cut to fit the frame: the record is still stored whole.
        long = _run_hook(dict(os.environ, AGENTWATCH_SOCKET="/" + "é" * 3000))
        assert long.returncode == 0
        third = wait_for(lambda: _n_rows(stored(), 3), "the third record")[2]
        assert third["redirect_refused"]["reason"] == "socket_not_configured"
        assert third["redirect_refused"]["socket"].endswith("...") and len(third["redirect_refused"]["socket"]) < 40
    finally:
        assert d.stop() == 0


def test_an_allow_file_lets_the_environment_name_another_socket(isolated_env, tmp_path):
    d = Daemon(tmp_path / "d").start()
    try:
        allow = Path(os.environ["XDG_CONFIG_HOME"]) / "agentwatch" / "hook-sockets"
        allow.parent.mkdir(parents=True, exist_ok=True)
        allow.write_text(f"# sockets the hook may use\n{d.socket}\n")
        env = dict(os.environ, AGENTWATCH_SOCKET=str(d.socket))
        assert _run_hook(env).stderr == b""
        other = _run_hook(dict(env, AGENTWATCH_SOCKET=str(tmp_path / "other.sock"),
                               AGENTWATCH_SPOOL=str(tmp_path / "spool2")))
        assert b"socket_not_allowed" in other.stderr
    finally:
        assert d.stop() == 0


def test_install_list_names_what_the_watch_would_name(installed, monkeypatch, tmp_path):
    edit(installed, lambda doc: doc["hooks"].pop("Stop"))
    out = CliRunner().invoke(app, ["install", "--list", "--json"])
    assert out.exit_code == 0, out.output
    [row] = [r for r in json.loads(out.output) if (r["harness"], r["scope"]) == ("claude-code", "user")]
    assert [(f["kind"], f["event"]) for f in row["findings"]] == [("hook_removed", "Stop")]
    others = [r for r in json.loads(out.output) if (r["harness"], r["scope"]) != ("claude-code", "user")]
    assert [r["findings"] for r in others] == [[]] * len(others)


def test_cline_hook_files_removed_edited_and_redirected(isolated_env, tmp_path, monkeypatch):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "user-dirs.dirs"
    config.write_text('XDG_DOCUMENTS_DIR="$HOME/Documents"\n')
    assert CliRunner().invoke(app, ["install", "cline", "--scope", "user"]).exit_code == 0
    [entry] = manifest.load()
    hooks = Path(entry.path)
    assert (entry.kind, hookconfig.inspect(entry).findings) == ("scripts", [])
    (hooks / "PreToolUse").unlink()
    (hooks / "PostToolUse").write_text((hooks / "PostToolUse").read_text().replace("|| printf", "; printf"))
    text = (hooks / "TaskStart").read_text()
    (hooks / "TaskStart").write_text(text.replace("exec ", "").replace("\n/", "\nAGENTWATCH_SOCKET=/tmp/a.sock /", 1))
    found = [(f.kind, f.event) for f in hookconfig.inspect(entry).findings]
    assert sorted(found) == [("hook_changed", "PostToolUse"), ("hook_redirected", "TaskStart"),
                             ("hook_removed", "PreToolUse")]


def test_reconcile_reports_what_the_record_misses(installed, tmp_path):
    d = Daemon(tmp_path / "d").start()
    try:
        wait_for(lambda: len(config_rows(d.store)) == 1, "the start config row")
        edit(installed, lambda doc: doc.update(env={"AGENTWATCH_SPOOL": "/tmp/elsewhere"}))
        wait_for(lambda: _rows_at_least(d.store, 2), "the change's config row")
    finally:
        assert d.stop() == 0
    out = CliRunner().invoke(app, ["reconcile", "--store", str(d.store), "--json"])
    assert out.exit_code == 1, out.output
    doc = json.loads(out.output)
    pred = doc["predicates"]["recorder_complete"]
    assert pred["ok"] is False and pred["detail"].startswith("hook_redirected: claude-code (user)")
    assert [f["kind"] for f in doc["counts"]["recorder"]["hook_config"]["findings"]] == ["hook_redirected"]


def test_an_unreadable_manifest_is_a_finding(installed):
    path = manifest.default_path()
    path.write_text("{not json")
    entries, problem = manifest.read()
    doc = hookconfig.document(hookconfig.inspect_all(entries), problem)
    assert [(f["kind"], f["scope"]) for f in doc["findings"]] == [("hook_config_unreadable", "manifest")]


def test_a_project_install_given_a_relative_path_is_remembered_absolute(isolated_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    out = CliRunner().invoke(app, ["install", "claude-code", "--scope", "project", "--project-dir", "repo"])
    assert out.exit_code == 0, out.output
    [entry] = manifest.load()
    assert entry.path == str(tmp_path / "repo" / ".claude" / "settings.json")
    assert entry.related == [str(tmp_path / "repo" / ".claude" / "settings.local.json"),
                             "/etc/claude-code/managed-settings.json"]
    (tmp_path / "repo" / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    listed = json.loads(CliRunner().invoke(app, ["install", "--list", "--json", "--project-dir", "repo"]).output)
    [row] = [r for r in listed if (r["harness"], r["scope"]) == ("claude-code", "project")]
    assert [f["kind"] for f in row["findings"]] == ["hooks_disabled"]


def test_claude_codes_managed_switch_is_a_disabled_hook(installed, tmp_path):
    [entry] = manifest.load()
    managed = tmp_path / "managed-settings.json"
    managed.write_text('{"allowManagedHooksOnly": true}')  # a managed-settings key (SchemaStore claude-code-settings)
    entry.related = [*entry.related[:1], str(managed)]
    [state] = hookconfig.inspect_all([entry])
    assert [(f.kind, f.detail) for f in state.findings] == [
        ("hooks_disabled", f"{managed} sets allowManagedHooksOnly: true")]
    assert state.settings == {"allowManagedHooksOnly": True}
