"""Schema migrations: numbered SQL files, each applied with its bookkeeping row
in one transaction. Names are never reused and applied files never change.
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import apsw

from agentwatch.errors import SchemaError

APPLICATION_ID = 0x41475731  # "AGW1"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    sql: str

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def migrations_dir() -> Path:
    """Inside an installed wheel the files live in the package; in a checkout, beside it."""
    packaged = Path(str(resources.files("agentwatch"))) / "migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "migrations"


def load(directory: Path | None = None) -> list[Migration]:
    directory = directory or migrations_dir()
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if not match:
            raise SchemaError(f"{path}: migration file names must look like 0001_name.sql")
        number = int(match.group(1))
        if number in found:
            raise SchemaError(f"{path}: migration number {number} is used twice ({found[number].name})")
        found[number] = Migration(number, path.stem, path.read_text(encoding="utf-8"))
    numbers = sorted(found)
    if numbers != list(range(1, len(numbers) + 1)):
        raise SchemaError(f"{directory}: migration numbers must run 1..N without gaps, found {numbers}")
    return [found[n] for n in numbers]


@functools.cache
def latest_version() -> int:
    """The highest schema version this build ships."""
    return len(load())


def check_readable(conn: apsw.Connection, path: Path) -> int:
    """What a reader checks: ours, and a version this build understands. Never writes."""
    app_id = conn.pragma("application_id")
    version = conn.pragma("user_version")
    if app_id != APPLICATION_ID:
        if app_id == 0 and version == 0:
            raise SchemaError(f"{path}: not an agentwatch store (empty or uninitialised)")
        raise SchemaError(f"{path}: not an agentwatch store (application_id {app_id:#x})")
    latest = latest_version()
    if version > latest:
        raise SchemaError(
            f"{path}: store schema version {version} is newer than this agentwatch understands "
            f"({latest}); upgrade agentwatch"
        )
    if version < latest:
        raise SchemaError(
            f"{path}: store schema version {version} is older than this agentwatch ({latest}); "
            "a writer (agentwatch serve or import) upgrades it, readers never do"
        )
    return version


def pending(conn: apsw.Connection, available: list[Migration]) -> list[Migration]:
    """Which migrations a writer would apply. Reads only."""
    app_id = conn.pragma("application_id")
    version = conn.pragma("user_version")
    if app_id not in (0, APPLICATION_ID):
        raise SchemaError(f"{conn.filename}: not an agentwatch store (application_id {app_id:#x})")
    if version > len(available):
        raise SchemaError(
            f"{conn.filename}: store schema version {version} is newer than this agentwatch "
            f"understands ({len(available)}); upgrade agentwatch"
        )
    if app_id == 0 and _has_user_tables(conn):
        raise SchemaError(f"{conn.filename}: not an agentwatch store (has other tables)")
    if version:
        applied = dict(conn.execute("SELECT number, digest FROM _agentwatch_migrations"))
        for m in available[:version]:
            if applied.get(m.number) != m.digest:
                raise SchemaError(
                    f"{conn.filename}: applied migration {m.name} differs from the shipped file; "
                    "migrations must never be edited after release"
                )
    return available[version:]


def migrate(conn: apsw.Connection, available: list[Migration] | None = None) -> list[str]:
    """Apply pending migrations, each in its own BEGIN IMMEDIATE with its bookkeeping."""
    available = available if available is not None else load()
    applied: list[str] = []
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            todo = pending(conn, available)  # re-read under the lock: another writer may have won
            if not todo:
                conn.execute("COMMIT")
                return applied
            m = todo[0]
            if m.number == 1:
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(
                    "CREATE TABLE _agentwatch_migrations ("
                    " number INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
                    " digest TEXT NOT NULL, applied_at_ns INTEGER NOT NULL) STRICT"
                )
            conn.execute(m.sql)
            conn.execute(
                "INSERT INTO _agentwatch_migrations (number, name, digest, applied_at_ns) VALUES (?, ?, ?, ?)",
                (m.number, m.name, m.digest, time.time_ns()),
            )
            conn.execute(f"PRAGMA user_version = {m.number}")
            conn.execute("COMMIT")
            applied.append(m.name)
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise


def db_one(conn: apsw.Connection, sql: str) -> Any:
    """The first column of the one row `sql` returns."""
    return conn.execute(sql).fetchall()[0][0]


def _has_user_tables(conn: apsw.Connection) -> bool:
    return int(db_one(conn, "SELECT count(*) FROM sqlite_schema")) > 0
