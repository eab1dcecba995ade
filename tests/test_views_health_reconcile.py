"""What `health` and `reconcile` say to a person: the health summary's rows, and the
reconcile predicates and boundary counts (the screens themselves: tests/test_views_tmux.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from support import sessions as fixture_sessions
from support.fakehealth import FakeHealth, document

from agentwatch.readers import health_view, reconcile
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True, timeout=120)


def test_the_summary_of_a_recording_daemon():
    status, rows = health_view.summary(document())
    assert status == "recording"
    assert [(r.label, r.value, r.level) for r in rows] == [
        ("daemon", "pid 4242, up 1 h 23 min, agentwatch 0.1.0", "info"),
        ("store", "/home/dev/.local/share/agentwatch/store.db, head seq 182,344", "info"),
        ("writer", "ok, 182,344 rows in 41,210 commits since start, 0 queued", "ok"),
        ("last commit", "2.4 s ago", "info"),
        ("sweeper", "ok, verified to seq 182,340, lag 4 rows", "ok"),
        ("findings", "none", "ok"),
        ("spool", "0 waiting (0 B)", "ok"),
        ("WAL", "3.9 MiB", "ok"),
        ("redaction", "redacted, self-test passed (121 checks)", "ok"),
        ("connections", "3 open, 0 of 2,048 in flight", "info"),
    ]


def test_a_degraded_daemon_leads_with_its_reasons_and_keeps_to_fifteen_rows():
    reasons = [f"reason {i}" for i in range(9)]
    doc = document(status="degraded", reasons=reasons,
                   spool={"backlog": 12, "backlog_bytes": 40960, "oldest_age_s": 400.0, "bad": 2},
                   sweeper={"state": "broken", "verified_seq": 4, "lag_rows": 9,
                            "findings": [{"seq": 5, "kind": "payload_edited", "detail": "x"},
                                         {"seq": 9, "kind": "missing", "detail": "y"}]},
                   ship={"state": "shipping", "lag_rows": 120, "lag_s": 3.2})
    status, rows = health_view.summary(doc)
    assert status == "degraded"
    assert [r.value for r in rows[:4]] == ["reason 0", "reason 1", "reason 2",
                                           "… and 6 more (--verbose or --json)"]
    by_label = {r.label: (r.value, r.level) for r in rows[4:]}
    assert by_label["findings"] == ("payload_edited at seq 5 (+1 more)", "bad")
    assert by_label["sweeper"] == ("broken, verified to seq 4, lag 9 rows", "bad")
    assert by_label["spool"] == ("12 waiting (40.0 KiB), oldest 6 min 40 s, 2 quarantined", "bad")
    assert by_label["ship"] == ("shipping, 120 rows behind, oldest unshipped 3.2 s", "ok")
    assert len(rows) == 15


def test_the_ship_row_appears_only_when_the_daemon_reports_shipping():
    def ship_row(ship):
        rows = health_view.summary(document(ship=ship))[1]
        return [(r.value, r.level) for r in rows if r.label == "ship"]

    assert "ship" not in [r.label for r in health_view.summary(document())[1]]
    # The fleet tier's shipper (agentwatch/fleet/ship.py, ShipStatus) names these states and fields.
    assert ship_row({"state": "off"}) == [("off (no fleet server configured)", "info")]
    assert ship_row({"state": "caught_up", "lag_rows": 0, "lag_s": 0.0}) == [("caught_up, 0 rows behind", "ok")]
    assert ship_row({"state": "shipping", "lag_rows": 1200, "lag_s": 75.0}) == [
        ("shipping, 1,200 rows behind, oldest unshipped 1 min 15 s", "ok")]
    assert ship_row({"state": "backoff", "lag_rows": 5, "lag_s": 3.0, "last_error": "connection refused"}) == [
        ("backoff, 5 rows behind, oldest unshipped 3.0 s, last error: connection refused", "warn")]
    assert ship_row({"state": "refused", "lag_rows": 9, "refused": {"seq": 41, "kind": "hash_mismatch"}}) == [
        ("refused, 9 rows behind, refused at seq 41 (hash_mismatch)", "bad")]


def test_an_unreachable_daemon_is_its_reason_the_spool_and_the_next_step():
    status, rows = health_view.summary({"ok": False, "status": "stopped", "reasons": ["cannot connect to /x"],
                                        "reachable": False, "socket": "/x", "spool_dir": "/s",
                                        "spool": {"backlog": 3, "backlog_bytes": 2048, "oldest_age_s": 90.0, "bad": 0},
                                        "start": "agentwatch serve"})
    assert status == "stopped"
    assert [(r.label, r.value) for r in rows] == [("reason", "cannot connect to /x"),
                                                  ("spool", "3 waiting (2.0 KiB), oldest 1 min 30 s"),
                                                  ("start it", "agentwatch serve")]


def test_verbose_groups_hold_every_field_of_the_document():
    doc = document()

    def leaves(value) -> int:
        if isinstance(value, dict) and value:
            return sum(leaves(v) for v in value.values())
        return 1

    groups = health_view.groups({"ok": True, "op": "health", **doc})
    assert [g for g, _ in groups] == ["recorder", "writer", "spool", "sweeper", "counters", "limits", "redaction"]
    assert sum(len(items) for _, items in groups) == leaves(doc)
    writer = dict(groups[1][1])
    assert writer["wal_checkpoints.background"] == "73" and writer["state"] == "ok"
    # The old names the daemon still sends for --json readers are not shown twice.
    old = {**doc, "draining": doc["stopping"], "writer": {**doc["writer"], "checkpoints": doc["writer"]["wal_checkpoints"]}}
    assert health_view.groups({"ok": True, "op": "health", **old}) == groups


def test_health_off_a_terminal_is_plain_and_json_is_the_document(tmp_path):
    with FakeHealth(tmp_path / "d.sock", document()):
        plain = cli("health", "--socket", str(tmp_path / "d.sock"))
        verbose = cli("health", "--verbose", "--socket", str(tmp_path / "d.sock"))
        as_json = cli("health", "--json", "--socket", str(tmp_path / "d.sock"))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[:3] == ["status: recording", "daemon: pid 4242, up 1 h 23 min, agentwatch 0.1.0",
                                            "store: /home/dev/.local/share/agentwatch/store.db, head seq 182,344"]
    assert len(plain.stdout.splitlines()) == 11
    for out in (plain.stdout, verbose.stdout):
        assert not set(out) & set("─│╭╮╰╯┃━┏┓")
    assert "[writer]" in verbose.stdout and "writer.wal_checkpoints.busy: 0" in verbose.stdout
    assert json.loads(as_json.stdout) == {"ok": True, "op": "health", **document()}


# -- reconcile ----------------------------------------------------------------------------


def test_within_bounds_names_what_it_rests_on_and_what_was_not_checked(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    fixture_sessions.build(store, monkeypatch, ["codex"])
    result = reconcile.reconcile(store, state_dir=tmp_path / "state")
    verdict = result.predicates[-1]
    assert verdict.name == "within_bounds" and verdict.ok is True
    assert verdict.detail == ("rests on chain_ok, store_identity, no_foreign_rows, contiguous, exactly_once; "
                              "not checked: no_loss, recorder_complete")
    assert verdict.to_json() == {"name": "within_bounds", "ok": True, "detail": verdict.detail,
                                 "rests_on": ["chain_ok", "store_identity", "no_foreign_rows", "contiguous",
                                              "exactly_once"], "skipped": ["no_loss", "recorder_complete"]}
    out = cli("reconcile", "--store", str(store))
    assert out.returncode == 0, out.stderr
    assert "all predicates hold" not in out.stdout
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("no_loss ")]
    assert line.split(None, 2) == ["no_loss", "skipped", "no sender ledger given (--ledger)"]


def test_boundary_rows_count_each_kind_and_reason_apart(tmp_path, monkeypatch):
    store = tmp_path / "store.db"
    seqs = fixture_sessions.build(store, monkeypatch, ["openhands"])
    with Store(store) as s:
        s.append([Append("gap-spool-1", "gap", canonical_json({"schema": 1, "reason": "spool_unparsable"})),
                  Append("attest-1", "attestation", canonical_json({"schema": 1, "type": "start"}))])
    ledger = tmp_path / "ledger.jsonl"
    ids = [f"openhands-{i:03d}-{n}" for i, n in enumerate(fixture_sessions.SESSIONS["openhands"])]
    entries = [{"record_id": ids[0], "outcome": "acked", "seq": seqs["openhands"][0]},
               {"record_id": ids[1], "outcome": "acked", "seq": seqs["openhands"][1]},
               {"record_id": ids[2], "outcome": "spooled", "seq": None, "reason": "timeout"},
               {"record_id": ids[3], "outcome": "spooled", "seq": None, "reason": "too_large"},
               {"record_id": ids[4], "outcome": "spooled", "seq": None, "reason": "no_daemon"},
               {"record_id": ids[5], "outcome": "acked", "seq": seqs["openhands"][5]},
               {"record_id": "never-stored", "outcome": "failed", "seq": None}]
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    result = reconcile.reconcile(store, ledger=ledger, state_dir=tmp_path / "state")
    assert reconcile.boundaries(result) == [
        ("sent", "7", "ledger"),
        ("acknowledged", "3", "ledger"),
        ("rejected: too_large", "1", "ledger"),
        ("timed out", "1", "ledger"),
        ("daemon unreachable", "1", "ledger"),
        ("spooled", "3", "ledger"),
        ("failed (not spooled)", "1", "ledger"),
        ("stored: event", "6", "store"),
        ("stored: attestation", "1", "store"),
        ("stored: gap", "1", "store"),
        ("replayed from spool", "0", "store"),
        ("duplicates", "0", "store"),
        ("gap recorded: spool_unparsable", "1", "store"),
        ("missing", "1", "ledger"),
        ("delivered", "-", "consumer (not given)"),
    ]
    assert result.within_bounds is False
    assert result.predicates[-1].detail == "fails: no_loss; not checked: recorder_complete"
    out = cli("reconcile", "--store", str(store), "--ledger", str(ledger), "--json")
    assert out.returncode == 1
    assert json.loads(out.stdout)["counts"]["gaps_by_reason"] == {"spool_unparsable": 1}


def test_the_new_commands_take_json_and_are_in_the_readme_table():
    from pathlib import Path

    import typer

    from agentwatch.cli import app

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    commands = typer.main.get_command(app).commands
    for name in ("health", "reconcile", "sessions", "show", "export"):
        assert f"| `agentwatch {name} " in readme, name
        assert "--json" in [opt for p in commands[name].params for opt in p.opts], name
