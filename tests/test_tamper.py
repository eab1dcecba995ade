"""The tamper matrix: each attack, the exact verdict of both verifiers.

Every case starts from a fresh copy of a 12-row store, tampers with it through
the standard library's sqlite3 (guards dropped, hashes forged with the public
recipe), and asserts (ok, finding kind, first broken seq) for the library's
full verify and for the standalone verifier run as `python -I -S`.
"""

from __future__ import annotations

import hashlib

import pytest
from support import chain_tamper as t

from agentwatch.evidence.audit import verify_store


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return t.build_store(tmp_path_factory.mktemp("template") / "store.db")


@pytest.fixture
def store(template, tmp_path):
    return t.copy_store(template, tmp_path / "store.db")


def other_hash(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def sql(statement: str, *params):
    return lambda con, sid: con.execute(statement, params)


def flip(seq: int, **how):
    return lambda con, sid: t.flip_payload_byte(con, seq, **how)


def rehash_one(con, sid: bytes, seq: int) -> None:
    rid, kind, at, data, prev, _ = t.raw(con, seq)
    t.set_hash(con, seq, t.row_hash(sid, seq, at, kind, rid, prev, data))


def rewrite_one_row(con, sid: bytes) -> None:
    """Edit row 5 and give it a correct hash, but leave row 6's prev_hash alone."""
    t.flip_payload_byte(con, 5)
    rehash_one(con, sid, 5)


def rebase_genesis(con, sid: bytes) -> None:
    """A consistent chain that starts from a non-zero previous hash."""
    con.execute("UPDATE records SET prev_hash = ? WHERE seq = 1", (other_hash("elsewhere"),))
    rehash_one(con, sid, 1)
    t.rehash_from(con, sid, 2)


def delete_three_renumbered(con, sid: bytes) -> None:
    for _ in range(3):
        t.delete_row(con, 5, renumber=True)


def insert_two_forged(con, sid: bytes) -> None:
    t.insert_forged(con, sid, 5)
    t.insert_forged(con, sid, 6, "forged-2")


OK = (True, None, None)
MATRIX = [  # (id, tamper(con, store_id), expected (ok, kind, first broken seq))
    ("untouched", lambda con, sid: None, OK),
    ("payload byte edited, middle", flip(5), (False, "payload_edited", 5)),
    ("payload byte edited, first row", flip(1), (False, "payload_edited", 1)),
    ("payload byte edited to invalid UTF-8", flip(7, index=3, new=0xFF), (False, "payload_edited", 7)),
    ("payload byte edited, head: content or hash cannot be told", flip(12), (False, "edited", 12)),
    (
        "kind edited",
        sql("UPDATE records SET kind = CASE kind WHEN 'gap' THEN 'event' ELSE 'gap' END WHERE seq = 6"),
        (False, "payload_edited", 6),
    ),
    (
        "recorded_at_ns edited",
        sql("UPDATE records SET recorded_at_ns = recorded_at_ns + 1 WHERE seq = 3"),
        (False, "payload_edited", 3),
    ),
    ("hash edited, middle", lambda con, sid: t.set_hash(con, 5, other_hash("x")), (False, "hash_edited", 5)),
    ("hash edited, head", lambda con, sid: t.set_hash(con, 12, other_hash("x")), (False, "edited", 12)),
    (
        "prev_hash edited",
        sql("UPDATE records SET prev_hash = ? WHERE seq = 8", other_hash("p")),
        (False, "payload_edited", 8),
    ),
    ("middle row deleted, seq gap", lambda con, sid: t.delete_row(con, 5), (False, "missing", 5)),
    (
        "middle row deleted, later rows renumbered",
        lambda con, sid: t.delete_row(con, 5, renumber=True),
        (False, "missing", 5),
    ),
    ("three rows deleted, later rows renumbered", delete_three_renumbered, (False, "missing", 5)),
    ("first row deleted, seq gap", lambda con, sid: t.delete_row(con, 1), (False, "missing", 1)),
    (
        "first row deleted, later rows renumbered",
        lambda con, sid: t.delete_row(con, 1, renumber=True),
        (False, "missing", 1),
    ),
    ("adjacent rows swapped", lambda con, sid: t.swap_rows(con, 4, 5), (False, "reordered", 4)),
    ("distant rows swapped", lambda con, sid: t.swap_rows(con, 4, 9), (False, "reordered", 4)),
    ("adjacent rows' contents swapped", lambda con, sid: t.swap_contents(con, 4, 5), (False, "reordered", 4)),
    ("head and the row before it swapped", lambda con, sid: t.swap_rows(con, 11, 12), (False, "reordered", 11)),
    (
        "forged row inserted, later rows renumbered",
        lambda con, sid: t.insert_forged(con, sid, 5),
        (False, "inserted", 5),
    ),
    ("forged row inserted at seq 1", lambda con, sid: t.insert_forged(con, sid, 1), (False, "inserted", 1)),
    ("two forged rows inserted", insert_two_forged, (False, "inserted", 5)),
    ("one row's content and hash rewritten, successor not", rewrite_one_row, (False, "edited", 5)),
    (
        "genesis prev_hash edited",
        sql("UPDATE records SET prev_hash = ? WHERE seq = 1", other_hash("g")),
        (False, "bad_genesis", 1),
    ),
    ("chain rebuilt on a non-zero genesis", rebase_genesis, (False, "bad_genesis", 1)),
    (
        "hash shortened to 31 bytes",
        sql("UPDATE records SET hash = substr(hash, 1, 31) WHERE seq = 5"),
        (False, "malformed", 5),
    ),
    (
        "payload stored as a blob",
        sql("UPDATE records SET payload = CAST(payload AS BLOB) WHERE seq = 5"),
        (False, "malformed", 5),
    ),
    (
        "record_id stored as a blob",
        sql("UPDATE records SET record_id = CAST(record_id AS BLOB) WHERE seq = 5"),
        (False, "malformed", 5),
    ),
    (
        "record_id not UTF-8",
        sql("UPDATE records SET record_id = CAST(x'ff41' AS TEXT) WHERE seq = 5"),
        (False, "malformed", 5),
    ),
    ("kind not a known kind", sql("UPDATE records SET kind = 'bogus' WHERE seq = 5"), (False, "malformed", 5)),
    ("recorded_at_ns negative", sql("UPDATE records SET recorded_at_ns = -1 WHERE seq = 5"), (False, "malformed", 5)),
    (
        "row hidden below seq 1",
        lambda con, sid: t.forge(con, sid, 0, bytes(32), rid="hidden"),
        (False, "malformed", 0),
    ),
]


@pytest.mark.parametrize("tamper, expected", [pytest.param(f, e, id=i) for i, f, e in MATRIX])
def test_tamper_matrix(store, tamper, expected):
    with t.tamper(store) as con:
        tamper(con, t.store_id(store))
    library, standalone = t.both_verdicts(store)
    assert library == expected
    assert standalone == expected


# --- what a chain alone cannot see, and what the anchor adds ---------------------------


def test_chain_alone_cannot_detect_tail_truncation(store):
    """Deleting the last rows leaves a valid, shorter chain: both verifiers pass it."""
    with t.tamper(store) as con:
        t.truncate(con, 9)
    assert t.both_verdicts(store) == (OK, OK)


def test_chain_alone_cannot_detect_a_rewrite_from_the_edit_onward(store):
    """Edit row 5 and recompute every later hash: the chain is consistent again."""
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 5)
        t.rehash_from(con, t.store_id(store), 5)
    assert t.both_verdicts(store) == (OK, OK)


def test_chain_alone_cannot_detect_a_forged_row_appended_at_the_head(store):
    """A row appended after the head with a correctly computed hash is a valid chain extension."""
    with t.tamper(store) as con:
        t.forge(con, t.store_id(store), 13, t.raw(con, 12)[5])
    assert t.both_verdicts(store) == (OK, OK)


def test_the_anchor_cannot_detect_a_forged_row_appended_at_the_head(store):
    """Appending past the anchor looks like new recording: only a signed head would tell."""
    assert verify_store(store).anchor.status == "created"
    with t.tamper(store) as con:
        t.forge(con, t.store_id(store), 13, t.raw(con, 12)[5])
    result = verify_store(store)
    assert (result.ok, result.mode, result.rows_checked) == (True, "incremental", 1)


def anchored(store):
    """Verify once (recording the anchor at the head) and return the anchor file."""
    result = verify_store(store)
    assert (result.ok, result.anchor.status, result.anchor.after.seq) == (True, "created", 12)
    return result.anchor.path


def all_verdicts(store, anchor):
    incremental = verify_store(store)
    assert incremental.mode == "incremental"
    full = verify_store(store, full=True)
    rc, report, err = t.standalone(store, "--anchor", str(anchor))
    assert rc == 1, err
    return t.verdict_of(incremental), t.verdict_of(full), t.verdict_of(report)


def test_anchor_detects_tail_truncation(store):
    anchor = anchored(store)
    with t.tamper(store) as con:
        t.truncate(con, 9)
    assert all_verdicts(store, anchor) == ((False, "truncated", 10),) * 3


def test_anchor_detects_truncation_to_an_empty_store(store):
    anchor = anchored(store)
    with t.tamper(store) as con:
        t.truncate(con, 0)
    assert all_verdicts(store, anchor) == ((False, "truncated", 1),) * 3


def test_anchor_detects_a_rewrite_from_the_edit_onward(store):
    anchor = anchored(store)
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 5)
        t.rehash_from(con, t.store_id(store), 5)
    assert all_verdicts(store, anchor) == ((False, "rewritten", 12),) * 3


def test_anchor_tells_a_head_payload_edit_from_a_hash_edit(store):
    anchor = anchored(store)
    copy = t.copy_store(store, store.with_name("copy.db"))
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 12)
    assert all_verdicts(store, anchor) == ((False, "payload_edited", 12),) * 3
    with t.tamper(copy) as con:
        t.set_hash(con, 12, other_hash("x"))
    assert all_verdicts(copy, anchor) == ((False, "hash_edited", 12),) * 3


def test_anchor_is_not_moved_by_a_failed_verify(store):
    anchor = anchored(store)
    before = anchor.read_bytes()
    with t.tamper(store) as con:
        t.truncate(con, 9)
    t.append_rows(store, 5)  # the head moves past the anchor again, over a rewritten seq 12
    result = verify_store(store)
    assert (result.ok, result.finding.kind, result.finding.seq) == (False, "rewritten", 12)
    # The anchored row broke, so the break is named from genesis (as --full names it): rows
    # 1..11 still verify.
    assert (result.anchor.status, result.verified_through) == ("kept", 11)
    assert anchor.read_bytes() == before


def test_incremental_rechecks_rows_behind_the_anchor_and_full_walks_them(store):
    """An in-place edit behind the anchor: the incremental run's rotating window (larger than this
    store) re-checks it (verify/recheck.py), and --full names it from genesis."""
    anchored(store)
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 5)
    incremental = verify_store(store)
    assert t.verdict_of(incremental) == (False, "payload_edited", 5)
    full = verify_store(store, full=True)
    assert t.verdict_of(full) == (False, "payload_edited", 5)
    assert full.verified_through == 4
