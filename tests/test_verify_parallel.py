"""A full verify split into segments across processes gives exactly the one-walk verdict."""

from __future__ import annotations

import pytest
from support import chain_tamper as t

from agentwatch.evidence import audit
from agentwatch.evidence.audit import verify_store

ROWS = 900  # three segments of 300 with jobs=3: cuts after seq 300 and 600


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return t.build_store(tmp_path_factory.mktemp("par") / "store.db", rows=ROWS)


def test_segments_cover_the_range_consecutively():
    assert audit._segments(0, 900, 3) == [(0, 300), (300, 600), (600, 900)]
    assert audit._segments(10, 15, 3) == [(10, 15)]  # too few rows to split
    assert audit._segments(0, 7, 2) == [(0, 3), (3, 7)]


def verdict(path, jobs):
    r = verify_store(path, full=True, update_anchor=False, jobs=jobs, chunk_rows=64)
    return r.ok, r.finding and r.finding.kind, r.finding and r.finding.seq, r.rows_checked if r.ok else None


CASES = [
    ("intact", lambda con, sid: None),
    ("payload edit, first segment", lambda con, sid: t.flip_payload_byte(con, 120)),
    ("payload edit, second segment", lambda con, sid: t.flip_payload_byte(con, 450)),
    ("payload edit, last row of a segment", lambda con, sid: t.flip_payload_byte(con, 300)),
    ("payload edit, first row of a segment", lambda con, sid: t.flip_payload_byte(con, 601)),
    ("hash edit at a cut", lambda con, sid: t.set_hash(con, 600, bytes(32))),
    ("deleted row, third segment", lambda con, sid: t.delete_row(con, 700)),
    ("deleted cut row", lambda con, sid: t.delete_row(con, 300)),
    ("two breaks: the first counts", lambda con, sid: (t.flip_payload_byte(con, 650), t.flip_payload_byte(con, 200))),
]


@pytest.mark.parametrize("name, change", CASES, ids=[c[0] for c in CASES])
def test_parallel_verdict_equals_single_walk(template, tmp_path, name, change):
    store = t.copy_store(template, tmp_path / "store.db")
    with t.tamper(store) as con:
        change(con, t.store_id(store))
    single = verdict(store, 1)
    assert verdict(store, 3) == single
    if name == "intact":
        assert single == (True, None, None, ROWS)
    else:
        assert single[0] is False


def test_zero_jobs_is_a_usage_error(template):
    from agentwatch.errors import UsageError

    with pytest.raises(UsageError, match="jobs must be at least 1") as info:
        verify_store(template, full=True, update_anchor=False, jobs=0)
    assert info.value.exit_code == 2
