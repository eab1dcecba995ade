"""Shipping to the fleet server and reading it back: the CLI, the daemon's shipper, health, the views.

Against a real PostgreSQL (tests/support/postgres.py), each test in a database of its own.
"""

from __future__ import annotations

import json
import sqlite3

import psycopg
import pytest
from support.daemon import Daemon, append_many, wait_for
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

runner = CliRunner()


def fill(path, count: int, tag: str = "ev") -> None:
    with Store(path) as store:
        store.append([Append(f"{tag}-{i}", "event", canonical_json(
            {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
             "tool": {"name": "Bash", "call_id": f"c-{tag}-{i}", "input": {"command": f"make {i}"}}}))
            for i in range(count)])


def local_rows(path) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute("SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash"
                           " FROM records ORDER BY seq").fetchall()
    finally:
        con.close()


def store_id_of(path) -> str:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute("SELECT value FROM _agentwatch_meta WHERE key = 'store_id'").fetchone()[0]
    finally:
        con.close()


def central_rows(fleet, store_id: str) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash"
                            " FROM agentwatch.records WHERE store_id = %s ORDER BY seq", (store_id,)).fetchall()


def test_fleet_init_on_the_command_line_reports_what_it_applied(fleet):
    result = runner.invoke(app, ["fleet", "init", fleet.admin_url, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["version"], doc["applied"], doc["roles_created"], doc["denials"]) == (6, [], [], "on")


def test_ship_once_then_reconcile_and_sql_on_the_fleet_server(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 250)
    result = runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--host", "dev-1",
                                 "--batch-rows", "100", "--once", "--json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert (status["rows_shipped"], status["batches"], status["central_head_seq"], status["lag_rows"]) == (250, 3, 250, 0)
    assert status["target"] == f"postgresql://{fleet.ship.name}@127.0.0.1:{fleet.server.port}/{fleet.dbname}"
    store_id = store_id_of(store)
    assert central_rows(fleet, store_id) == local_rows(store)

    result = runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["within_bounds"] is True and doc["unattributed_findings"] == {}
    (source,) = doc["sources"]
    assert {k: source[k] for k in ("store_id", "host", "head_seq", "rows", "chain_ok", "contiguous", "lag_rows",
                                   "findings", "within_bounds")} == {
        "store_id": store_id, "host": "dev-1", "head_seq": 250, "rows": 250, "chain_ok": True, "contiguous": True,
        "lag_rows": 0, "findings": {}, "within_bounds": True}
    assert runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--source", "0" * 32]).exit_code == 2
    one = runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--source", store_id])
    assert one.exit_code == 0 and one.stdout.rstrip().endswith("within bounds")

    result = runner.invoke(app, ["sql", "--pg", fleet.read_url, "--json",
                                 "SELECT host, count(*) AS n FROM events WHERE tool_name = 'Bash' GROUP BY host"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"host": "dev-1", "n": 250}]


def test_packed_rows_reach_the_server_as_their_documents(fleet, tmp_path, monkeypatch):
    """The server recomputes each row's hash from what it receives: a packed row ships its document."""
    from agentwatch.store import packing
    from agentwatch.store.packing import Dictionaries

    monkeypatch.setattr(packing, "TRAIN_SAMPLES", 20)
    store = tmp_path / "store.db"
    with Store(store) as s:
        for first in range(0, 120, 30):
            s.append([Append(f"big-{i}", "event", canonical_json(
                {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PostToolUse", "kind": "tool_post"},
                 "tool": {"name": "Bash", "call_id": f"c-{i}", "input": {"command": f"cat notes/{i}.txt"},
                          "response": {"stdout": f"line {i}\n" * 80}}})) for i in range(first, first + 30)])
    con = sqlite3.connect(store)
    assert con.execute("SELECT count(payload_z) FROM records").fetchone() == (90,)
    con.close()
    result = runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--host", "dev-2",
                                 "--once", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows_shipped"] == 120
    from agentwatch.store import db

    reader = db.open_reader(store)
    document = Dictionaries.of(reader).document
    local = [(*r[:4], document(r[4], r[7], r[8]), r[5], r[6]) for r in reader.execute(
        "SELECT seq, record_id, kind, recorded_at_ns, CAST(payload AS BLOB), prev_hash, hash, payload_dict, payload_z"
        " FROM records ORDER BY seq")]
    reader.close()
    assert central_rows(fleet, store_id_of(store)) == local
    result = runner.invoke(app, ["reconcile", "--pg", fleet.read_url, "--source", store_id_of(store), "--json"])
    assert result.exit_code == 0, result.output
    (source,) = json.loads(result.stdout)["sources"]
    assert (source["rows"], source["chain_ok"], source["findings"]) == (120, True, {})


def test_sql_on_the_fleet_server_is_read_only_by_role(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 3)
    assert runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--once"]).exit_code == 0
    denied = runner.invoke(app, ["sql", "--pg", fleet.read_url, "DELETE FROM records"])
    assert denied.exit_code == 2 and "only reading is allowed" in denied.stderr
    with fleet.reader() as conn:  # the role itself, outside the read-only transaction
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table records"):
            conn.execute("DELETE FROM agentwatch.records")
    two = runner.invoke(app, ["sql", "--pg", fleet.read_url, "SELECT 1; SELECT 2"])
    assert two.exit_code == 2 and "one statement per query" in two.stderr
    shipper = runner.invoke(app, ["sql", "--pg", fleet.ship_url, "SELECT 1"])
    assert shipper.exit_code == 2 and "may ship (EXECUTE on agentwatch.ingest)" in shipper.stderr
    admin = runner.invoke(app, ["sql", "--pg", fleet.admin_url, "SELECT 1"])
    assert admin.exit_code == 2 and "is a superuser" in admin.stderr
    with fleet.reader() as conn:
        assert conn.execute("SELECT count(*) FROM agentwatch.records").fetchone() == (3,)


def test_a_password_in_the_target_is_refused_and_never_printed(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 1)
    secret = "s3cr3t-Pa55"
    for target in (f"postgresql://{fleet.ship.name}:{secret}@127.0.0.1:{fleet.server.port}/{fleet.dbname}",
                   f"host=127.0.0.1 user={fleet.ship.name} password={secret} dbname={fleet.dbname}"):
        result = runner.invoke(app, ["ship", "--to", target, "--store", str(store), "--once"])
        assert result.exit_code == 2 and "carries a password" in result.stderr
        assert secret not in result.output
    serve = runner.invoke(app, ["serve", "--store", str(store), "--ship-url", f"postgresql://u:{secret}@h/db"])
    assert serve.exit_code == 2 and "option --ship-url: key 'ship.url'" in serve.stderr and secret not in serve.output


def test_the_server_unreachable_is_exit_3_and_says_where(fleet, tmp_path):
    store = tmp_path / "store.db"
    fill(store, 1)
    url = f"postgresql://{fleet.ship.name}@127.0.0.1:1/{fleet.dbname}"
    result = runner.invoke(app, ["ship", "--to", url, "--store", str(store), "--once"])
    assert result.exit_code == 3 and "127.0.0.1:1" in result.stderr
    assert runner.invoke(app, ["reconcile", "--pg", url]).exit_code == 3


def test_the_daemon_ships_reports_lag_and_never_blocks_ingestion(fleet, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SHIP_HOST", "box-1")
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--ship-url", fleet.ship_url]).start()
    try:
        append_many(d, 40, prefix="a")
        caught_up = lambda: (lambda s: s if s.get("state") == "caught_up" and  # noqa: E731
                             s.get("central_head_seq") == d.health()["head_seq"] else None)(d.health()["ship"])
        ship = wait_for(caught_up, "the shipper to catch up")
        assert (ship["lag_rows"], ship["lag_s"], ship["host"], ship["last_error"]) == (0, 0.0, "box-1", None)
        assert ship["target"] == f"postgresql://{fleet.ship.name}@127.0.0.1:{fleet.server.port}/{fleet.dbname}"

        fleet.server.stop()
        try:
            # Every append is acknowledged while the fleet server is down; only the lag grows.
            assert len(append_many(d, 30, prefix="b")) == 30
            failing = wait_for(lambda: (lambda s: s if s.get("last_error") and s["lag_rows"] == 30 else None)(
                d.health()["ship"]), "the shipper to report the outage")
            assert failing["state"] == "backoff" and failing["failing_since_ns"] is not None
            assert d.health()["status"] == "recording"  # an outage under 5 minutes is not yet the operator's
        finally:
            fleet.server.start()
        wait_for(caught_up, "the shipper to catch up after the outage", deadline_s=90)
        assert d.health()["ship"]["last_error"] is None or d.health()["ship"]["failing_since_ns"] is None
    finally:
        assert d.stop() == 0, d.output()
    # The stop attestation, committed last, was shipped before the daemon exited.
    store_id = store_id_of(d.store)
    assert central_rows(fleet, store_id) == local_rows(d.store)
    assert [r[2] for r in local_rows(d.store)].count("event") == 70
    assert fleet.ship.password not in d.output()
    assert all(fleet.ship.password.encode() not in r[4] for r in local_rows(d.store))


def test_the_daemon_reports_a_refusal_as_degraded(fleet, tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--ship-url", fleet.ship_url]).start()
    try:
        append_many(d, 5, prefix="a")
        wait_for(lambda: d.health()["ship"].get("central_head_seq") == d.health()["head_seq"], "the first rows")
    finally:
        assert d.stop() == 0
    other = fleet.another_shipper(tmp_path)  # the same store, claimed by another machine's login
    url = fleet.server.url(other.name, fleet.dbname)
    d2 = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--ship-url", url]).start()
    try:
        health = wait_for(lambda: (lambda h: h if h["ship"].get("state") == "refused" else None)(d2.health()),
                          "the refusal")
        assert health["status"] == "degraded"
        assert health["ship"]["refused"]["kind"] == "fork"
        assert any("the fleet server refused" in r and "(fork)" in r for r in health["reasons"])
    finally:
        assert d2.stop() == 0


TOOL_CALL_COLUMNS = ("first_seq", "harness", "session_id", "turn_id", "tool_name", "tool_category", "mcp_server",
                     "call_id", "paired_by", "started_at", "ended_at", "duration_ms", "duration_source", "outcome",
                     "age_ms", "start_seq", "end_seq", "start_record_id", "end_record_id")


def test_the_fleet_views_pair_tool_calls_as_the_local_store_does(fleet, tmp_path):
    """The same query over the local view and the fleet's: the same rows, column for column."""
    import time

    from test_tool_calls import MS, fixture

    from agentwatch.record import normalize

    def claude(name, call_id, **changes):
        return fixture("claude-code", name, tool_use_id=call_id, session_id="s-1", **changes)

    def codex(name, turn, **changes):
        return fixture("codex", name, session_id="cx-1", turn_id=turn, **changes)

    def cursor(name, command="npm test"):
        return fixture("cursor", name, command=command, conversation_id="conv-1")

    gemini_error_args = fixture("gemini-cli", "AfterTool-error")["payload"]["tool_input"]
    sequence = [  # (event, the client's clock in ms or None)
        (claude("PreToolUse", "toolu_A"), 1_000),                              # by call id, ok, observed
        (codex("PreToolUse", "t1", tool_use_id="call_1"), 1_100),               # open
        (codex("PreToolUse", "t2", tool_use_id="call_2"), 1_200),               # interrupted by its turn
        (claude("PostToolUse", "toolu_A"), 1_250),
        (claude("PreToolUse", "toolu_01Deny"), None),                           # denied, recorded clock
        (fixture("claude-code", "PermissionDenied", session_id="s-1"), None),
        (claude("PreToolUse", "toolu_E"), 1_400),                               # error
        (claude("PostToolUseFailure", "toolu_E"), 1_430),
        (claude("PreToolUse", "toolu_01Intr"), 1_500),                          # interrupted by its end
        (fixture("claude-code", "PostToolUseFailure-interrupt", session_id="s-1"), 1_510),
        (cursor("beforeShellExecution"), 2_000),                                # FIFO: ok, ok, open
        (cursor("beforeShellExecution"), 2_010),
        (cursor("beforeShellExecution", "npm run lint"), 2_020),
        (fixture("cursor", "afterShellExecution", command="npm test", conversation_id="conv-1", duration=40), 2_040),
        (fixture("cursor", "afterShellExecution", command="npm test", conversation_id="conv-1", duration=70), 2_080),
        (cursor("afterShellExecution", "make"), 2_090),                         # an end with no start
        (fixture("openhands", "PostToolUse", tool_input={"command": "ls"}), 5_020),  # stored before its start
        (fixture("openhands", "PreToolUse", tool_input={"command": "ls"}), 5_000),
        (fixture("gemini-cli", "BeforeTool", tool_name="glob", tool_input={"pattern": "**/theme*"}), 6_000),
        (fixture("gemini-cli", "AfterTool", tool_name="glob", tool_input={"pattern": "src/**/theme*"}), 6_007),
        (fixture("gemini-cli", "BeforeTool", tool_name="read_file", tool_input=gemini_error_args), 6_100),
        (fixture("gemini-cli", "AfterTool-error"), 6_103),
        (codex("Interrupt", "t2"), 7_000),
    ]
    store = tmp_path / "store.db"
    with Store(store) as s:
        for i, (event, observed_ms) in enumerate(sequence, 1):
            env = {"record_id": f"r-{i}", "harness": event["harness"], "payload": event["payload"]}
            if event.get("event"):
                env["event"] = event["event"]
            if observed_ms is not None:
                env["ts_observed_ns"] = observed_ms * MS
            s.append([normalize.to_append(env)])
    assert runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--once"]).exit_code == 0

    query = f"SELECT {', '.join(TOOL_CALL_COLUMNS)} FROM tool_calls ORDER BY first_seq"
    answers = {}
    for where, target in (("local", ["--store", str(store)]), ("central", ["--pg", fleet.read_url])):
        before_ms = time.time_ns() // MS
        result = runner.invoke(app, ["sql", *target, "--json", query])
        answers[where] = (before_ms, time.time_ns() // MS, result)
        assert result.exit_code == 0, result.output
    local, central = (json.loads(answers[w][2].stdout) for w in ("local", "central"))
    assert [list(r) for r in central] == [list(TOOL_CALL_COLUMNS)] * len(local)

    # age_ms depends on when the query runs: now (in ms) minus the start, for an open call only.
    # The local store's clock reads whole ms through a double, so it may land 1 ms low.
    observed = {f"r-{i}": ms for i, (_, ms) in enumerate(sequence, 1)}
    for where, rows in (("local", local), ("central", central)):
        before_ms, after_ms, _ = answers[where]
        for row in rows:
            if row["outcome"] == "open":
                start_ms = observed[row["start_record_id"]]
                assert before_ms - start_ms - 1 <= row["age_ms"] <= after_ms - start_ms, (where, row)
            else:
                assert row["age_ms"] is None, (where, row)
    drop_age = lambda rows: [{k: v for k, v in r.items() if k != "age_ms"} for r in rows]  # noqa: E731
    assert drop_age(central) == drop_age(local)

    recorded_ns = {row[0]: row[3] for row in local_rows(store)}
    assert [(r["start_record_id"], r["end_record_id"], r["paired_by"], r["outcome"], r["duration_ms"],
             r["duration_source"]) for r in central] == [
        ("r-1", "r-4", "call_id", "ok", 250.0, "observed"),
        ("r-2", None, "call_id", "open", None, None),
        ("r-3", None, "call_id", "interrupted", None, None),
        ("r-5", "r-6", "call_id", "denied", (recorded_ns[6] - recorded_ns[5]) / 1e6, "recorded"),
        ("r-7", "r-8", "call_id", "error", 30.0, "observed"),
        ("r-9", "r-10", "call_id", "interrupted", 91234, "harness"),
        ("r-11", "r-14", "fifo", "ok", 40, "harness"),
        ("r-12", "r-15", "fifo", "ok", 70, "harness"),
        ("r-13", None, "fifo", "open", None, None),
        (None, "r-16", "fifo", "ok", 5234, "harness"),   # the fixture's own duration
        ("r-18", "r-17", "fifo", "ok", 20.0, "observed"),
        ("r-19", "r-20", "fifo", "ok", 7.0, "observed"),  # a hook rewrote the arguments: paired by order
        ("r-21", "r-22", "fifo", "error", 3.0, "observed"),
    ]
    assert (central[0]["started_at"], central[0]["ended_at"]) == ("1970-01-01T00:00:01.000Z", "1970-01-01T00:00:01.250Z")


def _doc_queries() -> list[str]:
    """The SQL blocks of docs/fleet.md's "Example queries", in order."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "fleet.md").read_text(encoding="utf-8")
    section = text.split("### Example queries", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0].strip() for block in section.split("```sql\n")[1:]]


def test_the_example_queries_of_docs_fleet_md_answer_their_questions(fleet, tmp_path):
    def call(n, command, end):
        pre = {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
               "tool": {"name": "Bash", "category": "shell", "call_id": f"c{n}", "input": {"command": command}}}
        post = {**pre, "event": {"name": "PostToolUse", "kind": end},
                "tool": {**pre["tool"], **({"is_error": True} if end == "tool_error" else {})}}
        return [Append(f"pre-{n}", "event", canonical_json(pre)), Append(f"end-{n}", "event", canonical_json(post))]

    store = tmp_path / "store.db"
    with Store(store) as s:
        s.append(call(1, "terraform apply -auto-approve", "tool_post") + call(2, "terraform plan", "tool_post")
                 + call(3, "cat secrets/prod/db-password", "tool_error")
                 + call(4, "cat secrets/staging/db-password", "tool_error")
                 + call(5, "AWS_PROFILE=prod aws s3 ls", "tool_post")
                 + call(6, "terraform -chdir=infra apply", "tool_error"))
    assert runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--host", "dev-9",
                               "--once"]).exit_code == 0
    queries = _doc_queries()
    assert len(queries) == 4
    results = []
    for query in queries:
        result = runner.invoke(app, ["sql", "--pg", fleet.read_url, "--json", query])
        assert result.exit_code == 0, result.output
        results.append(json.loads(result.stdout))
    terraform, prod_failures, lag, refusals = results
    assert [(r["login"], r["host"], r["command"]) for r in terraform] == [
        (fleet.ship.name, "dev-9", "terraform apply -auto-approve"), (fleet.ship.name, "dev-9", "terraform -chdir=infra apply")]
    assert [(r["host"], r["input"]) for r in prod_failures] == [("dev-9", {"command": "cat secrets/prod/db-password"})]
    assert [(r["host"], r["head_seq"], r["lag_rows"], r["findings"]) for r in lag] == [("dev-9", 12, 0, 0)]
    assert refusals == []


def test_ship_takes_the_server_from_the_configuration(fleet, tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    fill(store, 7)
    assert runner.invoke(app, ["ship", "--store", str(store), "--once"]).exit_code == 2
    monkeypatch.setenv("AGENTWATCH_SHIP_URL", fleet.ship_url)
    result = runner.invoke(app, ["ship", "--store", str(store), "--once", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows_shipped"] == 7


def test_a_killed_shipper_is_started_again_and_resumes(fleet, tmp_path):
    import os
    import signal

    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--ship-url", fleet.ship_url]).start()
    try:
        append_many(d, 10, prefix="a")
        first = wait_for(lambda: (lambda s: s if s.get("pid") and s.get("lag_rows") == 0 else None)(d.health()["ship"]),
                         "the shipper to catch up")
        os.kill(first["pid"], signal.SIGKILL)
        append_many(d, 10, prefix="b")
        again = wait_for(lambda: (lambda s: s if s.get("restarts") == 1 and s.get("pid") not in (None, first["pid"])
                                  and s.get("lag_rows") == 0 else None)(d.health()["ship"]), "a new shipper to catch up")
        assert again["last_exit"] == "the shipper exited with code -9"
    finally:
        assert d.stop() == 0, d.output()
    assert central_rows(fleet, store_id_of(d.store)) == local_rows(d.store)


def test_a_refused_shipper_stays_refused_when_it_tries_again(fleet, tmp_path, monkeypatch):
    import shutil
    import threading

    from agentwatch.fleet import ship

    store = tmp_path / "store.db"
    fill(store, 20)
    backup = tmp_path / "backup.db"
    shutil.copyfile(store, backup)
    fill(store, 10, tag="later")
    assert runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--host", "dev-1",
                               "--once"]).exit_code == 0
    shutil.copyfile(backup, store)  # rolled back below what the server holds
    monkeypatch.setattr(ship, "REFUSED_RETRY_S", 0.05)
    states = []
    shipper = ship.Shipper(store, fleet.ship_url, host="dev-1", on_status=lambda s: states.append(s.state))
    stop = threading.Event()
    thread = threading.Thread(target=shipper.run, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: shipper.status.connects >= 3, "three attempts", deadline_s=30)
    finally:
        stop.set()
        thread.join(30)
    assert states == ["refused", "stopped"] and shipper.status.refused["kind"] == "rollback"
    with fleet.reader() as conn:  # each attempt met the same refusal; the server recorded it once
        assert conn.execute("SELECT kind, seq FROM agentwatch.findings").fetchall() == [("rollback", 20)]
