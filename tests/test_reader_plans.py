"""The newest page of `sessions` and a session's `show` read no table whole (issue #25, item 4).

Every statement the two readers run is captured (apsw's connection hooks and exec trace) and
put to SQLite's `EXPLAIN QUERY PLAN` with its own bindings on the same store: a plain `SCAN` of
`records` (no index, no rowid range, no LIMIT) would read every row of a store of millions of events,
which is what the attestation index (migrations/0009) and the erasures query's `+seq` removed.
"""

from __future__ import annotations

import apsw
import pytest
from support import sessions as fixture_sessions

from agentwatch.readers import sessions


@pytest.fixture
def statements(monkeypatch):
    seen: list[tuple[str, object]] = []

    def trace(cursor, sql, bindings):
        seen.append((sql, bindings))
        return True

    def hook(conn: apsw.Connection) -> None:
        conn.exec_trace = trace

    monkeypatch.setattr(apsw, "connection_hooks", [*apsw.connection_hooks, hook])
    return seen


def full_scans(store, seen) -> list[tuple[str, str]]:
    conn = apsw.Connection(str(store), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        found = []
        for sql, bindings in seen:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            for _id, _parent, _unused, detail in conn.execute("EXPLAIN QUERY PLAN " + sql, bindings or ()):
                words = detail.split()
                if words[:1] == ["SCAN"] and "USING" not in words and words[1] in ("records", "e", "r") \
                        and " LIMIT " not in sql.upper():  # in seq order up to a limit: bounded
                    found.append((sql, detail))
        return found
    finally:
        conn.close()


def test_sessions_page_and_show_read_no_table_whole(tmp_path, monkeypatch, statements):
    store = tmp_path / "store.db"
    fixture_sessions.build(store, monkeypatch)
    statements.clear()  # the readers' statements only, not the build's
    page, _next = sessions.sessions_page(store, limit=3)
    assert len(page) == 3
    harness, session_id, _head, items = sessions.timeline(store, "8a1c2f0e")
    assert len(items) == 9
    assert sessions.coverage_of(store, harness, session_id) is None
    assert sum(sql.lstrip().upper().startswith("SELECT") for sql, _ in statements) > 10
    assert full_scans(store, statements) == []
