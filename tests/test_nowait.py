"""No hook waits on another hook's work (issue #25): real daemons, real hook processes, real flooders.

- A megabyte payload being normalized does not delay a small hook: normalization runs in
  worker processes, so the hook is acknowledged within its own budget, not spooled.
- A worker killed with records in hand costs none of them: each is stored exactly once,
  acknowledged or spooled by its hook and drained later.
- Eight flooding clients (some never reading their acks) do not starve real hooks: every
  hook is acknowledged, because capacity is shared per peer and taken in turn.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import flood
from support.daemon import Daemon, wait_for
from support.hook_fakes import hook_cmd

# Serial (`make test` runs this file alone, after the parallel phase):
# it times hooks beside flooders and beside stopped (SIGSTOP) workers: what it measures is
# that no hook waits, which only holds when no other test shares the 2 cores.
pytestmark = pytest.mark.serial

FLOOD = Path(flood.__file__)


def hook_payload(i: int) -> bytes:
    return json.dumps({"hook_event_name": "PreToolUse", "session_id": "real-session", "tool_name": "Bash",
                       "tool_input": {"command": f"echo {i}"}, "cwd": "/tmp"}).encode()


def hook_env(d: Daemon, ledger: Path, timeout_ms: int | None = None) -> dict:
    env = dict(os.environ, AGENTWATCH_SOCKET=str(d.socket), AGENTWATCH_SPOOL=str(d.spool),
               AGENTWATCH_LEDGER=str(ledger))
    if timeout_ms is not None:
        env["AGENTWATCH_HOOK_TIMEOUT_MS"] = str(timeout_ms)
    return env


def run_hook(env: dict, i: int) -> None:
    subprocess.run(hook_cmd("claude-code"), input=hook_payload(i), env=env, check=True, timeout=60,
                   capture_output=True)


def ledger_lines(path: Path) -> list[dict]:
    return [json.loads(raw) for raw in path.read_text().splitlines()] if path.exists() else []


def stored(d: Daemon) -> dict[str, list[dict]]:
    """record_id -> its event rows (a list, so a double shows)."""
    out: dict[str, list[dict]] = {}
    for row in d.rows("event"):
        out.setdefault(row["record_id"], []).append(row)
    return out


def start_flooders(d: Daemon, root: Path, modes: list[str]) -> list[subprocess.Popen]:
    procs = []
    for i, mode in enumerate(modes):
        procs.append(subprocess.Popen([sys.executable, str(FLOOD), str(d.socket), str(root / f"flood{i}"), mode],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def stop_flooders(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def flooder_acked(root: Path, n: int) -> list[str]:
    return [rid for i in range(n) for rid in (root / f"flood{i}.acked").read_text().split()]


def test_a_large_payload_in_a_worker_does_not_delay_a_small_hook(tmp_path):
    d = Daemon(tmp_path / "d").start()
    ledger = tmp_path / "ledger.jsonl"
    try:
        env = hook_env(d, ledger)
        big = [flood.large(f"big-{i}") for i in range(4)]
        with d.client() as client:
            for i in range(6):
                client.send(big[i % 4])  # the next megabyte is on its way before the last is answered
                time.sleep(0.1)  # the hook goes 0.1 s behind it, as in the report
                run_hook(env, i)
            replies = [client.reply() for _ in range(6)]
        assert [r["ok"] for r in replies] == [True] * 6
        hooks = ledger_lines(ledger)
        assert [h["outcome"] for h in hooks] == ["acked"] * 6, hooks
        rows = stored(d)
        assert sorted(len(rows[h["record_id"]]) for h in hooks) == [1] * 6
        assert [rows[h["record_id"]][0]["payload"]["client"]["delivery"] for h in hooks] == ["socket"] * 6
        assert d.health()["normalizing"]["crashes"] == 0
    finally:
        assert d.stop() == 0, d.output()


def test_the_event_loop_answers_pings_while_workers_normalize_megabytes(tmp_path):
    # Workers stopped: records wait in their hands, and the loop still answers at once.
    d = Daemon(tmp_path / "d").start()
    try:
        pids = d.health()["normalizing"]["pids"]
        assert len(pids) == 2
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            with d.client() as big, d.client() as ping:
                big.send(flood.large("held-0") + flood.large("held-1"))
                t0 = time.monotonic()
                assert ping.request({"op": "ping"})["ok"] is True
                assert time.monotonic() - t0 < 1.0  # the loop is free: nothing of the megabytes runs on it
                assert d.health()["normalizing"]["held"] == 2
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        wait_for(lambda: {"held-0", "held-1"} <= set(stored(d)), "both records to be stored")
    finally:
        assert d.stop() == 0, d.output()


def test_a_worker_killed_with_records_in_hand_loses_and_doubles_none(tmp_path):
    d = Daemon(tmp_path / "d").start()
    ledger = tmp_path / "ledger.jsonl"
    try:
        pids = d.health()["normalizing"]["pids"]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)  # every record handed out now stays in a worker's hands
        env = hook_env(d, ledger, timeout_ms=3000)
        hooks = [subprocess.Popen(hook_cmd("claude-code"), stdin=subprocess.PIPE, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(6)]
        for i, h in enumerate(hooks):
            h.stdin.write(hook_payload(i))
            h.stdin.close()
        wait_for(lambda: d.health()["normalizing"]["held"] == 6, "the six records in the workers' hands")
        os.kill(pids[0], signal.SIGKILL)
        os.kill(pids[1], signal.SIGCONT)
        for h in hooks:
            assert h.wait(60) == 0
        outcomes = ledger_lines(ledger)
        assert len(outcomes) == 6
        spooled = [o for o in outcomes if o["outcome"] == "spooled"]
        acked = [o for o in outcomes if o["outcome"] == "acked"]
        assert len(spooled) + len(acked) == 6 and len(spooled) >= 1  # the killed worker held some
        assert {o["reason"] for o in spooled} == {"unavailable"}
        health = d.health()["normalizing"]
        assert (health["crashes"], health["records_refused_by_crash"]) == (1, len(spooled))
        ids = [o["record_id"] for o in outcomes]
        wait_for(lambda: set(ids) <= set(stored(d)), "the spooled records to be drained")
        wait_for(lambda: d.health()["normalizing"]["alive"] == 2, "the killed worker to be replaced")
        rows = stored(d)
        assert [len(rows[rid]) for rid in ids] == [1] * 6
        delivery = {o["record_id"]: rows[o["record_id"]][0]["payload"]["client"]["delivery"] for o in outcomes}
        assert sorted(delivery[o["record_id"]] for o in spooled) == ["spool"] * len(spooled)
        assert sorted(delivery[o["record_id"]] for o in acked) == ["socket"] * len(acked)
    finally:
        assert d.stop() == 0, d.output()


@pytest.mark.parametrize("hooks", [12])
def test_eight_flooders_do_not_starve_real_hooks(tmp_path, hooks):
    d = Daemon(tmp_path / "d").start()
    ledger = tmp_path / "ledger.jsonl"
    modes = ["read"] * 4 + ["ignore"] * 4  # half never read an ack
    procs = start_flooders(d, tmp_path, modes)
    try:
        wait_for(lambda: d.health()["connections_open"] >= 8, "the flooders to connect")
        wait_for(lambda: d.health()["writer"]["rows_committed"] >= 2000, "the flood to be under way")
        env = hook_env(d, ledger)
        for i in range(hooks):
            run_hook(env, i)
        assert all(p.poll() is None for p in procs), "a flooder stopped before the hooks ran"
        outcomes = ledger_lines(ledger)
        assert [o["outcome"] for o in outcomes] == ["acked"] * hooks, outcomes
    finally:
        stop_flooders(procs)
        assert d.stop() == 0, d.output()
    rows = stored(d)
    assert [len(rows[o["record_id"]]) for o in outcomes] == [1] * hooks
    acked = flooder_acked(tmp_path, len(modes))
    assert [len(rows.get(rid, ())) for rid in acked] == [1] * len(acked)


def hooks_beside_flooders_and_megabytes(root: Path, seconds: float) -> dict:
    """Real hooks, one after another, beside 8 flooders and a stream of ~1 MiB payloads for `seconds`;
    then every record acknowledged or spooled is stored exactly once. Returns the figures."""
    d = Daemon(root / "d").start()
    ledger = root / "ledger.jsonl"
    modes = ["read"] * 4 + ["ignore"] * 4 + ["large"]
    procs = start_flooders(d, root, modes)
    try:
        wait_for(lambda: d.health()["connections_open"] >= len(modes), "the flooders to connect")
        env = hook_env(d, ledger)
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            run_hook(env, i)
            i += 1
        assert all(p.poll() is None for p in procs), "a flooder stopped early"
    finally:
        stop_flooders(procs)
    try:
        outcomes = ledger_lines(ledger)
        ids = [o["record_id"] for o in outcomes]
        wait_for(lambda: set(ids) <= set(stored(d)), "every hook's record to be stored (spooled ones drained)", 120)
        health = d.health()
    finally:
        assert d.stop() == 0, d.output()
    rows = stored(d)
    acked = flooder_acked(root, len(modes))
    assert [len(rows[rid]) for rid in ids] == [1] * len(ids)
    assert [len(rows.get(rid, ())) for rid in acked] == [1] * len(acked)
    large = [rid for rid in acked if rid.startswith(str(root / f"flood{len(modes) - 1}"))]
    assert large and health["normalizing"]["crashes"] == 0
    return {"hooks": len(ids), "spooled": sum(o["outcome"] != "acked" for o in outcomes),
            "flooder_acks": len(acked), "megabytes": len(large)}


def test_hooks_beside_flooders_and_megabytes_quick(tmp_path):
    # Exactly once is the gate here; that no hook spools is the aim, measured with its baseline by
    # tests/test_bench_nowait.py (on a shared machine a hook can miss its budget for want of a core).
    figures = hooks_beside_flooders_and_megabytes(tmp_path, 8.0)
    print(f"\n8 s of real hooks beside 8 flooders and ~1 MiB payloads: {figures}")


@pytest.mark.soak
def test_hooks_beside_flooders_and_megabytes_soak(tmp_path):
    seconds = float(os.environ.get("AGENTWATCH_SOAK_NOWAIT_S", "600"))
    figures = hooks_beside_flooders_and_megabytes(tmp_path, seconds)
    print(f"\n{seconds:g} s of real hooks beside 8 flooders and ~1 MiB payloads: {figures}")
