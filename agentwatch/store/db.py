"""Every connection to a store is opened and configured here.

Three connections are opened elsewhere, on purpose: `schema_check` builds the reference
schema in an in-memory database, `append` copies a store lost under the writer into a new
file through SQLite's backup API, and `standalone_verify.py` reads with the standard
library's sqlite3 (it imports nothing from the package).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import apsw

from agentwatch import platform_layer, safefs
from agentwatch.errors import SchemaError, StoreMissing, StoreUnreachable
from agentwatch.store import migrations, packing, schema_check

BUSY_TIMEOUT_MS = 5000


def _configure(conn: apsw.Connection) -> None:
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    # Double-quoted string literals hide typos as strings; refuse them.
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
    # Defensive mode: no writable_schema tricks or raw page edits through SQL.
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.pragma("foreign_keys", True)
    # The erasure trigger (migrations/0004_erasure.sql) checks a payload's digest in SQL.
    conn.create_scalar_function("agentwatch_sha256", _sha256, 1, deterministic=True, flags=apsw.SQLITE_INNOCUOUS)
    # And a packed row's document (migrations/0006_packed_payloads.sql).
    conn.create_scalar_function("agentwatch_inflate", _inflate, 3, deterministic=True, flags=apsw.SQLITE_INNOCUOUS)


def _sha256(*args: Any) -> bytes | None:
    (data,) = args
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).digest() if isinstance(data, bytes) else None


@functools.lru_cache(maxsize=8)
def _dictionary(data: bytes) -> packing.Dictionary | None:
    try:
        return packing.Dictionary(data)
    except ValueError:
        return None


def _inflate(*args: Any) -> bytes | None:
    """(projection, payload_z, dictionary data) -> the packed row's document, or NULL."""
    stored, z, data = args
    if isinstance(stored, str):
        stored = stored.encode("utf-8")
    if not isinstance(data, bytes):
        return None
    return packing.unpacked(stored, _dictionary(data), z)


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise StoreUnreachable(f"{path}: store path is a symlink; refusing to follow it")


def _durable(conn: apsw.Connection) -> None:
    """synchronous=FULL, and whatever this platform needs for a sync to reach the disk (macOS: fullfsync)."""
    conn.pragma("synchronous", "FULL")
    for name, value in platform_layer.sqlite_durability_pragmas():
        conn.pragma(name, value)


def sync_settings(conn: apsw.Connection) -> dict[str, int]:
    """The pragmas that decide how durable a commit is, as the connection has them."""
    return {name: int(conn.pragma(name)) for name in platform_layer.SYNC_PRAGMAS}


def open_writer(path: Path, *, create: bool = True, vfs: str | None = None,
                group_readable: bool | None = None) -> apsw.Connection:
    """The write connection: WAL, synchronous=FULL, schema migrated to the latest.

    `vfs` names a registered SQLite VFS to open through (fault-injection tests
    use support.faultvfs); None is SQLite's default. `group_readable` makes the
    store, its WAL and shm files 0640 (the service deployment: the recorded
    developers' group verifies, read-only); otherwise they are owner-only. None
    follows the layout this process runs in: group-readable once the configuration
    names a socket group (config.load calls safefs.share_with_group).
    """
    path = Path(path)
    _refuse_symlink(path)
    if not path.exists() and not create:
        raise StoreMissing(f"{path}: store does not exist")
    # Whoever can write the store's directory can move the store aside or plant its -wal.
    safefs.private_dir(path.parent, "store directory")
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
    if create:
        flags |= apsw.SQLITE_OPEN_CREATE
    if group_readable is None:  # the layout this process runs in (safefs.share_with_group)
        group_readable = safefs.shared_file_mode() == 0o640
    old_umask = os.umask(0o027 if group_readable else 0o077)  # store, WAL and shm: owner (and group) only
    new = not path.exists() or path.stat().st_size == 0
    try:
        conn = _connect(path, flags, vfs)
        try:
            _configure(conn)
            # Freed space is overwritten with zeros on every change, not only when a payload is
            # erased or retained: a b-tree rebalance moves cells between pages, and without this
            # the stale copies it leaves behind would outlive an erase (docs/erasure.md).
            conn.pragma("secure_delete", True)
            if new:
                # Set before the first table exists: retention and erase give freed pages back
                # to the file system (PRAGMA incremental_vacuum; docs/retention.md).
                conn.pragma("auto_vacuum", 2)
            if conn.pragma("journal_mode", "wal") != "wal":
                raise StoreUnreachable(f"{path}: could not switch the store to WAL mode")
            # Every commit that precedes an acknowledgement is durable.
            _durable(conn)
            if migrations.migrate(conn):
                # A new (or upgraded) store's identity and schema go into the main database
                # file at once: until the first checkpoint they live only in the WAL, and a
                # WAL deleted then would leave a file that a later open re-creates under a
                # new store_id (docs/reliability.md, "Store identity").
                conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            schema_check.check(conn)
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
        _durable(conn)  # a checkpoint syncs the database file before it ends
        # Read the schema once: until then the connection does not know the store is in WAL
        # mode, and a checkpoint on it does nothing.
        if conn.pragma("journal_mode") != "wal":
            raise StoreUnreachable(f"{path}: the store is not in WAL mode")
    except BaseException:
        _close_quietly(conn)
        raise
    return conn


def open_reader(path: Path) -> apsw.Connection:
    """A read-only connection. It never creates, migrates or writes the store.

    A stopped store whose WAL and shared memory are gone (a clean stop removes them) cannot be
    opened by a reader who may not create files beside it (a member of the service group,
    docs/deployment.md): SQLite needs the shared memory to read a WAL-mode store. Then, while
    no writer holds the store (store/writerlock.py) and no WAL exists, the file is read as
    `immutable`: without locks or shared memory, which is right for a file nobody writes.
    """
    path = Path(path)
    with store_errors(path):
        _refuse_symlink(path)
        if not path.exists():
            raise StoreMissing(f"{path}: store does not exist")
        if path.is_dir():
            raise StoreUnreachable(f"{path}: is a directory, not a store file")
        try:
            return _reader(path, str(path), apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_NOFOLLOW)
        except (apsw.ReadOnlyError, apsw.CantOpenError):
            if not _stopped_and_unwritable(path):
                raise
        uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?immutable=1"
        return _reader(path, uri, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_NOFOLLOW | apsw.SQLITE_OPEN_URI)


# The longest value a reader reads from a store (SQLITE_LIMIT_LENGTH): a payload, a packed
# stream, a dictionary. Past it SQLite refuses the value (TooBigError: exit 3, the row named),
# so no row, whatever a hostile store holds, costs a reader more than this and what it makes of it.
READER_MAX_VALUE = packing.MAX_DOCUMENT_BYTES + (1 << 20)


def _reader(path: Path, name: str, flags: int) -> apsw.Connection:
    try:
        conn = apsw.Connection(name, flags=flags)
    except apsw.CantOpenError as exc:
        raise StoreUnreachable(f"{path}: cannot open store ({exc})") from None
    try:
        conn.limit(apsw.SQLITE_LIMIT_LENGTH, READER_MAX_VALUE)
        _configure(conn)
        conn.pragma("query_only", True)
        migrations.check_readable(conn, path)
    except BaseException as exc:
        _close_quietly(conn)
        if isinstance(exc, apsw.NotADBError):
            raise SchemaError(f"{path}: not a SQLite database") from None
        raise
    return conn


def _stopped_and_unwritable(path: Path) -> bool:
    """No writer holds the store, no WAL is beside it, and this process cannot create one."""
    from agentwatch.store.writerlock import writer_holds

    return (not os.path.lexists(f"{path}-wal") and not os.access(path.parent, os.W_OK)
            and not writer_holds(path))


@contextmanager
def store_errors(path: Path, doing: str = "read") -> Iterator[None]:
    """Report what goes wrong with the store's file as StoreUnreachable (exit 3), in one line.

    A truncated or corrupt file, an unlinked WAL, a store this user cannot read:
    SQLite raises apsw errors and the file system OSErrors, at open or on any
    later read. Readers run their whole work, rows printed included, inside this;
    `import` too (`doing` "write").
    """
    try:
        yield
    except apsw.Error as exc:
        raise StoreUnreachable(f"{path}: cannot {doing} the store: {_sqlite_says(exc)}") from None
    except OSError as exc:
        if isinstance(exc, (ConnectionError, TimeoutError)):
            raise  # a socket's trouble (a closed pipe, a daemon gone), not the store file's
        where = exc.filename if exc.filename is not None else path
        raise StoreUnreachable(f"{where}: cannot {doing} the store: {exc.strerror or exc}") from None


def _sqlite_says(exc: apsw.Error) -> str:
    name = type(exc).__name__.removesuffix("Error")
    text = str(exc).split("\n", 1)[0]
    return f"{text} ({name})" if name and name.lower() not in text.lower() else text


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


def one(cursor: apsw.Cursor) -> Any:
    """The row of a query that always returns one (an aggregate, a row known to be there)."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("the query returned no row")
    return row


class CommitWaiter:
    """The one "wait for the next commit" loop of every follower (tail, session timelines, the shipper).

    It looks at `PRAGMA data_version` on a reader's connection, which moves when another
    connection commits, and sleeps between looks from `min_wait` doubling up to `max_wait`;
    `reset` after reading something starts again from `min_wait`.
    """

    def __init__(self, conn: apsw.Connection, min_wait: float, max_wait: float):
        self.conn = conn
        self.min_wait, self.max_wait = min_wait, max_wait
        self.wait = min_wait
        self.version = conn.pragma("data_version")

    def reset(self) -> None:
        self.wait = self.min_wait

    def committed(self) -> bool:
        """Whether another connection committed since the last look."""
        current = self.conn.pragma("data_version")
        if current == self.version:
            return False
        self.version = current
        return True

    def wait_for_commit(self, stop: Optional[threading.Event] = None,
                        also: Optional[Callable[[], bool]] = None) -> bool:
        """True once another connection committed (or `also()` is true); False once `stop` is set."""
        while stop is None or not stop.is_set():
            if self.committed() or (also is not None and also()):
                return True
            if stop is not None:
                stop.wait(self.wait)
            else:
                time.sleep(self.wait)
            self.wait = min(self.wait * 2, self.max_wait)
        return False
