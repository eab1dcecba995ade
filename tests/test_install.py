"""agentwatch install / uninstall / install --list, for every harness, in a temp HOME and project.

The expected event sets and command shapes below are the contract: changing
what install writes means changing them here too. Our entries are found in
the written files by this test's own walk (a command naming
agentwatch/hook.py followed by the harness), not by the library's helpers.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentwatch import interpreter as interpreter_mod
from agentwatch.cli import app
from agentwatch.install import cline as cline_mod
from agentwatch.install import command as command_mod

runner = CliRunner()

EVENTS = {
    "claude-code": ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                    "SubagentStop", "PreCompact", "Notification", "SubagentStart", "PermissionRequest",
                    "PostToolUseFailure", "ConfigChange", "InstructionsLoaded", "PostCompact", "Elicitation",
                    "ElicitationResult", "StopFailure", "PermissionDenied", "UserPromptExpansion"],
    "codex": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
              "PostCompact", "Stop", "SubagentStart", "SubagentStop", "SessionEnd", "StopFailure", "Interrupt"],
    "gemini-cli": ["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
                   "PreCompress", "Notification"],
    "cursor": ["beforeSubmitPrompt", "preToolUse", "postToolUse", "postToolUseFailure", "subagentStart",
               "subagentStop", "preCompact", "afterAgentResponse", "stop", "sessionStart", "sessionEnd"],
    "copilot": ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                "Stop", "subagentStart", "SubagentStop", "PreCompact", "ErrorOccurred", "PermissionRequest",
                "notification"],
    "vscode": ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
               "Stop", "subagentStart", "SubagentStop", "PreCompact", "ErrorOccurred", "PermissionRequest",
               "notification"],
    "openhands": ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"],
    "cline": ["TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel",
              "TaskError", "SessionShutdown"],
}
GROUPED = {"claude-code", "codex", "gemini-cli", "openhands"}
COMMAND_KEY: dict[str, str] = {}
WORD = {"vscode": "copilot"}  # the harness word on the command line: one set of entries serves both
EVENT_ARG = {"cline"}  # the payload does not name the event
# Handler fields besides type and command, per harness.
FIELDS = {
    "claude-code": {"async": True, "timeout": 10},
    "codex": {"timeout": 10},  # no async: shipped Codex builds skip async hooks
    "gemini-cli": {"name": "agentwatch", "timeout": 10000},
    "cursor": {},
    "copilot": {"timeout": 10},
    "vscode": {"timeout": 10},
    "openhands": {"async": True, "timeout": 10},
}
STDOUT = {"gemini-cli": b"{}", "cline": b'{"cancel":false}'}
# What each harness's CLI prints for --version in these tests: builds that have every event.
VERSION_OUTPUT = {
    "claude": "2.1.240 (Claude Code)",
    "codex": "codex-cli 0.152.1",
    "gemini": "0.56.0",
    "cursor": "3.18.25\n4a1b2c3d\nx64",
    "copilot": "1.0.12",
}


def config_path(harness: str, scope: str, home: Path, project: Path) -> Path:
    user = {
        "claude-code": home / ".claude/settings.json",
        "codex": home / ".codex/hooks.json",
        "gemini-cli": home / ".gemini/settings.json",
        "cursor": home / ".cursor/hooks.json",
        "copilot": home / ".copilot/hooks/agentwatch.json",
        "vscode": home / ".copilot/hooks/agentwatch.json",
        "cline": home / "Documents/Cline/Hooks",
        "openhands": home / ".openhands/hooks.json",
    }
    proj = {
        "claude-code": project / ".claude/settings.json",
        "codex": project / ".codex/hooks.json",
        "gemini-cli": project / ".gemini/settings.json",
        "cursor": project / ".cursor/hooks.json",
        "copilot": project / ".github/hooks/agentwatch.json",
        "vscode": project / ".github/hooks/agentwatch.json",
        "cline": project / ".clinerules/hooks",
        "openhands": project / ".openhands/hooks.json",
    }
    return user[harness] if scope == "user" else proj[harness]


# Someone else's config, as a user might have it: unrelated keys and hooks, 4-space indent.
EXISTING = {
    "claude-code": {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"], "deny": []},
        "hooks": {
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}
            ],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./gate.sh", "timeout": 5}]}],
        },
        "env": {"FOO": "bar"},
    },
    "codex": {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "python3 ~/.codex/stop.py", "timeout": 30}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
        }
    },
    "gemini-cli": {
        "theme": "GitHub",
        "tools": {"enableHooks": True},
        "hooks": {
            "enabled": True,
            "disabled": ["old-hook"],
            "AfterTool": [
                {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh", "name": "lint"}]}
            ],
        },
    },
    "cursor": {
        "version": 1,
        "hooks": {
            "beforeShellExecution": [{"command": "./gate.sh"}],
            "afterFileEdit": [{"command": "./format.sh"}],
        },
    },
    "copilot": {"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 5}]}},
    "vscode": {"version": 1, "hooks": {"PostToolUse": [{"type": "command", "command": "npx prettier --write ."}]}},
    "openhands": {
        "hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [{"type": "command", "command": "./block.sh"}]}]}
    },
}
JSON_HARNESSES = list(EXISTING)
SCOPES = [(h, s) for h in JSON_HARNESSES for s in ("user", "project")]


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path, monkeypatch):
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def home(isolated_env):
    return Path(isolated_env)


def documents_dir(home: Path, name: str) -> None:
    """The user's documents folder as `xdg-user-dir DOCUMENTS` reports it (user-dirs.dirs)."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "user-dirs.dirs"
    config.write_text(f'XDG_DOCUMENTS_DIR="$HOME/{name}"\n')
    (home / name).mkdir(exist_ok=True)


@pytest.fixture(autouse=True)
def documents(home):
    documents_dir(home, "Documents")


def fake_clis(directory: Path, outputs: dict[str, str]) -> Path:
    """Programs that print a harness version, as the installers read it."""
    directory.mkdir(parents=True, exist_ok=True)
    for program, output in outputs.items():
        path = directory / program
        path.write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(output)}\n")
        path.chmod(0o755)
    return directory


@pytest.fixture(autouse=True)
def harness_clis(tmp_path, monkeypatch):
    """A PATH with the harnesses' CLIs (fakes printing a version) ahead of the machine's."""
    directory = fake_clis(tmp_path / "harness-bin", VERSION_OUTPUT)
    monkeypatch.setenv("PATH", f"{directory}:{os.environ.get('PATH', '')}")
    return directory


def is_ours(text, harness) -> bool:
    if not isinstance(text, str):
        return False
    words = shlex.split(text)
    word = WORD.get(harness, harness)
    return any(w.endswith("/agentwatch/hook.py") and words[i + 1] == word for i, w in enumerate(words[:-1]))


def ours(doc: dict, harness: str) -> dict[str, list[dict]]:
    """{event: [our handlers]} by this test's own walk of the file."""
    key = COMMAND_KEY.get(harness, "command")
    found: dict[str, list[dict]] = {}
    for event, entries in (doc.get("hooks") or {}).items():
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue  # Gemini's hooks.disabled is a list of names
            handlers = entry["hooks"] if harness in GROUPED else [entry]
            found.setdefault(event, []).extend(h for h in handlers if is_ours(h.get(key), harness))
    return {e: hs for e, hs in found.items() if hs}


def without_ours(doc: dict, harness: str) -> dict:
    """The document with our handlers (and the groups and event lists only they filled) taken out."""
    key = COMMAND_KEY.get(harness, "command")
    doc = copy.deepcopy(doc)
    hooks = doc.get("hooks") or {}
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue
        kept = []
        for entry in hooks[event]:
            if not isinstance(entry, dict):
                kept.append(entry)
            elif harness in GROUPED:
                entry["hooks"] = [h for h in entry["hooks"] if not is_ours(h.get(key), harness)]
                if entry["hooks"]:
                    kept.append(entry)
            elif not is_ours(entry.get(key), harness):
                kept.append(entry)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return doc


def expected_command(harness: str, event: str, via: Path) -> str:
    words = [command_mod.interpreter(), "-I", "-S", command_mod.hook_file(), WORD.get(harness, harness)]
    if harness in EVENT_ARG:
        words += ["--event", event]
    words += ["--via", str(via)]
    return " ".join(shlex.quote(w) for w in words) + " || true"


def write_json(path: Path, doc: dict, indent=4) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(doc, indent=indent) + "\n").encode()
    path.write_bytes(data)
    return data


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".agentwatch-backup-*"))


def leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if "agentwatch-tmp" in p.name]


# ---------------------------------------------------------------- install, JSON harnesses


@pytest.mark.parametrize("harness,scope", SCOPES)
def test_install_merges_exactly_our_entries_and_keeps_a_backup(harness, scope, home, project):
    path = config_path(harness, scope, home, project)
    original = write_json(path, EXISTING[harness])
    result = cli("install", harness, "--scope", scope, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "installed"
    assert report["files"] == [{"path": str(path), "action": "modified", "backup": report["files"][0]["backup"]}]

    doc = json.loads(path.read_text())
    mine = ours(doc, harness)
    assert list(mine) == [e for e in doc["hooks"] if e in mine]
    assert sorted(mine) == sorted(EVENTS[harness])
    key = COMMAND_KEY.get(harness, "command")
    for event, handlers in mine.items():
        assert handlers == [{"type": "command", key: expected_command(harness, event, path), **FIELDS[harness]}]
    assert without_ours(doc, harness) == EXISTING[harness]  # everything else untouched
    assert list(doc) == list(EXISTING[harness])  # top-level key order kept
    assert path.read_text().startswith("{\n    ")  # the file's own indentation kept
    [backup] = backups(path)
    assert backup.read_bytes() == original
    assert str(backup) == report["files"][0]["backup"]
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert leftovers(path.parent) == []


@pytest.mark.parametrize("harness,scope", SCOPES)
def test_second_install_changes_nothing(harness, scope, home, project):
    path = config_path(harness, scope, home, project)
    write_json(path, EXISTING[harness])
    assert cli("install", harness, "--scope", scope).exit_code == 0
    installed = path.read_bytes()
    again = cli("install", harness, "--scope", scope, "--json")
    assert again.exit_code == 0
    report = json.loads(again.stdout)
    assert report["status"] == "already_installed"
    assert report["files"] == [{"path": str(path), "action": "unchanged", "backup": None}]
    assert path.read_bytes() == installed
    assert len(backups(path)) == 1  # only the first install's


@pytest.mark.parametrize("harness,scope", SCOPES)
def test_uninstall_removes_exactly_ours(harness, scope, home, project):
    path = config_path(harness, scope, home, project)
    write_json(path, EXISTING[harness])
    assert cli("install", harness, "--scope", scope).exit_code == 0
    installed = path.read_bytes()
    result = cli("uninstall", harness, "--scope", scope, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "uninstalled"
    assert sorted(report["events"]) == sorted(EVENTS[harness])
    assert json.loads(path.read_text()) == EXISTING[harness]
    assert ours(json.loads(path.read_text()), harness) == {}
    assert [b.read_bytes() for b in backups(path)][-1] == installed
    again = cli("uninstall", harness, "--scope", scope, "--json")
    assert json.loads(again.stdout)["status"] == "not_installed"


@pytest.mark.parametrize("harness", JSON_HARNESSES)
def test_install_into_a_missing_file_creates_it(harness, home, project):
    scope = "project" if harness == "openhands" else "user"
    path = config_path(harness, scope, home, project)
    result = cli("install", harness, "--json")  # default scope
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"] == [{"path": str(path), "action": "created", "backup": None}]
    doc = json.loads(path.read_text())
    assert sorted(ours(doc, harness)) == sorted(EVENTS[harness])
    skeleton = {"version": 1} if harness in ("cursor", "copilot", "vscode") else {}
    assert without_ours(doc, harness) == {**skeleton, "hooks": {}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # whatever the umask
    assert backups(path) == []
    assert cli("uninstall", harness).exit_code == 0
    if harness in ("copilot", "vscode"):  # .copilot/hooks/agentwatch.json: only agentwatch writes it
        assert not path.exists()
    else:  # a harness's own config file stays, as empty as it started
        assert json.loads(path.read_text()) == skeleton


MALFORMED = [
    (b'{"hooks": {', "not valid JSON"),
    (b'{\n  // my settings\n  "hooks": {}\n}\n', "comments"),
    (b'[1, 2]', "top level is a JSON array"),
    (b'{"hooks": []}', "`hooks` is a JSON array"),
    (b'{"hooks": {"a": 1}, "hooks": {}}', "twice"),
    (b'{"x": NaN}', "NaN"),
    (b'\xff\xfe{}', "not UTF-8"),
]


@pytest.mark.parametrize("harness", JSON_HARNESSES)
@pytest.mark.parametrize("data,problem", MALFORMED)
def test_malformed_config_is_refused_and_left_byte_identical(harness, data, problem, home, project):
    path = config_path(harness, "project", home, project)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    for args in (["install", harness, "--scope", "project"], ["uninstall", harness, "--scope", "project"]):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert str(path) in result.stderr and problem in result.stderr
        assert path.read_bytes() == data
    assert backups(path) == [] and leftovers(path.parent) == []


@pytest.mark.parametrize("harness", JSON_HARNESSES)
def test_wrong_types_at_an_event_we_write_are_refused(harness, home, project):
    path = config_path(harness, "project", home, project)
    event = EVENTS[harness][0]
    for hooks, problem in (
        ({event: {"command": "x"}}, f"`hooks.{event}` is a JSON object, expected an array"),
        ({event: ["echo hi"]}, f"`hooks.{event}[0]` is a JSON string, expected an object"),
    ):
        data = write_json(path, {"hooks": hooks})
        result = cli("install", harness, "--scope", "project")
        assert result.exit_code == 2 and problem in result.stderr, result.output
        assert path.read_bytes() == data
    if harness in GROUPED:
        data = write_json(path, {"hooks": {event: [{"hooks": "echo hi"}]}})
        result = cli("install", harness, "--scope", "project")
        assert result.exit_code == 2 and f"`hooks.{event}[0].hooks` is a JSON string" in result.stderr
        assert path.read_bytes() == data


@pytest.mark.parametrize("harness,scope", SCOPES)
def test_dry_run_prints_a_diff_and_writes_nothing(harness, scope, home, project):
    path = config_path(harness, scope, home, project)
    original = write_json(path, EXISTING[harness])
    result = cli("install", harness, "--scope", scope, "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"--- {path}\n+++ {path}\n@@ ")
    added = [line for line in result.stdout.splitlines() if line.startswith("+") and "agentwatch/hook.py" in line]
    assert len(added) == len(EVENTS[harness])
    assert not any(line.startswith("-") and not line.startswith("---") for line in result.stdout.splitlines())
    assert path.read_bytes() == original and backups(path) == [] and leftovers(path.parent) == []
    # uninstall --dry-run after a real install: a diff of removals only, nothing written
    assert cli("install", harness, "--scope", scope).exit_code == 0
    installed = path.read_bytes()
    result = cli("uninstall", harness, "--scope", scope, "--dry-run", "--json")
    report = json.loads(result.stdout)
    assert report["dry_run"] and report["status"] == "uninstalled"
    assert "-" in report["diff"] and path.read_bytes() == installed and len(backups(path)) == 1


def test_dry_run_creates_no_directories(home, project):
    result = cli("install", "claude-code", "--scope", "project", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout.startswith("--- /dev/null\n+++ ")
    assert list(project.iterdir()) == []


# ---------------------------------------------------------------- the command itself


@pytest.mark.parametrize("harness", list(EVENTS))
def test_the_command_runs_a_real_interpreter_isolated(harness, home, project):
    assert cli("install", harness, "--scope", "project").exit_code == 0
    for command in installed_commands(harness, home, project).values():
        words = shlex.split(command)
        python, hook = words[0], words[3]
        assert os.path.isabs(python) and os.path.isfile(python) and os.access(python, os.X_OK)
        assert not interpreter_mod.is_shim(python)
        assert Path(os.path.realpath(python)).read_bytes()[:2] != b"#!"
        assert words[1:3] == ["-I", "-S"]
        assert os.path.isabs(hook) and hook.endswith("/agentwatch/hook.py") and os.path.isfile(hook)
        assert words[4] == WORD.get(harness, harness)
        assert "uv run" not in command and "npx" not in command


def installed_commands(harness: str, home: Path, project: Path, scope: str = "project") -> dict[str, str]:
    """{event: the command line the harness would run} as found in the written files."""
    path = config_path(harness, scope, home, project)
    if harness == "cline":
        out = {}
        for event in EVENTS["cline"]:
            lines = (path / event).read_text().splitlines()
            out[event] = [line for line in lines if line and not line.startswith("#")][0]
        return out
    key = COMMAND_KEY.get(harness, "command")
    return {e: hs[0][key] for e, hs in ours(json.loads(path.read_text()), harness).items()}


@pytest.mark.parametrize("harness", list(EVENTS))
def test_the_installed_command_records_one_spooled_record_per_run(harness, home, project, tmp_path):
    assert cli("install", harness, "--scope", "project").exit_code == 0
    spool = tmp_path / "spool"
    env = dict(os.environ, AGENTWATCH_SPOOL=str(spool), AGENTWATCH_SOCKET=str(tmp_path / "no-daemon" / "s.sock"))
    commands = installed_commands(harness, home, project)
    assert sorted(commands) == sorted(EVENTS[harness])
    for event, command in commands.items():
        payload = json.dumps({"hook_event_name": event, "session_id": "s-1", "cwd": str(project)}).encode()
        if harness == "cline":  # Cline runs the executable itself
            argv = [str(config_path("cline", "project", home, project) / event)]
        else:
            argv = ["/bin/sh", "-c", command]
        done = subprocess.run(argv, input=payload, capture_output=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == STDOUT.get(harness, b""), done.stdout
        assert done.stderr == b""
    files = sorted((spool / "new").iterdir())
    assert len(files) == len(commands)
    records = [json.loads(f.read_bytes()) for f in files]
    assert {r["harness"] for r in records} == {WORD.get(harness, harness)}
    if harness in EVENT_ARG:
        assert sorted(r["event"] for r in records) == sorted(commands)
    assert sorted(json.loads(r["payload_text"])["hook_event_name"] for r in records) == sorted(commands)


def test_the_guard_turns_a_missing_client_into_exit_0(home, project, tmp_path):
    """Python exits 2 when it cannot open the script; 2 means block to several harnesses."""
    command = command_mod.command("claude-code", hook=str(tmp_path / "gone" / "agentwatch" / "hook.py"))
    bare = subprocess.run(["/bin/sh", "-c", command.replace(" || true", "")], input=b"{}", capture_output=True)
    assert bare.returncode == 2
    guarded = subprocess.run(["/bin/sh", "-c", command], input=b"{}", capture_output=True)
    assert guarded.returncode == 0 and guarded.stdout == b""


def test_shims_are_not_used(tmp_path, monkeypatch):
    shim = tmp_path / ".pyenv" / "shims" / "python3"
    shim.parent.mkdir(parents=True)
    shim.write_text('#!/usr/bin/env bash\nexec pyenv exec python3 "$@"\n')
    shim.chmod(0o755)
    script = tmp_path / "bin" / "python3"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexec python3 \"$@\"\n")
    script.chmod(0o755)
    assert interpreter_mod.is_shim(str(shim)) and interpreter_mod.is_shim(str(script))
    real = command_mod.interpreter()
    monkeypatch.setattr(sys, "executable", str(shim))
    monkeypatch.setattr(sys, "_base_executable", real, raising=False)
    assert command_mod.interpreter() == real
    monkeypatch.setattr(sys, "_base_executable", str(script), raising=False)
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path / "nowhere"))
    with pytest.raises(command_mod.InstallError, match="shim"):
        command_mod.interpreter()


def test_paths_that_need_quoting_are_quoted(tmp_path):
    hook = tmp_path / "dir with 'quote' and space" / "agentwatch" / "hook.py"
    command = command_mod.command("codex", hook=str(hook))
    assert shlex.split(command)[3] == str(hook)
    assert command_mod.is_ours(command, "codex") and not command_mod.is_ours(command, "claude-code")
    with pytest.raises(command_mod.InstallError, match="cannot be quoted"):
        command_mod.command("codex", hook=str(tmp_path / "back\\slash" / "agentwatch" / "hook.py"))


# ---------------------------------------------------------------- update, list, exit codes


def test_an_outdated_entry_is_replaced_where_it_stands(home, project):
    """Codex keys hook trust by position: our group must not move, nor shift anyone else's."""
    path = config_path("codex", "project", home, project)
    stale = {"type": "command", "command": "/old/venv/bin/python -I -S /old/agentwatch/hook.py codex"}
    theirs = {"hooks": [{"type": "command", "command": "./after.sh"}]}
    doc = {"hooks": {"PostToolUse": [{"hooks": [stale]}, theirs],
                     "Notification": [{"hooks": [dict(stale)]}]}}  # an event agentwatch does not register
    write_json(path, doc)
    listed = {(r["harness"], r["scope"]): r for r in json.loads(cli("install", "--list", "--json").stdout)}
    assert listed[("codex", "project")]["state"] == "outdated"
    result = cli("install", "codex", "--scope", "project", "--json")
    assert json.loads(result.stdout)["status"] == "updated"
    new = json.loads(path.read_text())
    post = new["hooks"]["PostToolUse"]
    assert post[0]["hooks"][0]["command"] == expected_command("codex", "PostToolUse", path) and post[1] == theirs
    assert "Notification" not in new["hooks"]
    assert sorted(ours(new, "codex")) == sorted(EVENTS["codex"])


def test_ours_inside_someone_elses_group_is_taken_out_alone(home, project):
    path = config_path("claude-code", "user", home, project)
    mine = {"type": "command", "command": expected_command("claude-code", "Stop", path), "async": True, "timeout": 10}
    theirs = {"type": "command", "command": "say done"}
    write_json(path, {"hooks": {"Stop": [{"matcher": "", "hooks": [theirs, mine]}]}})
    assert cli("uninstall", "claude-code").exit_code == 0
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [{"matcher": "", "hooks": [theirs]}]}}


def test_list_reports_state_file_events_and_command(home, project):
    result = cli("install", "--list", "--json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert len(rows) == 16 and all(r["state"] == "not_installed" and not r["installed"] for r in rows)
    assert cli("install", "claude-code").exit_code == 0
    assert cli("install", "cline", "--scope", "project").exit_code == 0
    broken = config_path("cursor", "user", home, project)
    broken.parent.mkdir(parents=True)
    broken.write_text("{oops")
    rows = {(r["harness"], r["scope"]): r for r in json.loads(cli("install", "--list", "--json").stdout)}
    claude = rows[("claude-code", "user")]
    assert claude["installed"] and claude["state"] == "installed"
    assert claude["path"] == str(config_path("claude-code", "user", home, project))
    assert claude["events"] == EVENTS["claude-code"]
    assert claude["commands"] == [expected_command("claude-code", "x", config_path("claude-code", "user", home, project))]
    cline = rows[("cline", "project")]
    assert cline["state"] == "installed" and cline["events"] == EVENTS["cline"] and len(cline["commands"]) == 8
    assert rows[("cursor", "user")]["state"] == "error" and "not valid JSON" in rows[("cursor", "user")]["error"]
    assert sum(r["installed"] for r in rows.values()) == 2
    table = cli("install", "--list")
    assert table.exit_code == 1 and "claude-code" in table.stdout and "installed" in table.stdout  # cursor is malformed


@pytest.mark.parametrize("harness", ["claude-code", "cline", "codex"])
def test_an_unwritable_location_exits_3_and_changes_nothing(harness, home, project):
    first = {"claude-code": ".claude", "cline": ".clinerules", "codex": ".codex"}[harness]
    (project / first).write_text("a file where a directory should be\n")
    result = cli("install", harness, "--scope", "project")
    assert result.exit_code == 3, result.output
    assert "agentwatch:" in result.stderr
    assert (project / first).read_text() == "a file where a directory should be\n"


def test_usage_errors_exit_2(home, project):
    for args, message in (
        (["install", "aider"], "unknown harness"),
        (["install", "cline", "--scope", "workspace"], "unknown scope"),
        (["install", "codex", "--scope", "global"], "unknown scope"),
        (["install"], "missing HARNESS"),
        (["install", "codex", "--list"], "--list takes no HARNESS"),
    ):
        result = cli(*args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.output)
    assert list(project.iterdir()) == [] and not (home / ".codex").exists()


def test_mode_and_symlinks_are_kept(home, project, tmp_path):
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    original = write_json(dotfiles, EXISTING["claude-code"])
    dotfiles.chmod(0o600)
    link = config_path("claude-code", "user", home, project)
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    assert cli("install", "claude-code").exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(dotfiles)
    assert sorted(ours(json.loads(dotfiles.read_text()), "claude-code")) == sorted(EVENTS["claude-code"])
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    assert [b.read_bytes() for b in backups(dotfiles)] == [original]


def test_copilot_and_vscode_share_one_set_of_entries(home, project):
    path = config_path("copilot", "project", home, project)
    assert cli("install", "copilot", "--scope", "project").exit_code == 0
    installed = path.read_bytes()
    again = json.loads(cli("install", "vscode", "--scope", "project", "--json").stdout)
    assert again["status"] == "already_installed" and path.read_bytes() == installed
    listed = {(r["harness"], r["scope"]): r["state"] for r in json.loads(cli("install", "--list", "--json").stdout)}
    assert listed[("copilot", "project")] == listed[("vscode", "project")] == "installed"


def listing(harness: str, scope: str) -> dict:
    return next(r for r in json.loads(cli("install", "--list", "--json").stdout)
                if (r["harness"], r["scope"]) == (harness, scope))


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("first,second", [("copilot", "vscode"), ("vscode", "copilot")])
def test_installing_both_and_uninstalling_one_keeps_the_others_entries(home, project, scope, first, second):
    # Copilot CLI and VS Code read every JSON file of the same hooks directories: one file serves both.
    path = config_path("copilot", scope, home, project)
    assert json.loads(cli("install", first, "--scope", scope, "--json").stdout)["status"] == "installed"
    assert json.loads(cli("install", second, "--scope", scope, "--json").stdout)["status"] == "already_installed"
    installed = path.read_bytes()
    assert (listing(first, scope)["shared_with"], listing(second, scope)["shared_with"]) == ([second], [first])

    result = cli("uninstall", first, "--scope", scope, "--json")
    assert result.exit_code == 0
    done = json.loads(result.stdout)
    assert (done["status"], done["files"][0]["action"], done["events"]) == ("uninstalled", "unchanged", [])
    assert done["notes"] == [f"the entries stay: {second} is installed in this file too, and {first} runs the same "
                             f"file, so its events are still recorded; `agentwatch uninstall {second} --scope "
                             f"{scope}` removes them"]
    assert path.read_bytes() == installed and backups(path) == []
    assert sorted(ours(json.loads(path.read_text()), "copilot")) == sorted(EVENTS[second])
    gone, kept = listing(first, scope), listing(second, scope)
    assert (gone["state"], gone["installed"], gone["events"], gone["shared_with"]) == ("not_installed", False, [],
                                                                                      [second])
    assert (kept["state"], sorted(kept["events"]), kept["shared_with"]) == ("installed", sorted(EVENTS[second]), [])
    text = cli("install", "--list").stdout
    assert f"    the entries here are {second}'s install; {first} runs them too\n" in text
    again = json.loads(cli("uninstall", first, "--scope", scope, "--json").stdout)
    assert (again["status"], again["files"][0]["action"]) == ("not_installed", "unchanged")

    # The last one out removes the file (only agentwatch ever wrote it).
    done = json.loads(cli("uninstall", second, "--scope", scope, "--json").stdout)
    assert (done["status"], done["files"][0]["action"]) == ("uninstalled", "deleted")
    assert not path.exists() and len(backups(path)) == 1
    assert (listing(first, scope)["state"], listing(second, scope)["state"]) == ("not_installed", "not_installed")


def test_uninstalling_the_one_never_installed_keeps_the_others_entries(home, project):
    path = config_path("copilot", "project", home, project)
    assert cli("install", "copilot", "--scope", "project").exit_code == 0
    installed = path.read_bytes()
    done = json.loads(cli("uninstall", "vscode", "--scope", "project", "--json").stdout)
    assert (done["status"], done["files"][0]["action"]) == ("not_installed", "unchanged")
    assert path.read_bytes() == installed
    assert (listing("copilot", "project")["state"], listing("vscode", "project")["state"]) == ("installed",
                                                                                             "not_installed")


def test_a_shared_file_no_install_remembers_is_both_harnesses(home, project):
    """Entries written before the install manifest existed (or with it lost): both are installed, and
    an uninstall of either removes them, as it always did."""
    path = config_path("copilot", "project", home, project)
    assert cli("install", "copilot", "--scope", "project").exit_code == 0
    manifest = Path(os.environ["XDG_STATE_HOME"]) / "agentwatch" / "installed.json"
    manifest.unlink()
    listed = {(r["harness"], r["scope"]): r for r in json.loads(cli("install", "--list", "--json").stdout)}
    assert [listed[(h, "project")]["state"] for h in ("copilot", "vscode")] == ["installed", "installed"]
    result = cli("uninstall", "vscode", "--scope", "project", "--json")
    assert json.loads(result.stdout)["files"][0]["action"] == "deleted"  # only agentwatch ever wrote it
    assert not path.exists() and len(backups(path)) == 1


def test_earlier_copilot_and_vscode_entries_are_replaced(home, project):
    """Before one set served both: camelCase events with `bash` and --event, and vscode's own entries."""
    path = config_path("copilot", "project", home, project)
    hook = command_mod.hook_file()
    python = command_mod.interpreter()
    old = {"version": 1, "hooks": {
        "postToolUse": [{"type": "command", "bash": f"{python} -I -S {hook} copilot --event postToolUse || true",
                         "timeoutSec": 10}, {"type": "command", "bash": "./audit.sh"}],
        "PostToolUse": [{"type": "command", "command": f"{python} -I -S {hook} vscode || true", "timeout": 10}],
    }}
    write_json(path, old)
    assert json.loads(cli("install", "copilot", "--scope", "project", "--json").stdout)["status"] == "updated"
    doc = json.loads(path.read_text())
    assert doc["hooks"]["postToolUse"] == [{"type": "command", "bash": "./audit.sh"}]
    assert sorted(ours(doc, "copilot")) == sorted(EVENTS["copilot"])


def test_gemini_non_event_keys_under_hooks_are_left_alone(home, project):
    path = config_path("gemini-cli", "user", home, project)
    write_json(path, EXISTING["gemini-cli"])
    assert cli("install", "gemini-cli").exit_code == 0
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["enabled"] is True and hooks["disabled"] == ["old-hook"]
    assert hooks["AfterTool"][0] == EXISTING["gemini-cli"]["hooks"]["AfterTool"][0]


# ---------------------------------------------------------------- Cline scripts


@pytest.mark.parametrize("scope", ["user", "project"])
def test_cline_scripts(scope, home, project):
    directory = config_path("cline", scope, home, project)
    directory.mkdir(parents=True)
    foreign = directory / "PreCompact"
    foreign.write_text("#!/bin/sh\necho '{\"cancel\":false}'\n")
    result = cli("install", "cline", "--scope", scope, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "installed"
    for event in EVENTS["cline"]:
        script = directory / event
        assert stat.S_IMODE(script.stat().st_mode) == 0o755
        lines = script.read_text().splitlines()
        assert lines[0] == "#!/bin/sh" and lines[1].startswith(cline_mod.MARKER)
        words = shlex.split(lines[-1])
        assert words[:9] == shlex.split(expected_command("cline", event, directory))[:9]
        assert words[9:] == ["||", "printf", "%s\\n", '{"cancel":false}']
    snapshot = {p.name: p.read_bytes() for p in directory.iterdir()}
    again = cli("install", "cline", "--scope", scope, "--json")
    assert json.loads(again.stdout)["status"] == "already_installed"
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == snapshot
    assert cli("uninstall", "cline", "--scope", scope).exit_code == 0
    remaining = sorted(p.name for p in directory.iterdir() if ".agentwatch-backup-" not in p.name)
    assert remaining == ["PreCompact"]
    assert foreign.read_text() == "#!/bin/sh\necho '{\"cancel\":false}'\n"
    kept = sorted(p.name for p in directory.iterdir() if ".agentwatch-backup-" in p.name)
    assert len(kept) == 8 and all(stat.S_IMODE((directory / n).stat().st_mode) == 0o600 for n in kept)
    # backups carry the marker too, but are never taken for hooks: reinstalling leaves them be
    assert json.loads(cli("install", "cline", "--scope", scope, "--json").stdout)["status"] == "installed"
    assert sorted(p.name for p in directory.iterdir() if ".agentwatch-backup-" in p.name) == kept


@pytest.mark.skipif(shutil.which("xdg-user-dir") is None, reason="xdg-user-dir (xdg-user-dirs) is not installed")
def test_cline_user_hooks_go_where_the_extension_and_the_cli_each_look(home, project, monkeypatch):
    # cline/cline apps/vscode/src/core/storage/disk.ts: the extension reads <xdg documents>/Cline/Hooks;
    # sdk/packages/shared/src/storage/paths.ts: the CLI and SDK read ~/Documents/Cline/Hooks and
    # $CLINE_DIR/hooks (~/.cline/hooks), both of them
    documents_dir(home, "Dokumente")
    result = json.loads(cli("install", "cline", "--scope", "user", "--json").stdout)
    extension, sdk = home / "Dokumente" / "Cline" / "Hooks", home / ".cline" / "hooks"
    assert [f["path"] for f in result["files"]] == [str(d / e) for d in (extension, sdk) for e in EVENTS["cline"]]
    assert not (home / "Documents" / "Cline").exists()
    for directory in (extension, sdk):
        assert f"--via {directory}" in (directory / "PreToolUse").read_text()
    [row] = [r for r in json.loads(cli("install", "--list", "--json").stdout) if r["harness"] == "cline"
             and r["scope"] == "user"]
    assert row["state"] == "installed"
    assert cli("uninstall", "cline", "--scope", "user").exit_code == 0
    for directory in (extension, sdk):  # only the backups uninstall keeps are left
        assert [p.name for p in directory.iterdir() if ".agentwatch-backup-" not in p.name] == []


@pytest.mark.skipif(shutil.which("xdg-user-dir") is None, reason="xdg-user-dirs is not installed")
def test_cline_user_hooks_in_the_home_documents_folder_serve_both_runtimes_once(home, project, monkeypatch):
    documents_dir(home, "Documents")
    monkeypatch.setenv("CLINE_DIR", str(home / "cline-state"))
    result = json.loads(cli("install", "cline", "--scope", "user", "--json").stdout)
    assert [f["path"] for f in result["files"]] == [str(home / "Documents" / "Cline" / "Hooks" / e)
                                                    for e in EVENTS["cline"]]
    assert not (home / "cline-state").exists() and not (home / ".cline").exists()


def test_cline_refuses_to_overwrite_a_hook_that_is_not_ours(home, project):
    directory = config_path("cline", "project", home, project)
    directory.mkdir(parents=True)
    theirs = directory / "PostToolUse"
    theirs.write_bytes(b"#!/bin/sh\n./my-audit.sh\n")
    result = cli("install", "cline", "--scope", "project")
    assert result.exit_code == 2
    assert f"refusing to overwrite {theirs}" in result.stderr
    assert theirs.read_bytes() == b"#!/bin/sh\n./my-audit.sh\n"
    assert sorted(p.name for p in directory.iterdir()) == ["PostToolUse"]  # nothing else written either


# ---------------------------------------------------------------- versions, overlaps, locations


def test_without_a_readable_version_only_the_events_every_build_accepts_are_written(home, project, monkeypatch,
                                                                                      tmp_path):
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "empty-bin", {})))
    result = cli("install", "claude-code", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["events"] == EVENTS["claude-code"][:9]
    assert report["notes"][0].startswith("claude-code version unknown")
    assert report["notes"][1] == ("left out: SubagentStart (needs 2.0.43), PermissionRequest (needs 2.0.45), "
                                  "PostToolUseFailure (needs 2.1.27), ConfigChange (needs 2.1.49), "
                                  "InstructionsLoaded (needs 2.1.69), PostCompact (needs 2.1.76), "
                                  "Elicitation (needs 2.1.76), ElicitationResult (needs 2.1.76), "
                                  "StopFailure (needs 2.1.78), PermissionDenied (needs 2.1.89), "
                                  "UserPromptExpansion (needs 2.1.238)")
    doc = json.loads(config_path("claude-code", "user", home, project).read_text())
    assert sorted(doc["hooks"]) == sorted(EVENTS["claude-code"][:9])


def test_an_older_build_gets_only_the_events_it_has(home, project, tmp_path, monkeypatch):
    bin_dir = fake_clis(tmp_path / "old-bin", {"claude": "2.1.80 (Claude Code)", "cursor": "2.3.35"})
    monkeypatch.setenv("PATH", str(bin_dir))
    claude = json.loads(cli("install", "claude-code", "--json").stdout)
    assert claude["events"] == EVENTS["claude-code"][:9] + [
        "SubagentStart", "PermissionRequest", "PostToolUseFailure", "ConfigChange", "InstructionsLoaded",
        "PostCompact", "Elicitation", "ElicitationResult", "StopFailure"]
    assert claude["notes"][:2] == ["claude-code 2.1.80 found: registered the events it has",
                                   "left out: PermissionDenied (needs 2.1.89), UserPromptExpansion (needs 2.1.238)"]
    assert cli("uninstall", "claude-code").exit_code == 0  # Cursor runs Claude Code's settings too
    cursor = json.loads(cli("install", "cursor", "--json").stdout)
    assert cursor["events"] == ["beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution",
                                "beforeMCPExecution", "afterMCPExecution", "afterFileEdit", "afterAgentResponse",
                                "stop"]


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini-cli", "cursor", "copilot", "cline"])
def test_a_second_scope_of_one_harness_is_refused(harness, home, project):
    assert cli("install", harness, "--scope", "user").exit_code == 0
    result = cli("install", harness, "--scope", "project")
    assert result.exit_code == 2, result.output
    user_file = config_path(harness, "user", home, project)
    assert f"the agentwatch hooks in {user_file} (agentwatch install {harness} --scope user)" in result.stderr
    assert not config_path(harness, "project", home, project).exists()


@pytest.mark.parametrize("first,second,reader", [
    ("claude-code", "vscode", "vscode"),      # VS Code runs ~/.claude/settings.json and ~/.copilot/hooks
    ("vscode", "claude-code", "vscode"),
    ("claude-code", "cursor", "cursor"),      # Cursor runs Claude Code's settings
    ("cursor", "claude-code", "cursor"),
])
def test_an_install_another_harness_would_run_twice_is_refused(first, second, reader, home, project):
    assert cli("install", first, "--scope", "user").exit_code == 0
    result = cli("install", second, "--scope", "user")
    assert result.exit_code == 2, result.output
    assert f": {reader} runs the agentwatch hooks in {config_path(first, 'user', home, project)}" in result.stderr
    assert f"agentwatch uninstall {first} --scope user" in result.stderr
    assert not config_path(second, "user", home, project).exists()


def test_copilot_reads_only_the_repository_claude_settings(home, project):
    # Copilot CLI and VS Code: user-scope Claude settings and a project .github/hooks file overlap in VS Code
    assert cli("install", "claude-code", "--scope", "project").exit_code == 0
    result = cli("install", "copilot", "--scope", "project")
    assert result.exit_code == 2
    claude_file = config_path("claude-code", "project", home, project)
    assert f": copilot, vscode run the agentwatch hooks in {claude_file}" in result.stderr


def test_openhands_user_scope_and_copilot_home(home, project, monkeypatch, tmp_path):
    result = json.loads(cli("install", "openhands", "--scope", "user", "--json").stdout)
    assert result["files"][0]["path"] == str(home / ".openhands" / "hooks.json")
    assert any("a project file hides the user one" in note for note in result["notes"])
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))
    result = json.loads(cli("install", "copilot", "--scope", "user", "--json").stdout)
    assert result["files"][0]["path"] == str(tmp_path / "copilot-home" / "hooks" / "agentwatch.json")


# ---------------------------------------------------------------- re-installs never silently narrow


def test_a_reinstall_without_a_readable_version_keeps_every_event_installed_before(home, project, tmp_path,
                                                                                    monkeypatch):
    assert cli("install", "claude-code").exit_code == 0  # claude 2.1.240 on PATH: every event
    path = config_path("claude-code", "user", home, project)
    before = path.read_bytes()
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "empty-bin", {})))  # `claude` no longer on PATH
    result = cli("install", "claude-code", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["status"], report["added"], report["removed"]) == ("already_installed", [], [])
    assert report["events"] == EVENTS["claude-code"]
    assert report["notes"][0] == ("claude-code version unknown: kept the events installed earlier ("
                                  + ", ".join(EVENTS["claude-code"][9:]) + "); run install again where its "
                                  "CLI is on PATH to check them")
    assert path.read_bytes() == before


def test_a_reinstall_that_would_drop_events_is_refused_unless_asked(home, project, tmp_path, monkeypatch):
    assert cli("install", "claude-code").exit_code == 0
    path = config_path("claude-code", "user", home, project)
    before = path.read_bytes()
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "old-bin", {"claude": "2.1.80 (Claude Code)"})))
    refused = cli("install", "claude-code")
    assert refused.exit_code == 2
    assert ("claude-code: claude-code 2.1.80 found, so this install would stop recording PermissionDenied, "
            "UserPromptExpansion (installed earlier); nothing changed. Run `agentwatch install claude-code "
            "--narrow` to remove them, or update the harness") in refused.stderr
    assert path.read_bytes() == before
    narrowed = cli("install", "claude-code", "--narrow")
    assert narrowed.exit_code == 0, narrowed.output
    assert narrowed.stdout.splitlines()[0] == "updated: claude-code (user scope)"
    assert "  removed: PermissionDenied, UserPromptExpansion" in narrowed.stdout.splitlines()
    assert sorted(ours(json.loads(path.read_text()), "claude-code")) == sorted(EVENTS["claude-code"][:-2])


def test_cursor_tool_events_replace_its_per_action_events_without_a_narrowing(home, project, tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "old-bin", {"cursor": "2.3.35"})))
    legacy = json.loads(cli("install", "cursor", "--json").stdout)["events"]
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "new-bin", {"cursor": "3.1.0"})))
    upgraded = json.loads(cli("install", "cursor", "--json").stdout)
    assert upgraded["status"] == "updated"
    assert upgraded["removed"] == [e for e in legacy if e not in EVENTS["cursor"]]
    assert upgraded["added"] == [e for e in EVENTS["cursor"] if e not in legacy]
    # version unknown afterwards: the tool events stay, no per-action event is added beside them
    monkeypatch.setenv("PATH", str(fake_clis(tmp_path / "no-bin", {})))
    again = json.loads(cli("install", "cursor", "--json").stdout)
    assert (again["status"], again["events"]) == ("already_installed", EVENTS["cursor"])


def test_copilot_subagent_start_entry_is_renamed_not_narrowed(home, project):
    path = config_path("copilot", "user", home, project)
    assert cli("install", "copilot").exit_code == 0
    doc = json.loads(path.read_text())
    doc["hooks"]["SubagentStart"] = doc["hooks"].pop("subagentStart")  # what earlier versions wrote
    path.write_text(json.dumps(doc))
    [row] = [r for r in json.loads(cli("install", "--list", "--json").stdout)
             if (r["harness"], r["scope"]) == ("copilot", "user")]
    assert row["state"] == "outdated"
    report = json.loads(cli("install", "copilot", "--json").stdout)
    assert (report["status"], report["added"], report["removed"]) == ("updated", ["subagentStart"],
                                                                       ["SubagentStart"])
    assert sorted(ours(json.loads(path.read_text()), "copilot")) == sorted(EVENTS["copilot"])


def test_cursor_agent_dates_never_unlock_events_the_editor_refuses(home, project, tmp_path, monkeypatch):
    # Cursor 1.7's validator refuses hook types it does not know; cursor-agent 2025.08.25 reads the same file
    bin_dir = fake_clis(tmp_path / "bin", {"cursor-agent": "2025.08.25-896bbe1", "cursor": "1.7.0\n9b5c1e2\nx64"})
    monkeypatch.setenv("PATH", str(bin_dir))
    report = json.loads(cli("install", "cursor", "--json").stdout)
    assert report["events"] == ["beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution",
                                "beforeMCPExecution", "afterMCPExecution", "afterFileEdit", "afterAgentResponse",
                                "stop"]
    assert report["notes"][0] == "cursor 1.7.0 found: registered the events it has"
    assert ("cursor-agent 2025.08.25-896bbe1 also reads this file; its versions are its own, so the events are "
            "gated on cursor --version") in report["notes"]


def test_vscode_user_scope_warns_that_older_builds_do_not_read_it(home, project):
    user = json.loads(cli("install", "vscode", "--scope", "user", "--json").stdout)
    assert any(n.startswith("only newer VS Code builds read ~/.copilot/hooks") for n in user["notes"])
    assert cli("uninstall", "vscode", "--scope", "user").exit_code == 0
    repo = json.loads(cli("install", "vscode", "--scope", "project", "--json").stdout)
    assert not any("~/.copilot/hooks" in n for n in repo["notes"])
