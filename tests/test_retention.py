"""Retention, legal hold and archives (docs/retention.md): payloads leave, every proof stays.

Rows are recorded at fixed days through a pinned store clock (tests only: nothing in the
product can set a row's recorded time), then retained against a policy evaluated at a later
`now`. Both verifiers (the package and the standalone file) are run on every outcome.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import apsw
import pytest
from support.daemon import Daemon, wait_for
from support.ingest import hook_cmd, post_tool_use

from agentwatch import standalone_verify
from agentwatch.daemon.erase import erase_store
from agentwatch.errors import UsageError
from agentwatch.evidence import bundle as bundles
from agentwatch.evidence import checkpoints
from agentwatch.evidence.archive import write_archive
from agentwatch.evidence.audit import verify_store
from agentwatch.store import append as store_append
from agentwatch.store import retention
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json, format_hash

DAY = retention.NS_PER_DAY
T0 = 1_764_496_800_000_000_000  # 2025-11-30T10:00:00Z
SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # Stripe's documented test-key shape, in one old row
DAYS = 40


def doc(day: int, session: str) -> bytes:
    command = f"curl -u {SECRET}: https://api.stripe.com" if day == 3 else f"echo day {day} " + "lorem " * 120
    return canonical_json({"schema": 1, "harness": "claude-code", "session_id": session,
                           "event": {"name": "PreToolUse", "kind": "tool_pre"},
                           "tool": {"name": "Bash", "category": "shell", "input": {"command": command}}})


def build(path: Path, monkeypatch, days: int = DAYS) -> None:
    """One event a day for `days` days, sessions s0/s1/s2 in turn; day d recorded at T0 + d days."""
    clock = types.SimpleNamespace(now=T0)
    monkeypatch.setattr(store_append, "time", types.SimpleNamespace(time_ns=lambda: clock.now))
    with Store(path) as store:
        for day in range(days):
            clock.now = T0 + day * DAY
            store.append([Append(f"r{day:03d}", "event", doc(day, f"s{day % 3}"))])
    monkeypatch.undo()


def both_verify(path: Path, state: Path) -> tuple[dict, dict]:
    package = verify_store(path, full=True, state_dir=state, evidence=False).to_json()
    alone = standalone_verify.verify(str(path))
    return package, alone


NOW = T0 + 45 * DAY  # 30-day retention at day 45: days 0..14 are older than the cutoff


def test_a_pass_removes_old_payloads_and_both_verifiers_report_them_retained(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    with Store(path) as store:
        passes = retention.retain(store, retention.Policy(30), NOW)
    assert [(p.first_seq, p.last_seq, p.rows, p.held, p.retention_seq) for p in passes] == [(1, 15, 15, 0, 41)]
    conn = apsw.Connection(str(path))
    rows = conn.execute("SELECT seq, payload, length(kept_sha256) FROM records WHERE seq <= 16 ORDER BY seq").fetchall()
    assert [(s, p, k) for s, p, k in rows] == [(s, "null", 32) for s in range(1, 16)] + [(16, rows[15][1], None)]
    kept = conn.execute("SELECT kept_sha256 FROM records WHERE seq = 4").fetchone()[0]
    assert kept == hashlib.sha256(doc(3, "s0")).digest()  # the document's digest, the one the row hash covers
    (retention_doc,) = [json.loads(r[0]) for r in conn.execute("SELECT payload FROM records WHERE seq = 41")]
    conn.close()
    assert {k: retention_doc[k] for k in ("type", "first_seq", "last_seq", "rows", "held", "policy_digest")} == {
        "type": "retention", "first_seq": 1, "last_seq": 15, "rows": 15, "held": 0,
        "policy_digest": retention.Policy(30).digest}
    assert retention_doc["bytes_freed"] == sum(len(doc(d, f"s{d % 3}")) for d in range(15))
    package, alone = both_verify(path, tmp_path / "state")
    assert (package["ok"], package["retained"], package["rows_checked"], package["finding"]) == (True, 15, 41, None)
    assert (alone["ok"], alone["retained"], alone["rows_checked"], alone["finding"]) == (True, 15, 41, None)
    with Store(path) as store:  # a second pass at the same time finds nothing left to retain
        assert retention.retain(store, retention.Policy(30), NOW) == []


def test_the_secret_leaves_the_store_files(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)

    def count() -> int:
        return sum(Path(str(path) + s).read_bytes().count(SECRET.encode())
                   for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())

    assert count() >= 1
    with Store(path) as store:
        retention.retain(store, retention.Policy(30), NOW)
    assert count() == 0


def test_proofs_signed_before_and_made_after_retention_verify(tmp_path, monkeypatch):
    path, state = tmp_path / "store.db", tmp_path / "state"
    build(path, monkeypatch)
    checkpoints.sign_store(path, state_dir=state)
    before = bundles.prove_inclusion(path, 4, state_dir=state)
    with Store(path) as store:
        retention.retain(store, retention.Policy(30), NOW)
    checkpoints.sign_store(path, state_dir=state)
    verifier = checkpoints.read_verifier(bytes.fromhex(before["store_id"]), state)
    assert bundles.verify_bundle(before, verifier).ok  # the earlier bundle (payload included) still holds
    after = bundles.prove_inclusion(path, 4, state_dir=state)
    assert "payload" not in after["record"] and after["record"]["retained_by_seq"] == 41
    assert after["record"]["payload_sha256"] == before["record"]["payload_sha256"]
    assert bundles.verify_bundle(after, verifier).ok
    assert standalone_verify.check_bundle(after, verifier.encode()) == "seq 4 is in the signed tree of 41 rows"
    verified = verify_store(path, full=True, state_dir=state, signer_dir=state, witness_dirs=[])
    assert (verified.ok, verified.retained) == (True, 15)


def test_held_rows_survive_retention_and_refuse_erase_until_released(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    who = retention.actor("legal")
    with Store(path) as store:
        hold_id, row = retention.hold_row({"session_id": "s1"}, "litigation 4411", who)
        store.append([row])
        passes = retention.retain(store, retention.Policy(30), NOW)
    # days 0..14 are old; s1 holds days 1, 4, 7, 10, 13 (5 rows)
    assert sum(p.rows for p in passes) == 10 and passes[-1].held == 5
    conn = apsw.Connection(str(path))
    kept = [s for (s,) in conn.execute("SELECT seq FROM records WHERE seq <= 15 AND payload IS NOT 'null'")]
    conn.close()
    assert kept == [2, 5, 8, 11, 14]
    with pytest.raises(UsageError, match=f"under legal hold \\({hold_id}\\)"):
        erase_store(path, [5], "a token")
    result = erase_store(path, [5], "a token", override_hold="court order 7 allows it")
    conn = apsw.Connection(str(path))
    erasure = json.loads(conn.execute("SELECT payload FROM records WHERE record_id = 'erasure-5'").fetchone()[0])
    conn.close()
    assert (result.erased[0].status, erasure["hold_override"]) == (
        "erased", {"holds": [hold_id], "reason": "court order 7 allows it"})
    with Store(path) as store:
        hold = retention.find_hold(store.conn, hold_id)
        store.append([retention.release_row(hold, "case closed", who)])
        assert retention.find_hold(store.conn, hold_id).active is False
        passes = retention.retain(store, retention.Policy(30), NOW)
    assert sum(p.rows for p in passes) == 4  # the held rows but the erased one
    package, alone = both_verify(path, tmp_path / "state")
    assert (package["ok"], package["retained"], alone["ok"], alone["retained"]) == (True, 14, True, 14)


def _tampered(path: Path, sql: str) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("DROP TRIGGER records_append_only_update")
    conn.execute(sql)
    conn.close()


def test_a_kept_digest_no_retention_covers_is_a_break_in_both_verifiers(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    digest = hashlib.sha256(doc(20, "s2")).digest().hex()  # the true digest: the row hash still reproduces
    _tampered(path, f"UPDATE records SET payload = 'null', kept_sha256 = x'{digest}' WHERE seq = 21")
    package, alone = both_verify(path, tmp_path / "state")
    assert (package["ok"], package["finding"]["seq"], package["finding"]["kind"]) == (False, 21, "payload_edited")
    assert (alone["ok"], alone["finding"]["seq"]) == (False, 21)


def test_a_changed_kept_digest_is_a_break_in_both_verifiers(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    with Store(path) as store:
        retention.retain(store, retention.Policy(30), NOW)
    _tampered(path, f"UPDATE records SET kept_sha256 = x'{'00' * 32}' WHERE seq = 7")
    package, alone = both_verify(path, tmp_path / "state")
    assert (package["ok"], package["finding"]["seq"]) == (False, 7)
    assert (alone["ok"], alone["finding"]["seq"]) == (False, 7)


def test_the_trigger_lets_retention_through_only_under_a_head_retention_row(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    digest = hashlib.sha256(doc(2, "s2")).digest()
    with Store(path) as store:
        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.conn.execute("UPDATE records SET payload = 'null', kept_sha256 = ? WHERE seq = 3", (digest,))
        # under a retention row whose range does not hold seq 3: refused too
        row = Append("attest-retention-x", "attestation", canonical_json(
            {"schema": 1, "type": "retention", "first_seq": 10, "last_seq": 12}))

        def clear(conn, appended):
            conn.execute("UPDATE records SET payload = 'null', kept_sha256 = ? WHERE seq = 3", (digest,))

        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.append([row], before_commit=clear)
        # a wrong digest under a covering row: refused
        row = Append("attest-retention-y", "attestation", canonical_json(
            {"schema": 1, "type": "retention", "first_seq": 3, "last_seq": 3}))

        def wrong(conn, appended):
            conn.execute("UPDATE records SET payload = 'null', kept_sha256 = ? WHERE seq = 3", (b"\0" * 32,))

        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.append([row], before_commit=wrong)
        assert store.conn.execute("SELECT payload IS 'null' FROM records WHERE seq = 3").fetchone()[0] == 0


def test_an_archive_verifies_offline_after_its_payloads_are_gone(tmp_path, monkeypatch):
    path, state = tmp_path / "store.db", tmp_path / "state"
    build(path, monkeypatch)
    checkpoints.sign_store(path, state_dir=state)
    out = tmp_path / "old.json"
    result = write_archive(path, T0 + 15 * DAY, out, state_dir=state)
    assert (result.rows, result.first_seq, result.last_seq, result.without_payload) == (15, 1, 15, 0)
    assert result.sha256 == format_hash(hashlib.sha256(out.read_bytes()).digest())
    with Store(path) as store:
        retention.retain(store, retention.Policy(30), NOW)
    archive = json.loads(out.read_text())
    assert SECRET in out.read_text()  # the archive keeps what the store no longer holds
    verifier = checkpoints.read_verifier(bytes.fromhex(archive["store_id"]), state)
    assert bundles.verify_bundle(archive, verifier).detail == "15 archived rows (seq 1..15) are in the signed tree of 40 rows"
    alone = subprocess.run([sys.executable, "-I", "-S", standalone_verify.__file__, "--bundle", str(out), "--key",
                            verifier.encode()], capture_output=True, text=True)
    assert (alone.returncode, alone.stdout) == (0, "ok: 15 archived rows are in the signed tree of 40 rows\n")
    archive["records"][3]["payload"] = archive["records"][3]["payload"].replace("curl", "wget")
    with pytest.raises(bundles.BundleError):
        bundles.verify_bundle(archive, verifier)
    with pytest.raises(standalone_verify.BadBundle):
        standalone_verify.check_bundle(archive, verifier.encode())


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_the_commands_without_a_daemon(tmp_path, monkeypatch):
    path, state = tmp_path / "store.db", tmp_path / "state"
    build(path, monkeypatch)
    env = {"AGENTWATCH_STATE_DIR": str(state), "AGENTWATCH_CHECKPOINT_WITNESS_DIRS": "",
           "AGENTWATCH_SOCKET": str(tmp_path / "none.sock")}
    placed = cli("hold", "add", "--store", path, "--harness", "claude-code", "--until", "2025-12-02T00:00:00Z",
                 "--reason", "audit", "--json", env=env)
    assert placed.returncode == 0, placed.stderr
    hold_id = json.loads(placed.stdout)["hold_id"]
    listed = json.loads(cli("hold", "list", "--store", path, "--json", env=env).stdout)
    assert [(h["hold_id"], h["active"], h["scope"]["harness"]) for h in listed] == [(hold_id, True, "claude-code")]
    run = cli("retention", "run", "--store", path, "--days", "30", "--json", env=env)
    assert run.returncode == 0, run.stderr
    # held: days 0 and 1 (recorded before 2025-12-02); now is the real clock, so every fixture row is old
    report = json.loads(run.stdout)
    assert (report["rows"], report["passes"][-1]["held"]) == (DAYS - 2, 2)
    assert cli("verify", "--store", path, "--full", env=env).returncode == 0
    released = cli("hold", "release", hold_id, "--store", path, "--reason", "done", env=env)
    assert (released.returncode, released.stdout.startswith(f"released {hold_id}")) == (0, True)
    assert cli("hold", "release", hold_id, "--store", path, "--reason", "again", env=env).returncode == 2
    assert cli("retention", "run", "--store", path, env=env).returncode == 2  # no policy configured


def test_a_daemon_retains_on_schedule_beside_real_hooks_and_takes_holds(tmp_path, monkeypatch):
    d = Daemon(tmp_path, verify_interval=0.5,
               extra_args=["--retention-days", "30", "--checkpoint-interval", "0.5"])
    d.store.parent.mkdir(parents=True, exist_ok=True)
    build(d.store, monkeypatch)
    settings = {"AGENTWATCH_RETENTION_INTERVAL_S": "1", "AGENTWATCH_STATE_DIR": str(tmp_path / "state"),
                "AGENTWATCH_CHECKPOINT_WITNESS_DIRS": ""}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)  # the daemon's environment too
    env = dict(os.environ)
    # Placed before the daemon starts (written under the store's lock): its first pass must keep s2.
    placed = cli("hold", "add", "--store", d.store, "--socket", d.socket, "--session", "s2",
                 "--reason", "incident", "--json", env=env)
    assert (placed.returncode, json.loads(placed.stdout)["via"]) == (0, "store"), placed.stderr
    d.start()
    try:
        sent = 60
        for i in range(sent):
            proc = subprocess.run(hook_cmd(), input=post_tool_use(f"m{i}"), capture_output=True,
                                  env={**env, "AGENTWATCH_SOCKET": str(d.socket),
                                       "AGENTWATCH_SPOOL": str(d.spool)}, timeout=30)
            assert proc.returncode == 0

        def retained() -> int:
            return d.health().get("retention", {}).get("rows_retained", 0)

        # Every fixture row is older than 30 days by the real clock; session s2 (days 2, 5, ..., 38) is held.
        wait_for(lambda: retained() >= DAYS - 13, "the daemon to retain the unheld old rows")
        health = d.health()["retention"]
        assert (health["rows_retained"], health["rows_held"], health["payload_days"]) == (DAYS - 13, 13, 30.0)
        # While it serves, a hold goes through the daemon (the store has one writer).
        second = cli("hold", "add", "--store", d.store, "--socket", d.socket, "--harness", "codex",
                     "--reason", "audit", "--json", env=env)
        assert (second.returncode, json.loads(second.stdout)["via"]) == (0, "daemon"), second.stderr
    finally:
        assert d.stop() == 0
    conn = apsw.Connection(f"file:{d.store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    hooks = conn.execute("SELECT count(*) FROM records WHERE kind = 'event' AND payload IS NOT 'null' "
                         "AND session_id = '3f1c6a52-2d7e-4c55-9b1e-6a8f0d2c7e41'").fetchone()[0]
    held = conn.execute("SELECT count(*) FROM records WHERE session_id = 's2' AND payload IS NOT 'null'").fetchone()[0]
    conn.close()
    assert (hooks, held) == (sent, 13)  # every hook stored with its payload; the held session whole
    listed = json.loads(cli("hold", "list", "--store", d.store, "--json", env=env).stdout)
    assert [h["scope"] for h in listed] == [{"session_id": "s2"}, {"harness": "codex"}]
    verified = cli("verify", "--store", d.store, "--full", "--json", env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["retained"] == DAYS - 13


def test_an_erased_row_leaves_no_stale_copy_a_rebalance_made(tmp_path, monkeypatch):
    """A small row followed by larger ones: page splits moved its cell, and the copy left in free
    space outlived the erase until every write connection zeroed freed space (docs/erasure.md)."""
    path = tmp_path / "store.db"
    build(path, monkeypatch)
    erase_store(path, [4], "a Stripe key in a curl command")
    found = sum(Path(str(path) + s).read_bytes().count(SECRET.encode())
                for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())
    assert found == 0
