"""A crash between a commit and the write of the committed head does not make the writer's own rows foreign.

The daemon remembers its head outside the store after every commit, and, in a second slot of the
same file, the head it is about to commit, written inside the transaction before COMMIT
(verify/known_stores.py HeadFile). At the next start, rows past the committed head are the
writer's own when the row at the pending head is in the store with that hash; anything past that
is foreign (docs/reliability.md, "Rows written while the daemon was stopped").
"""

from __future__ import annotations

import time

from agentwatch.daemon import integrity
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json
from agentwatch.verify import known_stores


def rows(first: int, n: int) -> list[Append]:
    return [Append(f"r{i}", "event", canonical_json({"schema": 1, "i": i})) for i in range(first, first + n)]


def test_rows_up_to_the_pending_head_are_the_writers_own(tmp_path):
    path, state = tmp_path / "store.db", tmp_path / "state"
    with Store(path) as store:
        head_file = known_stores.HeadFile(path, store.store_id, state)
        store.append(rows(1, 3))
        head_file.write(*store.head())  # committed: seq 3
        (last,) = store.append(rows(4, 1))[-1:]
        head_file.write(last.seq, last.hash, pending=True)  # the crash: COMMIT done, committed head not written
        head_file.close()
    with Store(path) as store:
        assert integrity.adopt_stop_head(store, path, state) is None  # seq 4 is the writer's own
        store.append(rows(5, 2))  # then another process appends two rows while no daemon runs
    with Store(path) as store:
        assert integrity.adopt_stop_head(store, path, state) == (5, 6)


def test_a_pending_head_whose_commit_never_landed_is_not_trusted(tmp_path):
    path, state = tmp_path / "store.db", tmp_path / "state"
    with Store(path) as store:
        head_file = known_stores.HeadFile(path, store.store_id, state)
        store.append(rows(1, 3))
        head_file.write(*store.head())
        head_file.write(4, b"\x11" * 32, pending=True)  # written, then the COMMIT was lost
        head_file.close()
        store.append(rows(4, 2))  # another process: its row 4 is not the one the writer was committing
    with Store(path) as store:
        assert integrity.adopt_stop_head(store, path, state) == (4, 5)


def test_a_retention_chore_names_its_pending_head_like_a_group_commit(tmp_path):
    # Every append through the writer's store names its head before COMMIT, not only group commits:
    # a retention row committed just before a SIGKILL is the writer's own at the next start.
    from agentwatch.store.retention import Policy, retain_once

    pending: list[tuple[int, bytes]] = []
    with Store(tmp_path / "store.db") as store:
        store.pending_hook = lambda seq, digest: pending.append((seq, digest))
        store.append(rows(1, 3))
        assert pending == [store.head()]
        step = retain_once(store, Policy(payload_days=1.0), now_ns=time.time_ns() + 2 * 86_400 * 10**9)
        assert step.done is not None and step.done.rows == 3
        assert len(pending) == 2 and pending[-1] == store.head() and pending[-1][0] == step.done.retention_seq == 4
        store.append([rows(1, 1)[0]])  # a duplicate only: nothing to commit, no pending head
        assert len(pending) == 2
