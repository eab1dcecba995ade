"""The per-peer queues and shares of daemon/fairness.py, and Admission's use of them, without a daemon."""

from __future__ import annotations

from agentwatch.daemon.admission import Admission
from agentwatch.daemon.fairness import RoundRobin, share
from agentwatch.daemon.writer import Job, Refusal
from agentwatch.store.append import Append


def test_round_robin_takes_one_per_peer_and_a_newcomer_first():
    rr: RoundRobin[str] = RoundRobin()
    for i in range(3):
        rr.push("flood-a", f"a{i}")
        rr.push("flood-b", f"b{i}")
    assert rr.pop() == "b0"  # b arrived after a had a backlog: it had nothing queued, so it went first
    rr.push("hook", "h0")
    assert [rr.pop() for _ in range(len(rr))] == ["h0", "a0", "b1", "a1", "b2", "a2"]
    assert rr.pop() is None and len(rr) == 0 and rr.peers() == 0


def test_share_divides_the_bound_and_never_goes_below_one():
    assert [share(2048, n) for n in (0, 1, 2, 9, 4096)] == [2048, 2048, 1024, 227, 1]


def job(peer, rid: str, answers: list) -> Job:
    return Job(Append(rid, "event", b"{}"), lambda r, e: answers.append((rid, e.code if e else "ok")), peer)


def test_a_flooder_gets_its_share_and_a_hook_is_always_admitted_and_fed_first():
    at_writer: list[Job] = []
    adm = Admission(8, lambda jobs: at_writer.extend(jobs) or True, window=2)
    answers: list = []
    flood = [job("flood", f"f{i}", answers) for i in range(8)]
    adm.submit(flood)
    assert (adm.inflight, adm.has_capacity("flood"), adm.has_capacity("hook")) == (8, False, True)
    assert [j.row.record_id for j in at_writer] == ["f0", "f1"]  # the window: two at the writer
    adm.submit([job("hook", "h0", answers)])
    assert adm.has_capacity("flood") is False  # 9 held of 8, and the flooder holds more than half
    adm.settle([(j, None, None) for j in at_writer[:2]])
    assert [j.row.record_id for j in at_writer[2:]] == ["h0", "f2"]  # the hook's record is taken first
    adm.settle([(j, None, Refusal("unavailable", "x")) for j in at_writer[2:]])
    assert adm.inflight == 5 and adm.held == {"flood": 5} and adm.at_writer == 2
    assert answers[:2] == [("f0", "ok"), ("f1", "ok")] and ("h0", "unavailable") in answers
