"""Forensic SQL: one read-only query against the store, bounded in time and memory.

Three locks keep it read-only: the connection is opened SQLITE_OPEN_READONLY
with query_only on, and an authorizer allows reading only (no ATTACH, no
pragma that sets a value, no transaction control). The whole input is
prepared before anything runs, so a second statement is refused before the
first has printed a row. Two bounds keep one query from taking the machine:
a time limit (the statement is interrupted through SQLite's interrupt when it
passes, as it is on Ctrl-C) and a cap on the memory SQLite may allocate.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import apsw
import apsw.ext

from agentwatch.errors import ReadOnlyViolation, UsageError
from agentwatch.readers import schema_guard
from agentwatch.store import db

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_MEMORY_MB = 512
# SQLite calls the progress handler every this many virtual machine steps; it is what lets a
# Ctrl-C reach Python while a long statement runs.
_PROGRESS_STEPS = 10_000

_ALLOWED = {
    apsw.SQLITE_SELECT,
    apsw.SQLITE_READ,
    apsw.SQLITE_FUNCTION,
    apsw.SQLITE_RECURSIVE,
}
# Pragmas whose argument names what to read (a table, an index, a row limit), never a value to set:
# `pragma table_info(events)` and the table-valued `pragma_table_info('events')` both reach the
# authorizer with the argument where a setting pragma has its new value.
_READING_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list",
    "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
})


class QueryStopped(UsageError):
    """The query ran past its time limit or memory cap, or was interrupted (Ctrl-C)."""


class QueryInterrupted(QueryStopped):
    """Ctrl-C stopped the query: exit 130, like every command Ctrl-C stops."""

    exit_code = 130


def _authorizer(op: int, arg1, arg2, _db, _source) -> int:
    if op in _ALLOWED:
        return apsw.SQLITE_OK
    if op == apsw.SQLITE_PRAGMA and (arg2 is None or str(arg1).lower() in _READING_PRAGMAS):
        return apsw.SQLITE_OK  # reading a pragma; setting one is refused below
    return apsw.SQLITE_DENY


def _describe_denied(query: str) -> str:
    first = query.lstrip().split(None, 1)[0].upper() if query.strip() else ""
    if first in ("ATTACH", "DETACH"):
        return f"{first} is refused: forensic SQL reads this store only"
    return "only reading is allowed: this statement would write or change the connection"


def _count_statements(conn: apsw.Connection, query: str) -> int:
    """How many statements `query` holds, by preparing each (comments and empty ones do not count)."""
    count = 0
    rest: Optional[str] = query
    while rest:
        info = apsw.ext.query_info(conn, rest)
        count += bool(info.has_vdbe)
        rest = info.query_remaining
    return count


class _Guard:
    """Stops the running statement at the deadline or on Ctrl-C, through apsw's interrupt."""

    def __init__(self, conn: apsw.Connection, timeout: float, max_memory: int):
        self.conn = conn
        self.timeout = timeout
        self.max_memory = max_memory
        self.why: Optional[str] = None
        self._timer: Optional[threading.Timer] = None
        self._old_sigint: Any = None  # the handler to put back
        self._installed_sigint = False
        self._old_heap: Optional[int] = None

    def start(self) -> None:
        self._old_heap = apsw.hard_heap_limit(self.max_memory)
        self._timer = threading.Timer(self.timeout, self._stop, ("timeout",))
        self._timer.daemon = True
        self._timer.start()
        if threading.current_thread() is threading.main_thread():
            self._old_sigint = signal.signal(signal.SIGINT, lambda *_: self._stop("interrupted"))
            self._installed_sigint = True
        self.conn.set_progress_handler(lambda: False, _PROGRESS_STEPS)

    def _stop(self, why: str) -> None:
        if self.why is None:
            self.why = why
        try:
            self.conn.interrupt()
        except apsw.Error:
            pass  # the query ended and closed the connection meanwhile

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._installed_sigint:
            signal.signal(signal.SIGINT, self._old_sigint)
            self._installed_sigint = False
        if self._old_heap is not None:
            apsw.hard_heap_limit(self._old_heap)
            self._old_heap = None

    def stopped(self, exc: BaseException) -> QueryStopped:
        if isinstance(exc, apsw.NoMemError):
            mb = self.max_memory >> 20
            return QueryStopped(f"query stopped: it needs more than the {mb} MB memory cap (--max-memory)")
        if self.why == "timeout":
            return QueryStopped(f"query stopped: it ran longer than {self.timeout:g} s (--timeout)")
        return QueryInterrupted("interrupted (Ctrl-C); the query only reads, and the rows printed are incomplete")


# A packed row (docs/chain.md, "Packed payloads") stores its document deflated and, in `payload`,
# only the fields the forensic columns read. Forensic SQL sees every row's whole document:
# temporary views named `records` and `events` come first in name lookup and show it as
# `payload`; the store's own views and the generated columns are untouched.
_DOCUMENT = (
    "CASE WHEN r.payload_z IS NULL THEN r.payload ELSE coalesce(CAST(agentwatch_inflate(r.payload, r.payload_z,"
    " (SELECT d.data FROM main._agentwatch_dictionaries AS d WHERE d.id = r.payload_dict)) AS TEXT), r.payload) END"
)
_FULL_VIEWS = (
    "CREATE TEMP VIEW records AS SELECT r.seq, r.record_id, r.kind, r.recorded_at_ns, "
    f"{_DOCUMENT} AS payload, r.prev_hash, r.hash, r.harness, r.session_id, r.event_name, r.event_kind, r.tool_name,"
    " r.erased_seq, r.payload_dict, r.payload_z FROM main.records AS r",
    "CREATE TEMP VIEW events AS SELECT e.seq, e.record_id, e.recorded_at_ns, e.recorded_at, e.harness, e.session_id,"
    " e.event_name, e.event_kind, e.tool_name, e.tool_category, e.turn_id, e.cwd, e.model, e.client_pid,"
    f" e.observed_at_ns, {_DOCUMENT} AS payload FROM main.events AS e JOIN main.records AS r ON r.seq = e.seq",
)


def _documents_in_full(conn: apsw.Connection) -> None:
    """Create the temporary views that show packed rows' documents (temp objects only; the store is read-only)."""
    conn.pragma("query_only", False)
    try:
        for sql in _FULL_VIEWS:
            conn.execute(sql)
    finally:
        conn.pragma("query_only", True)


def run(
    path: Path, query: str, *, timeout: float = DEFAULT_TIMEOUT_S, max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
) -> tuple[list[str], Iterator[tuple]]:
    """Run `query`; returns its column names and a row iterator (which closes the store).

    Raises UsageError for a bad or multi-statement query, ReadOnlyViolation for
    one that would write, QueryStopped when the time limit, the memory cap or
    Ctrl-C ends it (also while the rows are read).
    """
    if not query.strip():
        raise UsageError("empty query")
    if timeout <= 0:
        raise UsageError("--timeout must be above 0 seconds")
    if max_memory_mb < 1:
        raise UsageError("--max-memory must be at least 1 MB")
    conn = schema_guard.open_reader(path)
    try:
        _documents_in_full(conn)
    except BaseException:
        conn.close()
        raise
    conn.authorizer = _authorizer
    guard = _Guard(conn, timeout, max_memory_mb << 20)

    def close() -> None:
        guard.close()
        conn.close()

    try:
        statements = _count_statements(conn, query)
        if statements != 1:
            raise UsageError(
                "one statement per query: results of several would be mixed" if statements else "no statement in the query"
            )
        # The time limit covers the caller's work on the rows too (formatting, writing): a row is
        # handed out only before the deadline, so a slow rendering stops there like a slow statement.
        deadline = time.monotonic() + timeout
        guard.start()
        cursor = conn.cursor()
        rows = cursor.execute(query)
        try:
            columns = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            # No row: the columns come from the prepared statement, so an empty result keeps its header.
            columns = [d[0] for d in (apsw.ext.query_info(conn, query).description or ())]
    except BaseException as exc:
        close()
        raise _translate(exc, query, guard) from None

    def stream() -> Iterator[tuple]:
        try:
            for row in rows:
                if time.monotonic() > deadline:
                    guard.why = guard.why or "timeout"
                    raise apsw.InterruptError("past the time limit")
                yield row
        except (apsw.Error, KeyboardInterrupt) as exc:
            raise _translate(exc, query, guard) from None
        finally:
            close()

    return columns, stream()


def _translate(exc: BaseException, query: str, guard: _Guard) -> BaseException:
    if isinstance(exc, (apsw.InterruptError, apsw.NoMemError, KeyboardInterrupt)):
        return guard.stopped(exc)
    if isinstance(exc, apsw.TooBigError):
        # The readers' bound on one value (db.READER_MAX_VALUE), whether stored or built by the query.
        return UsageError(f"query stopped: a value longer than {db.READER_MAX_VALUE >> 20} MiB, the most a reader "
                          "reads or builds at once")
    if isinstance(exc, (apsw.AuthError, apsw.ReadOnlyError)) or (
        isinstance(exc, apsw.SQLError) and ("not authorized" in str(exc) or "because it is a view" in str(exc))
    ):
        return ReadOnlyViolation(_describe_denied(query))
    if isinstance(exc, apsw.SQLError):
        return UsageError(f"SQL error: {exc}")
    return exc
