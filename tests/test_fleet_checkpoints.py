"""The shipper sends the store's signed checkpoints after the rows; the fleet server witnesses them.

Against a real PostgreSQL (tests/support/postgres.py), each test in a database of its own. The
server keeps a checkpoint only when its own copy of the rows reproduces the root (docs/fleet.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.daemon import Daemon, append_many
from test_fleet_ship import central_rows, fill, local_rows, store_id_of
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.daemon import health
from agentwatch.evidence import checkpoints
from agentwatch.evidence.note import Checkpoint, split_note
from agentwatch.fleet import ship

runner = CliRunner()


def ship_once(fleet, store, state_dir) -> tuple[int, dict]:
    result = runner.invoke(app, ["ship", "--to", fleet.ship_url, "--store", str(store), "--host", "dev-1",
                                 "--once", "--json"], env={"AGENTWATCH_CHECKPOINT_DIR": str(state_dir)})
    return result.exit_code, json.loads(result.stdout)


def held(fleet) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT store_id, tree_size, root_hash, origin, note FROM agentwatch.checkpoints"
                            " ORDER BY store_id, tree_size").fetchall()


def findings(fleet) -> list[tuple]:
    with fleet.reader() as conn:
        return conn.execute("SELECT kind, seq, host FROM agentwatch.findings ORDER BY id").fetchall()


def signed_row(store_id: str, note: str) -> tuple:
    cp = Checkpoint.parse(split_note(note)[0])
    return (store_id, cp.size, cp.root, cp.origin, note)


def test_ship_sends_each_signed_checkpoint_once_its_rows_are_on_the_server(fleet, tmp_path):
    store, state = tmp_path / "store.db", tmp_path / "state"
    store_id = store_id_of_filled(store, 12)
    first = checkpoints.sign_store(store, state_dir=state).note

    code, status = ship_once(fleet, store, state)
    assert code == 0
    assert (status["central_head_seq"], status["checkpoint_size"], status["checkpoints_sent"],
            status["checkpoint_refused"]) == (12, 12, 1, None)

    fill(store, 8, tag="later")
    second = checkpoints.sign_store(store, state_dir=state).note
    code, status = ship_once(fleet, store, state)
    assert code == 0
    assert (status["rows_shipped"], status["checkpoint_size"], status["checkpoints_sent"]) == (8, 20, 1)
    assert held(fleet) == [signed_row(store_id, first), signed_row(store_id, second)]

    # Shipping again sends the held checkpoint again: accepted as held, nothing new stored.
    code, status = ship_once(fleet, store, state)
    assert code == 0
    assert (status["rows_shipped"], status["checkpoint_size"], status["checkpoints_sent"]) == (0, 20, 1)
    assert held(fleet) == [signed_row(store_id, first), signed_row(store_id, second)]
    assert findings(fleet) == []
    assert central_rows(fleet, store_id) == local_rows(store)


def store_id_of_filled(store: Path, rows: int) -> str:
    fill(store, rows)
    return store_id_of(store)


def test_a_checkpoint_beyond_the_central_head_waits_for_its_rows(fleet, tmp_path):
    store, state = tmp_path / "store.db", tmp_path / "state"
    store_id = store_id_of_filled(store, 30)
    note = checkpoints.sign_store(store, state_dir=state).note
    shipper = ship.Shipper(store, fleet.ship_url, host="dev-1", batch_rows=10, state_dir=state)
    sizes = []
    real = shipper._send_checkpoint

    def watch():
        real()
        sizes.append((shipper.status.central_head_seq, shipper.status.checkpoint_size))

    shipper._send_checkpoint = watch
    status = shipper.run(follow=False)
    # After each batch it looks at the checkpoint; it sends it once the server holds all 30 rows.
    assert sizes == [(10, None), (20, None), (30, 30), (30, 30)]
    assert (status.checkpoints_sent, status.checkpoint_refused) == (1, None)
    assert held(fleet) == [signed_row(store_id, note)]


def test_a_forged_checkpoint_for_a_held_size_is_refused_and_leaves_a_finding(fleet, tmp_path):
    store, state = tmp_path / "store.db", tmp_path / "state"
    store_id = store_id_of_filled(store, 10)
    genuine = checkpoints.sign_store(store, state_dir=state).note
    assert ship_once(fleet, store, state)[0] == 0

    # Someone with the user's rights holds the signer key and rewrites the signer's record:
    # a second root for size 10, validly signed.
    raw_id = bytes.fromhex(store_id)
    signer = checkpoints.load_or_create_signer(raw_id, state)
    forged = signer.sign(Checkpoint(checkpoints.origin_for(raw_id), 10, bytes(range(32))).text())
    record = checkpoints.read_state(raw_id, state)
    record.note = forged
    checkpoints.write_state(record, state)

    for _ in range(2):  # refused each time; the server records the refusal once
        code, status = ship_once(fleet, store, state)
        assert code == 1
        assert status["checkpoint_refused"]["kind"] == "checkpoint_inconsistent"
        assert status["checkpoint_refused"]["size"] == 10
        assert (status["refused"], status["checkpoint_size"], status["checkpoints_sent"]) == (None, None, 0)
        assert status["last_error"].startswith("the fleet server refused checkpoint 10: checkpoint_inconsistent: ")
    assert findings(fleet) == [("checkpoint_inconsistent", 10, "dev-1")]
    assert held(fleet) == [signed_row(store_id, genuine)]

    # The rows still ship past a refused checkpoint.
    fill(store, 5, tag="later")
    code, status = ship_once(fleet, store, state)
    assert (code, status["rows_shipped"], status["central_head_seq"]) == (1, 5, 15)
    assert central_rows(fleet, store_id) == local_rows(store)


def test_a_refused_checkpoint_degrades_the_daemons_health():
    doc = {"writer": {"state": "ok"},
           "ship": {"state": "caught_up", "checkpoint_refused": {"kind": "checkpoint_inconsistent", "size": 10,
                                                                 "detail": "x"}}}
    assert health.assess(doc) == ("degraded", [
        "the fleet server refused checkpoint 10 of this store (checkpoint_inconsistent): x"])


def test_the_daemon_ships_its_stop_checkpoint(fleet, tmp_path):
    state = Path(os.environ["XDG_STATE_HOME"]) / "agentwatch"
    d = Daemon(tmp_path / "d", verify_interval=0,
               extra_args=["--ship-url", fleet.ship_url, "--checkpoint-interval", "0"]).start()
    try:
        append_many(d, 15, prefix="a")
    finally:
        assert d.stop() == 0, d.output()
    store_id = store_id_of(d.store)
    final = checkpoints.read_state(bytes.fromhex(store_id), state)
    head = len(local_rows(d.store))
    assert final.size == head  # signed at stop, over the stop attestation
    assert central_rows(fleet, store_id) == local_rows(d.store)
    # The only checkpoint signed (at stop) is the one the server holds: same size, root and text.
    ((held_id, size, root, origin, note),) = held(fleet)
    signed = Checkpoint.parse(split_note(final.note)[0])
    assert (held_id, size, root, origin) == (store_id, signed.size, signed.root, signed.origin)
    assert split_note(note)[0] == split_note(final.note)[0]
    assert findings(fleet) == []


# -- the fleet server as a witness with the notary's interface ------------------------------------


def tree_head(store) -> tuple[int, bytes]:
    import sqlite3

    from agentwatch.evidence.stored_tree import roots_at

    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        _, tree, _ = roots_at((h for (h,) in con.execute("SELECT hash FROM records ORDER BY seq")), [])
    finally:
        con.close()
    return tree.size, tree.root()


def ship_rows(fleet, store, tmp_path) -> None:
    # Rows only: the signer's record is looked for in an empty directory.
    status = ship.Shipper(store, fleet.ship_url, host="dev-1", state_dir=tmp_path / "none").run(follow=False)
    assert (status.refused, status.checkpoints_sent) == (None, 0)


def test_the_fleet_server_is_a_witness_for_the_notary(fleet, tmp_path):
    from agentwatch.evidence.note import Signer
    from agentwatch.fleet.witness import PgWitness

    store, state = tmp_path / "store.db", tmp_path / "state"
    store_id = store_id_of_filled(store, 10)
    raw_id = bytes.fromhex(store_id)
    origin = checkpoints.origin_for(raw_id)
    ship_rows(fleet, store, tmp_path)
    signer = checkpoints.load_or_create_signer(raw_id, state)
    witness = PgWitness(fleet.ship_url, host="dev-1", verifier=signer.verifier)
    assert witness.held_size(origin) == 0

    def sign():
        head = tree_head(store)
        return checkpoints.Notary(store, raw_id, lambda: head, state_dir=state, witnesses=[witness]).sign()

    first = sign()
    assert (first.checkpoint.size, first.witnesses) == (10, {witness.name: "accepted"})
    fill(store, 6, tag="later")
    ship_rows(fleet, store, tmp_path)
    second = sign()  # from the held size 10, with a consistency proof to 16
    assert (second.checkpoint.size, second.witnesses) == (16, {witness.name: "accepted"})
    assert witness.held_size(origin) == 16
    assert held(fleet) == [signed_row(store_id, first.note), signed_row(store_id, second.note)]

    # The C2SP answers: the size it holds, a proof that does not verify, a key it does not trust.
    assert witness.add_checkpoint(10, [], second.note).status == 409
    assert witness.add_checkpoint(10, [], second.note).body == "16\n"
    forged = signer.sign(Checkpoint(origin, 16, bytes(32)).text())
    assert witness.add_checkpoint(16, [], forged).status == 422
    stranger = Signer.generate(origin).sign(second.checkpoint.text())
    assert witness.add_checkpoint(16, [], stranger).status == 403
    # Rows not on the server yet: the rows come first.
    fill(store, 4, tag="unshipped")
    third = sign()
    assert third.witnesses[witness.name].startswith("refused (503): not_yet: ")
    # Another machine's host name for this store is a fork: refused, and a finding.
    other = PgWitness(fleet.ship_url, host="dev-2")
    assert other.held_size(origin) == 0
    reply = other.add_checkpoint(0, [], second.note)
    assert (reply.status, reply.reason.split(":")[0]) == (403, "fork")
    assert findings(fleet) == [("fork", 16, "dev-2")]
    assert held(fleet) == [signed_row(store_id, first.note), signed_row(store_id, second.note)]
