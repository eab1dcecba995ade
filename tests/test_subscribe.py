"""Live-tail subscriptions on the daemon's socket (docs/protocol.md, "subscribe").

The cases that only append and subscribe share one daemon (`shared_daemon`): a subscription from
seq 1 reads the whole store, whatever earlier cases stored, and each case's expectations count
what was there before it; a case that counts subscriptions first waits for the earlier cases'
to end. The catch-up check (it compares each pushed payload with the plain `payload` column, which holds
only the indexed fields once the store packs payloads, as it does after the slow-subscriber case's
padded run), the consumer accounting and the restart start daemons of their own."""

from __future__ import annotations

import json
import signal
import threading

from support.daemon import Daemon, append_many, wait_for
from test_tail_reconcile import event

from agentwatch.readers import tail
from agentwatch.store.append import Store


def subscribe(d: Daemon, **request):
    client = d.client()
    ack = client.request({"op": "subscribe", **request})
    assert ack["ok"] is True and ack["op"] == "subscribe", ack
    return client, ack


def read_until(client, want_seq: int, kinds=None) -> tuple[list[dict], list[dict]]:
    """Pushed records up to `want_seq`, and the control lines seen meanwhile."""
    records, control = [], []
    while not records or records[-1]["seq"] < want_seq:
        doc = json.loads(client.reply_line())
        (records if "seq" in doc and "op" not in doc else control).append(doc)
    return records, control


def test_catch_up_then_live_without_gap_or_duplicate(daemon):
    before = append_many(daemon, 300)
    client, ack = subscribe(daemon, from_seq=1)
    assert ack["from_seq"] == 1 and ack["head_seq"] >= before[-1]
    # Appends race the catch-up: whatever commits while the store is read must come exactly once.
    sender = threading.Thread(target=append_many, args=(daemon, 700))
    sender.start()
    sender.join()
    head = daemon.health()["head_seq"]
    with client:
        records, control = read_until(client, head)
    assert [r["seq"] for r in records] == list(range(1, head + 1))
    assert {"op": "live", "seq": control[0]["seq"]} == control[0]
    stored = {r["seq"]: r for r in daemon.rows()}
    for r in records:
        assert r["record_id"] == stored[r["seq"]]["record_id"] and r["payload"] == stored[r["seq"]]["payload"]
        assert r["hash"].startswith("sha256:") and len(r["hash"]) == 71


def test_switch_over_under_continuous_appends(shared_daemon):
    daemon, start = shared_daemon, shared_daemon.health()["head_seq"]
    stop = threading.Event()

    def keep_appending():
        while not stop.is_set():
            append_many(daemon, 20)

    sender = threading.Thread(target=keep_appending)
    sender.start()
    try:
        clients = []
        for _ in range(5):  # each subscribes at another instant of the stream
            wait_for(lambda: daemon.health()["head_seq"] > start + 50 * (len(clients) + 1), "more rows")
            clients.append(subscribe(daemon, from_seq=1)[0])
    finally:
        stop.set()
        sender.join()
    head = daemon.health()["head_seq"]
    for client in clients:
        with client:
            records, _ = read_until(client, head)
        assert [r["seq"] for r in records] == list(range(1, head + 1))


def test_kinds_filter_and_from_head(shared_daemon):
    daemon = shared_daemon
    earlier = [row["seq"] for row in daemon.rows("event")]  # the events earlier cases stored
    first = append_many(daemon, 5)
    events, _ = subscribe(daemon, from_seq=1, kinds=["event"])
    fresh, ack = subscribe(daemon, **{"from": "head"})
    assert ack["from_seq"] == first[-1] + 1
    later = append_many(daemon, 3)
    with events:
        got, _ = read_until(events, later[-1])
    assert [r["seq"] for r in got] == earlier + first + later  # seq 1, the start attestation, is not an event
    assert {r["kind"] for r in got} == {"event"}
    with fresh:
        got, _ = read_until(fresh, later[-1])
    assert [r["seq"] for r in got] == later


def test_bad_subscribe_requests_are_refused(shared_daemon):
    with shared_daemon.client() as client:
        assert client.request({"op": "subscribe", "from_seq": 0})["error"] == "bad_request"
        assert client.request({"op": "subscribe", "from": "tail"})["error"] == "bad_request"
        assert client.request({"op": "subscribe", "kinds": ["bogus"]})["error"] == "bad_request"
        assert client.request({"op": "ping"})["ok"] is True  # the connection is still usable


def test_slow_subscriber_falls_back_to_catch_up_and_misses_nothing(shared_daemon):
    daemon = shared_daemon
    wait_for(lambda: daemon.health()["subscriptions"]["open"] == 0, "the earlier cases' subscriptions to end")
    fallbacks_before = daemon.health()["subscriptions"]["fallbacks_to_catch_up"]
    client, _ = subscribe(daemon, **{"from": "head"})
    big = "x" * 2048  # ~2.3 KB per pushed line: the 1 MiB buffer fills after a few hundred
    acked = []
    for _ in range(6):
        acked += append_many(daemon, 500, pad=big)  # every append is acked: the writer never waits
    fallbacks = daemon.health()["subscriptions"]["fallbacks_to_catch_up"] - fallbacks_before
    assert fallbacks >= 1, "the scenario needs the buffer to overflow at least once"
    with client:
        records, control = read_until(client, acked[-1])
        # A catch-up that ends with the last record writes its `live` marker after it: once the
        # daemon has the subscriber live again, read what is left.
        wait_for(lambda: daemon.health()["subscriptions"]["live"] == 1, "the subscriber to be live again")
        client.sock.settimeout(0.5)
        try:
            while (raw := client.reply_line()) is not None:
                control.append(json.loads(raw))
        except TimeoutError:
            pass
    assert [r["seq"] for r in records] == acked
    # Live at the start, then live again after each fall back to catch-up: exactly one more.
    assert [c["op"] for c in control] == ["live"] * (fallbacks + 1)


def test_subscriber_ends_with_its_connection(shared_daemon):
    daemon = shared_daemon
    wait_for(lambda: daemon.health()["subscriptions"]["open"] == 0, "the earlier cases' subscriptions to end")
    client, _ = subscribe(daemon, from_seq=1)
    wait_for(lambda: daemon.health()["subscriptions"]["open"] == 1, "the subscription")
    client.close()
    wait_for(lambda: daemon.health()["subscriptions"]["open"] == 0, "the subscription to end")


def test_run_tail_uses_the_daemon_and_keeps_consumer_accounting(daemon):
    from agentwatch.readers.reconcile import reconcile

    acked = append_many(daemon, 40)
    out, sources = [], []
    tail.run_tail(daemon.store, follow=False, from_seq=None, consumer="shipper", kinds=["event"],
                  emit=out.extend, socket_path=daemon.socket, on_source=sources.append)
    assert sources == ["daemon"]
    assert [r.seq for r in out] == acked
    assert all(r.payload == json.dumps(row["payload"], sort_keys=True, separators=(",", ":")).encode()
               for r, row in zip(out, daemon.rows("event")))
    more = append_many(daemon, 10)
    out.clear()
    tail.run_tail(daemon.store, follow=False, from_seq=None, consumer="shipper", kinds=["event"],
                  emit=out.extend, socket_path=daemon.socket)
    assert [r.seq for r in out] == more
    result = reconcile(daemon.store, consumer="shipper")
    assert result.within_bounds
    assert result.counts["delivered"] == result.counts["records_in_range"] == result.counts["stored"] == 50


def test_follow_survives_a_daemon_restart(tmp_path):
    d = Daemon(tmp_path / "d").start()
    stop = threading.Event()
    seen, sources = [], []

    def consume():
        for batch in tail.follow_any(d.store, d.socket, after_seq=0, kinds=["event"], stop=stop,
                                     on_source=sources.append):
            seen.extend(r.seq for r in batch)

    reader = threading.Thread(target=consume)
    reader.start()
    try:
        first = append_many(d, 10)
        wait_for(lambda: len(seen) == 10, "the first records")
        d.send_signal(signal.SIGKILL)
        d.wait()
        with Store(d.store) as store:  # while no daemon runs, another writer appends
            direct = [r.seq for r in store.append([event(i) for i in range(5)])]
        wait_for(lambda: len(seen) == 15, "the records written without the daemon")
        d.start()
        later = append_many(d, 10)
        wait_for(lambda: len(seen) == 25, "the records after the restart")
    finally:
        stop.set()
        reader.join(10)
        d.stop()
    assert seen == first + direct + later
    assert sources == ["daemon", "store", "daemon"]


def test_a_commit_reaches_the_loop_as_one_callback_acks_first_then_subscribers():
    """Were acks and the publish two hops, a client subscribing on its ack could be served
    between them and told a head below its own record (seen once under CI load)."""
    from agentwatch.daemon.server import Server

    events: list = []

    class Loop:
        def call_soon_threadsafe(self, fn, *args):
            events.append("hop")
            fn(*args)

    class Writer:
        def take_committed(self):
            return ["row 7", "row 8"]

        def findings(self):  # the writer's findings, read on the same hop: none here
            return []

    class Hub:
        def publish(self, rows):
            events.append(("publish", rows))

    class Watch:  # the recorder watch looks for session starts and ends after the subscribers
        def committed(self, rows):
            events.append(("watch", rows))

    server = object.__new__(Server)  # only what the hand-over touches
    server.loop, server.writer, server.subscriptions = Loop(), Writer(), Hub()
    server.recorder_watch = Watch()
    server._on_results = lambda outcomes: events.append(("acks", outcomes))
    server._deliver_from_writer(["outcome 7", "outcome 8"])
    assert events == ["hop", ("acks", ["outcome 7", "outcome 8"]), ("publish", ["row 7", "row 8"]),
                      ("watch", ["row 7", "row 8"])]
