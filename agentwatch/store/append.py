"""The store's only INSERT path: batches appended to the chain in one transaction."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Sequence

import apsw

from agentwatch.store import db, packing, schema_check
from agentwatch.store import tree as store_tree
from agentwatch.store.canonical import json_nesting_exceeds
from agentwatch.store.chain import DOMAIN_TAG, GENESIS, KINDS, MAX_RECORD_ID_BYTES, framed_kind_id, row_hash_framed
from agentwatch.store.merkle import CompactRange
from agentwatch.store.tree import TILE_HEIGHT

# A batch goes in as a few multi-row INSERT statements (chunks of 1000, 100, 10
# and 1 rows, so only four statement shapes are ever prepared), not executemany:
# apsw releases the GIL around every sqlite3_step, and each re-acquire can wait a
# switch interval while the daemon's event loop is busy, so fewer steps per batch keep
# the commit short under load. A multi-row VALUES binds the values as they are (no JSON
# round trip) and steps once per chunk.
_COLUMNS = ("INSERT INTO records (seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash, payload_dict,"
            " payload_z) VALUES ")
_WIDTH = 9  # values per row
_CHUNKS = (1000, 100, 10)
# The chunk shapes, and every remainder below the smallest: a group of a few rows (the daemon's
# usual group when hooks arrive one by one) is one statement, not one per row. apsw releases
# the GIL around each SQLite call, and under a busy event loop each re-acquire can wait.
_INSERT = {n: _COLUMNS + ",".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * n) for n in (*_CHUNKS, *range(1, _CHUNKS[-1]))}
_EXISTING = "SELECT record_id, seq, kind FROM records WHERE record_id IN (SELECT value FROM json_each(?))"

# The schema's generated columns read every payload with SQLite's JSON functions,
# which refuse nesting deeper than this (JSON_MAX_DEPTH). Such a row would fail
# the INSERT and with it every other row of its batch, so it is refused up front.
MAX_JSON_DEPTH = 1000


@dataclass(frozen=True, slots=True)
class Append:
    """One row to append. `payload` is canonical JSON (chain.canonical_json).

    Its sha256, and the framing of its kind and record_id, are done here, where the
    row is built (the daemon's event loop), so the writer's critical section hashes
    only the small framed row (docs/daemon.md).
    """

    record_id: str
    kind: str
    payload: bytes
    payload_sha256: bytes = field(init=False, repr=False, compare=False)
    kind_id: bytes = field(init=False, repr=False, compare=False)  # chain.framed_kind_id(kind, record_id)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown record kind {self.kind!r} (expected one of {', '.join(KINDS)})")
        if not isinstance(self.record_id, str) or not self.record_id:
            raise ValueError("record_id must be a non-empty string")
        if len(self.record_id.encode("utf-8", "surrogatepass")) > MAX_RECORD_ID_BYTES:
            raise ValueError(f"record_id longer than {MAX_RECORD_ID_BYTES} bytes")
        if not self.record_id.isprintable():
            raise ValueError("record_id must be printable text")
        if json_nesting_exceeds(self.payload, MAX_JSON_DEPTH):
            raise ValueError(f"payload is nested too deeply to store (more than {MAX_JSON_DEPTH} levels)")
        object.__setattr__(self, "payload_sha256", hashlib.sha256(self.payload).digest())
        object.__setattr__(self, "kind_id", framed_kind_id(self.kind, self.record_id))


class Appended(NamedTuple):
    """What became of one Append. A tuple: the writer makes one per row, and a frozen
    dataclass costs about three times as much to build."""

    record_id: str
    seq: int
    duplicate: bool  # already stored earlier (a replay): acknowledged, not stored twice
    # Of the row this call stored (not set for a duplicate): what live-tail pushes carry.
    recorded_at_ns: int = 0
    hash: bytes = b""


class RowRefused(Exception):
    """A row of the batch that the store refuses for what it holds: the same row fails every time.

    Everything else that goes wrong inside `Store.append` is the store's (disk, I/O, a
    busy or closed connection, a changed schema, a bug) and propagates as it is.
    """


class StoreIntegrityError(Exception):
    """The store is no longer the one this writer opened, or did not store what it was given.

    The writer fails closed on it: the group is refused (`unavailable`) and nothing
    more is committed, because retrying cannot help (docs/reliability.md, "Store
    identity"). `kind` names it as a finding: `replaced` (the file, its WAL or its
    shared memory at the store path is not the one held open), `not_stored` (an
    append stored other rows than it meant to).
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class HeadMoved(StoreIntegrityError):
    """The store's head is not where this writer's last commit left it: rows were deleted
    (`found` below `expected`: a truncation) or rewritten under it."""

    def __init__(self, kind: str, message: str, found: tuple[int, bytes], expected: tuple[int, bytes]):
        super().__init__(kind, message)
        self.found, self.expected = found, expected


_SUFFIXES = ("", "-wal", "-shm")


def _file_ids(path: Path) -> tuple[Optional[tuple[int, int]], ...]:
    """(device, inode) of the store, its WAL and its shared memory at `path`; None where absent."""
    ids: list[Optional[tuple[int, int]]] = []
    for suffix in _SUFFIXES:
        try:
            st = os.stat(f"{path}{suffix}", follow_symlinks=False)
            ids.append((st.st_dev, st.st_ino))
        except FileNotFoundError:
            ids.append(None)
    return tuple(ids)


class Store:
    """The one writer's connection. Not thread-safe: one thread owns it.

    Besides appending, it keeps watch over its own files: after every commit it checks
    that the store, WAL and shared-memory files at its path are still the ones it holds
    open, and inside every transaction that the head is where its last commit left it
    and that the schema is the shipped one (store/schema_check.py).
    """

    def __init__(self, path: Path | str, *, vfs: str | None = None, create: bool = True,
                 group_readable: bool | None = None, pack: bool = True):
        self.path = Path(path)
        self.conn = db.open_writer(self.path, vfs=vfs, create=create, group_readable=group_readable)
        try:
            self.store_id = db.store_id(self.conn)
            self.committed_head = self.head()
            self._schema_cookie = self.conn.pragma("schema_version")
            self._files = _file_ids(self.path)
            # Which event documents are stored packed, and with which dictionary (store/packing.py).
            self.packer = packing.Packer(self.conn) if pack else None
        except BaseException:
            self.conn.close()
            raise
        # The Merkle tree over the rows this connection has seen committed (docs/chain.md,
        # "The tree"); loaded, or caught up from the rows, in the first append transaction.
        self.tree: CompactRange | None = None
        self.tree_head: tuple[int, bytes] | None = None  # (size, root) after the last commit
        # Row ranges (first, last) that appeared in the store without passing through this
        # connection: appended by another process after this connection's last commit.
        self.foreign_rows: list[tuple[int, int]] = []
        # Builds the row naming such a range (a `gap`, reason `foreign_rows`); the store adds it
        # at the front of the same transaction that first extends its chain and tree over the
        # range, so no commit (and so no checkpoint signed from it) covers the range unnamed.
        self.foreign_gap: Callable[[int, int], Append] | None = None
        # Called inside every append's transaction, just before COMMIT, with the head it will
        # leave (seq, hash), whoever asked for the append: the daemon's writer remembers it as its
        # pending head, so a crash after COMMIT cannot make its own rows look foreign
        # (daemon/integrity.py), for group commits, retention chores and gap rows alike.
        self.pending_hook: Callable[[int, bytes], None] | None = None
        # The rows foreign_gap built and this store committed: ((first, last), row, result).
        self.foreign_committed: list[tuple[tuple[int, int], Append, Appended]] = []

    def take_foreign_rows(self) -> list[tuple[int, int]]:
        """The row ranges another process appended since the last call; each is handed out once."""
        found, self.foreign_rows = self.foreign_rows, []
        return found

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def head(self) -> tuple[int, bytes]:
        row = self.conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else (0, GENESIS)

    def files_ids(self) -> tuple[Optional[tuple[int, int]], ...]:
        """(device, inode) of the store, WAL and shared-memory files as this connection knows them."""
        return self._files

    def files_changed(self) -> Optional[str]:
        """Why the files at the store path are not the ones this connection holds, or None.

        The store, its WAL and its shared memory each keep their (device, inode) for as long
        as a connection is open; a deleted or swapped file shows here. A file that appeared
        since the open (a WAL created by the first write) is taken as ours.
        """
        now = _file_ids(self.path)
        if now == self._files:
            return None
        for name, before, after in zip(("store file", "WAL", "shared-memory file"), self._files, now):
            if before is not None and after is None:
                return f"the {name} at {self.path} was deleted"
            if before is not None and after != before:
                return f"the {name} at {self.path} was replaced by another file"
        self._files = tuple(b if b is not None else a for b, a in zip(self._files, now))
        return None

    def copy_to(self, dest: Path) -> None:
        """Copy the store as this connection sees it into a new file at `dest` (SQLite's backup).

        For a store whose file was deleted or replaced at its path: the connection still holds
        the old file and its WAL open, so what was committed and acknowledged there is kept.
        """
        old = os.umask(0o077)
        try:
            target = apsw.Connection(str(dest), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
                                     | apsw.SQLITE_OPEN_NOFOLLOW | apsw.SQLITE_OPEN_EXCLUSIVE)
        finally:
            os.umask(old)
        try:
            with target.backup("main", self.conn, "main") as backup:
                backup.step(-1)
        finally:
            target.close()

    def _check_head(self, found: tuple[int, bytes]) -> None:
        """Inside the write transaction: the head is where the last commit left it, or above it
        by rows another process appended after it (foreign rows)."""
        expected = self.committed_head
        if found == expected:
            return
        if found[0] < expected[0]:
            raise HeadMoved("truncated", f"the store ends at seq {found[0]}, but seq {expected[0]} was committed",
                            found, expected)
        row = self.conn.execute("SELECT hash FROM records WHERE seq = ?", (expected[0],)).fetchone()
        if expected[0] and (row is None or row[0] != expected[1]):
            raise HeadMoved("rewritten", f"seq {expected[0]} no longer holds the row this writer committed",
                            found, expected)

    def _check_schema(self) -> None:
        cookie = self.conn.pragma("schema_version")
        if cookie != self._schema_cookie:
            schema_check.check(self.conn)  # raises SchemaChanged
            self._schema_cookie = cookie

    def append(
        self,
        batch: Sequence[Append],
        *,
        before_commit: Callable[[apsw.Connection, list[Appended]], None] | None = None,
        probe: bool = False,
    ) -> list[Appended]:
        """Append a batch in one BEGIN IMMEDIATE transaction and commit it durably.

        The head is read and the rows inserted under the same write lock, so the
        chain cannot fork even if another process tries to append at once. The
        rows inserted are counted and the head read back before the COMMIT, so a
        trigger that drops or adds rows cannot make a record look stored.
        `before_commit(conn, results)` runs after the inserts, inside the same
        transaction (an erasure's UPDATE: agentwatch.store.erasure); if it raises,
        nothing is committed. With `probe` an empty batch still looks for foreign rows
        and commits the row naming them (the daemon's writer does so when idle).
        """
        if not batch and not probe:
            return []
        conn = self.conn
        # Packing happens before the write lock is taken: it is the costliest step per row.
        packer = self.packer
        if packer is None:
            packed: list = [None] * len(batch)
            new_dictionary = dictionary = None
        else:
            new_dictionary = packer.pending
            dictionary = packer.current
            packed = packer.pack_batch([a.payload if a.kind == "event" else None for a in batch])
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._check_schema()
            seq, prev = self.head()
            self._check_head((seq, prev))
            foreign = self._foreign_since(seq)
            if foreign is not None and self.foreign_gap is not None:
                batch = [self.foreign_gap(*foreign), *batch]
                packed = [None, *packed]
            elif not batch:
                conn.execute("ROLLBACK")
                return []
            tree = self._tree_at(seq)
            stored = {rid: (seq_, kind) for rid, seq_, kind in
                      conn.execute(_EXISTING, (json.dumps([a.record_id for a in batch]),))}
            now = time.time_ns()
            dict_id = None
            if any(packed):
                assert dictionary is not None
                dict_id = dictionary.id
                if new_dictionary is not None:
                    conn.execute("INSERT INTO _agentwatch_dictionaries (data, created_at_ns) VALUES (?, ?)",
                                 (new_dictionary.data, now))
                    dict_id = conn.last_insert_rowid()
            rows: list = []
            results = []
            leaves: list[bytes] = []
            prefix = DOMAIN_TAG + self.store_id
            for a, pack in zip(batch, packed):
                earlier = stored.get(a.record_id)
                if earlier is not None:
                    if earlier[1] != a.kind:
                        # Never a duplicate of a row of another kind: a client's event cannot stand in
                        # for the recorder's own attestation or gap row (docs/protocol.md, record ids).
                        raise RowRefused(f"record_id {a.record_id!r} is taken by a row of kind {earlier[1]!r}")
                    results.append(Appended(a.record_id, earlier[0], True))
                    continue
                seq += 1
                digest = row_hash_framed(prefix, seq, now, a.kind_id, prev, a.payload_sha256)
                try:
                    text = a.payload.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise RowRefused(f"payload of {a.record_id!r} is not UTF-8 (byte {exc.start})") from exc
                if pack is None:
                    rows.extend((seq, a.record_id, a.kind, now, text, prev, digest, None, None))
                else:
                    rows.extend((seq, a.record_id, a.kind, now, pack[0].decode("utf-8"), prev, digest, dict_id, pack[1]))
                stored[a.record_id] = (seq, a.kind)
                prev = digest
                leaves.append(digest)
                results.append(Appended(a.record_id, seq, False, now, digest))
            try:
                inserted = _insert(conn, rows)
            except apsw.Error as exc:
                if _row_fault(exc):
                    raise RowRefused(f"{type(exc).__name__}: {exc}") from exc
                raise
            if rows and (inserted != len(rows) // _WIDTH or self.head() != (seq, prev)):
                raise StoreIntegrityError(
                    "not_stored", f"the store took {inserted} of {len(rows) // _WIDTH} rows or moved its head "
                    "(a trigger or another schema change acts on inserts); nothing was committed")
            if before_commit is not None:
                before_commit(conn, results[1:] if foreign is not None and self.foreign_gap is not None else results)
            if self.pending_hook is not None and leaves:
                self.pending_hook(seq, prev)
            root = store_tree.save(conn, tree, tree.extend(leaves, TILE_HEIGHT))
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        if new_dictionary is not None and dict_id is not None:
            new_dictionary.id = dict_id  # committed: later batches refer to it by id
        self.tree, self.tree_head = tree, (tree.size, root)
        self.committed_head = (seq, prev)
        if foreign is not None:
            self.foreign_rows.append(foreign)
            if self.foreign_gap is not None:
                self.foreign_committed.append((foreign, batch[0], results[0]))
                results = results[1:]
        changed = self.files_changed()
        if changed is not None:
            # Committed into a file nobody will find at the path again: not acknowledged.
            raise StoreIntegrityError("replaced", changed)
        return results

    def _tree_at(self, head_seq: int) -> CompactRange:
        """A copy of the tree over rows 1..head_seq to extend in this transaction (the original
        stays as it was should the transaction roll back)."""
        tree = self.tree
        if tree is not None and tree.size == head_seq:
            return tree.copy()
        return store_tree.catch_up(self.conn, head_seq)

    def _foreign_since(self, head_seq: int) -> tuple[int, int] | None:
        """Inside the write transaction: the rows past this connection's last commit (or past the
        tree it holds), which another process appended; None when there are none."""
        after = self.committed_head[0]
        if self.tree is not None:
            after = min(after, self.tree.size)
        return (after + 1, head_seq) if head_seq > after else None


def _insert(conn: apsw.Connection, values: list) -> int:
    """Insert flattened rows (_WIDTH values each) in chunks of the prepared shapes, then the rest at once.

    Returns how many rows SQLite reports inserted (a trigger's RAISE(IGNORE) skips rows silently).
    """
    at, end, inserted = 0, len(values), 0
    for size in _CHUNKS:
        width = size * _WIDTH
        while end - at >= width:
            conn.execute(_INSERT[size], values[at : at + width])
            inserted += conn.changes()
            at += width
    if at < end:
        conn.execute(_INSERT[(end - at) // _WIDTH], values[at:])
        inserted += conn.changes()
    return inserted


def _row_fault(exc: apsw.Error) -> bool:
    """True when SQLite refused a row for what the row holds, not for the state of the store."""
    if isinstance(exc, (apsw.TooBigError, apsw.MismatchError)):
        return True
    message = str(exc)
    if isinstance(exc, apsw.ConstraintError):
        # A CHECK on a column; not the contiguity trigger or a UNIQUE id, which are the store's.
        return "CHECK constraint failed" in message
    if isinstance(exc, apsw.SQLError):
        return "JSON" in message  # SQLite's JSON functions refuse the payload
    return False
