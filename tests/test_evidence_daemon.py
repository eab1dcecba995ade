"""The daemon signs checkpoints while it serves and at stop, and its witness keeps them (docs/chain.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.chain_tamper import STANDALONE
from support.daemon import Daemon, append_many, wait_for

from agentwatch.evidence.audit import verify_store
from agentwatch.evidence.checkpoints import read_state
from agentwatch.evidence.witness import DirectoryWitness


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True, timeout=60)


def test_checkpoints_while_serving_and_at_stop(tmp_path):
    state = Path(os.environ["XDG_STATE_HOME"]) / "agentwatch"
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--checkpoint-interval", "0.1"]).start()
    try:
        seqs = append_many(d, 20, prefix="cp")
        store_id = bytes.fromhex(json.loads(_cli("key", "--store", str(d.store), "--json").stdout)["store_id"])
        wait_for(lambda: (s := read_state(store_id, state)) is not None and s.size == seqs[-1],
                 "a checkpoint covering the 20 rows while the daemon serves")
        health = d.health()["signed_checkpoints"]
        assert (health["state"], health["last_size"]) == ("ok", seqs[-1])
    finally:
        assert d.stop() == 0, d.output()
    head = len(d.rows())
    assert head == seqs[-1] + 1  # the stop attestation
    final = read_state(store_id, state)
    assert final.size == head  # the stop checkpoint covers it
    witness = DirectoryWitness(state / "witness")
    assert witness.held_size(f"agentwatch.invalid/{store_id.hex()}") == head
    assert final.witnesses == {str(state / "witness"): head}
    result = verify_store(d.store)
    assert (result.ok, [c["size"] for c in result.evidence.checkpoints]) == (True, [head, head])

    key = _cli("key", "--store", str(d.store)).stdout.strip()
    bundle = tmp_path / "b.json"
    proved = _cli("prove", "3", "--store", str(d.store), "-o", str(bundle))
    assert proved.returncode == 0, proved.stderr
    checked = _cli("verify-bundle", str(bundle), "--key", key)
    assert (checked.returncode, checked.stdout) == (0, f"ok: seq 3 is in the signed tree of {head} rows\n")
    # The witness cosigned the checkpoint the bundle carries; its key is public in the witness dir.
    cosigner = state / "witness" / "cosigner.pub"
    checked = _cli("verify-bundle", str(bundle), "--key", key, "--witness-key", str(cosigner))
    assert (checked.returncode, checked.stdout) == (0, f"ok: seq 3 is in the signed tree of {head} rows\n")
    alone = subprocess.run([sys.executable, "-I", "-S", str(STANDALONE), "--bundle", str(bundle), "--key", key,
                            "--witness-key", str(cosigner)], capture_output=True, text=True)
    assert (alone.returncode, alone.stdout) == (0, f"ok: seq 3 is in the signed tree of {head} rows\n")
    shown = json.loads(_cli("checkpoint", "--store", str(d.store), "--json").stdout)
    assert (shown["size"], shown["origin"]) == (head, f"agentwatch.invalid/{store_id.hex()}")


def test_no_checkpoints_when_turned_off(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--no-checkpoints"]).start()
    try:
        append_many(d, 3)
        assert d.health()["signed_checkpoints"]["state"] == "off"
    finally:
        assert d.stop() == 0, d.output()
    shown = _cli("checkpoint", "--store", str(d.store))
    assert shown.returncode == 1
    assert "no checkpoint has been signed" in shown.stderr


def test_a_checkpoint_that_cannot_be_signed_degrades_health():
    from agentwatch.daemon import health

    doc = {"writer": {"state": "ok"}, "signed_checkpoints": {"state": "failing", "last_error": "CheckpointError: x"}}
    assert health.assess(doc) == ("degraded", ["checkpoints are not being signed: CheckpointError: x"])
    doc["signed_checkpoints"] = {"state": "off", "last_error": None}
    assert health.assess(doc) == ("recording", [])


def test_import_signs_the_rows_it_added(tmp_path):
    store = tmp_path / "s.db"
    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps({"hook_event_name": "Stop", "session_id": "s", "n": i}) + "\n" for i in range(4)))
    done = _cli("import", "--store", str(store), "--harness", "claude-code", str(lines))
    assert done.returncode == 0, done.stderr
    assert "agentwatch: signed checkpoint 4\n" in done.stderr
    result = verify_store(store)
    assert (result.ok, [c["size"] for c in result.evidence.checkpoints]) == (True, [4, 4])
