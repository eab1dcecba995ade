"""`agentwatch serve` end to end: real daemon processes on paths the tests own. The cases that
only send requests share one daemon for the module (`shared_daemon`), and each checks with `==`
what it added to it: the rows after the ones it found, the counters' change. The cases about a
start, a stop, a fault or a configuration start a daemon of their own."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading

import apsw
import pytest
from support.daemon import Client, Daemon, envelope, line, spool_write, wait_for

from agentwatch.record.compact import harness_payload
from agentwatch.record.normalize import to_append
from agentwatch.store.append import Store

MAX_LINE = 1 << 20


def event_ids(d: Daemon) -> list[str]:
    return [row["record_id"] for row in d.rows("event")]


def added(d: Daemon, before: list[dict], kind: str = "event") -> list[dict]:
    """The rows of `kind` stored after `before` (the same kind's rows read earlier), which must
    still be there, unchanged, in front of them."""
    rows = d.rows(kind)
    assert rows[: len(before)] == before
    return rows[len(before):]


def counter_deltas(before: dict, after: dict) -> dict:
    """Each numeric counter's change (nested counters by reason too)."""
    out = {}
    for key, value in after.items():
        if isinstance(value, dict):
            out[key] = counter_deltas(before.get(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value - before.get(key, 0)
    return out


# -- acknowledgement -------------------------------------------------------------------


def test_ack_carries_the_stored_seq_and_the_sender(shared_daemon):
    daemon, before = shared_daemon, shared_daemon.rows("event")
    env = envelope("rec-1")
    reply = daemon.request(env)
    assert reply == {"ok": True, "seq": reply["seq"], "record_id": "rec-1", "duplicate": False}
    (row,) = added(daemon, before)
    assert row["seq"] == reply["seq"]
    assert row["record_id"] == "rec-1"
    assert harness_payload(row["payload"]) == env["payload"]
    client = row["payload"]["client"]
    assert client["uid"] == os.getuid()
    assert client["peer_pid"] == os.getpid()
    assert client["delivery"] == "socket"


def test_the_daemon_serves_on_uvloop(shared_daemon):
    """uvloop is a dependency on this platform, so the daemon runs on it, and says so."""
    assert shared_daemon.health()["event_loop"] == "uvloop"


class DaemonWithoutUvloop(Daemon):
    def argv(self) -> list[str]:
        python, _m, _module, *args = super().argv()
        block = "import sys; sys.modules['uvloop'] = None; from agentwatch import cli; sys.argv[0] = 'agentwatch'; cli.main()"
        return [python, "-c", block, *args]


def test_without_uvloop_the_standard_loop_serves_the_same(tmp_path):
    d = DaemonWithoutUvloop(tmp_path).start()
    try:
        assert d.health()["event_loop"] == "asyncio"
        assert d.request(envelope("plain-loop"))["ok"] is True
    finally:
        assert d.stop() == 0, d.output()
    assert event_ids(d) == ["plain-loop"]


def test_fresh_store_starts_with_a_start_attestation(shared_daemon):
    daemon = shared_daemon  # started on a fresh store; its first row stays the first whatever came after
    first = daemon.rows()[0]
    assert first["seq"] == 1
    assert first["kind"] == "attestation"
    assert first["record_id"].startswith("attest-")
    payload = first["payload"]
    assert payload["type"] == "start"
    assert payload["head_seq"] == 0
    assert payload["head_hash"] == "sha256:" + "0" * 64
    assert payload["config_digest"].startswith("sha256:")
    assert payload["pid"] == daemon.proc.pid


def test_pipelined_requests_get_replies_in_request_order(shared_daemon):
    daemon, before = shared_daemon, shared_daemon.rows("event")
    lines, expected = [], []
    for i in range(600):
        if i % 50 == 7:
            lines.append(b"{not json\n")
            expected.append(("error", "bad_json"))
        elif i % 50 == 21:
            lines.append(line({"op": "ping"}))
            expected.append(("ping", None))
        else:
            lines.append(line(envelope(f"p-{i:04d}")))
            expected.append(("ack", f"p-{i:04d}"))
    with daemon.client() as client:
        client.send(b"".join(lines))
        replies = [client.reply() for _ in lines]
    seqs = []
    for (what, value), reply in zip(expected, replies):
        if what == "ack":
            assert reply["ok"] is True and reply["record_id"] == value and reply["duplicate"] is False
            seqs.append(reply["seq"])
        elif what == "ping":
            assert reply["ok"] is True and reply["op"] == "ping"
        else:
            assert reply["ok"] is False and reply["error"] == value
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    rows = added(daemon, before)
    assert [r["record_id"] for r in rows] == [v for w, v in expected if w == "ack"]
    assert [r["seq"] for r in rows] == seqs


def test_duplicate_record_id_is_acknowledged_and_stored_once(shared_daemon):
    daemon, before, counters_before = shared_daemon, shared_daemon.rows("event"), shared_daemon.health()["counters"]
    with daemon.client() as client:
        first = client.append(envelope("dup-1"))
        again = client.append(envelope("dup-1"))
        # Twice in one pipelined burst (likely one group commit) as well.
        client.send(line(envelope("dup-2")) + line(envelope("dup-2")))
        burst = [client.reply(), client.reply()]
    assert first["duplicate"] is False
    assert again == {"ok": True, "seq": first["seq"], "record_id": "dup-1", "duplicate": True}
    assert [r["duplicate"] for r in burst] == [False, True]
    assert burst[0]["seq"] == burst[1]["seq"]
    assert [r["record_id"] for r in added(daemon, before)] == ["dup-1", "dup-2"]
    counters = counter_deltas(counters_before, daemon.health()["counters"])
    assert counters["accepted"] == 2
    assert counters["duplicates"] == 2


# -- the socket on disk ----------------------------------------------------------------


def test_socket_is_0600_in_a_0700_directory(shared_daemon):
    daemon = shared_daemon
    st = os.lstat(daemon.socket)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(daemon.socket.parent).st_mode) == 0o700


def test_stale_socket_is_replaced(tmp_path):
    d = Daemon(tmp_path)
    d.socket.parent.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(d.socket))
    stale.close()  # the file stays; nobody listens on it
    assert stat.S_ISSOCK(os.lstat(d.socket).st_mode)
    d.start()
    try:
        assert d.request(envelope("after-stale"))["ok"] is True
    finally:
        assert d.stop() == 0
    assert not os.path.lexists(d.socket)


@pytest.mark.parametrize("kind", ["regular file", "symlink"])
def test_non_socket_at_the_socket_path_is_refused_and_left_alone(tmp_path, kind):
    d = Daemon(tmp_path)
    d.socket.parent.mkdir(mode=0o700)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    if kind == "symlink":
        d.socket.symlink_to(target)
    else:
        d.socket.write_text("keep me too")
    code = d.spawn().wait(30)
    assert code == 2
    assert "refusing" in d.output()
    assert target.read_text() == "keep me"
    if kind == "symlink":
        assert d.socket.is_symlink() and os.readlink(d.socket) == str(target)
    else:
        assert d.socket.read_text() == "keep me too"
    assert not d.store.exists()


def test_second_daemon_on_the_same_store_exits_3(shared_daemon, tmp_path):
    daemon = shared_daemon
    other = Daemon(tmp_path / "other", store=daemon.store)
    assert other.spawn().wait(30) == 3
    assert "already served by another agentwatch daemon" in other.output()
    assert str(daemon.store) in other.output()
    # The first one is untouched and still serving.
    assert daemon.request(envelope("still-here"))["duplicate"] is False


def test_second_daemon_on_the_same_socket_exits_3(shared_daemon, tmp_path):
    daemon = shared_daemon
    other = Daemon(tmp_path / "other", socket_path=daemon.socket)
    assert other.spawn().wait(30) == 3
    assert "already served" in other.output()
    assert daemon.request(envelope("still-here-too"))["duplicate"] is False


@pytest.mark.skipif(os.getuid() != 0 or not sys.platform.startswith("linux"), reason="needs root on Linux")
def test_peer_with_another_uid_is_refused(shared_daemon):
    daemon, before, counters_before = shared_daemon, shared_daemon.rows("event"), shared_daemon.health()["counters"]
    # The child keeps filesystem access (fsuid 0) but connects with euid 65534,
    # which is what SO_PEERCRED reports.
    script = (
        "import ctypes, os, socket, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "os.setegid(65534); os.seteuid(65534); libc.setfsuid(0)\n"
        "s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1])\n"
        "sys.stdout.write(s.recv(4096).decode())\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(daemon.socket)], capture_output=True, timeout=60, check=True)
    reply = json.loads(out.stdout)
    assert reply["ok"] is False and reply["error"] == "forbidden"
    assert counter_deltas(counters_before, daemon.health()["counters"])["peers_refused"] == 1
    assert added(daemon, before) == []


# -- bad input -------------------------------------------------------------------------


BAD_LINES = [
    (b"{this is not json}\n", "bad_json"),
    (b"[1, 2, 3]\n", "bad_json"),
    (b"{\"op\": \"append\", \"harness\": \"x\", \"payload\": \xff\xfe}\n", "bad_utf8"),
    (line({"op": "subscribe-to-everything"}), "unknown_op"),
    (line({"record_id": "no-op-field", "harness": "x", "payload": {}}), "unknown_op"),
    (line({k: v for k, v in envelope().items() if k != "record_id"}), "bad_request"),
    (line({**envelope(), "record_id": ""}), "bad_request"),
    (line({**envelope(), "v": 2}), "bad_request"),
    (b"{\"op\":\"append\",\"record_id\":\"x\",\"harness\":\"y\",\"payload\":\"" + b"a" * MAX_LINE + b"\"}\n", "too_large"),
]


@pytest.mark.parametrize("data,error", BAD_LINES, ids=[e + str(i) for i, (_, e) in enumerate(BAD_LINES)])
def test_bad_line_gets_its_error_and_the_next_record_on_the_connection_is_stored(shared_daemon, data, error):
    daemon, good_id = shared_daemon, f"good-after-{BAD_LINES.index((data, error))}"
    stored_before = event_ids(daemon)
    rejected_before = daemon.health()["counters"]["rejected"]
    with daemon.client() as client:
        client.send(data + line(envelope(good_id)))
        bad = client.reply()
        good = client.reply()
    assert bad["ok"] is False and bad["error"] == error and bad["message"]
    assert good["ok"] is True and good["record_id"] == good_id
    assert event_ids(daemon) == stored_before + [good_id]
    rejected = daemon.health()["counters"]["rejected"]
    assert set(rejected) == set(rejected_before)
    assert {reason: n - rejected_before[reason] for reason, n in rejected.items()} == {
        reason: int(reason == error) for reason in rejected}


def test_line_of_exactly_1_mib_is_accepted_and_one_byte_more_is_too_large(shared_daemon):
    daemon, before = shared_daemon, shared_daemon.rows("event")
    def sized(record_id: str, size: int) -> bytes:
        head = json.dumps({"op": "append", "record_id": record_id, "harness": "x", "payload_text": ""})[:-2]
        pad = size - len(head) - 2
        return (head + "a" * pad + '"}').encode()

    exact, over = sized("exactly-1mib", MAX_LINE), sized("one-more", MAX_LINE + 1)
    assert (len(exact), len(over)) == (MAX_LINE, MAX_LINE + 1)
    with daemon.client() as client:
        # The oversized line is sent in pieces, so the daemon sees it before its newline.
        client.send(exact + b"\n")
        assert client.reply()["record_id"] == "exactly-1mib"
        client.send(over[: MAX_LINE // 2])
        client.send(over[MAX_LINE // 2 :] + b"\n" + line(envelope("after-over")))
        assert client.reply()["error"] == "too_large"
        assert client.reply()["record_id"] == "after-over"
    assert [r["record_id"] for r in added(daemon, before)] == ["exactly-1mib", "after-over"]


def test_silent_and_trickling_clients_time_out_while_others_are_served(tmp_path):
    d = Daemon(tmp_path, idle_timeout=1.0).start()
    try:
        silent = d.client()
        trickle = d.client()
        partial = line(envelope("never-finished"))
        stop = threading.Event()

        def dribble() -> None:
            try:
                for byte in partial[:-1]:  # never the newline
                    if stop.wait(0.05):
                        return
                    trickle.send(bytes([byte]))
            except OSError:
                pass  # closed by the daemon: expected

        t = threading.Thread(target=dribble)
        t.start()
        # Meanwhile, another connection is served.
        assert d.request(envelope("served-meanwhile"))["ok"] is True
        for idle in (silent, trickle):
            reply = idle.reply_line()
            assert json.loads(reply)["error"] == "timeout"
            assert idle.reply_line() is None  # then closed
        stop.set()
        t.join()
        silent.close()
        trickle.close()
        assert d.request(envelope("served-after"))["ok"] is True
        assert event_ids(d) == ["served-meanwhile", "served-after"]
        assert d.health()["counters"]["timeouts"] == 2
    finally:
        assert d.stop() == 0


# -- many clients, and stopping under load ------------------------------------------------


def test_many_concurrent_connections_each_append_one(shared_daemon):
    daemon, before = shared_daemon, shared_daemon.rows("event")
    n = 250
    clients = [daemon.client() for _ in range(n)]  # all open at once
    try:
        for i, client in enumerate(clients):
            client.send(line(envelope(f"conn-{i:03d}")))
        replies = [client.reply() for client in clients]
    finally:
        for client in clients:
            client.close()
    assert all(r["ok"] is True and r["duplicate"] is False for r in replies)
    assert [r["record_id"] for r in replies] == [f"conn-{i:03d}" for i in range(n)]
    assert len({r["seq"] for r in replies}) == n
    assert sorted(r["record_id"] for r in added(daemon, before)) == [f"conn-{i:03d}" for i in range(n)]


def test_a_client_that_does_not_read_is_held_back_and_others_are_served(shared_daemon):
    daemon, before = shared_daemon, shared_daemon.rows("event")
    accepted_before = daemon.health()["counters"]["accepted"]
    n = 6000  # well past the per-connection and global in-flight bounds
    bulk = daemon.client()
    burst = b"".join(line(envelope(f"bulk-{i:05d}")) for i in range(n))
    sender = threading.Thread(target=bulk.send, args=(burst,))
    sender.start()  # blocks once the daemon stops reading it
    try:
        wait_for(lambda: daemon.health()["counters"]["accepted"] >= accepted_before + 1000, "the bulk client's first commits")
        assert daemon.request(envelope("hook-meanwhile"))["ok"] is True
        replies = [bulk.reply() for _ in range(n)]
    finally:
        sender.join(60)
        bulk.close()
    assert [r["record_id"] for r in replies] == [f"bulk-{i:05d}" for i in range(n)]
    assert all(r["ok"] is True for r in replies)
    assert sorted(r["record_id"] for r in added(daemon, before)) == sorted([f"bulk-{i:05d}" for i in range(n)] + ["hook-meanwhile"])


def test_pipelined_pings_beyond_the_in_flight_bound_are_all_answered(shared_daemon):
    n = 3000
    with shared_daemon.client() as client:
        client.send(line({"op": "ping"}) * n)
        replies = [client.reply() for _ in range(n)]
    assert all(r["op"] == "ping" for r in replies)


def test_sigterm_during_a_pipelined_burst_stores_every_acked_record(tmp_path):
    d = Daemon(tmp_path).start()
    per_conn, conns = 20_000, 3
    acked: list[list[dict]] = [[] for _ in range(conns)]
    clients = [d.client() for _ in range(conns)]

    def send(client: Client, c: int) -> None:
        batch = b"".join(line(envelope(f"burst-{c}-{i:05d}")) for i in range(per_conn))
        try:
            client.send(batch)
        except OSError:
            pass  # the daemon stopped reading and closed: the rest was never acked

    def read(client: Client, c: int) -> None:
        while (raw := client.reply_line()) is not None:
            acked[c].append(json.loads(raw))

    threads = [threading.Thread(target=f, args=(cl, c)) for c, cl in enumerate(clients) for f in (send, read)]
    for t in threads:
        t.start()
    wait_for(lambda: sum(map(len, acked)) >= 1000, "the first acks of the burst")
    d.send_signal(signal.SIGTERM)
    assert d.wait() == 0, d.output()
    for t in threads:
        t.join(60)
    for client in clients:
        client.close()
    replies = [r for per in acked for r in per]
    assert all(r["ok"] is True for r in replies), {r.get("error") for r in replies}
    acked_ids = {r["record_id"]: r["seq"] for r in replies}
    stored = {row["record_id"]: row["seq"] for row in d.rows("event")}
    assert stored == acked_ids  # every ack is stored at its seq, and nothing unacked was stored
    assert 0 < len(replies) <= conns * per_conn
    last = d.rows()[-1]
    assert last["kind"] == "attestation" and last["payload"]["type"] == "stop"
    assert last["payload"]["counters"]["accepted"] == len(replies)
    assert not os.path.lexists(d.socket)


def test_attestations_start_periodic_stop(tmp_path):
    d = Daemon(tmp_path, attest_interval=0.2).start()
    wait_for(lambda: d.count("attestation") >= 3, "two periodic attestations")
    assert d.request(envelope("between"))["ok"] is True
    assert d.stop() == 0
    types = [row["payload"]["type"] for row in d.rows("attestation")]
    assert types[0] == "start" and types[-1] == "stop"
    assert set(types[1:-1]) == {"periodic"}
    stop = d.rows()[-1]["payload"]
    before = d.rows()[-2]
    assert stop["head_seq"] == before["seq"]
    assert stop["counters"]["accepted"] == 1


# -- spool -------------------------------------------------------------------------------


def test_spool_is_drained_at_start_and_while_serving(tmp_path):
    d = Daemon(tmp_path)
    with Store(d.store) as store:  # a record that already made it, before the daemon ever ran
        store.append([to_append(envelope("already-stored"))])
    good = [f"spooled-{i}" for i in range(3)]
    for rid in good:
        spool_write(d.spool, rid, line({**envelope(rid), "delivery": "spool"}))
    spool_write(d.spool, "already-stored", line(envelope("already-stored")))
    junk = b"{\"op\":\"append\",\"record_id\": trunc"
    spool_write(d.spool, "broken", junk)
    d.start()
    try:
        wait_for(lambda: not os.listdir(d.spool / "new"), "spool/new to be drained")
        assert sorted(event_ids(d)) == sorted(["already-stored", *good])
        for row in d.rows("event"):
            if row["record_id"] != "already-stored":
                assert row["payload"]["client"]["delivery"] == "spool"
        (gap,) = d.rows("gap")
        assert gap["payload"]["reason"] == "spool_unparsable"
        assert gap["payload"]["file"] == "broken.json"
        assert gap["payload"]["size"] == len(junk)
        assert gap["payload"]["sha256"] == "sha256:" + hashlib.sha256(junk).hexdigest()
        wait_for(lambda: len(os.listdir(d.spool / "bad")) == 2, "the quarantined file and its reason note")
        assert sorted(os.listdir(d.spool / "bad")) == ["broken.json", "broken.json.reason"]
        assert (d.spool / "bad" / "broken.json").read_bytes() == junk
        counters = d.health()["counters"]
        assert counters["replayed_from_spool"] == 4
        assert counters["spool_duplicates"] == 1
        assert counters["spool_quarantined"] == 1
        # While serving: a file that appears later is picked up too.
        spool_write(d.spool, "spooled-later", line(envelope("spooled-later")))
        wait_for(lambda: "spooled-later" in event_ids(d), "the later spool file to be stored")
        wait_for(lambda: not os.listdir(d.spool / "new"), "the later spool file to be deleted")
    finally:
        assert d.stop() == 0
    assert d.count("event") == 5
    assert d.count("gap") == 1


# -- configuration and redaction ------------------------------------------------------------


def test_records_are_redacted_by_the_configured_policy(tmp_path, monkeypatch):
    from agentwatch.record.redact.corpus import secrets_corpus

    kind, secret, text = secrets_corpus()[1]
    default = Daemon(tmp_path / "default").start()
    try:
        assert default.request(envelope("with-secret", tool_input={"command": text}))["ok"] is True
    finally:
        assert default.stop() == 0
    stored = json.dumps(default.rows("event")[0]["payload"])
    assert secret not in stored
    assert f"[REDACTED:{kind}:" in stored

    # The same store, socket and spool again, with only the privacy mode changed.
    monkeypatch.setenv("AGENTWATCH_PRIVACY", "metadata-only")
    strict = Daemon(tmp_path / "strict", store=default.store, socket_path=default.socket, spool=default.spool).start()
    try:
        assert strict.request(envelope("metadata-only", tool_input={"command": text}))["ok"] is True
    finally:
        assert strict.stop() == 0
    first, second = strict.rows("event")
    assert second["record_id"] == "metadata-only"
    stored = json.dumps(second["payload"])
    assert secret not in stored and "command" not in stored
    starts = [row["payload"] for row in strict.rows("attestation") if row["payload"]["type"] == "start"]
    assert len(starts) == 2
    assert starts[0]["config_digest"] != starts[1]["config_digest"]  # privacy is part of the configuration


# -- background verification ---------------------------------------------------------------


def test_sweeper_verifies_new_rows_as_they_come(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        with d.client() as client:
            client.send(b"".join(line(envelope(f"v-{i}")) for i in range(300)))
            last = [client.reply() for _ in range(300)][-1]["seq"]

        def caught_up():
            sweeper = d.health()["sweeper"]
            return sweeper if sweeper["verified_seq"] >= last else None

        sweeper = wait_for(caught_up, "the sweeper to verify up to the last ack")
        assert sweeper["state"] == "ok"
        assert sweeper["started_from"] == "genesis"
        assert sweeper["finding"] is None
    finally:
        assert d.stop() == 0


def test_sweeper_reports_a_tampered_row_and_recording_goes_on(tmp_path):
    from support.chain_tamper import build_store, flip_payload_byte, tamper

    d = Daemon(tmp_path, verify_interval=0.1)
    d.store.parent.mkdir(parents=True)
    build_store(d.store, rows=12)
    with tamper(d.store) as con:
        flip_payload_byte(con, 5)
    d.start()
    try:
        sweeper = wait_for(lambda: (s := d.health()["sweeper"])["state"] == "broken" and s, "the sweeper's finding")
        assert sweeper["finding"]["seq"] == 5
        assert sweeper["finding"]["kind"] == "payload_edited"
        assert sweeper["verified_seq"] == 4
        out = subprocess.run(
            [sys.executable, "-m", "agentwatch.cli", "health", "--socket", str(d.socket)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 1
        assert "payload_edited at seq 5" in out.stderr
        assert d.request(envelope("still-recorded"))["ok"] is True
    finally:
        assert d.stop() == 0
    assert "found payload_edited at seq 5" in d.output()


# -- fail closed -------------------------------------------------------------------------


def test_commit_failure_answers_unavailable_then_records_a_gap(daemon):
    assert daemon.request(envelope("before"))["ok"] is True
    # Another process takes the store's write lock: the daemon's commit fails with BUSY.
    holder = apsw.Connection(str(daemon.store))
    holder.execute("BEGIN IMMEDIATE")
    try:
        refused = daemon.request(envelope("refused"))
        assert refused["ok"] is False and refused["error"] == "unavailable"
        health = daemon.health()
        assert health["writer"]["state"] == "failing"
        assert "Busy" in health["writer"]["last_error"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    after = daemon.request(envelope("after"))
    assert after["ok"] is True
    assert event_ids(daemon) == ["before", "after"]
    (gap,) = daemon.rows("gap")
    assert gap["seq"] == after["seq"] - 1  # committed with the first batch that succeeded
    assert gap["payload"]["reason"] == "commit_failed"
    assert gap["payload"]["failed_commits"] == 1
    assert gap["payload"]["rows_refused"] == 1
    assert gap["payload"]["first_failure_ns"] <= gap["payload"]["last_failure_ns"]
    health = daemon.health()
    assert health["writer"]["state"] == "ok"
    assert health["counters"]["commit_failures"] == 1
    assert health["counters"]["unavailable"] == 1


# -- CLI -----------------------------------------------------------------------------------


def test_health_command(shared_daemon):
    daemon = shared_daemon
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "agentwatch.cli", "health", *args], capture_output=True, text=True, timeout=60
    )
    out = run("--json", "--socket", str(daemon.socket))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["pid"] == daemon.proc.pid
    assert report["writer"]["state"] == "ok"
    text = run("--socket", str(daemon.socket))
    assert text.returncode == 0 and "writer: ok" in text.stdout
    missing = run("--socket", str(daemon.socket.parent / "nobody.sock"))
    assert missing.returncode == 3
    assert "cannot connect" in missing.stderr


def test_log_format_json_writes_one_object_per_line(tmp_path):
    """`serve --log-format json`: every stderr line is a JSON object with ts, level, logger and message."""
    d = Daemon(tmp_path, extra_args=["--log-format", "json", "--log-level", "debug"]).start()
    assert d.stop() == 0, d.output()
    lines = [json.loads(line) for line in d.output().splitlines() if line.strip()]
    assert lines and all(set(doc) - {"exc"} == {"ts", "level", "logger", "message"} for doc in lines)
    assert lines[-1]["message"].startswith("stopped; ") and lines[-1]["logger"] == "agentwatch.daemon.server"
