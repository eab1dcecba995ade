"""Who shipped what: verified identity, claims that move, silence, attribution (docs/fleet.md).

Against a real PostgreSQL (tests/support/postgres.py), each test in a database
of its own, with real logins over TCP and passwords from a PGPASSFILE.
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
from pathlib import Path

import psycopg
import pytest
from support.postgres import wait_for
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.fleet import admin
from agentwatch.fleet.connect import FleetSchemaError
from agentwatch.fleet.reconcile import reconcile
from agentwatch.fleet.ship import Shipper
from agentwatch.readers.health_view import _ship as health_ship_row
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

# Serial (`make test` runs this file alone, after the parallel phase):
# it asserts silence thresholds of 0.5 and 1.0 s between a ship and the reconcile after it.
pytestmark = pytest.mark.serial

runner = CliRunner()
INGEST = ("SELECT accepted, duplicates, head_seq, refused, refused_seq FROM agentwatch.ingest_rows("
          "%b, %b, %b, %b, %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bytea[], %b::bytea[], %b::bytea[],"
          " %b::bytea[], %b::bigint[])")


def events(count: int, tag: str = "ev") -> list[Append]:
    return [Append(f"{tag}-{i}", "event", canonical_json(
        {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
         "tool": {"name": "Bash", "call_id": f"c-{tag}-{i}", "input": {"command": f"terraform apply {i}"}}}))
        for i in range(count)]


def build(path: Path, count: int, tag: str = "ev") -> str:
    with Store(path) as store:
        store.append(events(count, tag))
        return store.store_id.hex()


def ship(fleet, store: Path, host: str, role=None, **kwargs):
    url = fleet.server.url((role or fleet.ship).name, fleet.dbname)
    return Shipper(store, url, host=host, batch_rows=50, **kwargs).run(follow=False)


def empty_ingest(conn, store_id: str, host: str, local_head: int = 0):
    return conn.execute(INGEST, (store_id, host, local_head, time.time_ns(), *([[]] * 9))).fetchone()


def by_store(result) -> dict:
    return {s.store_id: s for s in result.sources}


# -- 2. verified identity -------------------------------------------------------------------

def test_the_views_name_the_login_beside_the_host_and_a_taken_host_is_refused(fleet, tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    a_id, b_id = build(a, 5), build(b, 5)
    assert ship(fleet, a, "build-box").refused is None
    other = fleet.another_shipper(tmp_path)
    # Another login says it is build-box too: refused, and the finding is that login's.
    status = ship(fleet, b, "build-box", other)
    assert (status.refused["kind"], status.refused["seq"], status.central_head_seq) == ("host_taken", 1, 0)
    assert "None" not in status.last_error
    with fleet.reader() as conn:
        assert conn.execute("SELECT DISTINCT host, login FROM agentwatch.events").fetchall() == [
            ("build-box", fleet.ship.name)]
        assert conn.execute("SELECT store_id, host, login FROM agentwatch.sources").fetchall() == [
            (a_id, "build-box", fleet.ship.name)]
        assert conn.execute("SELECT kind, store_id, role, host FROM agentwatch.findings").fetchall() == [
            ("host_taken", b_id, other.name, "build-box")]
    result = reconcile(fleet.read_url)
    assert by_store(result)[a_id].within_bounds is True
    assert result.logins == {other.name: {"host_taken": 1}} and result.within_bounds is False
    # Once the administrator retires the claim that holds the label, another login may take it.
    admin.retire_claim(fleet.admin_url, a_id, "build-box moved to another login")
    assert ship(fleet, b, "build-box", other).refused is None
    with fleet.reader() as conn:
        assert conn.execute("SELECT store_id, host, login, retired_at IS NOT NULL FROM agentwatch.sources"
                            " ORDER BY first_seen").fetchall() == [
            (a_id, "build-box", fleet.ship.name, True), (b_id, "build-box", other.name, False)]


# -- 3. claims that move ----------------------------------------------------------------------

def test_a_renamed_host_is_recovered_by_moving_the_claim(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 8)
    ship(fleet, store, "old-name")
    status = ship(fleet, store, "new-name")
    assert (status.refused["kind"], status.refused["seq"]) == ("fork", 8)  # the overlap row first
    assert by_store(reconcile(fleet.read_url))[store_id].findings == {"fork": 1}

    result = runner.invoke(app, ["fleet", "claim", "move", fleet.admin_url, store_id, "--login", fleet.ship.name,
                                 "--host", "new-name", "--reason", "laptop renamed"])
    assert result.exit_code == 0, result.output
    with Store(store) as s:
        s.append(events(2, "after"))
    assert ship(fleet, store, "new-name").refused is None
    assert ship(fleet, store, "old-name").refused["kind"] == "fork"
    with fleet.reader() as conn:
        assert conn.execute("SELECT action, old_role, old_host, new_role, new_host, by_role, reason"
                            " FROM agentwatch.claim_changes").fetchall() == [
            ("move", fleet.ship.name, "old-name", fleet.ship.name, "new-name", "agentwatch_admin", "laptop renamed")]
    source = by_store(reconcile(fleet.read_url))[store_id]
    assert (source.host, source.head_seq, source.claim_changes) == ("new-name", 10, 1)
    assert (source.findings_before_change, source.findings) == ({"fork": 1}, {"fork": 1})
    # A claim never changes except through the administrator's functions.
    with fleet.admin() as conn:
        conn.execute("SET ROLE agentwatch_owner")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("UPDATE agentwatch.source_claims SET host = 'x'")
    with fleet.shipper() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT agentwatch.move_claim(%s, %s, 'x', 'mine now')", (store_id, fleet.ship.name))


def test_a_squatted_store_id_is_a_finding_and_is_given_back(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 4)
    squatter = fleet.another_shipper(tmp_path)
    with fleet.shipper(squatter) as conn:
        assert empty_ingest(conn, store_id, "squat-box") == (0, 0, 0, None, None)
    assert ship(fleet, store, "laptop-1").refused["kind"] == "fork"
    result = reconcile(fleet.read_url)
    source = by_store(result)[store_id]
    assert (source.login, source.findings, source.other_logins) == (
        squatter.name, {"empty_claim": 1}, {fleet.ship.name: {"fork": 1}})
    assert source.within_bounds is False
    # No head for a login that does not hold the claim.
    with fleet.shipper() as conn:
        assert conn.execute("SELECT seq, hash FROM agentwatch.head(%s)", (store_id,)).fetchone() == (0, bytes(32))

    admin.move_claim(fleet.admin_url, store_id, fleet.ship.name, "laptop-1", "squatted by a zero-row call")
    assert ship(fleet, store, "laptop-1").central_head_seq == 4
    result = reconcile(fleet.read_url)
    source = by_store(result)[store_id]
    assert (source.login, source.findings, source.findings_before_change) == (
        fleet.ship.name, {}, {"empty_claim": 1, "fork": 1})
    assert result.within_bounds is True


def test_a_retired_store_takes_no_more_rows_and_its_replacement_is_named(fleet, tmp_path):
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    old_id = build(old, 3)
    ship(fleet, old, "laptop-1")
    # The machine's store is deleted and made again: same login, same host, a new store_id.
    new_id = build(new, 2, "fresh")
    ship(fleet, new, "laptop-1")
    result = reconcile(fleet.read_url)
    assert (by_store(result)[new_id].replaces, by_store(result)[new_id].within_bounds) == ([old_id], False)
    assert by_store(result)[old_id].replaces == []

    text = runner.invoke(app, ["reconcile", "--pg", fleet.read_url], env={"COLUMNS": "80"})
    assert text.exit_code == 1
    assert f"  REPLACES {old_id} (retire it if gone)" in text.stdout.splitlines()
    assert max(len(line) for line in text.stdout.splitlines()) <= 80

    result = runner.invoke(app, ["fleet", "claim", "retire", fleet.admin_url, old_id, "--reason", "store recreated"])
    assert result.exit_code == 0, result.output
    result = reconcile(fleet.read_url)
    assert by_store(result)[new_id].within_bounds is True and by_store(result)[old_id].retired_at is not None
    assert result.within_bounds is True
    status = ship(fleet, old, "laptop-1")
    assert (status.refused["kind"], status.central_head_seq) == ("retired", 3)
    assert by_store(reconcile(fleet.read_url))[old_id].findings == {"retired": 1}


# -- 4. silence ---------------------------------------------------------------------------------

def test_a_source_that_stops_reporting_is_silent_and_a_caught_up_shipper_still_reports(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 3)
    ship(fleet, store, "laptop-1")
    time.sleep(1.2)
    source = by_store(reconcile(fleet.read_url, silent_after_s=1.0))[store_id]
    assert (source.silent, source.lag_s, source.within_bounds) == (True, 0, False)
    assert source.silent_s > 1.0 and source.last_report_at is not None
    # Caught up, nothing to send: the shipper still tells the server its head.
    status = ship(fleet, store, "laptop-1")
    assert (status.rows_shipped, status.state) == (0, "stopped")
    source = by_store(reconcile(fleet.read_url, silent_after_s=1.0))[store_id]
    assert (source.silent, source.within_bounds) == (False, True)
    assert reconcile(fleet.read_url).silent_after_s == 900.0
    # Following, with nothing new to send: the shipper reports on its own every report_every_s.
    import threading

    stop = threading.Event()
    follower = Shipper(store, fleet.ship_url, host="laptop-1")
    follower.report_every_s = 0.3
    thread = threading.Thread(target=follower.run, args=(stop,))
    thread.start()
    try:
        def last_report():
            with fleet.reader() as conn:
                return conn.execute("SELECT last_report_at FROM agentwatch.sources").fetchone()[0]

        first = wait_for(last_report, timeout=10)
        assert wait_for(lambda: last_report() > first, timeout=10) is True
    finally:
        stop.set()
        thread.join(30)
    assert follower.status.rows_shipped == 0
    result = runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--silent-after", "0.5", "--json"])
    time.sleep(0.6)
    result = runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--silent-after", "0.5", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["sources"][0]["silent"] is True


def test_lag_s_is_unknown_not_the_epoch_for_a_source_with_no_rows(fleet):
    store_id = secrets.token_hex(16)
    with fleet.shipper() as conn:
        assert empty_ingest(conn, store_id, "laptop-9", local_head=5) == (0, 0, 0, None, None)
    with fleet.reader() as conn:
        assert conn.execute("SELECT lag_rows, lag_s FROM agentwatch.sources").fetchone() == (5, None)


# -- 5. one login cannot mark another's source ----------------------------------------------------

def test_findings_are_the_login_s_own_and_limited_per_login(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 3)
    ship(fleet, store, "laptop-1")
    hostile = fleet.another_shipper(tmp_path)
    rows = [list(c) for c in zip(*[(1, "x", "event", 1, b"{}", bytes(32), bytes(32))])]
    with fleet.shipper(hostile) as conn:
        for i in range(200):
            assert conn.execute(INGEST, (store_id, f"host-{i}", 1, 1, *rows, [None], [None])).fetchone()[3] == "fork"
    with fleet.reader() as conn:
        assert conn.execute("SELECT kind, count(*) FROM agentwatch.findings WHERE role = %s GROUP BY 1 ORDER BY 1",
                            (hostile.name,)).fetchall() == [("fork", 20), ("rate_limited", 1)]
    result = reconcile(fleet.read_url)
    source = by_store(result)[store_id]
    assert (source.findings, source.within_bounds) == ({}, True)
    assert source.other_logins == {hostile.name: {"fork": 20, "rate_limited": 1}}
    assert result.logins == {hostile.name: {"fork": 20, "rate_limited": 1}} and result.within_bounds is False


def test_denied_writes_keep_their_source_when_a_login_claims_two(fleet, tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    a_id, b_id = build(a, 2), build(b, 2, "b")
    ship(fleet, a, "laptop-1")
    ship(fleet, b, "laptop-1")
    with fleet.shipper() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"DELETE FROM agentwatch.records WHERE store_id = '{b_id}'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("TRUNCATE agentwatch.findings")

    def collected():
        with fleet.reader() as conn:
            conn.execute("SELECT agentwatch.collect_denials()")
            return conn.execute("SELECT store_id, detail LIKE '%%DELETE%%' FROM agentwatch.findings"
                                " WHERE kind = 'denied' ORDER BY store_id, 2").fetchall()

    found = wait_for(lambda: (lambda rows: rows if len(rows) == 3 else None)(collected()), timeout=20)
    assert found == sorted([(b_id, True), (a_id, False), (b_id, False)])
    result = reconcile(fleet.read_url)
    assert by_store(result)[b_id].findings == {"denied": 2} and by_store(result)[a_id].findings == {"denied": 1}


def test_a_flood_of_denied_writes_is_twenty_findings_and_one_rate_limited(fleet, tmp_path):
    store = tmp_path / "store.db"
    store_id = build(store, 2)
    ship(fleet, store, "laptop-1")
    with fleet.shipper() as conn:
        for i in range(25):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"DELETE FROM agentwatch.records WHERE store_id = '{store_id}' AND seq = {i}")

    def collected():
        with fleet.reader() as conn:
            conn.execute("SELECT agentwatch.collect_denials()")
            rows = conn.execute("SELECT kind, store_id, count(*) FROM agentwatch.findings GROUP BY 1, 2"
                                " ORDER BY 1").fetchall()
        return rows if sum(n for _, _, n in rows) >= 21 else None

    assert wait_for(collected, timeout=20) == [("denied", store_id, 20), ("rate_limited", None, 1)]


# -- 6. the smaller items ---------------------------------------------------------------------------

def test_rows_rechained_under_a_fresh_store_id_are_named_as_duplicates(fleet, tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    a_id = build(a, 6)
    ship(fleet, a, "laptop-1")
    copier = fleet.another_shipper(tmp_path)
    b_id = build(b, 6)  # the same events, record ids and all, under a new store_id
    ship(fleet, b, "laptop-2", copier)
    result = reconcile(fleet.read_url)
    assert by_store(result)[b_id].duplicates_of == {a_id: 6} and by_store(result)[b_id].within_bounds is False
    assert by_store(result)[a_id].duplicates_of == {} and by_store(result)[a_id].within_bounds is True


def test_health_after_a_rollback_says_the_server_is_ahead(fleet, tmp_path):
    store = tmp_path / "store.db"
    build(store, 4)
    early = tmp_path / "early.db"
    shutil.copyfile(store, early)
    with Store(store) as s:
        s.append(events(6, "later"))
    ship(fleet, store, "laptop-1")
    shutil.copyfile(early, store)  # restored from an older copy
    status = ship(fleet, store, "laptop-1")
    assert (status.refused["kind"], status.refused["seq"], status.central_head_seq) == ("rollback", 4, 10)
    row = health_ship_row({**status.to_json(), "state": "refused", "lag_rows": 0})
    assert row.value == "refused, the server holds 6 rows beyond this store's head, refused at seq 4 (rollback)"


def test_a_fleet_login_that_may_not_purge_is_told_so(fleet):
    with pytest.raises(FleetSchemaError, match="purge needs the login that ran fleet init"):
        admin.purge(fleet.read_url)


def test_duration_ms_has_the_same_json_type_locally_and_centrally(fleet, tmp_path):
    store = tmp_path / "store.db"
    pre = {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
           "tool": {"name": "Bash", "call_id": "c1", "input": {"command": "ls"}}}
    post = {**pre, "event": {"name": "PostToolUse", "kind": "tool_post"}, "tool": {**pre["tool"], "duration_ms": 1234}}
    pre2 = {**pre, "tool": {**pre["tool"], "call_id": "c2"}}
    post2 = {**post, "tool": {**post["tool"], "call_id": "c2", "duration_ms": 12.5}}
    with Store(store) as s:
        s.append([Append("p1", "event", canonical_json(pre)), Append("e1", "event", canonical_json(post)),
                  Append("p2", "event", canonical_json(pre2)), Append("e2", "event", canonical_json(post2))])
    ship(fleet, store, "laptop-1")
    query = "SELECT call_id, duration_ms FROM tool_calls ORDER BY call_id"
    local = runner.invoke(app, ["sql", "--store", str(store), "--json", query])
    central = runner.invoke(app, ["sql", "--pg", fleet.read_url, "--json", query])
    assert local.exit_code == 0 and central.exit_code == 0, (local.output, central.output)
    assert json.loads(local.stdout) == json.loads(central.stdout) == [
        {"call_id": "c1", "duration_ms": 1234}, {"call_id": "c2", "duration_ms": 12.5}]
    assert [type(r["duration_ms"]) for r in json.loads(central.stdout)] == [int, float]
