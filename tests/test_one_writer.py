"""One writer, and every row it did not write named (issue #24, docs/reliability.md "One writer").

Real `agentwatch serve` processes, the real CLI, real locks: the lock file deleted under a
running daemon no longer lets a second `serve`, `erase`, `init` or `import` in; a second
writer holding a lock file at the path stops the first within one commit group; rows
appended through the library beside the daemon, or while it was stopped, are named
`foreign_rows` by the daemon (a gap row in the same commit that chains past them), by
`health`, `verify` and `reconcile`, and never signed unnamed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import chain_tamper as t
from support.daemon import Daemon, append_many, envelope, wait_for

from agentwatch import platform_layer
from agentwatch.evidence.audit import verify_store
from agentwatch.evidence.checkpoints import CheckpointError, sign_store
from agentwatch.readers.reconcile import reconcile
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json, format_hash
from agentwatch.store.writerlock import AlreadyServing, LockFile, WriterLock, lock_path, writer_holds

pytestmark = pytest.mark.skipif(not platform_layer.writer_lock_supported(),
                                reason="the lock on the store file needs Linux's open-file-description locks")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True, timeout=60)


def forged(record_id: str) -> Append:
    return Append(record_id, "event", canonical_json({"schema": 1, "harness": "claude-code", "session_id": "forged",
                                                      "event": {"name": "PreToolUse", "kind": "tool_pre"}}))


def foreign_gaps(d: Daemon) -> list[tuple[int, int, int]]:
    return [(r["seq"], r["payload"]["first_seq"], r["payload"]["last_seq"]) for r in d.rows("gap")
            if r["payload"].get("reason") == "foreign_rows"]


def test_the_lock_file_deleted_lets_no_second_writer_in(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    try:
        append_many(d, 3, prefix="before")
        os.unlink(lock_path(d.store))
        assert writer_holds(d.store) is True  # the lock on the store file itself is still held
        second = Daemon(tmp_path / "d", store=d.store, socket_path=tmp_path / "other" / "s.sock", verify_interval=0)
        second.spawn()
        assert second.wait() == 3
        # Refused by the lock on the store file, or by the lock file the first daemon took again
        # when idle (within a second): whichever the second met first.
        assert "held by another writer" in second.output() or "already served" in second.output()
        for args in (["erase", "2", "--reason", "a test", "--store", str(d.store)],
                     ["init", "--store", str(d.store)],
                     ["import", "--store", str(d.store), str(tmp_path / "none.jsonl")]):
            (tmp_path / "none.jsonl").write_text(json.dumps({"hook_event_name": "Stop", "session_id": "s"}) + "\n")
            done = cli(*args)
            assert (args[0], done.returncode) == (args[0], 3), done.stderr
            assert "needs the store to itself" in done.stderr
        append_many(d, 2, prefix="after")  # the first daemon records on; its lock file is back
        health = d.health()
        assert (health["status"], health["writer"]["state"]) == ("recording", "ok")
        assert os.path.exists(lock_path(d.store))
    finally:
        assert d.stop() == 0
    assert d.count("event") == 5
    assert foreign_gaps(d) == []
    assert verify_store(d.store).exit_code == 0


def test_a_second_writer_stops_the_first_and_health_says_why(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    try:
        append_many(d, 2, prefix="before")
        os.unlink(lock_path(d.store))
        other = LockFile(lock_path(d.store), "store").acquire()  # another process's lock file at the path
        try:
            with d.client() as client:
                reply = client.append(envelope("refused"))
            assert (reply["ok"], reply["error"]) == (False, "unavailable")
            health = d.health()
            assert (health["status"], health["writer"]["state"]) == ("stopped", "stopped")
            assert health["writer"]["stopped_reason"].startswith("second_writer: ")
        finally:
            other.release()
    finally:
        d.stop()
    assert [r["record_id"] for r in d.rows("event")] == ["before-0", "before-1"]


def test_a_row_appended_under_the_running_daemon_is_named_everywhere(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--checkpoint-interval", "0.2"]).start()
    try:
        append_many(d, 3, prefix="real")
        with Store(d.store) as intruder:
            (row,) = intruder.append([forged("forged-1")])
        wait_for(lambda: d.health()["writer"]["foreign_rows"], "the daemon to name the forged row")
        health = d.health()
        (gap_seq, first, last), = foreign_gaps(d)
        assert (first, last, gap_seq) == (row.seq, row.seq, row.seq + 1)
        assert health["writer"]["foreign_rows"] == [{"first_seq": row.seq, "last_seq": row.seq, "gap_seq": gap_seq}]
        assert health["status"] == "degraded"
        assert any("foreign_rows" in reason for reason in health["reasons"])
        append_many(d, 2, prefix="later")
        checked = verify_store(d.store, full=True)
        assert [(f.kind, f.seq) for f in checked.findings] == [("foreign_rows", row.seq)]
        assert checked.exit_code == 1
        reconciled = reconcile(d.store)
        assert [(p.name, p.ok) for p in reconciled.predicates if p.name == "no_foreign_rows"] == [
            ("no_foreign_rows", False)]
    finally:
        assert d.stop() == 0
    assert d.count("event") == 6
    # Still named after the stop, by the store's gap row and by the finding kept outside it.
    again = verify_store(d.store)
    assert [(f.kind, f.seq) for f in again.findings] == [("foreign_rows", row.seq)]
    done = cli("verify", "--store", str(d.store))
    assert done.returncode == 1 and "foreign_rows" in done.stdout + done.stderr


def test_rows_written_while_the_daemon_was_stopped_are_named_and_never_signed_unnamed(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    append_many(d, 3, prefix="real")
    assert d.stop() == 0
    with Store(d.store) as intruder:
        results = intruder.append([forged("stopped-1"), forged("stopped-2")])
    first, last = results[0].seq, results[1].seq
    checked = verify_store(d.store, update_anchor=False)
    assert ("foreign_rows", first) in [(f.kind, f.seq) for f in checked.findings]
    assert checked.exit_code == 1
    # No signer takes them for the recorder's own.
    with pytest.raises(CheckpointError, match="foreign_rows"):
        sign_store(d.store)
    d.start()
    append_many(d, 1, prefix="after")
    assert d.stop() == 0
    assert foreign_gaps(d) == [(last + 1, first, last)]
    after = verify_store(d.store)
    assert [(f.kind, f.seq) for f in after.findings] == [("foreign_rows", first)]
    assert after.exit_code == 1


def test_erase_refuses_a_finding_and_verifiers_refuse_an_erasure_of_one(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    try:
        append_many(d, 2, prefix="real")
        with Store(d.store) as intruder:
            intruder.append([forged("forged-1")])
        wait_for(lambda: foreign_gaps(d), "the forged row to be named")
    finally:
        assert d.stop() == 0
    (gap_seq, _, _), = foreign_gaps(d)
    done = cli("erase", str(gap_seq), "--reason", "hide it", "--store", str(d.store))
    assert done.returncode == 2 and "cannot be erased" in done.stderr
    # Forged by hand: an erasure row naming the gap row, its payload nulled with the trigger off.
    with Store(d.store) as store:
        payload = store.conn.execute("SELECT CAST(payload AS BLOB) FROM records WHERE seq = ?", (gap_seq,)).fetchone()[0]
        body = {"type": "erasure", "erased_seq": gap_seq, "payload_sha256": format_hash(hashlib.sha256(payload).digest())}
        store.append([Append(f"erasure-{gap_seq}", "attestation", canonical_json(body))])
    with t.tamper(d.store) as con:
        t.set_payload(con, gap_seq, b"null")
    assert t.both_verdicts(d.store) == ((False, "payload_edited", gap_seq), (False, "payload_edited", gap_seq))


def test_an_erasure_naming_an_attestation_is_refused_by_both_verifiers(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append([forged("e-1"), Append("attest-x", "attestation", canonical_json({"type": "periodic"}))])
        payload = store.conn.execute("SELECT CAST(payload AS BLOB) FROM records WHERE seq = 2").fetchone()[0]
        body = {"type": "erasure", "erased_seq": 2, "payload_sha256": format_hash(hashlib.sha256(payload).digest())}
        store.append([Append("erasure-2", "attestation", canonical_json(body))])
    with t.tamper(path) as con:
        t.set_payload(con, 2, b"null")
    assert t.both_verdicts(path) == ((False, "payload_edited", 2), (False, "payload_edited", 2))


def test_erase_leaves_the_store_signed(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    seqs = append_many(d, 3, prefix="real")
    assert d.stop() == 0
    assert verify_store(d.store).exit_code == 0
    done = cli("erase", str(seqs[1]), "--reason", "a test", "--store", str(d.store))
    assert done.returncode == 0, done.stderr
    checked = verify_store(d.store)
    assert (checked.exit_code, [f.kind for f in checked.findings]) == (0, [])
    assert checked.erased == ((seqs[1], checked.head_seq),)
    d.start()  # the erasure row is the recorder's own: no foreign rows at the next start
    assert d.stop() == 0
    assert foreign_gaps(d) == []


def test_the_lock_on_the_store_file_outlives_the_lock_file(tmp_path):
    path = tmp_path / "store.db"
    Store(path).close()
    first = WriterLock(path).acquire()
    try:
        os.unlink(lock_path(path))
        with pytest.raises(AlreadyServing, match="held by another writer"):
            WriterLock(path).acquire()
        assert writer_holds(path) is True
        assert first.check() is None and first.retaken == 1  # taken again at the next commit group
    finally:
        first.release()
    assert writer_holds(path) is False
    WriterLock(path).acquire().release()


def test_init_refuses_while_a_writer_holds_the_store(tmp_path):
    path = tmp_path / "store.db"
    Store(path).close()
    lock = WriterLock(path).acquire()
    try:
        os.unlink(lock_path(path))
        done = cli("init", "--store", str(path))
        assert done.returncode == 3 and "init needs the store to itself" in done.stderr
    finally:
        lock.release()
    assert cli("init", "--store", str(path)).returncode == 0
    assert Path(lock_path(path)).exists() is False


def test_the_signer_does_not_forget_a_record_deleted_or_rolled_back_under_it(tmp_path):
    from agentwatch.evidence.checkpoints import read_state, state_path

    state = Path(os.environ["XDG_STATE_HOME"]) / "agentwatch"
    d = Daemon(tmp_path / "d", verify_interval=0, extra_args=["--checkpoint-interval", "0.1"]).start()

    def settled(size: int) -> bool:
        """The record holds checkpoint `size` and the witness's acceptance of it (written after)."""
        s = read_state(store_id, state)
        return s is not None and s.size == size and list(s.witnesses.values()) == [size]

    try:
        seqs = append_many(d, 5, prefix="a")
        store_id = bytes.fromhex(json.loads(cli("key", "--store", str(d.store), "--json").stdout)["store_id"])
        wait_for(lambda: settled(seqs[-1]), "checkpoint 1")
        kept = state_path(store_id, state).read_bytes()
        more = append_many(d, 3, prefix="b")
        wait_for(lambda: settled(more[-1]), "checkpoint 2")
        state_path(store_id, state).write_bytes(kept)  # rolled back to the older record
        newest = append_many(d, 2, prefix="c")
        wait_for(lambda: d.health()["signed_checkpoints"]["findings"], "the signer to notice")
        health = d.health()
        found = health["signed_checkpoints"]["findings"]
        assert [(f["kind"], f["seq"]) for f in found] == [("checkpoint_lost", seqs[-1])]
        assert health["status"] == "degraded"
        # It signed on from what it remembers: the record is back, and extends past it.
        wait_for(lambda: settled(newest[-1]), "signing to go on")
        os.unlink(state_path(store_id, state))  # deleted outright
        last = append_many(d, 1, prefix="d")
        wait_for(lambda: len(d.health()["signed_checkpoints"]["findings"]) == 2, "the signer to notice again")
        wait_for(lambda: settled(last[-1]), "signing on")
        assert [f["kind"] for f in d.health()["signed_checkpoints"]["findings"]] == ["checkpoint_lost"] * 2
    finally:
        assert d.stop() == 0
    breaks = [r["payload"]["finding"]["kind"] for r in d.rows("attestation")
              if r["payload"].get("type") == "integrity_break"]
    assert breaks == ["checkpoint_lost", "checkpoint_lost"]
    assert verify_store(d.store).exit_code == 0


def test_rows_written_while_stopped_are_named_with_the_head_file_deleted_too(tmp_path):
    from agentwatch.verify.known_stores import head_path

    d = Daemon(tmp_path / "d", verify_interval=0).start()
    append_many(d, 3, prefix="real")
    assert d.stop() == 0
    with Store(d.store) as intruder:
        (row,) = intruder.append([forged("stopped-1")])
    os.unlink(head_path(d.store))  # the signer's own record still says where the daemon stopped
    d.start()
    assert d.stop() == 0
    assert foreign_gaps(d) == [(row.seq + 1, row.seq, row.seq)]
    assert [(f.kind, f.seq) for f in verify_store(d.store).findings] == [("foreign_rows", row.seq)]


READERS = [["sql", "SELECT count(*) FROM events"], ["sessions"], ["show", "s-1"], ["tail"], ["export", "--format", "jsonl"]]


def test_readers_refuse_a_rewritten_view_or_warn_with_the_flag(tmp_path):
    import sqlite3

    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append([Append(f"e-{i}", "event", canonical_json({
            "schema": 1, "harness": "claude-code", "session_id": "s-1",
            "event": {"name": "PreToolUse", "kind": "tool_pre"}, "tool": {"name": "Bash"}})) for i in range(4)])
    for args in READERS:
        assert (args[0], cli(*args, "--store", str(path)).returncode) == (args[0], 0)
    con = sqlite3.connect(path, isolation_level=None)
    try:
        (sql,) = con.execute("SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = 'events'").fetchone()
        con.execute("DROP VIEW events")
        con.execute(sql + " AND seq != 2")  # hides a row from every query through the view
    finally:
        con.close()
    for args in READERS:
        refused = cli(*args, "--store", str(path))
        assert (args[0], refused.returncode) == (args[0], 7), refused.stderr
        assert "readers refuse" in refused.stderr and refused.stdout == ""
        warned = cli("--schema-changed-ok", *args, "--store", str(path))
        assert (args[0], warned.returncode) == (args[0], 0), warned.stderr
        assert warned.stderr.count("agentwatch: warning:") >= 1 and "schema differs" in warned.stderr


def test_verify_keeps_naming_a_replaced_store_after_init_new_store(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    append_many(d, 5, prefix="old")
    assert d.stop() == 0
    old_id = json.loads(cli("key", "--store", str(d.store), "--json").stdout)["store_id"]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{d.store}{suffix}").unlink(missing_ok=True)
    Store(d.store).close()  # another store at the path
    assert cli("verify", "--store", str(d.store)).returncode == 4
    assert cli("init", "--new-store", "--store", str(d.store)).returncode == 0
    d.start()  # the explicit choice lets serve record again
    append_many(d, 2, prefix="new")
    assert d.stop() == 0
    done = cli("verify", "--store", str(d.store))
    assert done.returncode == 0, done.stdout + done.stderr
    history = [line for line in done.stdout.splitlines() if line.startswith("history:")]
    # Named once per old store (the signer's record; its witness entry names the same store).
    assert len(history) == 1
    assert f"store {old_id} was replaced at this path (accepted by `init --new-store` at 20" in history[0]
    doc = json.loads(cli("verify", "--store", str(d.store), "--json").stdout)
    assert [(h["store_id"], h["source"]) for h in doc["evidence"]["history"]] == [(old_id, "the checkpoint record")]


def test_an_erased_call_stays_visible_in_show_sessions_and_health(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    seqs = append_many(d, 3, prefix="call")
    assert d.stop() == 0
    done = cli("erase", str(seqs[1]), "--reason", "a token in the command", "--by", "alice", "--store", str(d.store))
    assert done.returncode == 0, done.stderr
    shown = cli("show", "test-session", "--store", str(d.store))
    lines = [line for line in shown.stdout.splitlines() if f"#{seqs[1]}" in line]
    assert len(lines) == 1 and "erased" in lines[0] and "alice" in lines[0] and "a token in the command" in lines[0]
    (summary,) = json.loads(cli("sessions", "--json", "--store", str(d.store)).stdout)
    assert (summary["session_id"], summary["erased"]) == ("test-session", 1)
    table = cli("sessions", "--store", str(d.store)).stdout.splitlines()
    assert table[0].split().count("erased") == 1  # the column shows once a session has an erased record
    d.start()
    try:
        erased = d.health()["erased"]
        assert erased["count"] == 1
        assert (erased["last"]["erased_seq"], erased["last"]["by"], erased["last"]["reason"]) == (
            seqs[1], "alice", "a token in the command")
        text = cli("health", "--socket", str(d.socket)).stdout
        assert "erased" in text and "1 payloads" in text
    finally:
        assert d.stop() == 0


def test_verify_and_health_say_the_per_user_install_is_same_user_evidence(tmp_path):
    d = Daemon(tmp_path / "d", verify_interval=0).start()
    try:
        append_many(d, 2, prefix="a")
        assert d.health()["evidence_trust"] == "evidence: same user only"
    finally:
        assert d.stop() == 0
    doc = json.loads(cli("verify", "--json", "--store", str(d.store)).stdout)
    assert doc["evidence"]["trust"] == "evidence: same user only"
    text = cli("verify", "--store", str(d.store)).stdout
    assert "evidence: same user only: this user can rewrite the store" in text
