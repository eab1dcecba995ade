"""Verification in child processes (agentwatch.verify.worker).

The sweeper's: it verifies, it is replaced when it dies, it ends with the daemon, and
where no child can run the sweeper verifies in its thread. A parallel full verify's: the
segments are walked by the children, from any caller (a script without a main guard
too), and where no child can run the caller walks them itself, with the same verdict.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support import chain_tamper as t
from support.daemon import Daemon, append_many, wait_for

from agentwatch.evidence import audit
from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Append, Store
from agentwatch.verify import sweeper as sweeper_mod
from agentwatch.verify import worker as verify_worker
from agentwatch.verify.sweeper import Sweeper


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
        sweeper = caught_up(d, append_many(d, 30, "a")[-1])
        assert sweeper["verifies_in"] == "process"
        first = sweeper["worker_pid"]
        assert isinstance(first, int) and first != d.proc.pid and alive(first)

        os.kill(first, signal.SIGKILL)
        wait_for(lambda: not alive(first), "the killed worker to go")
        sweeper = caught_up(d, append_many(d, 30, "b")[-1])
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
        worker = caught_up(d, append_many(d, 5, "a")[-1])["worker_pid"]
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


def sweep_to(tmp_path, head: int) -> Sweeper:
    """A sweeper on tmp_path/s.db, run until it has verified up to `head`, then stopped."""
    sweeper = Sweeper(tmp_path / "s.db", lambda: head, interval=0.05, full_interval=0, state_dir=tmp_path)
    sweeper.start()
    try:
        wait_for(lambda: sweeper.health()["verified_seq"] == head, f"the sweeper at seq {head}")
    finally:
        sweeper.stop()
    return sweeper


def test_without_a_worker_process_the_sweeper_verifies_in_its_thread(tmp_path, monkeypatch, caplog):
    head = _store_with_rows(tmp_path / "s.db", 12)
    monkeypatch.setattr(verify_worker.sys, "executable", str(tmp_path / "no-such-python"))
    sweeper = sweep_to(tmp_path, head)
    health = sweeper.health()
    assert (health["verifies_in"], health["worker_pid"], health["state"]) == ("thread", None, "ok")
    assert "no worker process" in caplog.text


def test_a_worker_that_cannot_answer_falls_back_to_the_thread(tmp_path, monkeypatch):
    head = _store_with_rows(tmp_path / "s.db", 7)

    class Mute(verify_worker.Worker):  # starts, but exits before answering (e.g. cannot import agentwatch)
        def request(self, *request):
            raise verify_worker.WorkerError("verify worker process failed: EOFError: Ran out of input")

    monkeypatch.setattr(sweeper_mod, "Worker", Mute)
    sweeper = sweep_to(tmp_path, head)
    assert sweeper.health()["verifies_in"] == "thread"


# -- a parallel full verify --------------------------------------------------------------------


def test_the_segments_of_a_parallel_verify_are_walked_by_worker_processes(tmp_path, monkeypatch):
    store = t.build_store(tmp_path / "store.db", rows=600)

    def not_here(*args):
        raise AssertionError("the caller walked a segment itself")

    monkeypatch.setattr(audit, "verify_segment", not_here)  # the caller's fallback; children are untouched
    result = verify_store(store, full=True, update_anchor=False, jobs=3, chunk_rows=64)
    assert (result.ok, result.rows_checked, result.verified_through) == (True, 600, 600)


def test_without_worker_processes_the_caller_walks_every_segment(tmp_path, monkeypatch):
    store = t.build_store(tmp_path / "store.db", rows=600)
    with t.tamper(store) as con:
        t.flip_payload_byte(con, 450)
    monkeypatch.setattr(verify_worker.sys, "executable", str(tmp_path / "no-such-python"))
    result = verify_store(store, full=True, update_anchor=False, jobs=3, chunk_rows=64)
    assert (result.ok, result.finding.kind, result.finding.seq) == (False, "payload_edited", 450)


def test_a_script_without_a_main_guard_verifies_in_parallel_quietly(tmp_path):
    """A multiprocessing child would re-run the script itself (and fail loudly) in every child."""
    store = t.build_store(tmp_path / "store.db", rows=600)
    script = tmp_path / "check.py"
    script.write_text(
        "import sys\n"
        "from agentwatch.evidence.audit import verify_store\n"
        "r = verify_store(sys.argv[1], full=True, update_anchor=False, jobs=2, chunk_rows=64)\n"
        "print(r.ok, r.rows_checked)\n"
    )
    out = subprocess.run([sys.executable, str(script), str(store)], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == (0, "True 600\n", "")


def test_a_worker_closed_with_a_request_pending_is_killed_not_awaited(tmp_path):
    store = t.build_store(tmp_path / "store.db", rows=300)
    store_id = t.store_id(store)
    answered = verify_worker.Worker(store)
    assert answered.request("segment", store_id, 100, 300, 64)[:2] == (200, 300)
    proc = answered.proc
    answered.close()
    assert proc.returncode == 0  # nothing pending: EOF on its stdin ended it

    abandoned = verify_worker.Worker(store)
    abandoned.send("segment", store_id, 100, 300, 64)
    proc = abandoned.proc
    abandoned.close()  # e.g. the caller's own segment was interrupted
    assert proc.returncode == -signal.SIGKILL


def test_when_no_new_worker_can_start_the_sweeper_goes_on_in_its_thread(tmp_path, monkeypatch):
    head = [_store_with_rows(tmp_path / "s.db", 5)]
    sweeper = Sweeper(tmp_path / "s.db", lambda: head[0], interval=0.05, full_interval=0, state_dir=tmp_path)
    sweeper.start()
    try:
        wait_for(lambda: sweeper.health()["verified_seq"] == 5, "the worker process")
        first = sweeper.health()["worker_pid"]
        monkeypatch.setattr(verify_worker.sys, "executable", str(tmp_path / "no-such-python"))
        os.kill(first, signal.SIGKILL)  # its replacement cannot start
        with Store(tmp_path / "s.db") as store:
            store.append([Append(f"more-{i}", "event", b'{"i":%d}' % i) for i in range(4)])
        head[0] = 9
        wait_for(lambda: sweeper.health()["verified_seq"] == 9, "the sweeper in its thread")
    finally:
        sweeper.stop()
    health = sweeper.health()
    assert (health["verifies_in"], health["worker_pid"], health["state"]) == ("thread", None, "ok")
