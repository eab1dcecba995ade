import json
import threading

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.errors import UsageError
from agentwatch.readers import tail
from agentwatch.readers.consumers import Consumer
from agentwatch.readers.reconcile import reconcile
from agentwatch.store import db
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

runner = CliRunner()


def event(i: int) -> Append:
    return Append(f"ev-{i}", "event", canonical_json({"harness": "test", "event": {"name": "E", "kind": "other"}, "n": i}))


def attestation(i: int) -> Append:
    return Append(f"att-{i}", "attestation", canonical_json({"type": "periodic", "n": i}))


def fill(path, events=0, attestations=0, start=0):
    with Store(path) as store:
        store.append([event(start + i) for i in range(events)] + [attestation(start + i) for i in range(attestations)])


def collect(path, **kw):
    out = []
    tail.run_tail(path, emit=out.extend, **kw)
    return out


def test_follow_store_reads_in_seq_order_with_kind_filter(store_path):
    fill(store_path, events=5, attestations=2)
    conn = db.open_reader(store_path)
    assert [r.seq for r in tail.read_after(conn, 0, 100)] == [1, 2, 3, 4, 5, 6, 7]
    assert [r.seq for r in tail.read_after(conn, 0, 100, ["attestation"])] == [6, 7]
    assert [r.seq for r in tail.read_after(conn, 2, 2)] == [3, 4]
    conn.close()


def test_follow_sees_commits_made_while_following(store_path):
    fill(store_path, events=1)
    stop = threading.Event()
    seen = []

    def consume():
        for batch in tail.follow_store(store_path, after_seq=0, follow=True, stop=stop):
            seen.extend(r.seq for r in batch)
            if len(seen) == 201:
                stop.set()

    reader = threading.Thread(target=consume)
    reader.start()
    with Store(store_path) as store:
        for i in range(20):
            store.append([event(100 + 10 * i + j) for j in range(10)])
    reader.join(30)
    assert not reader.is_alive()
    assert seen == list(range(1, 202))


def test_tail_without_consumer_shows_the_last_rows(store_path):
    fill(store_path, events=15)
    assert [r.seq for r in collect(store_path, follow=False, from_seq=None, consumer=None, kinds=None)] == list(range(6, 16))
    assert [r.seq for r in collect(store_path, follow=False, from_seq=14, consumer=None, kinds=None)] == [14, 15]


def test_consumer_resumes_after_its_acknowledged_seq(store_path):
    fill(store_path, events=7)
    first = collect(store_path, follow=False, from_seq=None, consumer="alerts", kinds=None)
    fill(store_path, events=3, start=100)
    second = collect(store_path, follow=False, from_seq=None, consumer="alerts", kinds=None)
    assert [r.seq for r in first] == list(range(1, 8))
    assert [r.seq for r in second] == [8, 9, 10]
    result = reconcile(store_path, consumer="alerts")
    assert result.within_bounds
    assert (result.counts["delivered"], result.counts["records_in_range"], result.counts["redelivered"]) == (10, 10, 0)


def test_consumer_killed_before_ack_is_redelivered_and_counted_once(store_path):
    fill(store_path, events=4)
    store_id = db.store_id(db.open_reader(store_path))
    consumer = Consumer("shipper", store_id)
    cursor = consumer.start(1, None)
    # Delivered and logged 1..3, acknowledged only 1..2, then killed.
    consumer.record_deliveries([1, 2, 3])
    consumer.ack(cursor, 2)
    consumer.close()
    again = collect(store_path, follow=False, from_seq=None, consumer="shipper", kinds=None)
    assert [r.seq for r in again] == [3, 4]
    result = reconcile(store_path, consumer="shipper")
    assert result.within_bounds
    assert (result.counts["delivered"], result.counts["redelivered"], result.counts["records_in_range"]) == (4, 1, 4)


def test_a_skipped_record_fails_exactly_once(store_path):
    fill(store_path, events=5)
    store_id = db.store_id(db.open_reader(store_path))
    consumer = Consumer("lossy", store_id)
    cursor = consumer.start(1, None)
    consumer.record_deliveries([1, 2, 4, 5])
    consumer.ack(cursor, 5)
    result = reconcile(store_path, consumer="lossy")
    checks = {p.name: p.ok for p in result.predicates}
    assert checks["exactly_once"] is False and checks["within_bounds"] is False
    assert (result.counts["delivered"], result.counts["records_in_range"], result.counts["undelivered"]) == (4, 5, 1)


def test_consumer_with_kind_filter_counts_only_that_kind(store_path):
    fill(store_path, events=6, attestations=3)
    got = collect(store_path, follow=False, from_seq=None, consumer="events-only", kinds=["event"])
    assert [r.kind for r in got] == ["event"] * 6
    result = reconcile(store_path, consumer="events-only")
    assert result.within_bounds
    # The recorder's own rows are visible, and never mixed into event counts.
    assert result.counts["by_kind"] == {"event": 6, "attestation": 3, "gap": 0}
    assert (result.counts["stored"], result.counts["delivered"], result.counts["records_in_range"]) == (6, 6, 6)


def test_resuming_consumer_refuses_from_and_other_kinds(store_path):
    fill(store_path, events=2)
    collect(store_path, follow=False, from_seq=None, consumer="c", kinds=["event"])
    with pytest.raises(UsageError, match="--from is not allowed"):
        collect(store_path, follow=False, from_seq=1, consumer="c", kinds=["event"])
    with pytest.raises(UsageError, match="use the same --kind"):
        collect(store_path, follow=False, from_seq=None, consumer="c", kinds=None)
    with pytest.raises(UsageError, match="consumer name"):
        collect(store_path, follow=False, from_seq=None, consumer="../etc", kinds=None)


def write_ledger(path, entries):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_ledger_no_loss_and_boundary_counts(tmp_path, store_path):
    fill(store_path, events=3)
    ledger = tmp_path / "ledger.jsonl"
    write_ledger(ledger, [
        {"record_id": "ev-0", "outcome": "acked", "seq": 1},
        {"record_id": "ev-1", "outcome": "spooled", "seq": None, "reason": "timeout"},
        {"record_id": "ev-2", "outcome": "spooled", "seq": None, "reason": "no_daemon"},
    ])
    result = reconcile(store_path, ledger=ledger)
    assert result.within_bounds
    c = result.counts
    assert (c["attempted"], c["acknowledged"], c["spooled"], c["timed_out"], c["missing"], c["stored"]) == (3, 1, 2, 1, 0, 3)


def test_ledger_detects_missing_and_wrong_ack(tmp_path, store_path):
    fill(store_path, events=2)
    ledger = tmp_path / "ledger.jsonl"
    write_ledger(ledger, [
        {"record_id": "ev-0", "outcome": "acked", "seq": 2},
        {"record_id": "ev-1", "outcome": "acked", "seq": 2},
        {"record_id": "never-stored", "outcome": "spooled", "seq": None},
    ])
    with ledger.open("a") as f:
        f.write("{not json\n")
    result = reconcile(store_path, ledger=ledger)
    checks = {p.name: p.ok for p in result.predicates}
    assert checks["no_loss"] is False and checks["within_bounds"] is False
    assert (result.counts["missing"], result.counts["ack_seq_mismatch"], result.counts["ledger_malformed"]) == (1, 1, 1)


def test_reconcile_cli_json_and_exit_codes(tmp_path, store_path):
    fill(store_path, events=2, attestations=1)
    ok = runner.invoke(app, ["reconcile", "--store", str(store_path), "--json"])
    assert ok.exit_code == 0
    doc = json.loads(ok.stdout)
    assert doc["within_bounds"] is True
    assert doc["predicates"]["no_loss"]["ok"] is None
    assert doc["counts"]["by_kind"] == {"event": 2, "attestation": 1, "gap": 0}
    ledger = tmp_path / "l.jsonl"
    write_ledger(ledger, [{"record_id": "lost", "outcome": "acked", "seq": 9}])
    bad = runner.invoke(app, ["reconcile", "--store", str(store_path), "--ledger", str(ledger)])
    assert bad.exit_code == 1
    assert runner.invoke(app, ["reconcile", "--store", str(tmp_path / "none.db")]).exit_code == 3
    assert runner.invoke(app, ["reconcile", "--store", str(store_path), "--consumer", "nobody"]).exit_code == 2


def test_tail_cli_json_lines(store_path):
    fill(store_path, events=3)
    result = runner.invoke(app, ["tail", "--store", str(store_path), "--json", "--from", "2"])
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["seq"], d["record_id"], d["kind"]) for d in lines] == [(2, "ev-1", "event"), (3, "ev-2", "event")]
    assert all(d["hash"].startswith("sha256:") for d in lines)
    assert lines[0]["payload"]["n"] == 1


def test_tail_limit_pages_through_the_store(store_path):
    fill(store_path, events=25)
    kw = dict(follow=False, consumer=None, kinds=None, socket_path=store_path.parent / "none.sock")
    assert [r.seq for r in collect(store_path, from_seq=None, limit=4, **kw)] == [22, 23, 24, 25]
    first = [r.seq for r in collect(store_path, from_seq=1, limit=10, **kw)]
    second = [r.seq for r in collect(store_path, from_seq=first[-1] + 1, limit=10, **kw)]
    third = [r.seq for r in collect(store_path, from_seq=second[-1] + 1, limit=10, **kw)]
    assert (first, second, third) == (list(range(1, 11)), list(range(11, 21)), list(range(21, 26)))
    result = runner.invoke(app, ["tail", "--store", str(store_path), "--from", "5", "--limit", "3", "--json",
                                 "--socket", str(store_path.parent / "none.sock")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()  # the runner mixes stderr in: the next page's line
    assert [json.loads(line)["seq"] for line in lines if line.startswith("{")] == [5, 6, 7]
    assert [line for line in lines if not line.startswith("{")] == ["agentwatch: more remain; the next page: --from 8"]
