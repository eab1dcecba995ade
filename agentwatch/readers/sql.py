"""Forensic SQL: one read-only query against the store.

Three locks keep it read-only: the connection is opened SQLITE_OPEN_READONLY
with query_only on, and an authorizer allows reading only (no ATTACH, no
pragma that sets a value, no transaction control).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import apsw

from agentwatch.errors import ReadOnlyViolation, UsageError
from agentwatch.store import db

_ALLOWED = {
    apsw.SQLITE_SELECT,
    apsw.SQLITE_READ,
    apsw.SQLITE_FUNCTION,
    apsw.SQLITE_RECURSIVE,
}


def _authorizer(op: int, arg1, arg2, _db, _source) -> int:
    if op in _ALLOWED:
        return apsw.SQLITE_OK
    if op == apsw.SQLITE_PRAGMA and arg2 is None:
        return apsw.SQLITE_OK  # reading a pragma; setting one is refused below
    return apsw.SQLITE_DENY


def _describe_denied(query: str) -> str:
    first = query.lstrip().split(None, 1)[0].upper() if query.strip() else ""
    if first in ("ATTACH", "DETACH"):
        return f"{first} is refused: forensic SQL reads this store only"
    return "only reading is allowed: this statement would write or change the connection"


def run(path: Path, query: str) -> tuple[list[str], Iterator[tuple]]:
    """Run `query`; returns its column names and a row iterator (which closes the store)."""
    if not query.strip():
        raise UsageError("empty query")
    conn = db.open_reader(path)
    conn.authorizer = _authorizer
    cursor = conn.cursor()
    statements = 0

    def one_statement(_cursor, _sql, _bindings) -> bool:
        nonlocal statements
        statements += 1
        if statements > 1:
            raise UsageError("one statement per query: results of several would be mixed")
        return True

    cursor.exec_trace = one_statement
    try:
        rows = cursor.execute(query)
        try:
            columns = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            columns = []
    except apsw.AuthError:
        conn.close()
        raise ReadOnlyViolation(_describe_denied(query)) from None
    except (apsw.ReadOnlyError, apsw.SQLError) as exc:
        conn.close()
        if isinstance(exc, apsw.ReadOnlyError) or "not authorized" in str(exc):
            raise ReadOnlyViolation(_describe_denied(query)) from None
        raise UsageError(f"SQL error: {exc}") from None

    def stream() -> Iterator[tuple]:
        try:
            yield from rows
        except apsw.AuthError:
            raise ReadOnlyViolation(_describe_denied(query)) from None
        except apsw.SQLError as exc:
            raise UsageError(f"SQL error: {exc}") from None
        finally:
            conn.close()

    return columns, stream()
