"""The spool, daemon side: listing, reading, done, quarantine, stale tmp files, stats."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import time

import pytest
from support.hook_fakes import hook_cmd, run_hook

from agentwatch import config, hookclient
from agentwatch.daemon.spool import MAX_FILE, STALE_TMP_S, Spool
from agentwatch.record.normalize import check_envelope


def envelope(record_id: str, payload: str = "{}") -> bytes:
    env = {"op": "append", "v": 1, "record_id": record_id, "harness": "claude-code", "payload_text": payload}
    return json.dumps(env).encode() + b"\n"


def put(spool: Spool, name: str, data: bytes, where: str = "new"):
    directory = spool.root / where
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(data)
    return path


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def spool(tmp_path):
    return Spool(tmp_path / "spool")


def test_prepare_makes_private_dirs(spool):
    spool.prepare()
    for directory in (spool.root, spool.tmp, spool.new, spool.bad):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_a_hook_written_file_reads_back_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    assert run_hook("claude-code", "--event", "Stop", stdin=b'{"session_id":"s"}').returncode == 0
    spool = Spool(config.load().spool)
    (path,) = spool.ready()
    item = spool.read(path)
    assert item.ok and item.error is None
    assert item.envelope["payload_text"] == '{"session_id":"s"}'
    assert item.envelope["delivery"] == "spool" and item.envelope["event"] == "Stop"
    assert path.name == item.envelope["record_id"] + ".json"
    data = path.read_bytes()
    assert (item.size, item.sha256, item.uid) == (len(data), sha(data), os.getuid())
    assert check_envelope(item.envelope) is item.envelope


def test_spool_write_in_process_is_atomic_and_private(spool):
    rid = hookclient.uuid7()
    final = hookclient.spool_write(os.fsencode(spool.root), rid, envelope(rid))
    assert final == os.fsencode(spool.new / f"{rid}.json")
    assert list(spool.tmp.iterdir()) == []
    assert stat.S_IMODE((spool.new / f"{rid}.json").stat().st_mode) == 0o600
    put(spool, f"{rid}.json", b"", "tmp")
    with pytest.raises(FileExistsError):  # O_EXCL: never two writers on one tmp file
        hookclient.spool_write(os.fsencode(spool.root), rid, envelope(rid))


def test_ready_is_oldest_first_with_limit_and_skip(spool):
    base = 1_764_460_800_000
    ids = [hookclient.uuid7(base + offset) for offset in (5000, 0, 60_000, 1)]
    for rid in ids:
        put(spool, f"{rid}.json", envelope(rid))
    oldest_first = sorted(ids, key=lambda rid: int(rid.replace("-", ""), 16) >> 80)
    assert [p.stem for p in spool.ready()] == oldest_first
    assert [p.stem for p in spool.ready(limit=2)] == oldest_first[:2]
    skip = frozenset({f"{oldest_first[0]}.json"})
    assert [p.stem for p in spool.ready(limit=2, skip=skip)] == oldest_first[1:3]


def test_ready_on_a_missing_spool_is_empty(spool):
    assert spool.ready() == []
    assert spool.adopt_stale_tmp() == []


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", "empty file"),
        (b'{"op":"append","v":1,"record_id":"0190', "not valid JSON"),
        (b'{"payload_text":"caf\xe9"}\n', "not valid UTF-8"),
        (b"[1,2,3]\n", "not a JSON object"),
        (b'{"op":"ping"}\n', "not an append envelope"),
    ],
)
def test_unusable_files_say_why(spool, data, error):
    path = put(spool, "0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f.json", data)
    item = spool.read(path)
    assert not item.ok and item.envelope is None
    assert error in item.error
    assert (item.size, item.sha256) == (len(data), sha(data))


def test_too_large_file(spool):
    path = put(spool, "big.json", b"x" * (MAX_FILE + 10))
    item = spool.read(path)
    assert "larger than" in item.error and item.size == MAX_FILE + 1


def test_symlink_is_not_followed(spool, tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(envelope("x"))
    spool.new.mkdir(parents=True)
    (spool.new / "link.json").symlink_to(secret)
    item = spool.read(spool.new / "link.json")
    assert item.error.startswith("cannot open") and item.size == 0
    moved = spool.quarantine(item.path, item.error)
    assert moved.path.is_symlink() and secret.read_bytes() == envelope("x")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file away")
def test_file_of_another_uid_is_unusable(spool):
    path = put(spool, "theirs.json", envelope("x"))
    os.chown(path, 12345, -1)
    item = spool.read(path)
    assert "owned by uid 12345" in item.error and item.uid == 12345


def test_vanished_file_reads_as_none(spool):
    assert spool.read(spool.new / "gone.json") is None


def test_mark_done_deletes_once(spool):
    path = put(spool, "a.json", envelope("a"))
    assert spool.mark_done(path) is True
    assert spool.mark_done(path) is False
    assert spool.ready() == []


def test_quarantine_keeps_the_bytes_and_the_reason(spool):
    data = b'{"op":"append","record_id":"cut-off'
    path = put(spool, "0190-a.json", data)
    item = spool.read(path)
    moved = spool.quarantine(path, item.error)
    assert not path.exists()
    assert moved.path == spool.bad / "0190-a.json"
    assert moved.path.read_bytes() == data
    assert (moved.size, moved.sha256, moved.reason) == (len(data), sha(data), item.error)
    note = json.loads((spool.bad / "0190-a.json.reason").read_text())
    assert note == {"reason": item.error, "size": len(data), "sha256": sha(data), "from": "new/0190-a.json"}
    assert stat.S_IMODE(spool.bad.stat().st_mode) == 0o700

    # The same name again does not overwrite the first.
    put(spool, "0190-a.json", b"other")
    second = spool.quarantine(spool.new / "0190-a.json", "again")
    assert second.path != moved.path and second.path.read_bytes() == b"other"
    assert moved.path.read_bytes() == data
    assert spool.stats().bad == 2


def test_gap_record_id_is_derived_from_name_and_bytes(spool):
    first = spool.read(put(spool, "x.json", b"{broken"))
    again = spool.read(put(spool, "x.json", b"{broken"))
    other = spool.read(put(spool, "x.json", b"{broken!"))
    renamed = spool.read(put(spool, "y.json", b"{broken"))
    assert first.gap_record_id == again.gap_record_id
    assert len({first.gap_record_id, other.gap_record_id, renamed.gap_record_id}) == 3
    assert first.gap_record_id.startswith("gap-spool-") and len(first.gap_record_id) <= 128
    assert first.gap_detail() == {
        "file": "x.json",
        "error": first.error,
        "size": 7,
        "sha256": sha(b"{broken"),
        "quarantined_to": "bad/x.json",
    }


def test_stale_tmp_files_are_adopted_not_deleted(spool):
    now = time.time()
    old = now - STALE_TMP_S - 5
    complete_id, partial_id, fresh_id = (hookclient.uuid7() for _ in range(3))
    complete = put(spool, f"{complete_id}.json", envelope(complete_id), "tmp")
    partial = put(spool, f"{partial_id}.json", envelope(partial_id)[:20], "tmp")
    fresh = put(spool, f"{fresh_id}.json", b"", "tmp")  # a live hook mid-write
    for path in (complete, partial):
        os.utime(path, (old, old))

    adopted = spool.adopt_stale_tmp(now=now)
    assert sorted(p.name for p in adopted) == sorted([complete.name, partial.name])
    assert [p.name for p in spool.tmp.iterdir()] == [fresh.name]

    by_name = {p.name: spool.read(p) for p in spool.ready()}
    assert by_name[complete.name].ok and by_name[complete.name].envelope["record_id"] == complete_id
    assert "not valid JSON" in by_name[partial.name].error
    assert by_name[partial.name].size == 20


def test_adopting_never_overwrites_a_file_in_new(spool):
    old = time.time() - STALE_TMP_S - 5
    put(spool, "same.json", b"in new")
    stale = put(spool, "same.json", b"in tmp", "tmp")
    os.utime(stale, (old, old))
    (adopted,) = spool.adopt_stale_tmp()
    assert adopted.name != "same.json" and adopted.read_bytes() == b"in tmp"
    assert (spool.new / "same.json").read_bytes() == b"in new"


def test_stats_count_backlog_age_and_leftovers(spool):
    empty = spool.stats()
    assert (empty.backlog, empty.backlog_bytes, empty.oldest_age_s, empty.tmp, empty.bad) == (0, 0, None, 0, 0)

    now = time.time()
    sizes = []
    for age in (10, 300, 42):
        data = envelope(f"r{age}")
        sizes.append(len(data))
        path = put(spool, f"r{age}.json", data)
        os.utime(path, (now - age, now - age))
    put(spool, "writing.json", b"{", "tmp")
    spool.quarantine(put(spool, "junk.json", b"junk"), "not valid JSON")

    stats = spool.stats(now=now)
    assert stats.backlog == 3 and stats.backlog_bytes == sum(sizes)
    assert stats.oldest_age_s == pytest.approx(300, abs=1)
    assert (stats.tmp, stats.bad) == (1, 1)
    assert stats.as_dict() == {
        "backlog": 3,
        "backlog_bytes": sum(sizes),
        "oldest_age_s": stats.oldest_age_s,
        "tmp": 1,
        "bad": 1,
    }


def test_drain_cycle_leaves_nothing_behind(tmp_path, monkeypatch):
    """Hooks spool with no daemon; a drainer reads, 'commits', and deletes or quarantines each."""
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    procs = [subprocess.Popen(hook_cmd("claude-code"), stdin=subprocess.PIPE) for _ in range(5)]
    for i, proc in enumerate(procs):
        proc.stdin.write(b'{"n":%d}' % i)
        proc.stdin.close()
    assert [p.wait(timeout=60) for p in procs] == [0] * 5
    spool = Spool(config.load().spool)
    put(spool, "zz-stray.json", b"not json")

    committed, gaps = [], []
    for path in spool.ready():
        item = spool.read(path)
        if item.ok:
            committed.append(json.loads(item.envelope["payload_text"])["n"])
            assert spool.mark_done(path)
        else:
            gaps.append(item.gap_record_id)
            spool.quarantine(path, item.error)
    assert sorted(committed) == list(range(5)) and len(gaps) == 1
    stats = spool.stats()
    assert (stats.backlog, stats.tmp, stats.bad) == (0, 0, 1)

