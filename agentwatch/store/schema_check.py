"""The store's schema compared with what the migrations create (docs/schema.md, "Schema check").

The chain covers rows, not the schema around them, yet a trigger, a view or a
generated column decides what is stored and what readers see: a `BEFORE
INSERT ... RAISE(IGNORE)` trigger drops rows the writer believes it stored, and
a generated column rewritten through `writable_schema` makes the forensic
columns lie while every hash still verifies. So every `sqlite_schema` row of a
store is compared with the rows the shipped migrations create on an empty
database: an extra, missing or changed table, index, trigger or view is a
`schema_changed` finding. The writer checks at open and whenever the schema
cookie moves, the sweeper on every round, and `verify` on every run.

SQLite's own statistics tables (`sqlite_stat1`, `sqlite_stat4`, made by
ANALYZE) change query plans, never results, and are allowed.
"""

from __future__ import annotations

import functools

import apsw

from agentwatch.errors import EXIT_SCHEMA_CHANGED, SchemaError
from agentwatch.store import migrations

_SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema"
ALLOWED_EXTRA = frozenset({"sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"})

Entry = tuple  # (type, name) -> (tbl_name, sql)


class SchemaChanged(SchemaError):
    """The store's schema is not the one its migrations create (exit 7)."""

    exit_code = EXIT_SCHEMA_CHANGED


def _read(conn: apsw.Connection) -> dict[tuple[str, str], tuple[str, str | None]]:
    return {(t, n): (tbl, sql) for t, n, tbl, sql in conn.execute(_SCHEMA_SQL)}


@functools.cache
def expected() -> dict[tuple[str, str], tuple[str, str | None]]:
    """What the shipped migrations create, read back from an empty in-memory database."""
    conn = apsw.Connection(":memory:")
    try:
        migrations.migrate(conn)
        return _read(conn)
    finally:
        conn.close()


def differences(conn: apsw.Connection) -> list[str]:
    """One line per extra, missing or changed schema entry; empty when the schema is the shipped one."""
    want = expected()
    have = _read(conn)
    found = []
    for key in sorted(have.keys() - want.keys()):
        if key[1] not in ALLOWED_EXTRA:
            found.append(f"extra {key[0]} {key[1]!r} on {have[key][0]!r}")
    for key in sorted(want.keys() - have.keys()):
        found.append(f"missing {key[0]} {key[1]!r}")
    for key in sorted(want.keys() & have.keys()):
        if want[key] != have[key]:
            found.append(f"changed {key[0]} {key[1]!r}")
    return found


def describe(problems: list[str]) -> str:
    shown = "; ".join(problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return f"the schema differs from what the migrations create: {shown}{more}"


def check(conn: apsw.Connection) -> None:
    """Raise SchemaChanged when the schema is not the shipped one."""
    problems = differences(conn)
    if problems:
        raise SchemaChanged(f"{conn.filename}: {describe(problems)}")
