"""The in-flight count, driven without a subprocess: every record admitted is released once.

`Connection` and `SpoolDrainer` run against a small in-process host whose writer the test
answers by hand, so each path (ok, refusal, a writer that refuses the batch, a callback that
fails, a client that disconnects before its answer) can be stepped and the count checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest

from agentwatch.daemon.admission import Admission
from agentwatch.daemon.connection import Connection
from agentwatch.daemon.drain import SpoolDrainer
from agentwatch.daemon.settings import Counters, ServeConfig
from agentwatch.daemon.writer import Job, Refusal
from agentwatch.store.append import Append, Appended
from agentwatch.store.chain import canonical_json


class FakeWriter:
    """Holds submitted jobs until the test answers them."""

    def __init__(self, accept: bool = True):
        self.accept = accept
        self.jobs: list[Job] = []

    def submit(self, jobs: list[Job]) -> bool:
        if self.accept is None:
            raise RuntimeError("the writer is gone")
        if self.accept:
            self.jobs.extend(jobs)
        return bool(self.accept)


class Host:
    """The parts of daemon.server.Server that a connection and the drainer use."""

    def __init__(self, tmp_path: Path, limit: int = 8, per_connection: int = 4, accept: bool = True):
        self.uid, self.pid = os.getuid(), os.getpid()
        self.config = ServeConfig(store=tmp_path / "s.db", socket=tmp_path / "s.sock", spool=tmp_path / "spool",
                                  max_inflight=limit, max_inflight_per_connection=per_connection)
        self.counters = Counters()
        self.writer = FakeWriter(accept)
        self.admission = Admission(limit, self.writer.submit)
        self.conns: set = set()
        self.last_data = 0.0
        self.subscriptions = None
        self.dirty: set = set()

    def normalize(self, request: dict, *, uid=None, peer_pid=None) -> Append:
        if request.get("boom"):
            raise RuntimeError("a normalizer bug")
        return Append(request["record_id"], "event", canonical_json({"harness": "t", "n": request["record_id"]}))

    def health(self) -> dict:
        return {"ok": True}

    def mark_dirty(self, conn) -> None:
        self.dirty.add(conn)

    def answer(self, n: int | None = None, refusal: Refusal | None = None) -> None:
        """The writer's outcomes for the first n held jobs, as Server._on_results settles them."""
        jobs = self.writer.jobs[: n if n is not None else len(self.writer.jobs)]
        del self.writer.jobs[: len(jobs)]
        outcomes = [
            (job, None, refusal) if refusal else (job, Appended(job.row.record_id, i + 1, False, 0, b"\0" * 32), None)
            for i, job in enumerate(jobs)
        ]
        self.admission.settle(outcomes)
        dirty, self.dirty = self.dirty, set()
        for conn in dirty:
            conn.flush()
        self.admission.wake_waiting()


class Transport:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.written = bytearray()
        self.closed = False
        self.reading = True

    def get_extra_info(self, name):
        return self.sock if name == "socket" else None

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def replies(self) -> list[dict]:
        return [json.loads(line) for line in bytes(self.written).splitlines()]


@pytest.fixture
def peer():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield a
    a.close()
    b.close()


def connect(host: Host, sock: socket.socket) -> tuple[Connection, Transport]:
    conn = Connection(host)
    transport = Transport(sock)
    conn.connection_made(transport)
    return conn, transport


def append(record_id: str, **extra) -> bytes:
    return json.dumps({"op": "append", "record_id": record_id, "harness": "t", "payload": {}, **extra}).encode() + b"\n"


def test_admission_counts_in_on_submit_and_out_on_settle():
    held: list[Job] = []
    adm = Admission(4, lambda jobs: held.extend(jobs) or True)
    answers = []
    adm.submit([Job(Append(f"r{i}", "event", b"{}"), lambda r, e, i=i: answers.append(i)) for i in range(3)])
    assert (adm.inflight, adm.free(), adm.has_capacity()) == (3, 1, True)
    adm.settle([(job, None, Refusal("unavailable", "x")) for job in held])
    assert (adm.inflight, answers) == (0, [0, 1, 2])


def test_a_writer_that_refuses_or_raises_answers_the_batch_at_once():
    for hand in (lambda jobs: False, lambda jobs: 1 / 0):
        adm = Admission(4, hand)
        answers = []
        adm.submit([Job(Append("r", "event", b"{}"), lambda r, e, answers=answers: answers.append(e.code))])
        assert (adm.inflight, answers) == (0, ["shutting_down"])


def test_a_failing_answer_callback_is_still_counted_out():
    adm = Admission(4, lambda jobs: True)

    def broken(result, error):
        raise RuntimeError("callback bug")

    jobs = [Job(Append("a", "event", b"{}"), broken), Job(Append("b", "event", b"{}"), broken)]
    adm.submit(jobs)
    adm.settle([(job, None, Refusal("unavailable", "x")) for job in jobs])
    assert adm.inflight == 0


def test_connection_appends_are_admitted_once_and_released_once(tmp_path, peer):
    host = Host(tmp_path)
    conn, transport = connect(host, peer)
    conn.data_received(append("a") + b"not json\n" + append("b") + append("c", boom=True) + b'{"op":"ping"}\n')
    assert host.admission.inflight == 2  # a and b; the bad line and the normalizer bug are refused, not admitted
    host.answer(1)
    host.answer(refusal=Refusal("unavailable", "the store cannot commit now"))
    assert host.admission.inflight == 0
    got = [(r.get("ok"), r.get("error"), r.get("record_id")) for r in transport.replies()]
    assert got == [(True, None, "a"), (False, "bad_json", None), (False, "unavailable", None),
                   (False, "bad_request", None), (True, None, None)]


def test_a_client_gone_before_its_answer_is_still_released(tmp_path, peer):
    host = Host(tmp_path)
    conn, transport = connect(host, peer)
    conn.data_received(append("a") + append("b"))
    conn.connection_lost(None)
    assert host.admission.inflight == 2
    host.answer()
    assert (host.admission.inflight, transport.written) == (0, bytearray())


def test_a_writer_refusing_the_batch_releases_every_record(tmp_path, peer):
    host = Host(tmp_path, accept=False)
    conn, transport = connect(host, peer)
    conn.data_received(append("a") + append("b") + append("c"))
    assert host.admission.inflight == 0
    assert [r["error"] for r in transport.replies()] == ["shutting_down"] * 3


def test_the_bound_pauses_reading_and_an_answer_resumes_it(tmp_path, peer):
    host = Host(tmp_path, limit=3, per_connection=3)
    conn, transport = connect(host, peer)
    conn.data_received(b"".join(append(f"r{i}") for i in range(5)))
    assert (host.admission.inflight, conn.paused, transport.reading) == (3, True, False)
    host.answer()
    assert (host.admission.inflight, conn.paused, transport.reading) == (2, False, True)
    host.answer()
    assert host.admission.inflight == 0
    assert [r["record_id"] for r in transport.replies()] == ["r0", "r1", "r2", "r3", "r4"]


def test_the_drainer_admits_spool_files_and_releases_them(tmp_path):
    host = Host(tmp_path)
    spool = tmp_path / "spool" / "new"
    spool.mkdir(parents=True, mode=0o700)
    for rid in ("s1", "s2"):
        envelope = {"v": 1, "op": "append", "record_id": rid, "harness": "t", "payload": {}}
        (spool / f"{rid}.json").write_text(json.dumps(envelope))
    drainer = SpoolDrainer(host, tmp_path / "spool", host.normalize)

    async def run() -> None:
        task = asyncio.create_task(drainer._pass())
        for _ in range(200):
            await asyncio.sleep(0.01)
            if host.writer.jobs:
                break
        assert host.admission.inflight == 2
        host.answer()
        await task

    asyncio.run(run())
    assert host.admission.inflight == 0
    assert sorted(p.name for p in spool.iterdir()) == []
