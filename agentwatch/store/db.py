"""Every SQLite connection is opened and configured here, and only here."""

from __future__ import annotations

import os
from pathlib import Path

import apsw

from agentwatch.errors import SchemaError, StoreUnreachable
from agentwatch.store import migrations

BUSY_TIMEOUT_MS = 5000


def _configure(conn: apsw.Connection) -> None:
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    # Double-quoted string literals hide typos as strings; refuse them.
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
    # Defensive mode: no writable_schema tricks or raw page edits through SQL.
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.pragma("foreign_keys", True)


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise StoreUnreachable(f"{path}: store path is a symlink; refusing to follow it")


def open_writer(path: Path, *, create: bool = True, vfs: str | None = None,
                group_readable: bool = False) -> apsw.Connection:
    """The write connection: WAL, synchronous=FULL, schema migrated to the latest.

    `vfs` names a registered SQLite VFS to open through (fault-injection tests
    use support.faultvfs); None is SQLite's default. `group_readable` makes the
    store, its WAL and shm files 0640 (the service deployment: the recorded
    developers' group verifies, read-only); otherwise they are owner-only.
    """
    path = Path(path)
    _refuse_symlink(path)
    if not path.exists():
        if not create:
            raise StoreUnreachable(f"{path}: store does not exist")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o750 if group_readable else 0o700)
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
    if create:
        flags |= apsw.SQLITE_OPEN_CREATE
    old_umask = os.umask(0o027 if group_readable else 0o077)  # store, WAL and shm: owner (and group) only
    try:
        conn = _connect(path, flags, vfs)
        try:
            _configure(conn)
            if conn.pragma("journal_mode", "wal") != "wal":
                raise StoreUnreachable(f"{path}: could not switch the store to WAL mode")
            # Every commit that precedes an acknowledgement is durable.
            conn.pragma("synchronous", "FULL")
            migrations.migrate(conn)
        except BaseException as exc:
            _close_quietly(conn)
            if isinstance(exc, apsw.NotADBError):
                raise SchemaError(f"{path}: not a SQLite database") from None
            if isinstance(exc, apsw.BusyError):
                raise StoreUnreachable(f"{path}: store is locked by another writer") from None
            raise
    finally:
        os.umask(old_umask)
    return conn


def open_checkpointer(path: Path) -> apsw.Connection:
    """A second read-write connection that only runs WAL checkpoints (checkpoint.py).

    It never migrates or writes rows; the writer opened and migrated the store first.
    """
    path = Path(path)
    _refuse_symlink(path)
    conn = _connect(path, apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW)
    try:
        _configure(conn)
        conn.pragma("synchronous", "FULL")  # a checkpoint syncs the database file before it ends
        # Read the schema once: until then the connection does not know the store is in WAL
        # mode, and a checkpoint on it does nothing.
        if conn.pragma("journal_mode") != "wal":
            raise StoreUnreachable(f"{path}: the store is not in WAL mode")
    except BaseException:
        _close_quietly(conn)
        raise
    return conn


def open_reader(path: Path) -> apsw.Connection:
    """A read-only connection. It never creates, migrates or writes the store."""
    path = Path(path)
    _refuse_symlink(path)
    if not path.exists():
        raise StoreUnreachable(f"{path}: store does not exist")
    conn = _connect(path, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_NOFOLLOW)
    try:
        _configure(conn)
        conn.pragma("query_only", True)
        migrations.check_readable(conn, path)
    except BaseException as exc:
        _close_quietly(conn)
        if isinstance(exc, apsw.NotADBError):
            raise SchemaError(f"{path}: not a SQLite database") from None
        raise
    return conn


def _connect(path: Path, flags: int, vfs: str | None = None) -> apsw.Connection:
    try:
        return apsw.Connection(str(path), flags=flags, vfs=vfs)
    except apsw.CantOpenError as exc:
        raise StoreUnreachable(f"{path}: cannot open store ({exc})") from None


def _close_quietly(conn: apsw.Connection) -> None:
    """Close a connection that failed to open fully, now: left to the garbage collector,
    it would keep the store's files and locks until some unknown later moment."""
    try:
        conn.close()
    except apsw.Error:
        pass  # the files are closed even when the close reports an I/O error


def store_id(conn: apsw.Connection) -> bytes:
    row = conn.execute("SELECT value FROM _agentwatch_meta WHERE key = 'store_id'").fetchone()
    if row is None:
        raise SchemaError(f"{conn.filename}: store has no store_id")
    return bytes.fromhex(row[0])
