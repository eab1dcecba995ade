"""Naming and reaching the fleet server (PostgreSQL, through psycopg 3 and libpq).

A target is a `postgresql://` URL or a libpq `key=value` string. Passwords never
appear in one: they come from libpq's own sources (`PGPASSFILE` or ~/.pgpass,
`PGSERVICE` with its service file, `PGPASSWORD`), so no password ends up in a
configuration file, a process list, a record or a log line. `check_target`
refuses a target that carries one; `redact` is what the recorder shows of a
target anywhere (health, errors, status).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from agentwatch.config import pg_target_problem
from agentwatch.errors import AgentwatchError, UsageError

CONNECT_TIMEOUT_S = 10


class FleetUnreachable(AgentwatchError):
    """The fleet server cannot be reached or refused the login (exit 3)."""

    exit_code = 3


class FleetSchemaError(AgentwatchError):
    """The database has no fleet schema, or one this agentwatch does not know (exit 3)."""

    exit_code = 3


def check_target(target: str) -> str:
    """The target, if it names a server without a password (config.pg_target_problem); else UsageError."""
    problem = pg_target_problem(target)
    if problem:
        raise UsageError(f"the fleet server {problem}")
    return target.strip()


def redact(target: str) -> str:
    """The target as shown to people: user, host, port and database, never a password."""
    scheme, sep, _ = target.partition("://")
    if sep:
        try:
            parts = urlsplit(target)
            host = parts.hostname or ""
            port = f":{parts.port}" if parts.port else ""
        except ValueError:
            return f"{scheme}://?"
        user = f"{parts.username}@" if parts.username else ""
        return f"{scheme}://{user}{host}{port}{parts.path}"
    return " ".join(p for p in target.split() if not p.lower().startswith("password"))


def connect(target: str, *, autocommit: bool = True, application: str = "agentwatch", **options: Any):
    """A psycopg connection to the fleet server, UTF-8, with a connect timeout."""
    import psycopg

    check_target(target)
    try:
        return psycopg.connect(
            target, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
            application_name=application, client_encoding="UTF8", **options,
        )
    except psycopg.Error as exc:
        raise FleetUnreachable(f"{redact(target)}: {first_line(exc)}") from None


def first_line(exc: BaseException) -> str:
    """An error's first line: libpq's messages carry detail lines that repeat themselves."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
