"""`agentwatch fleet init`: the fleet schema in a PostgreSQL database, through its own migrations.

The schema `agentwatch` and three roles (docs/fleet.md):

- `agentwatch_owner` (no login) owns every table and function, so the ingest
  function runs with its rights and not a superuser's;
- `agentwatch_ship` (no login) may call `agentwatch.ingest`, `agentwatch.head`,
  `agentwatch.ingest_checkpoint` and `agentwatch.held_checkpoint`, nothing else:
  no SELECT, INSERT, UPDATE or DELETE on any table;
- `agentwatch_read` (no login) may read the tables and views.

Machines log in as their own roles, members of `agentwatch_ship`; people and
dashboards as members of `agentwatch_read`.

Migrations are the numbered files in migrations/postgres/, each applied with its
bookkeeping row (`agentwatch._migrations`: number, name, sha256 of the file) in
one transaction, as the owner role, under an advisory lock so two inits cannot
interleave. An applied file that changed since is refused; a database with a
newer schema than this build knows is refused. Running init again applies only
what is pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentwatch.fleet.connect import FleetSchemaError, connect, first_line, redact
from agentwatch.store.migrations import Migration, load, migrations_dir

SCHEMA = "agentwatch"
OWNER, SHIP, READ = "agentwatch_owner", "agentwatch_ship", "agentwatch_read"
ROLES = (OWNER, SHIP, READ)
MIN_SERVER_VERSION = 130000
_LOCK_KEY = 0x4147574C  # advisory lock key while migrating ("AGWL")


def fleet_migrations() -> list[Migration]:
    return load(migrations_dir() / "postgres")


@dataclass
class InitResult:
    target: str
    version: int
    applied: list[str] = field(default_factory=list)
    roles_created: list[str] = field(default_factory=list)
    denials: str = "off"  # on | off: <why>

    def to_json(self) -> dict:
        return {"target": self.target, "schema": SCHEMA, "version": self.version, "applied": self.applied,
                "roles_created": self.roles_created, "denials": self.denials}


def init(target: str) -> InitResult:
    """Install or upgrade the fleet schema; the login needs CREATEROLE (or is a superuser)."""
    import psycopg
    from psycopg import sql

    available = fleet_migrations()
    conn = connect(target, autocommit=False, application="agentwatch fleet init")
    try:
        version_num, encoding, superuser = conn.execute(
            "SELECT current_setting('server_version_num')::int, current_setting('server_encoding'),"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
        ).fetchone()
        if version_num < MIN_SERVER_VERSION:
            raise FleetSchemaError(f"{redact(target)}: PostgreSQL {version_num // 10000} is too old; 13 or later")
        if encoding != "UTF8":
            raise FleetSchemaError(f"{redact(target)}: the database encoding is {encoding}; the fleet needs UTF8")
        result = InitResult(redact(target), 0)
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            for role in ROLES:
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
                    conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
                    result.roles_created.append(role)
            if not superuser:
                conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(sql.Identifier(OWNER)))
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(
                sql.Identifier(SCHEMA), sql.Identifier(OWNER)))
            conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(OWNER)))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS agentwatch._migrations ("
                " number int PRIMARY KEY, name text NOT NULL UNIQUE, digest text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            conn.commit()
            while True:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                todo = _pending(conn, available, redact(target))
                if not todo:
                    conn.commit()
                    break
                m = todo[0]
                conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(OWNER)))
                conn.execute(m.sql.encode("utf-8"))  # several statements: the simple query protocol
                conn.execute("INSERT INTO agentwatch._migrations (number, name, digest) VALUES (%s, %s, %s)",
                             (m.number, m.name, m.digest))
                conn.commit()
                result.applied.append(m.name)
            result.version = len(available)
            result.denials = _enable_denials(conn, superuser)
        except psycopg.Error as exc:
            conn.rollback()
            raise FleetSchemaError(f"{redact(target)}: fleet init failed: {first_line(exc)}") from None
        return result
    finally:
        conn.close()


def _pending(conn, available: list[Migration], where: str) -> list[Migration]:
    applied = dict(conn.execute("SELECT number, digest FROM agentwatch._migrations").fetchall())
    if applied and max(applied) > len(available):
        raise FleetSchemaError(f"{where}: fleet schema version {max(applied)} is newer than this agentwatch "
                               f"understands ({len(available)}); upgrade agentwatch")
    for m in available:
        if m.number in applied and applied[m.number] != m.digest:
            raise FleetSchemaError(f"{where}: applied fleet migration {m.name} differs from the shipped file")
    return [m for m in available if m.number not in applied]


def _enable_denials(conn, superuser: bool) -> str:
    """Let the owner read the server log, where refused direct writes show (docs/fleet.md)."""
    if superuser:
        conn.execute(f"GRANT pg_monitor TO {OWNER}")
        conn.execute(f"GRANT EXECUTE ON FUNCTION pg_read_file(text, bigint, bigint) TO {OWNER}")
    collector, destinations = conn.execute(
        "SELECT current_setting('logging_collector'), current_setting('log_destination')").fetchone()
    readable = conn.execute(
        "SELECT has_function_privilege(%s, 'pg_read_file(text, bigint, bigint)', 'EXECUTE')"
        " AND pg_has_role(%s, 'pg_monitor', 'MEMBER')", (OWNER, OWNER)).fetchone()[0]
    conn.commit()
    if collector != "on" or "jsonlog" not in destinations.split(","):
        return "off: set logging_collector = on and add jsonlog to log_destination"
    if not readable:
        return "off: run fleet init once as a superuser, so the owner role may read the server log"
    return "on"


def schema_version(conn) -> int:
    """The applied fleet schema version; FleetSchemaError when there is none or it is unknown."""
    row = conn.execute("SELECT to_regclass('agentwatch._migrations') IS NOT NULL").fetchone()
    if not row[0]:
        raise FleetSchemaError("no fleet schema in this database (run `agentwatch fleet init`)")
    try:
        version = conn.execute("SELECT coalesce(max(number), 0) FROM agentwatch._migrations").fetchone()[0]
    except Exception as exc:  # a role that may not read it
        raise FleetSchemaError(f"cannot read the fleet schema version: {first_line(exc)}") from None
    if version > len(fleet_migrations()):
        raise FleetSchemaError(f"fleet schema version {version} is newer than this agentwatch understands")
    return version
