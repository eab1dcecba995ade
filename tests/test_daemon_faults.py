"""Process faults and I/O faults at daemon level (short versions; soak/test_daemon_faults_soak.py runs long ones).

Every test sends through the hook client's contract (faultload.deliver, the real
hook as a process) and ends with the same gate: the stored event set equals the
sent set, exactly once, every acked seq is the stored seq, reconcile is within
bounds, the spool is empty. docs/reliability.md ("Daemon-level faults").
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest
from support.daemon import Daemon, envelope, line, wait_for
from support.faultload import (
    FaultyDaemon,
    HookProcessSender,
    Ledger,
    SocketSender,
    assert_gate,
    check,
    deliver,
    kill_under_load,
    wait_spool_empty,
)

# Serial (`make test` runs this file alone, after the parallel phase):
# it SIGSTOPs the daemon under hooks with 150 ms budgets and counts what was acknowledged
# and what spooled: both depend on time.
pytestmark = [pytest.mark.serial, pytest.mark.usefixtures("reap_daemons")]


def test_sigkill_under_load_loses_nothing_and_stores_nothing_twice(tmp_path):
    run = kill_under_load(tmp_path, kills=5, seed=1)
    print("\n" + run.line())
    assert_gate(run.figures, Daemon(tmp_path))
    assert run.figures.spooled > 0  # the kills did cost acks: the spool path was exercised


def test_sigstop_clients_spool_and_the_late_socket_copies_are_duplicates(tmp_path):
    d = Daemon(tmp_path, verify_interval=1.0).start()
    ledger = Ledger(tmp_path / "ledger.jsonl")
    for i in range(5):
        assert deliver(d.socket, d.spool, ledger, i, 2000)[1] == "acked"
    d.send_signal(signal.SIGSTOP)
    try:
        stopped = [deliver(d.socket, d.spool, ledger, i, 150) for i in range(10)]
        hook = HookProcessSender(d.socket, d.spool, ledger, timeout_ms=150)
        for _ in range(3):
            hook.one()
            hook.sent += 1
    finally:
        d.send_signal(signal.SIGCONT)
    entries = ledger.entries()[5:]
    assert len(entries) == 13
    # The stopped daemon's listen backlog accepted each connection and its line: no ack came.
    assert {(e["outcome"], e["reason"]) for e in entries} == {("spooled", "timeout")}, entries
    assert all(outcome == "spooled" for _, outcome, _, _ in stopped)
    wait_spool_empty(d)
    # Each stopped record reached the daemon twice: its line, read after SIGCONT (the ack
    # went to a closed socket), and its spool file. One of the two is a duplicate.
    wait_for(lambda: d.health()["counters"]["duplicates"] == 13, "13 duplicates")
    f = check(d, ledger)
    print(f"\nSIGSTOP/SIGCONT: {f.line()}; duplicates acknowledged {d.health()['counters']['duplicates']}")
    assert d.stop() == 0
    assert_gate(f, d)
    assert (f.sent, f.acked, f.spooled) == (18, 5, 13)


_HALF_SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read())
sys.stdout.write("sent\n"); sys.stdout.flush()
sys.stdin.close()
import time; time.sleep(60)
"""


def test_client_killed_mid_frame_costs_only_its_partial_line(tmp_path):
    d = Daemon(tmp_path, verify_interval=1.0).start()
    ledger = Ledger(tmp_path / "ledger.jsonl")
    background = SocketSender(d.socket, d.spool, ledger, timeout_ms=2000)
    background.start()
    complete, partial = [], []
    try:
        for k in range(12):
            whole = line(envelope(f"whole-{k}"))  # a complete line before the cut: it is stored
            cut = line(envelope(f"cut-{k}"))
            at = 1 + (k * 37) % (len(cut) - 2)  # never the whole object: a strict prefix is not JSON
            data = whole + cut[:at]
            complete.append(f"whole-{k}")
            partial.append(f"cut-{k}")
            mode = ("sigkill", "close", "reset")[k % 3]
            if mode == "sigkill":
                proc = subprocess.Popen([sys.executable, "-c", _HALF_SENDER, str(d.socket)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
                proc.stdin.write(data)
                proc.stdin.close()
                assert proc.stdout.readline() == b"sent\n"
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                proc.stdout.close()
            else:
                s = socket.socket(socket.AF_UNIX)
                s.connect(str(d.socket))
                s.sendall(data)
                if mode == "reset":
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.close()
            assert d.request({"op": "ping"})["ok"] is True
    finally:
        background.stop()
    wait_for(lambda: set(complete) <= {r["record_id"] for r in d.rows("event")}, "the complete lines to be stored")
    wait_for(lambda: d.health()["connections_open"] == 1, "the cut connections to be closed (1: this health request)")
    wait_spool_empty(d)
    stored = [r["record_id"] for r in d.rows("event")]
    assert not set(partial) & set(stored)
    assert sorted(r for r in stored if r.startswith("whole-")) == sorted(complete)
    # The background sender's records: the usual gate, on the rest of the store.
    f = check(d, ledger)
    f.extra -= len(complete)
    f.stored -= len(complete)
    print(f"\nclients killed mid-frame: 12 cut ({len(complete)} complete lines before the cut stored, "
          f"0 partial lines stored); background sender: {f.line()}")
    assert d.stop() == 0
    assert_gate(f, d)


def _writer_state(d: Daemon) -> dict:
    return d.health()["writer"]


def test_disk_full_and_io_errors_fail_closed_and_recover_without_restart(tmp_path):
    d = FaultyDaemon(tmp_path).start()
    pid = d.health()["pid"]
    ledger = Ledger(tmp_path / "ledger.jsonl")
    senders = [SocketSender(d.socket, d.spool, ledger, timeout_ms=1000, pause=0.01),
               HookProcessSender(d.socket, d.spool, ledger, timeout_ms=1000)]  # fmt: skip
    outages = []
    try:
        for s in senders:
            s.start()
        for kind, error, expect in (("write", "full", "FullError"), ("sync", "ioerr", "IOError"),
                                    ("write", "ioerr", "IOError")):  # fmt: skip
            time.sleep(0.7)
            before = d.health()["counters"]["unavailable"]
            d.control(f"arm {kind} {error}")
            writer = wait_for(lambda: (w := _writer_state(d))["state"] == "failing" and w, "writer state failing")
            assert expect in writer["last_error"], writer
            assert writer["failing_since"]
            wait_for(lambda b=before: d.health()["counters"]["unavailable"] >= b + 3, "refusals during the outage")
            injected = d.control("clear")
            wait_for(lambda: _writer_state(d)["state"] == "ok", "the writer to recover")
            outages.append((kind, error, d.health()["counters"]["unavailable"] - before, injected))
        time.sleep(0.7)
    finally:
        for s in senders:
            s.stop()
    wait_spool_empty(d)
    health = d.health()
    assert health["pid"] == pid  # recovered in place, no restart
    f = check(d, ledger)
    gaps = [r["payload"] for r in d.rows("gap")]
    counters = health["counters"]
    print(f"\nI/O faults at daemon level: outages (kind, error, answered unavailable, faults injected so far) "
          f"{outages}; {f.line()}; counters commit_failures {counters['commit_failures']}, "
          f"unavailable {counters['unavailable']}, replayed_from_spool {counters['replayed_from_spool']}, "
          f"spool_duplicates {counters['spool_duplicates']}")
    assert d.stop() == 0, d.output()
    assert_gate(f, d)
    assert f.reasons.get("unavailable", 0) > 0
    assert [g["reason"] for g in gaps] == ["commit_failed"] * 3
    assert [g["failed_commits"] > 0 and g["rows_refused"] > 0 for g in gaps] == [True] * 3
    assert counters["gaps_recorded"] == 3


def test_frames_of_a_stopped_daemon_are_answered_once_it_continues(tmp_path):
    """A pipelining client that waits (no deadline) gets every ack after SIGCONT, in order."""
    d = Daemon(tmp_path, verify_interval=0).start()
    try:
        with d.client() as client:
            d.send_signal(signal.SIGSTOP)
            try:
                client.send(b"".join(line(envelope(f"late-{i}")) for i in range(50)))
            finally:
                d.send_signal(signal.SIGCONT)
            replies = [client.reply() for _ in range(50)]
        assert [r["record_id"] for r in replies] == [f"late-{i}" for i in range(50)]
        assert all(r["ok"] and not r["duplicate"] for r in replies)
        assert [r["seq"] for r in replies] == [row["seq"] for row in d.rows("event")]
    finally:
        assert d.stop() == 0
