"""The `agentwatch` command: thin typer commands over the library, one module per command group.

`app` holds the root command, the shared options and `fail`; each group module registers its
commands on it when imported; `render` is the one module that formats output (and the only
one that imports rich). `python -m agentwatch.cli` runs it.
"""

# ruff: noqa: I001
from agentwatch.cli.app import app, main

# Each group registers its commands on `app` when imported; `--help` lists them in this order.
from agentwatch.cli import record, query, coverage, evidence, retention, fleet, setup, ui, processes, docs  # noqa: F401

from agentwatch.cli import examples  # noqa: E402

examples.attach(app)

__all__ = ["app", "main"]
