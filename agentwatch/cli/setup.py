"""Commands that set the recorder up: `install`, `uninstall`, `config show`, `service print`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, SocketOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError
from agentwatch.record.adapters import HARNESSES

HarnessArg = typer.Argument(
    None, metavar="HARNESS", help=", ".join(HARNESSES) + "."
)
ScopeOpt = typer.Option(
    None, "--scope", metavar="user|project",
    help="Whose config: user (home directory) or project (the project directory). Default: user, or project "
    "for harnesses with project hooks only (openhands).",
)
ProjectOpt = typer.Option(
    None, "--project-dir", metavar="DIR", help="Project directory for --scope project (default: the current directory)."
)
DryRunOpt = typer.Option(False, "--dry-run", help="Print a unified diff of what would change; change nothing.")


@app.command("install")
def install_cmd(
    harness: Optional[str] = HarnessArg,
    scope: Optional[str] = ScopeOpt,
    project_dir: Optional[Path] = ProjectOpt,
    dry_run: bool = DryRunOpt,
    list_: bool = typer.Option(False, "--list", help="Show, per harness and scope, whether agentwatch is installed."),
    narrow: bool = typer.Option(False, "--narrow", help="Allow removing events installed earlier that the harness "
                                "version found does not have (refused otherwise)."),
    json_out: bool = JsonOpt,
) -> None:
    """Add agentwatch's hook to a harness's own config, touching nothing else.

    Merges one observe-only entry per event (async where the harness offers
    it) running `python -I -S /abs/agentwatch/hook.py HARNESS --via CONFIG`:
    the pre-tool, post-tool and failure events wherever the harness has them,
    and only the events the installed harness version has (read from its own
    `--version`; the notes say what was left out and why). Keeps a backup of
    the file before changing it; a second install changes nothing
    (already_installed); a re-install prints the events it adds and removes,
    keeps the events installed earlier when the version cannot be read, and
    removes one only with --narrow. A malformed config, or an install that would make
    one harness run agentwatch twice for each event, is refused and left
    unchanged (exit 2); an unwritable location exits 3. `--list` shows what is
    installed where, one line per harness and scope; it exits 1 when a config
    cannot be read (the reason follows its line). See docs/install.md.
    """
    from agentwatch import install
    from agentwatch.cli import render

    try:
        if list_:
            if harness is not None or scope is not None or dry_run:
                fail("--list takes no HARNESS, --scope or --dry-run", 2)
            listed = install.list_installed(project_dir)
            render.emit_install_list(listed, json_out)
            broken = [row for row in listed if row.error]
            if json_out or not render.is_terminal():  # on a terminal the listing already says why
                for row in broken:
                    print(f"agentwatch: {row.harness} ({row.scope}): {row.error}", file=sys.stderr)
            raise typer.Exit(1 if broken else 0)
        if harness is None:
            fail(f"missing HARNESS (one of: {', '.join(install.HARNESSES)}), or use --list", 2)
        result = install.install(harness, scope, project_dir, dry_run=dry_run, narrow=narrow)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_install(result, json_out)


@app.command("uninstall")
def uninstall_cmd(
    harness: str = typer.Argument(
        ..., metavar="HARNESS", help=", ".join(HARNESSES) + "."
    ),
    scope: Optional[str] = ScopeOpt,
    project_dir: Optional[Path] = ProjectOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Remove exactly agentwatch's hook entries from a harness's config.

    Everything else in the file stays as it was; a backup of the file is kept
    before the change. Exit 2 for a malformed config, 3 when it cannot be
    written. See docs/install.md.
    """
    from agentwatch import install
    from agentwatch.cli import render

    try:
        result = install.uninstall(harness, scope, project_dir, dry_run=dry_run)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_install(result, json_out)


config_app = typer.Typer(name="config", help="Show the effective configuration.", no_args_is_help=True)
app.add_typer(config_app)


@config_app.command("show")
def config_show_cmd(
    store: Optional[Path] = typer.Option(None, "--store", help="Store path, as the other commands take it."),
    socket_path: Optional[Path] = typer.Option(None, "--socket", help="Daemon socket, as the other commands take it."),
    json_out: bool = JsonOpt,
) -> None:
    """Print every configuration key, its effective value and where it came from.

    Sources: default, file:PATH ($XDG_CONFIG_HOME/agentwatch/config.toml or
    AGENTWATCH_CONFIG), env:AGENTWATCH_*, flag:--NAME, project:PATH (a
    .agentwatch.toml in this directory or a parent, which may only tighten).
    Exit 2 when a file, variable or flag is invalid. See docs/config.md.
    """
    from agentwatch import config
    from agentwatch.cli import render

    try:
        cfg = config.load({"store": store, "socket": socket_path})
    except AgentwatchError as exc:
        fail(exc)
    render.emit_config(cfg, json_out)


service_app = typer.Typer(name="service", help="Run the recorder as a login service.", no_args_is_help=True)
app.add_typer(service_app)


@service_app.command("print")
def service_print_cmd(
    kind: str = typer.Argument(..., metavar="systemd|launchd", help="systemd user unit or launchd LaunchAgent."),
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    system: bool = typer.Option(False, "--system", help="A system service run by a dedicated user that owns the "
                                "store, the key and the witness; developers' hooks connect through a group "
                                "socket (docs/deployment.md)."),
    user: str = typer.Option("agentwatch", "--user", help="With --system: the service's user (and group)."),
) -> None:
    """Print a service definition that runs `agentwatch serve` with this installation.

    With --system: a system unit (LaunchDaemon) that runs the daemon as a
    dedicated user owning the store, the checkpoint key and the witness, so the
    recorded agent's own user cannot rewrite the evidence (docs/deployment.md).

    The definition runs the current interpreter (`python -m agentwatch.cli
    serve`), restarts it when it fails, and sets AGENTWATCH_STORE and
    AGENTWATCH_SOCKET to the effective store and socket. Where to save it goes
    to stderr. Nothing is installed or started.
    """
    from agentwatch import config
    from agentwatch.daemon import service

    if kind not in ("systemd", "launchd"):
        fail(f"unknown service kind {kind!r} (expected systemd or launchd)", 2)
    if system:
        layout = (service.SystemLayout(user=user, group=user) if kind == "systemd" else
                  service.SystemLayout(user=user, group=user, base=Path("/usr/local/var/agentwatch"),
                                       runtime=Path("/var/run/agentwatch")))
        text = service.systemd_system_unit(layout) if kind == "systemd" else service.launchd_daemon_plist(layout)
        sys.stdout.write(text)
        print(f"agentwatch: {service.system_install_hint(kind)}", file=sys.stderr)
        return
    try:
        cfg = config.load({"store": store, "socket": socket_path})
    except AgentwatchError as exc:
        fail(exc)
    path, explicit = config.user_config_path()
    config_file = path if explicit else None
    render_fn = service.systemd_unit if kind == "systemd" else service.launchd_plist
    sys.stdout.write(render_fn(cfg.store, cfg.socket, config_file=config_file))
    print(f"agentwatch: {service.install_hint(kind)}", file=sys.stderr)
