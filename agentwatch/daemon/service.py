"""Service definitions that run `agentwatch serve` at login: a systemd user unit, a launchd agent.

The command is the interpreter that `install` writes into harness hooks
(agentwatch.interpreter: this installation's Python, never a shim) with
`-m agentwatch.cli serve`, so the service uses the same installation (venv) as
the hooks that feed it; no shell, shim or PATH lookup is involved.
"""

from __future__ import annotations

import plistlib
from pathlib import Path

from agentwatch.interpreter import python_binary

LABEL = "agentwatch.serve"


def serve_command(python: str | None = None) -> list[str]:
    return [python or python_binary(), "-m", "agentwatch.cli", "serve"]


def service_environment(store: Path, socket: Path, config_file: Path | None = None) -> dict[str, str]:
    env = {"AGENTWATCH_STORE": str(Path(store).absolute()), "AGENTWATCH_SOCKET": str(Path(socket).absolute())}
    if config_file is not None:
        env["AGENTWATCH_CONFIG"] = str(Path(config_file).absolute())
    return env


def systemd_unit(store: Path, socket: Path, *, config_file: Path | None = None, python: str | None = None) -> str:
    """A systemd user unit (~/.config/systemd/user/agentwatch.service)."""
    env = service_environment(store, socket, config_file)
    lines = [
        "[Unit]",
        "Description=agentwatch: tamper-evident flight recorder for AI coding agents",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_arg(a) for a in serve_command(python)),
        *(f"Environment={_systemd_arg(f'{k}={v}')}" for k, v in env.items()),
        "UMask=0077",
        "Restart=on-failure",
        "RestartSec=2",
        # SIGTERM: the daemon commits and answers what it already read, then exits 0.
        "KillSignal=SIGTERM",
        "TimeoutStopSec=30",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def _systemd_arg(arg: str) -> str:
    """Quote one word for ExecStart=/Environment=: systemd expands % specifiers and $VARs."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if arg and not any(c in arg for c in ' \t"\'\\;'):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def launchd_plist(store: Path, socket: Path, *, config_file: Path | None = None, python: str | None = None,
                  log_dir: Path | None = None) -> str:
    """A launchd LaunchAgent (~/Library/LaunchAgents/agentwatch.serve.plist)."""
    logs = log_dir or Path.home() / "Library" / "Logs"
    doc = {
        "Label": LABEL,
        "ProgramArguments": serve_command(python),
        "EnvironmentVariables": service_environment(store, socket, config_file),
        "RunAtLoad": True,
        # Restart when it exits with an error or is killed; a clean exit (code 0) stays stopped.
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        "ExitTimeOut": 30,
        "Umask": 0o077,
        "StandardOutPath": str(logs / f"{LABEL}.log"),
        "StandardErrorPath": str(logs / f"{LABEL}.log"),
        # Standard, not Background: hooks wait on this daemon, so it must not be throttled.
        "ProcessType": "Standard",
    }
    return plistlib.dumps(doc, sort_keys=False).decode("utf-8")


def install_hint(kind: str) -> str:
    if kind == "systemd":
        return ("save as ~/.config/systemd/user/agentwatch.service, then: "
                "systemctl --user daemon-reload && systemctl --user enable --now agentwatch")
    return (f"save as ~/Library/LaunchAgents/{LABEL}.plist, then: "
            f"launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/{LABEL}.plist")
