"""The store disappears or is replaced (docs/reliability.md, "Store identity").

Class 1 of the adversarial pass: an attacker with the user's rights deletes the store under a
running daemon, replaces it while the daemon is stopped, or deletes its WAL after a SIGKILL.
Each case must end with the daemon refusing to record into the wrong file, every command
naming what happened (`replaced`, `rolled_back`, each with its exit code), and `serve`
refusing the path until `agentwatch init --new-store` accepts it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest
from support.daemon import Daemon, append_many, envelope, wait_for

from agentwatch.evidence.audit import verify_store
from agentwatch.store import db
from agentwatch.store.append import Append, Store, StoreIntegrityError
from agentwatch.store.chain import canonical_json
from agentwatch.verify import known_stores

pytestmark = pytest.mark.usefixtures("reap_daemons")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True,
                          timeout=60)


def rows(n: int, tag: str = "r") -> list[Append]:
    return [Append(f"{tag}-{i}", "event", canonical_json({"harness": "claude-code", "n": i})) for i in range(n)]


def remove_store_files(path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


# -- the store library ---------------------------------------------------------------------


def test_a_new_stores_identity_is_in_the_main_file_right_after_creation(tmp_path):
    """Without its WAL, a just-created store still has its schema and store_id."""
    store = Store(tmp_path / "store.db")
    try:
        shutil.copyfile(tmp_path / "store.db", tmp_path / "main-only.db")  # the main file, no WAL
        conn = db.open_reader(tmp_path / "main-only.db")
        try:
            assert db.store_id(conn) == store.store_id
        finally:
            conn.close()
    finally:
        store.close()


@pytest.mark.parametrize("deleted", [("",), ("-wal",), ("-shm",), ("", "-wal", "-shm")])
def test_an_append_into_a_deleted_file_is_not_acknowledged(tmp_path, deleted):
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append(rows(3, "before"))
        for suffix in deleted:
            os.unlink(f"{path}{suffix}")
        assert store.files_changed() is not None
        with pytest.raises(StoreIntegrityError) as raised:
            store.append(rows(2, "after"))
        assert raised.value.kind == "replaced"


def test_a_store_swapped_at_the_path_is_not_acknowledged(tmp_path):
    path = tmp_path / "store.db"
    Store(tmp_path / "other.db").close()
    with Store(path) as store:
        store.append(rows(1, "before"))
        os.replace(tmp_path / "other.db", path)
        with pytest.raises(StoreIntegrityError, match="replaced by another file"):
            store.append(rows(1, "after"))


# -- the daemon ------------------------------------------------------------------------------


def test_deleting_the_store_under_the_daemon_stops_it_and_the_path_is_refused_until_accepted(tmp_path):
    d = Daemon(tmp_path, verify_interval=0.2).start()
    acked = append_many(d, 5, "before")
    remove_store_files(d.store)
    # The very next health already says so: nothing is committed in between.
    health = d.health()
    assert (health["status"], health["writer"]["state"]) == ("stopped", "stopped")
    assert "was deleted" in health["writer"]["stopped_reason"]
    reply = d.request(envelope("after-delete"))
    assert (reply["ok"], reply["error"]) == (False, "unavailable")
    # The writer still held the deleted files: what it acknowledged from them is copied out.
    copy = wait_for(lambda: d.health()["writer"]["salvaged_to"], "the copy of the deleted store")
    conn = db.open_reader(copy)
    try:
        saved = dict(conn.execute("SELECT record_id, seq FROM records WHERE kind = 'event'"))
    finally:
        conn.close()
    assert saved == {f"before-{i}": seq for i, seq in enumerate(acked)}
    assert verify_store(copy, update_anchor=False).ok
    out = cli("health", "--socket", str(d.socket))
    assert out.returncode == 3 and "the writer stopped" in out.stderr
    assert d.stop() == 3  # the stop attestation cannot be written either
    assert not d.store.exists()

    refused = Daemon(tmp_path, verify_interval=0.2)
    refused.spawn()
    assert refused.wait() == 4
    assert "replaced" in refused.output() and "init --new-store" in refused.output()
    assert not d.store.exists()  # nothing created at the path
    verify = cli("verify", "--store", str(d.store), "--json")
    assert verify.returncode == 4, verify.stderr

    accepted = cli("init", "--store", str(d.store), "--new-store", "--json")
    assert accepted.returncode == 0, accepted.stderr
    doc = json.loads(accepted.stdout)
    assert doc["status"] == "accepted"
    (lost,) = doc["accepted"]["findings"]
    assert (lost["kind"], lost["seq"], lost["through_seq"]) == ("replaced", 1, max(acked) + 0)
    assert "accepted store" in accepted.stderr  # the choice is logged
    assert [c["path"] for c in doc["accepted"]["salvaged"]] == [copy]

    again = Daemon(tmp_path, verify_interval=0.2).start()
    try:
        assert again.request(envelope("in-the-new-store"))["ok"] is True
    finally:
        assert again.stop() == 0
    assert cli("verify", "--store", str(d.store)).returncode == 0


def test_a_store_replaced_while_stopped_is_reported_by_serve_verify_and_reconcile(tmp_path):
    d = Daemon(tmp_path, verify_interval=0).start()
    append_many(d, 4, "old")
    assert d.stop() == 0
    head = known_stores.load(d.store).head_seq
    assert head == 6  # start, 4 events, stop
    Store(tmp_path / "fresh.db").close()
    remove_store_files(d.store)
    os.replace(tmp_path / "fresh.db", d.store)

    result = verify_store(d.store)
    # Named twice: by the record of the path (verify/known_stores.py) and by the checkpoint the
    # daemon signed at stop for the store that was there (verify/evidence.py).
    assert [f.kind for f in result.findings] == ["replaced", "replaced"]
    assert result.exit_code == 4
    verify = cli("verify", "--store", str(d.store), "--json")
    assert verify.returncode == 4
    assert [f["kind"] for f in json.loads(verify.stdout)["findings"]] == ["replaced", "replaced"]
    reconcile = cli("reconcile", "--store", str(d.store), "--json")
    assert reconcile.returncode == 4
    assert json.loads(reconcile.stdout)["predicates"]["store_identity"]["ok"] is False

    refused = Daemon(tmp_path, verify_interval=0)
    refused.spawn()
    assert refused.wait() == 4
    assert cli("init", "--store", str(d.store)).returncode == 4  # no choice made: still refused
    assert cli("init", "--store", str(d.store), "--new-store").returncode == 0
    d2 = Daemon(tmp_path, verify_interval=0).start()
    assert d2.stop() == 0
    assert cli("verify", "--store", str(d.store)).returncode == 0


def test_a_wal_deleted_after_sigkill_is_rolled_back_and_named(tmp_path):
    d = Daemon(tmp_path, verify_interval=0).start()
    append_many(d, 3, "anchored")
    assert verify_store(d.store).anchor.status == "created"  # an anchor beyond what survives
    acked = append_many(d, 20, "in-wal")
    d.send_signal(signal.SIGKILL)
    d.wait()
    os.unlink(f"{d.store}-wal")

    result = verify_store(d.store, full=True)
    kinds = [f.kind for f in result.findings]
    assert kinds == ["rolled_back", "truncated"], result.findings  # the second from the anchor
    assert result.exit_code == 5
    finding = result.findings[0]
    assert finding.seq <= min(acked)  # every acknowledged row that is gone is named by it
    assert f"through seq {max(acked)}" in finding.detail
    assert cli("verify", "--store", str(d.store), "--full").returncode == 5
    assert cli("reconcile", "--store", str(d.store)).returncode == 5
    refused = Daemon(tmp_path, verify_interval=0)
    refused.spawn()
    assert refused.wait() == 5
    assert "rolled_back" in refused.output()

    # The operator accepts the rolled-back store: the anchor beyond its head is moved aside
    # (named in the history), so the accepted store verifies and serves without a finding.
    accepted = cli("init", "--store", str(d.store), "--new-store", "--json")
    assert accepted.returncode == 0, accepted.stderr
    entry = json.loads(accepted.stdout)["accepted"]
    assert entry["anchor_superseded"]["seq"] > finding.seq - 1
    assert cli("verify", "--store", str(d.store)).returncode == 0
    again = Daemon(tmp_path, verify_interval=0.1).start()
    try:
        assert again.request(envelope("after-accept"))["ok"] is True
        wait_for(lambda: again.health()["sweeper"]["state"] == "ok", "the sweeper's first round")
        assert again.health()["status"] == "recording"
    finally:
        assert again.stop() == 0
