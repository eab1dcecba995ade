"""`agentwatch service print`: the definitions parse and run this interpreter's `serve`."""

from __future__ import annotations

import os
import plistlib
import shlex
from pathlib import Path

from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.daemon import service
from agentwatch.interpreter import python_binary

runner = CliRunner()


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A systemd unit as {section: {key: [values]}} (keys may repeat, e.g. Environment=)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in text.splitlines():
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"not a unit line: {line!r}"
        current.setdefault(key, []).append(value)
    return sections


def test_systemd_unit_runs_this_interpreter_and_restarts_on_failure(tmp_path):
    store, sock = tmp_path / "store.db", tmp_path / "run" / "aw.sock"
    unit = parse_unit(service.systemd_unit(store, sock))
    svc = unit["Service"]
    assert shlex.split(svc["ExecStart"][0]) == [python_binary(), "-m", "agentwatch.cli", "serve"]
    assert os.path.isabs(shlex.split(svc["ExecStart"][0])[0])
    assert svc["Restart"] == ["on-failure"] and svc["Type"] == ["simple"]
    env = dict(shlex.split(v)[0].split("=", 1) for v in svc["Environment"])
    assert env == {"AGENTWATCH_STORE": str(store), "AGENTWATCH_SOCKET": str(sock)}
    assert unit["Install"]["WantedBy"] == ["default.target"]


def test_systemd_quotes_spaces_and_escapes_specifiers(tmp_path):
    store = tmp_path / "my store %h $HOME" / "s.db"
    unit = parse_unit(service.systemd_unit(store, tmp_path / "s.sock", python="/opt/py 3/bin/python"))
    svc = unit["Service"]
    assert svc["ExecStart"][0].startswith('"/opt/py 3/bin/python" -m')
    (store_line,) = [v for v in svc["Environment"] if "STORE" in v]
    assert store_line == f'"AGENTWATCH_STORE={tmp_path}/my store %%h $$HOME/s.db"'


def test_launchd_plist_parses_with_program_arguments_and_keepalive(tmp_path):
    store, sock, cfg = tmp_path / "store.db", tmp_path / "aw.sock", tmp_path / "c.toml"
    doc = plistlib.loads(service.launchd_plist(store, sock, config_file=cfg, log_dir=tmp_path).encode())
    assert doc["Label"] == "agentwatch.serve"
    assert doc["ProgramArguments"] == [python_binary(), "-m", "agentwatch.cli", "serve"]
    assert doc["KeepAlive"] == {"SuccessfulExit": False} and doc["RunAtLoad"] is True
    assert doc["EnvironmentVariables"] == {
        "AGENTWATCH_STORE": str(store), "AGENTWATCH_SOCKET": str(sock), "AGENTWATCH_CONFIG": str(cfg)}
    assert doc["Umask"] == 0o077 and doc["StandardErrorPath"] == str(tmp_path / "agentwatch.serve.log")


# launchd.plist(5): the keys this agent uses, and the type each must have.
LAUNCHD_KEYS = {
    "Label": str, "ProgramArguments": list, "EnvironmentVariables": dict, "RunAtLoad": bool,
    "KeepAlive": (bool, dict), "ThrottleInterval": int, "ExitTimeOut": int, "Umask": int,
    "StandardOutPath": str, "StandardErrorPath": str, "ProcessType": str,
}
PROCESS_TYPES = {"Background", "Standard", "Adaptive", "Interactive"}  # launchd.plist(5), ProcessType


def test_launchd_plist_uses_documented_keys_and_the_hooks_interpreter(tmp_path):
    from agentwatch.install import command

    doc = plistlib.loads(service.launchd_plist(tmp_path / "s.db", tmp_path / "s.sock", log_dir=tmp_path).encode())
    assert set(doc) == set(LAUNCHD_KEYS)
    assert {k: isinstance(v, LAUNCHD_KEYS[k]) for k, v in doc.items()} == dict.fromkeys(doc, True)
    assert doc["ProcessType"] in PROCESS_TYPES and doc["ProcessType"] == "Standard"
    assert set(doc["KeepAlive"]) == {"SuccessfulExit"}
    assert all(isinstance(arg, str) for arg in doc["ProgramArguments"])
    # The same binary that `install` writes into every harness hook.
    assert doc["ProgramArguments"][0] == command.argv("claude-code")[0]


def test_cli_prints_units_for_the_effective_store_and_socket(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["service", "print", "systemd", "--store", str(tmp_path / "a.db")])
    assert result.exit_code == 0, result.output
    svc = parse_unit(result.stdout)["Service"]
    env = dict(v.split("=", 1) for v in svc["Environment"])
    assert env["AGENTWATCH_STORE"] == str(tmp_path / "a.db")
    assert env["AGENTWATCH_SOCKET"] == str(Path(os.environ["XDG_RUNTIME_DIR"]) / "agentwatch" / "agentwatch.sock")
    assert "systemctl --user" in result.stderr

    result = runner.invoke(app, ["service", "print", "launchd", "--socket", str(tmp_path / "x.sock")])
    assert result.exit_code == 0
    doc = plistlib.loads(result.stdout.encode())
    assert doc["EnvironmentVariables"]["AGENTWATCH_SOCKET"] == str(tmp_path / "x.sock")


def test_cli_refuses_an_unknown_kind():
    result = runner.invoke(app, ["service", "print", "upstart"])
    assert result.exit_code == 2 and "systemd or launchd" in result.stderr
