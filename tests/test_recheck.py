"""Old rows are re-checked on a schedule by the default verify (issue #24, class 11; verify/recheck.py).

An in-place payload edit of a row below the anchor, every stored hash left alone, was found only by
`verify --full`. Now each incremental verify re-checks a rotating window and random samples below
its anchor, and walks everything once the last full walk is older than recheck.FULL_EVERY_S.
"""

from __future__ import annotations

from support import chain_tamper as t

from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Store
from agentwatch.verify import recheck


def build(path, rows: int):
    with Store(path) as store:
        store.append(t.appends(1, rows))
    return path


def test_an_old_edit_is_found_within_one_rotation_of_the_window(tmp_path, monkeypatch):
    monkeypatch.setattr(recheck, "WINDOW_ROWS", 10)
    monkeypatch.setattr(recheck, "SAMPLES", 0)
    store = build(tmp_path / "store.db", 50)
    first = verify_store(store)  # a full walk from genesis: the anchor at 50, the full walk's time kept
    assert (first.exit_code, first.mode, first.recheck["full"]) == (0, "full", True)
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 35)  # in place: every stored hash unchanged
    runs = []
    for _ in range(5):
        result = verify_store(store)
        runs.append((result.mode, (result.finding.kind, result.finding.seq) if result.finding else None,
                     result.recheck["window"] if result.recheck else None))
        if result.finding:
            break
    # Windows 1..10, 11..20, 21..30 are clean; 31..40 holds the edit; the answer names it from genesis.
    assert runs == [("incremental", None, [1, 10]), ("incremental", None, [11, 20]),
                    ("incremental", None, [21, 30]), ("incremental", ("payload_edited", 35), None)]


def test_random_samples_can_find_it_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(recheck, "WINDOW_ROWS", 1)
    monkeypatch.setattr(recheck, "SAMPLES", 49)  # every row below the anchor but the window's one
    store = build(tmp_path / "store.db", 50)
    assert verify_store(store).exit_code == 0
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 35)
    result = verify_store(store)
    assert (result.exit_code, result.finding.kind, result.finding.seq) == (1, "payload_edited", 35)


def test_a_full_walk_is_due_after_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(recheck, "WINDOW_ROWS", 1)
    monkeypatch.setattr(recheck, "SAMPLES", 0)
    store = build(tmp_path / "store.db", 50)
    first = verify_store(store)
    store_id = bytes.fromhex(first.store_id)
    assert verify_store(store).mode == "incremental"
    schedule = recheck.load(store_id)
    schedule.full_at_ns -= recheck.FULL_EVERY_S * 1_000_000_000  # the last full walk is now too old
    recheck.save(store_id, schedule)
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 35)
    result = verify_store(store)
    assert (result.mode, result.finding.kind, result.finding.seq) == ("full", "payload_edited", 35)
