"""Service definitions that run `agentwatch serve` at login: a systemd user unit, a launchd agent.

The command is the interpreter that `install` writes into harness hooks
(agentwatch.interpreter: this installation's Python, never a shim) with
`-m agentwatch.cli serve`, so the service uses the same installation (venv) as
the hooks that feed it; no shell, shim or PATH lookup is involved.
"""

from __future__ import annotations

import json
import plistlib
from dataclasses import dataclass
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


# --- the service deployment: a dedicated system user the recorded agent cannot become -----------

SYSTEM_USER = "agentwatch"


@dataclass(frozen=True)
class SystemLayout:
    """Where the system service keeps its files; everything is owned by `user`, group `group`.

    The developers whose hooks are recorded join `group`: they reach the socket (0660) and
    read the store (0640), and cannot write the store, the key (0600) or the witness.
    """

    user: str = SYSTEM_USER
    group: str = SYSTEM_USER
    base: Path = Path("/var/lib/agentwatch")
    runtime: Path = Path("/run/agentwatch")

    def environment(self) -> dict[str, str]:
        return {
            "AGENTWATCH_STORE": str(self.base / "data" / "store.db"),
            "AGENTWATCH_SPOOL": str(self.base / "data" / "spool"),
            "AGENTWATCH_SOCKET": str(self.runtime / "agentwatch.sock"),
            "AGENTWATCH_SERVE_SOCKET_GROUP": self.group,
            "AGENTWATCH_STATE_DIR": str(self.base / "state"),
            "AGENTWATCH_CHECKPOINT_WITNESS_DIRS": json.dumps([str(self.base / "witness")]),
            "HOME": str(self.base),
            "XDG_CONFIG_HOME": str(self.base / "config"),
            "XDG_DATA_HOME": str(self.base / "data"),
            "XDG_STATE_HOME": str(self.base / "state"),
        }


def system_layout(kind: str, user: str | None = None) -> SystemLayout:
    """The system service's layout on Linux (systemd) or macOS (launchd); `user` names the user and group.

    On macOS the socket directory lies under the base directory: /var/run is emptied at boot
    and only root can make a directory there again, so the daemon, which runs as the service
    user, makes its own under a directory it owns."""
    if kind == "launchd":
        name = user or "_agentwatch"
        base = Path("/usr/local/var/agentwatch")
        return SystemLayout(user=name, group=name, base=base, runtime=base / "run")
    name = user or SYSTEM_USER
    return SystemLayout(user=name, group=name)


def systemd_system_unit(layout: SystemLayout = SystemLayout(), *, python: str | None = None) -> str:
    """A systemd system unit (/etc/systemd/system/agentwatch.service) running as layout.user."""
    lines = [
        "[Unit]",
        "Description=agentwatch: tamper-evident flight recorder for AI coding agents (system service)",
        "After=local-fs.target",
        "",
        "[Service]",
        "Type=simple",
        f"User={layout.user}",
        f"Group={layout.group}",
        "ExecStart=" + " ".join(_systemd_arg(a) for a in serve_command(python)),
        *(f"Environment={_systemd_arg(f'{k}={v}')}" for k, v in layout.environment().items()),
        # The process witness (docs/reliability.md, "The process witness"): the proc connector needs
        # CAP_NET_ADMIN, fanotify CAP_SYS_ADMIN, reading another user's /proc/<pid>/cwd CAP_SYS_PTRACE.
        # The service user gets exactly these and no other; without them the daemon records all the same.
        "Environment=AGENTWATCH_SERVE_PROCESS_WITNESS=true",
        "AmbientCapabilities=CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_PTRACE",
        "CapabilityBoundingSet=CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_PTRACE",
        # Files group-readable (the developers verify), never world-readable; the key is 0600 anyway.
        "UMask=0027",
        f"StateDirectory={layout.base.name}",
        "StateDirectoryMode=0750",
        f"RuntimeDirectory={layout.runtime.name}",
        "RuntimeDirectoryMode=0750",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "Restart=on-failure",
        "RestartSec=2",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=30",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def launchd_daemon_plist(layout: SystemLayout | None = None, *, python: str | None = None) -> str:
    """A launchd LaunchDaemon (/Library/LaunchDaemons/agentwatch.serve.plist) running as layout.user."""
    layout = layout or system_layout("launchd")
    doc = {
        "Label": LABEL,
        "UserName": layout.user,
        "GroupName": layout.group,
        "ProgramArguments": serve_command(python),
        "EnvironmentVariables": layout.environment(),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        "ExitTimeOut": 30,
        "Umask": 0o027,
        "StandardOutPath": str(layout.base / "agentwatch.log"),
        "StandardErrorPath": str(layout.base / "agentwatch.log"),
    }
    return plistlib.dumps(doc, sort_keys=False).decode("utf-8")


def system_install_hint(kind: str, layout: SystemLayout = SystemLayout()) -> str:
    if kind == "systemd":
        return ("see docs/deployment.md; save as /etc/systemd/system/agentwatch.service, then: "
                "systemctl daemon-reload && systemctl enable --now agentwatch")
    return (f"see docs/deployment.md; save as /Library/LaunchDaemons/{LABEL}.plist, then: "
            f"sudo launchctl bootstrap system /Library/LaunchDaemons/{LABEL}.plist")
