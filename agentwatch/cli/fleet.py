"""Commands of the fleet tier: `ship`, `fleet init`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError


@app.command("ship")
def ship_cmd(
    to: Optional[str] = typer.Option(None, "--to", metavar="URL", help="The fleet server: postgresql://user@host/db (no password: libpq reads PGPASSFILE, PGSERVICE or PGPASSWORD); default: config ship.url."),
    store: Optional[Path] = StoreOpt,
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME", help="This machine's name on the server (config ship.host: the host name)."),
    batch_rows: Optional[int] = typer.Option(None, "--batch-rows", min=1, max=10_000, metavar="N", help="Rows per ingest call (config ship.batch_rows, 1000)."),
    once: bool = typer.Option(False, "--once", help="Ship what the store holds now and exit, instead of following new commits."),
    json_out: bool = JsonOpt,
) -> None:
    """Ship the store's records to the fleet server in seq order, verified there.

    Resumes from the server's own head for this store (idempotent by store_id
    and seq), sends batches through the server's ingest function, backs off on
    errors and follows new commits until Ctrl-C or SIGTERM; it only reads the
    store. The daemon does the same by itself when ship.url is set. Exit 0
    caught up (or stopped), 1 the server refused a row (a finding is recorded
    there), 2 usage, 3 the store or the server is unreachable. See docs/fleet.md.
    """
    import signal
    import threading

    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.fleet import ship
    from agentwatch.fleet.connect import check_target

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        if to is not None:
            check_target(to)
        cfg = config.load({"store": store, "ship.url": to, "ship.host": host, "ship.batch_rows": batch_rows})
        if not cfg["ship.url"]:
            fail("no fleet server: give --to URL or set ship.url (docs/fleet.md)", 2)
        shipper = ship.Shipper(cfg.store, cfg["ship.url"], host=cfg["ship.host"], batch_rows=cfg["ship.batch_rows"],
                               on_status=None if json_out else render.ship_progress,
                               state_dir=cfg["state_dir"])
        status = shipper.run(stop, follow=not once)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_ship(status, json_out)
    if status.refused or status.checkpoint_refused:
        raise typer.Exit(1)
    raise typer.Exit(3 if status.last_error and status.failing_since_ns else 0)


fleet_app = typer.Typer(name="fleet", help="Set up the fleet server (PostgreSQL).", no_args_is_help=True)
app.add_typer(fleet_app)


@fleet_app.command("init")
def fleet_init_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The fleet database, as a login that may create roles (postgresql://admin@host/db)."),
    json_out: bool = JsonOpt,
) -> None:
    """Install or upgrade the fleet schema: tables, the ingest function, views, roles.

    Applies the pending migrations (migrations/postgres/), each in one
    transaction with its bookkeeping row; running it again applies nothing.
    Creates the roles agentwatch_owner, agentwatch_ship (may only call the
    ingest function) and agentwatch_read (may only read). Exit 0 done, 2
    usage, 3 the server is unreachable or the schema cannot be installed.
    See docs/fleet.md.
    """
    from agentwatch.cli import render
    from agentwatch.fleet import schema

    try:
        result = schema.init(url)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_fleet_init(result, json_out)


claim_app = typer.Typer(name="claim", help="Move or retire a store's claim on the fleet server (administrator).",
                        no_args_is_help=True)
fleet_app.add_typer(claim_app)


@claim_app.command("move")
def fleet_claim_move_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The fleet database, as the login that ran fleet init."),
    store_id: str = typer.Argument(..., metavar="STORE_ID"),
    login: str = typer.Option(..., "--login", metavar="ROLE", help="The login that ships the store from now on."),
    host: str = typer.Option(..., "--host", metavar="NAME", help="The host label it ships as."),
    reason: str = typer.Option(..., "--reason", metavar="TEXT", help="Why (recorded on the server)."),
) -> None:
    """Give a store's claim to another login and host; recorded in claim_changes. See docs/fleet.md."""
    from agentwatch.fleet import admin

    try:
        change = admin.move_claim(url, store_id, login, host, reason)
    except AgentwatchError as exc:
        fail(exc)
    typer.echo(f"claim change {change}: {store_id} is shipped by {login} as {host}")


@claim_app.command("retire")
def fleet_claim_retire_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The fleet database, as the login that ran fleet init."),
    store_id: str = typer.Argument(..., metavar="STORE_ID"),
    reason: str = typer.Option(..., "--reason", metavar="TEXT", help="Why (recorded on the server)."),
) -> None:
    """Retire a store's claim: it takes no more rows and is never silent. See docs/fleet.md."""
    from agentwatch.fleet import admin

    try:
        change = admin.retire_claim(url, store_id, reason)
    except AgentwatchError as exc:
        fail(exc)
    typer.echo(f"claim change {change}: {store_id} is retired")


@fleet_app.command("purge")
def fleet_purge_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The fleet database, as the login that ran fleet init."),
    json_out: bool = JsonOpt,
) -> None:
    """After erasures: rewrite the records table and end old WAL segments, so erased payloads leave the files.

    Takes an exclusive lock on the records table while it runs. Exit 0 done
    (1 when the WAL could not be ended: the notes say why). See docs/fleet.md.
    """
    from agentwatch.cli import render
    from agentwatch.fleet import admin

    try:
        result = admin.purge(url)
    except AgentwatchError as exc:
        fail(exc)
    if json_out:
        render.print_json(result.to_json())
    else:
        typer.echo(f"records rewritten: {'yes' if result.rewritten else 'no'}; "
                   f"old WAL ended: {'yes' if result.wal_ended else 'no'}")
        for note in result.notes:
            typer.echo(f"  {note}")
    raise typer.Exit(0 if result.wal_ended else 1)
