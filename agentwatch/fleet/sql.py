"""`agentwatch sql --pg`: one read-only query against the fleet server.

Read-only by role: the login must not be able to write the fleet schema (no
superuser, no INSERT/UPDATE/DELETE/TRUNCATE on its tables, not the owner, no
EXECUTE on the ingest function), which a member of `agentwatch_read` is not;
a login that could write is refused before the query runs. The query then runs
in a READ ONLY transaction that is rolled back, with `agentwatch` first on the
search path, so `SELECT * FROM events` reads the fleet's events view.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any, Iterator

from agentwatch.errors import ReadOnlyViolation, UsageError
from agentwatch.fleet.connect import FleetSchemaError, connect, first_line, redact
from agentwatch.fleet.schema import OWNER

_WRITABLE = """
SELECT
    (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
    pg_has_role(current_user, %s, 'USAGE'),
    coalesce((SELECT bool_or(has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'agentwatch' AND c.relkind IN ('r', 'p')), false),
    coalesce((SELECT bool_or(has_function_privilege(p.oid, 'EXECUTE'))
              FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'agentwatch' AND p.proname = 'ingest'), false)
"""


def check_read_only_role(conn, where: str) -> None:
    superuser, owner, writes, ships = conn.execute(_WRITABLE, (OWNER,)).fetchone()
    why = ("is a superuser" if superuser else f"acts as {OWNER}" if owner else
           "may write fleet tables" if writes else "may ship (EXECUTE on agentwatch.ingest)" if ships else None)
    if why:
        raise ReadOnlyViolation(f"{where}: this login {why}; `sql --pg` connects only as a read-only role "
                                "(a member of agentwatch_read)")


def run(target: str, query: str) -> tuple[list[str], Iterator[tuple]]:
    """Run `query`; its column names and its rows (as JSON-ready values)."""
    import psycopg

    if not query.strip():
        raise UsageError("empty query")
    conn = connect(target, autocommit=False, application="agentwatch sql")
    where = redact(target)
    try:
        check_read_only_role(conn, where)
        conn.rollback()
        conn.read_only = True
        conn.execute("SET LOCAL search_path = agentwatch, public")
        cursor = conn.execute(query.encode("utf-8"))  # bytes: no parameters, one simple query
        columns = [d.name for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if cursor.description else []
        if cursor.nextset():
            raise UsageError("one statement per query: results of several would be mixed")
    except psycopg.errors.ReadOnlySqlTransaction:
        raise ReadOnlyViolation("only reading is allowed: this statement would write") from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise ReadOnlyViolation(f"{where}: {first_line(exc)}") from None
    except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedFunction) as exc:
        raise UsageError(f"SQL error: {first_line(exc)}") from None
    except psycopg.errors.SyntaxError as exc:
        raise UsageError(f"SQL error: {first_line(exc)}") from None
    except psycopg.OperationalError as exc:
        raise FleetSchemaError(f"{where}: {first_line(exc)}") from None
    except psycopg.Error as exc:
        raise UsageError(f"SQL error: {first_line(exc)}") from None
    finally:
        try:
            conn.rollback()
        finally:
            conn.close()
    return columns, (tuple(map(plain, row)) for row in rows)


def plain(value: Any) -> Any:
    """A PostgreSQL value as JSON can carry it: times in ISO 8601, exact integers, text."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        # As SQLite would give it: a whole number written without a fraction is an integer, else a double.
        if not value.is_finite():
            return float(value)
        return int(value) if int(value.as_tuple().exponent) >= 0 else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value
