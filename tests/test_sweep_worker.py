"""The sweeper's hashing runs in a child process: it verifies, it is replaced when it dies,
it ends with the daemon, and where no child can start the sweeper verifies in its thread."""

from __future__ import annotations

import os
import signal

from daemon import Daemon, envelope, line, wait_for

from agentwatch import sweeper as sweeper_mod
from agentwatch.store import Append, Store
from agentwatch.sweeper import Sweeper


def append_many(d: Daemon, prefix: str, n: int) -> int:
    with d.client() as client:
        client.send(b"".join(line(envelope(f"{prefix}-{i}")) for i in range(n)))
        replies = [client.reply() for _ in range(n)]
    assert [reply["ok"] for reply in replies] == [True] * n
    return replies[-1]["seq"]


def caught_up(d: Daemon, seq: int) -> dict:
    return wait_for(lambda: (s := d.health()["sweeper"])["verified_seq"] >= seq and s, f"the sweeper at seq {seq}")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_worker_verifies_is_replaced_when_killed_and_ends_with_the_daemon(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.05).start()
    try:
        sweeper = caught_up(d, append_many(d, "a", 30))
        assert sweeper["verifies_in"] == "process"
        first = sweeper["worker_pid"]
        assert isinstance(first, int) and first != d.proc.pid and alive(first)

        os.kill(first, signal.SIGKILL)
        wait_for(lambda: not alive(first), "the killed worker to go")
        sweeper = caught_up(d, append_many(d, "b", 30))
        assert sweeper["verifies_in"] == "process"
        assert sweeper["worker_pid"] not in (None, first)
        assert sweeper["state"] == "ok" and sweeper["findings"] == []
        second = sweeper["worker_pid"]
    finally:
        assert d.stop() == 0
    assert not alive(second)  # a clean stop ends it


def test_the_worker_exits_when_the_daemon_is_killed(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.05).start()
    try:
        worker = caught_up(d, append_many(d, "a", 5))["worker_pid"]
        d.send_signal(signal.SIGKILL)
        d.wait()
        wait_for(lambda: not alive(worker), "the worker to see EOF and exit")
    finally:
        d.stop()


def _store_with_rows(path, n: int) -> int:
    store = Store(path)
    try:
        store.append([Append(f"r-{i}", "event", b'{"i":%d}' % i) for i in range(n)])
        return store.head()[0]
    finally:
        store.close()


def test_without_a_worker_process_the_sweeper_verifies_in_its_thread(tmp_path, monkeypatch, capsys):
    head = _store_with_rows(tmp_path / "s.db", 12)
    monkeypatch.setattr(sweeper_mod.sys, "executable", str(tmp_path / "no-such-python"))
    sweeper = Sweeper(tmp_path / "s.db", lambda: head, interval=0.05, full_interval=0, state_dir=tmp_path)
    sweeper.start()
    try:
        wait_for(lambda: sweeper.health()["verified_seq"] == head, "the sweeper in its thread")
    finally:
        sweeper.stop()
    health = sweeper.health()
    assert (health["verifies_in"], health["worker_pid"], health["state"]) == ("thread", None, "ok")
    assert "no worker process" in capsys.readouterr().err


def test_a_worker_that_cannot_answer_falls_back_to_the_thread(tmp_path, monkeypatch):
    head = _store_with_rows(tmp_path / "s.db", 7)

    class Mute(sweeper_mod._Worker):  # starts, but exits before answering (e.g. cannot import agentwatch)
        def verify(self, *args):
            self.proc = None
            raise RuntimeError("sweeper worker process failed: EOFError: Ran out of input")

    monkeypatch.setattr(sweeper_mod, "_Worker", Mute)
    sweeper = Sweeper(tmp_path / "s.db", lambda: head, interval=0.05, full_interval=0, state_dir=tmp_path)
    sweeper.start()
    try:
        wait_for(lambda: sweeper.health()["verified_seq"] == head, "the sweeper in its thread")
    finally:
        sweeper.stop()
    assert sweeper.health()["verifies_in"] == "thread"
