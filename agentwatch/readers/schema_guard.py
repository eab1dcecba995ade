"""Readers answer only from the schema as shipped (docs/schema.md, "Schema check").

A view, trigger or generated column decides what a query sees: with the `events` view
rewritten to leave a row out, `agentwatch sql` answered through it without a word while
`verify` named `schema_changed`. So `sql`, `sessions`, `show`, `tail` and `export` open the
store through `open_reader` here, which compares the schema the way `verify` does and
refuses (SchemaChanged, exit 7). `agentwatch --schema-changed-ok COMMAND` lets them answer
all the same, with a warning on stderr for every store they open that way.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Callable, TypeVar

import apsw

from agentwatch.store import db, schema_check

log = logging.getLogger(__name__)
T = TypeVar("T")
_allowed = False


def allow(value: bool = True) -> None:
    """Answer from a changed schema, warning each time (the root option `--schema-changed-ok`)."""
    global _allowed
    _allowed = value


def store_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Run a reader whose first argument is the store's path inside db.store_errors: whatever the
    store holds (a value past the readers' limit, a damaged page) is one clear line, exit 3."""
    @functools.wraps(fn)
    def run(store, *args, **kwargs):
        with db.store_errors(Path(store)):
            return fn(store, *args, **kwargs)
    return run


def open_reader(path: Path) -> apsw.Connection:
    """A read-only connection (db.open_reader) to a store whose schema is the shipped one."""
    conn = db.open_reader(path)
    try:
        problems = schema_check.differences(conn)
    except BaseException:
        conn.close()
        raise
    if not problems:
        return conn
    what = schema_check.describe(problems)
    if not _allowed:
        conn.close()
        raise schema_check.SchemaChanged(
            f"{path}: {what}; readers refuse a store whose views, triggers or columns may not show what it "
            "holds (run `agentwatch verify`; `agentwatch --schema-changed-ok ...` answers anyway, with a warning)")
    # Logged: on stderr without a logging configuration (the reader commands have none).
    log.warning(f"agentwatch: warning: {path}: {what}; the answer comes through that schema and may hide or "
                "alter rows")
    return conn
