"""`agentwatch ui`: the local, read-only review page."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import SocketOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError


@app.command("ui")
def ui_cmd(
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    port: int = typer.Option(0, "--port", min=0, max=65535, metavar="PORT",
                             help="Port on 127.0.0.1 (default: a free one)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the page in the default browser."),
) -> None:
    """Serve a local, read-only web view of the store: sessions, timelines, records, proofs, SQL.

    Listens on 127.0.0.1 only and prints the one URL that works: it holds a random
    token made for this run, so other users and other web pages cannot read the
    store through it. Nothing on the page writes; the store is opened read-only
    and refused when its schema differs from what agentwatch creates. The page
    runs no script and loads nothing from the network (docs/ui.md). Runs until
    Ctrl-C. Exit 0 on Ctrl-C, 2 usage (a port in use), 3 store unreachable.

    Example: agentwatch ui --open
    """
    from agentwatch import config
    from agentwatch.store import db
    from agentwatch.ui.server import Settings, UIServer

    try:
        cfg = config.load({"store": store, "socket": socket_path})
        with db.store_errors(cfg.store):
            db.open_reader(cfg.store).close()
        settings = Settings(store=cfg.store, state_dir=cfg["state_dir"], socket=cfg.socket,
                            witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])
        server = UIServer(settings, port=port)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", 2)
    except AgentwatchError as exc:
        fail(exc)
    print(server.url, flush=True)
    print("agentwatch: serving the store read-only; Ctrl-C stops", file=sys.stderr, flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
