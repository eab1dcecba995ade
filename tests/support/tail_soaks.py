"""The two live-tail soaks, sized by the caller: the quick tests run them small, soak/ runs them long.

Each owns its store, socket, spool, consumer state and sender ledger under `root`,
counts by kind (the daemon's attestation rows are counted apart), and gates on
exact equality (docs/architecture.md, lesson 2).

- `drop_consumer`: events stream through the live tail to a consumer process
  (`agentwatch tail -f --consumer NAME --json --kind event`) that is SIGKILLed at
  random points and restarted from its cursor while senders keep appending.
- `crash`: real hook client processes send a steady stream while the daemon is
  SIGKILLed and restarted; the restarted daemon drains the spool.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import agentwatch
from agentwatch.readers.consumers import consumers_dir
from agentwatch.store import db
from support.daemon import Daemon, envelope, line, wait_for

HOOK = Path(agentwatch.__file__).parent / "hook.py"


def _env(root: Path, **extra: str) -> dict:
    env = dict(os.environ, AGENTWATCH_STATE_DIR=str(root / "state"), **extra)
    env.pop("AGENTWATCH_CONFIG", None)
    return env


def _reconcile(d: Daemon, env: dict, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "agentwatch.cli", "reconcile", "--store", str(d.store), "--json", *args],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _report(title: str, rows: dict) -> None:
    width = max(map(len, rows))
    print(f"\n== {title}")
    for key, value in rows.items():
        print(f"  {key:<{width}}  {value}")


class _Sender(threading.Thread):
    """Appends `total` events over one connection, pipelined in small groups, and writes the ledger."""

    def __init__(self, d: Daemon, ledger: Path, total: int, rate: float):
        super().__init__(name="soak-sender")
        self.d, self.ledger, self.total, self.rate = d, ledger, total, rate
        self.acked = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            group = 20
            start = time.monotonic()
            with self.d.client() as client, open(self.ledger, "a", encoding="utf-8") as ledger:
                sent = 0
                while sent < self.total:
                    n = min(group, self.total - sent)
                    envs = [envelope(n_in_soak=sent + i) for i in range(n)]
                    client.send(b"".join(line(e) for e in envs))
                    for env in envs:
                        reply = client.reply()
                        ok = reply.get("ok") is True
                        ledger.write(json.dumps({
                            "record_id": env["record_id"], "outcome": "acked" if ok else "failed",
                            "seq": reply.get("seq") if ok else None, "reason": None if ok else reply.get("error"),
                        }) + "\n")  # fmt: skip
                        self.acked += ok
                    sent += n
                    pause = start + sent / self.rate - time.monotonic()  # a monotonic schedule
                    if pause > 0:
                        time.sleep(pause)
        except BaseException as exc:
            self.error = exc


class _ConsumerProcess:
    """One run of `agentwatch tail -f --consumer`, its stdout read by a thread, its stderr in a file.

    It runs with faulthandler on: a run that does not exit after its signal is sent
    SIGABRT, and the stack of every thread goes into the failure message.
    """

    def __init__(self, d: Daemon, name: str, env: dict, seqs: list[int]):
        argv = [sys.executable, "-X", "faulthandler", "-m", "agentwatch.cli", "tail", "-f", "--consumer", name,
                "--json", "--kind", "event", "--store", str(d.store), "--socket", str(d.socket)]  # fmt: skip
        # A file, not a pipe: nobody reads stderr while the consumer runs, and a full pipe would block it.
        self.stderr_path = d.root / f"consumer-{uuid.uuid4().hex[:8]}.stderr"
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=stderr)
        self.torn = 0
        self.lines = 0  # read from this run
        self._thread = threading.Thread(target=self._read, args=(seqs,), daemon=True)
        self._thread.start()

    def _read(self, seqs: list[int]) -> None:
        for raw in self.proc.stdout:
            if not raw.endswith(b"\n"):
                self.torn += 1  # killed mid-write: the record was not acknowledged and comes again
                continue
            seqs.append(json.loads(raw)["seq"])
            self.lines += 1

    def finish(self, sig: int, deadline_s: float = 30) -> int:
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(deadline_s)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack to stderr
            self.proc.wait(deadline_s)
            self.proc.stdout.close()
            raise AssertionError(f"consumer still running {deadline_s} s after signal {sig}; its threads:\n"
                                 + self.stderr_path.read_text("utf-8", "replace")) from None
        self._thread.join(deadline_s)
        self.stderr = self.stderr_path.read_text("utf-8", "replace")
        self.proc.stdout.close()
        return code


def drop_consumer(root: Path, *, events: int, kills: int, rate: float = 1500.0, seed: int | None = None) -> dict:
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    d = Daemon(root / "daemon", attest_interval=0.5).start()
    env = _env(root)
    ledger = root / "ledger.jsonl"
    name = "soak-consumer"
    seqs: list[int] = []  # every seq read from the consumer's stdout, in order, over all its runs
    torn = mid_stream = 0
    consumer = None
    try:
        consumer = _ConsumerProcess(d, name, env, seqs)
        sender = _Sender(d, ledger, events, rate)
        sender.start()
        gap = events / rate / (kills + 1)
        for _ in range(kills):
            # Kill mid-stream: once this run has printed something, at a random point after that.
            wait_for(lambda c=consumer: c.lines > 0 or not sender.is_alive(), "the consumer to print")
            mid_stream += consumer.lines > 0 and sender.is_alive()
            time.sleep(rng.uniform(0.0, gap))
            assert consumer.finish(signal.SIGKILL) == -signal.SIGKILL
            torn += consumer.torn
            time.sleep(rng.uniform(0.0, 0.2))  # the store keeps ingesting while it is down
            consumer = _ConsumerProcess(d, name, env, seqs)
        sender.join()
        assert sender.error is None, sender.error
        conn = db.open_reader(d.store)
        store_id = db.store_id(conn)
        conn.close()
        cursor_path = consumers_dir(store_id, root / "state") / f"{name}.cursor.json"
        last_event = d.rows("event")[-1]["seq"]
        wait_for(lambda: cursor_path.exists() and json.loads(cursor_path.read_text())["acked_seq"] >= last_event,
                 "the consumer to acknowledge the last event", deadline_s=120)
        # Ctrl-C is the documented interrupt exit (130, with one line saying what was acknowledged)
        # once the consumer runs its loop; a SIGINT that lands while the interpreter is still
        # importing kills it by signal (-2), so wait until it is subscribed.
        wait_for(lambda: (d.health().get("subscriptions") or {}).get("live") == 1 == d.health()["subscriptions"]["open"],
                 "the last consumer run to be subscribed")
        code = consumer.finish(signal.SIGINT)
        torn += consumer.torn
        assert code == 130, f"consumer exited {code} on SIGINT: {consumer.stderr}"
    finally:
        if consumer is not None and consumer.proc.poll() is None:
            consumer.finish(signal.SIGKILL)
        assert d.stop() == 0, d.output()
    result = _reconcile(d, env, "--consumer", name, "--ledger", str(ledger))
    counts = result["counts"]
    stored = {r["seq"] for r in d.rows("event")}
    distinct = set(seqs)
    report = {
        "seed": seed, "events sent": events, "acked by daemon": sender.acked, "consumer SIGKILLs": kills,
        "of them while senders were appending": mid_stream,
        "stored by kind": counts["by_kind"], "lines read from consumer stdout": len(seqs),
        "distinct seqs read": len(distinct), "seqs read more than once": len(seqs) - len(distinct),
        "torn lines at kills": torn, "ledger attempted": counts["attempted"], "acknowledged": counts["acknowledged"],
        "missing": counts["missing"], "ack_seq_mismatch": counts["ack_seq_mismatch"],
        "delivered (consumer log)": counts["delivered"], "records in consumer range": counts["records_in_range"],
        "redelivered (consumer log)": counts["redelivered"], "undelivered": counts["undelivered"],
        "duplicated in store": counts["duplicated"], "within_bounds": result["within_bounds"],
    }  # fmt: skip
    _report(f"drop-consumer reconciliation ({events} events, {kills} consumer kills)", report)
    assert result["within_bounds"] is True, result["predicates"]
    assert counts["stored"] == counts["attempted"] == counts["acknowledged"] == events
    assert counts["delivered"] == counts["records_in_range"] == counts["stored"]
    assert distinct == stored and len(distinct) == events
    return report


def _hook(env: dict, n: int) -> None:
    payload = json.dumps({"hook_event_name": "PreToolUse", "session_id": "crash-soak", "tool_name": "Bash",
                          "tool_input": {"command": f"echo {n}"}})  # fmt: skip
    subprocess.run([sys.executable, "-I", "-S", str(HOOK), "claude-code"], input=payload.encode(), env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=True)  # fmt: skip


def _spool_files(d: Daemon, *subdirs: str) -> int:
    return sum(1 for sub in subdirs if (d.spool / sub).is_dir() for _ in (d.spool / sub).iterdir())


def crash(root: Path, *, events: int, kills: int, workers: int = 4, seed: int | None = None) -> dict:
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    d = Daemon(root / "daemon", attest_interval=0.5).start()
    ledger = root / "ledger.jsonl"
    env = _env(root, AGENTWATCH_SOCKET=str(d.socket), AGENTWATCH_SPOOL=str(d.spool), AGENTWATCH_LEDGER=str(ledger))
    counter = iter(range(events))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                _hook(env, n)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    try:
        for t in threads:
            t.start()
        # Kill at random points while hooks run: a rough schedule over the expected duration.
        expected = events / (workers * 40.0)
        for _ in range(kills):
            time.sleep(rng.uniform(0.1, 1.0) * expected / kills)
            d.send_signal(signal.SIGKILL)
            d.wait()
            time.sleep(rng.uniform(0.05, 0.4))  # hooks spool meanwhile
            d.start()
        for t in threads:
            t.join()
        assert not errors, errors
        wait_for(lambda: _spool_files(d, "new", "tmp") == 0 and d.health()["inflight"] == 0,
                 "the spool to drain", deadline_s=120)
        health = d.health()
    finally:
        assert d.stop() == 0, d.output()
    result = _reconcile(d, _env(root), "--ledger", str(ledger))
    counts = result["counts"]
    rows = {r["record_id"]: r["seq"] for r in d.rows("event")}
    acked = {}
    for raw in ledger.read_text().splitlines():
        entry = json.loads(raw)
        if entry["outcome"] == "acked":
            acked[entry["record_id"]] = entry["seq"]
    wrong_seq = sum(rows.get(rid) != seq for rid, seq in acked.items())
    leftover = _spool_files(d, "new", "tmp", "bad")
    report = {
        "seed": seed, "hook invocations": events, "daemon SIGKILLs": kills,
        "ledger lines": counts["attempts"], "ledger attempted (record_ids)": counts["attempted"],
        "acked": counts["acknowledged"], "spooled": counts["spooled"], "failed": counts["failed"],
        "spool reasons": counts["spool_reasons"], "stored by kind": counts["by_kind"],
        "stored from spool": counts["replayed_from_spool"], "acked at another seq": wrong_seq,
        "missing": counts["missing"], "duplicated in store": counts["duplicated"],
        "spool files left": leftover, "last daemon's spool duplicates": health["counters"]["spool_duplicates"],
        "chain_ok": result["predicates"]["chain_ok"]["ok"], "within_bounds": result["within_bounds"],
    }  # fmt: skip
    _report(f"crash soak ({events} hook events, {kills} daemon kills)", report)
    assert result["within_bounds"] is True, result["predicates"]
    assert counts["attempts"] == counts["attempted"] == counts["stored"] == len(rows) == events
    assert counts["acknowledged"] + counts["spooled"] == events and counts["failed"] == 0
    assert wrong_seq == 0 and counts["missing"] == 0 and counts["duplicated"] == 0 and leftover == 0
    return report


__all__ = ["drop_consumer", "crash", "uuid"]
