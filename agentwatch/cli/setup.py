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


service_app = typer.Typer(name="service", help="Run the recorder as a login service, or as a system service "
                          "under an account of its own.", no_args_is_help=True)
app.add_typer(service_app)


@service_app.command("print")
def service_print_cmd(
    kind: str = typer.Argument(..., metavar="systemd|launchd", help="systemd user unit or launchd LaunchAgent."),
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    system: bool = typer.Option(False, "--system", help="A system service run by a dedicated user that owns the "
                                "store, the key and the witness; developers' hooks connect through a group "
                                "socket (docs/deployment.md)."),
    user: Optional[str] = typer.Option(None, "--user", help="With --system: the service's user (and group); "
                                       "default agentwatch (systemd), _agentwatch (launchd)."),
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
        layout = service.system_layout(kind, user)
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


SystemOpt = typer.Option(False, "--system", help="The system service (required: this command changes system accounts).")
ServiceUserOpt = typer.Option(None, "--user", metavar="NAME", help="The service's user and group (default agentwatch "
                              "on Linux, _agentwatch on macOS).")
KindOpt = typer.Option(None, "--kind", metavar="systemd|launchd", help="Which service manager (default: this "
                       "platform's); the other one only with --dry-run.")
# Where the layout lives, for the tests' own directories (the unit's StateDirectory= assumes /var/lib).
BaseOpt = typer.Option(None, "--base", hidden=True)
RuntimeOpt = typer.Option(None, "--runtime-dir", hidden=True)
UnitPathOpt = typer.Option(None, "--unit-path", hidden=True)


def _service_options(kind: Optional[str], user: Optional[str], members: list[str], base: Optional[Path],
                     runtime: Optional[Path], unit_path: Optional[Path], python: Optional[Path] = None,
                     dry_run: bool = False, no_start: bool = False):
    from agentwatch.daemon import service_setup

    kind = kind or service_setup.default_kind()
    if kind not in service_setup.KINDS:
        fail(f"unknown service kind {kind!r} (expected systemd or launchd)", 2)
    return service_setup.Options(kind=kind, layout=service_setup.layout_for(kind, user, base, runtime),
                                 members=list(dict.fromkeys(members)), dry_run=dry_run, no_start=no_start,
                                 unit_path=unit_path, python=str(python) if python else None)


def _service_emit(outcome, json_out: bool) -> None:
    import json

    if json_out:
        print(json.dumps(outcome.to_json(), indent=2))
    else:
        sys.stdout.write(outcome.text())
    raise typer.Exit(outcome.exit_code)


@service_app.command("install")
def service_install_cmd(
    system: bool = SystemOpt,
    user: Optional[str] = ServiceUserOpt,
    member: list[str] = typer.Option([], "--member", metavar="NAME", help="A developer whose agents are recorded: "
                                     "added to the group, and given a config that points at the service "
                                     "(repeat for each)."),
    kind: Optional[str] = KindOpt,
    python: Optional[Path] = typer.Option(None, "--python", help="The interpreter the unit runs (default: this "
                                          "installation's); the service user must be able to run it."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be done, with the commands; change nothing."),
    no_start: bool = typer.Option(False, "--no-start", help="Install everything but do not start the service."),
    json_out: bool = JsonOpt,
    base: Optional[Path] = BaseOpt,
    runtime: Optional[Path] = RuntimeOpt,
    unit_path: Optional[Path] = UnitPathOpt,
) -> None:
    """Install the system service: the daemon, the store, the key and the witness under their own account.

    As root, in order, each step changing only what differs (docs/deployment.md):
    the group and system user (useradd; dscl on macOS), the members added to the
    group, /var/lib/agentwatch and /run/agentwatch (0750, the service user's),
    the store, the key and the witness created by the service user itself, the
    unit (launchd plist), reload + enable + start, and each member's
    ~/.config/agentwatch/config.toml (written as the member when there is none,
    printed when theirs says something else). A second run changes nothing and
    says so. Exit 0 when done (with --no-start: all but the start), 1 when the
    service manager is not running here (everything else done; the command to
    start it is printed), 2 without root (unless --dry-run) or for an unknown
    member, 3 when a step failed (the steps before it stay done).
    """
    from agentwatch.daemon import service_setup

    if not system:
        fail("service install installs the system service only: add --system (for the login service, "
             "`agentwatch service print systemd|launchd`)", 2)
    opts = _service_options(kind, user, member, base, runtime, unit_path, python, dry_run, no_start)
    try:
        outcome = service_setup.install(opts)
    except AgentwatchError as exc:
        fail(exc)
    _service_emit(outcome, json_out)


@service_app.command("uninstall")
def service_uninstall_cmd(
    system: bool = SystemOpt,
    user: Optional[str] = ServiceUserOpt,
    member: list[str] = typer.Option([], "--member", metavar="NAME", hidden=True),
    kind: Optional[str] = KindOpt,
    purge: bool = typer.Option(False, "--purge", help="Also delete the store, the key, the witness and the "
                               "service's user and group."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be done; change nothing."),
    json_out: bool = JsonOpt,
    base: Optional[Path] = BaseOpt,
    runtime: Optional[Path] = RuntimeOpt,
    unit_path: Optional[Path] = UnitPathOpt,
) -> None:
    """Undo `service install --system`: stop and remove the service, keep the evidence.

    Stops and disables the service, removes the unit (plist) and the socket
    directory. The store, the key, the witness and the account that owns them
    stay, so the members can still verify what was recorded; --purge deletes
    them too (refused while a daemon serves the store). Members' config files
    are theirs and are left alone. Exit 0 when done, 1 when the service
    manager is not running here (the command to stop it is printed), 2 without
    root, 3 when a step failed.
    """
    from agentwatch.daemon import service_setup

    if not system:
        fail("service uninstall removes the system service only: add --system", 2)
    opts = _service_options(kind, user, member, base, runtime, unit_path, dry_run=dry_run)
    try:
        outcome = service_setup.uninstall(opts, purge=purge)
    except AgentwatchError as exc:
        fail(exc)
    _service_emit(outcome, json_out)


# Options end at the command's name: everything after it (its own --user or --system too) is the command's.
@service_app.command("run", options_metavar="[OPTIONS] COMMAND...",
                     context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                       "allow_interspersed_args": False})
def service_run_cmd(
    ctx: typer.Context,
    system: bool = SystemOpt,
    user: Optional[str] = ServiceUserOpt,
    base: Optional[Path] = BaseOpt,
    runtime: Optional[Path] = RuntimeOpt,
) -> None:
    """Run an agentwatch command as the system service's user, with the unit's environment.

    `sudo agentwatch service run --system import FILE` imports into the
    service's store as its owner (stop the service first: a served store has
    one writer); what the command creates gets the service layout's owner and
    modes. The exit code is the command's.
    """
    from agentwatch.daemon import service_setup

    if not system:
        fail("service run runs a command as the system service's user: add --system", 2)
    if not ctx.args:
        fail("missing the agentwatch command to run, e.g. `service run --system import FILE`", 2)
    kind = service_setup.default_kind()
    try:
        code = service_setup.run_as_service(service_setup.layout_for(kind, user, base, runtime), list(ctx.args))
    except AgentwatchError as exc:
        fail(exc)
    raise typer.Exit(code)
