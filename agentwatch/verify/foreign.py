"""Rows the recorder's writer did not write (`foreign_rows`, docs/chain.md, "Threat model").

Two ways a row comes to be named foreign:

- the daemon's writer found it: rows appeared past its last commit while it ran, or past
  the head it left at its last stop when it started again. It names them with a `gap` row
  (reason `foreign_rows`, `first_seq`, `last_seq`) in the same commit that first chains past
  them, and keeps the finding outside the store (verify/known_stores.py);
- a verify finds rows past the head the writer last committed (the head file, written by
  the writer after every commit and by `import` and `erase` under the writer lock) that no
  writer has named yet: appended while the daemon was stopped, or since its last commit.

`findings()` gathers both for `verify` and `reconcile`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Optional

import apsw

from agentwatch.store.chain import format_hash
from agentwatch.verify import known_stores
from agentwatch.verify.findings import Finding

KIND = "foreign_rows"


def named(first: int, last: int, gap_seq: int) -> Finding:
    """The finding for rows first..last a writer named by its gap row at `gap_seq`."""
    return Finding(first, KIND, f"rows {first}..{last} were written outside the recorder's writer "
                                f"(named by gap row {gap_seq})")
# While a daemon serves the store, a row past the head file may be one it committed a moment
# ago and has not yet written to the head file (it does before any acknowledgement): wait this
# long for the head file to catch up before naming the rows.
SERVING_GRACE_S = 1.0

# The reason is read here, not with SQLite's JSON functions: a damaged gap row's payload must not
# make the query fail (the walk names the damage).
_GAPS_SQL = ("SELECT seq, CAST(payload AS BLOB) FROM records WHERE seq > ? AND kind = 'gap' "
             "AND typeof(payload) = 'text' ORDER BY seq")


def writer_head(store: Path | str, store_id: bytes, state_dir: Path | None = None, *,
                pending: bool = False) -> Optional[tuple[int, str]]:
    """The head the recorder's writer last committed to this store (seq, "sha256:…"), None if unknown;
    with `pending`, the head it was about to commit (known_stores.HeadFile)."""
    head = known_stores.read_head(store, state_dir, pending=pending)
    if head is None or head[0] != store_id.hex():
        return None
    return head[1], head[2]


def own_head(conn: apsw.Connection, store: Path | str, store_id: bytes,
             state_dir: Path | None = None) -> Optional[tuple[int, str]]:
    """Where the writer's own rows end: the head it was about to commit when the store holds that
    row (a crash between COMMIT and the write of the committed head leaves it the later one),
    else the committed head."""
    committed = writer_head(store, store_id, state_dir)
    pending = writer_head(store, store_id, state_dir, pending=True)
    if pending is not None and (committed is None or pending[0] > committed[0]):
        row = conn.execute("SELECT hash FROM records WHERE seq = ?", (pending[0],)).fetchone()
        if row is not None and isinstance(row[0], bytes) and format_hash(row[0]) == pending[1]:
            return pending
    return committed


def past_writer_head(conn: apsw.Connection, store: Path | str, store_id: bytes, head_seq: int,
                     state_dir: Path | None = None) -> Optional[tuple[int, int]]:
    """Rows (first, last) past the writer's remembered head, when the row at that head is the one
    it committed; None when there are none or the head is unknown (other findings cover a rewrite)."""
    head = own_head(conn, store, store_id, state_dir)
    if head is None or head_seq <= head[0]:
        return None
    if head[0] > 0:
        row = conn.execute("SELECT hash FROM records WHERE seq = ?", (head[0],)).fetchone()
        if row is None or not isinstance(row[0], bytes) or format_hash(row[0]) != head[1]:
            return None
    return head[0] + 1, head_seq


def named_in_store(conn: apsw.Connection, after_seq: int = 0) -> list[Finding]:
    """Foreign rows the store's own gap rows name (those after `after_seq`)."""
    found = []
    for seq, payload in conn.execute(_GAPS_SQL, (after_seq,)):
        try:
            doc = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(doc, dict) or doc.get("reason") != KIND:
            continue
        try:
            first, last = int(doc["first_seq"]), int(doc["last_seq"])
        except (ValueError, KeyError, TypeError):
            found.append(Finding(seq, KIND, f"gap row {seq} names foreign rows it cannot say which"))
            continue
        found.append(Finding(first, KIND, f"rows {first}..{last} were written outside the recorder's writer "
                                          f"(named by gap row {seq})"))
    return found


def findings(conn: apsw.Connection, store: Path | str, store_id: bytes, head_seq: int, *,
             after_seq: int = 0, state_dir: Path | None = None,
             serving: Optional[Callable[[], bool]] = None) -> list[Finding]:
    """Every foreign range the store names after `after_seq`, and any past the writer's head."""
    found = named_in_store(conn, after_seq)
    past = past_writer_head(conn, store, store_id, head_seq, state_dir)
    if past is not None and serving is not None and serving():
        deadline = time.monotonic() + SERVING_GRACE_S
        while past is not None and time.monotonic() < deadline:
            time.sleep(0.05)
            head = writer_head(store, store_id, state_dir)
            if head is not None and head[0] >= past[1]:
                # The daemon committed past them: its own rows, or named by its gap row (read
                # again: a new read sees that commit).
                past = None
                found = named_in_store(conn, after_seq)
    if past is not None:
        first, last = past
        found.append(Finding(first, KIND, f"rows {first}..{last} lie past the head the recorder's writer last "
                                          "committed and no writer named them: written outside the recorder"))
    return found


__all__ = ["KIND", "findings", "named_in_store", "past_writer_head", "writer_head"]
