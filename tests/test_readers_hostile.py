"""Readers never crash on a broken store file (issue 13, class 6).

Every reader (verify, verify --full, reconcile, tail, sql) on a truncated,
corrupt or foreign file, on a store this user cannot read, and with the WAL
unlinked under a live writer, prints exactly one line on stderr and exits 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from support.users import as_user, python_for_others, system_user
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.store.append import Append, Store

READERS = [("verify",), ("verify", "--full"), ("reconcile",), ("tail",), ("sql", "SELECT count(*), sum(length(payload)) FROM records")]
IDS = [" ".join(r[:2]) if r[0] != "sql" else "sql" for r in READERS]


def good_store(path: Path, rows: int = 200) -> Path:
    with Store(path) as store:
        store.append([Append(f"r-{i}", "event", json.dumps({"i": i, "pad": "x" * 300}).encode()) for i in range(rows)])
    return path


def truncated(path: Path) -> Path:
    good_store(path)
    os.truncate(path, os.path.getsize(path) // 3)
    return path


def header_garbage(path: Path) -> Path:
    good_store(path)
    with open(path, "r+b") as f:
        f.write(b"\xa5" * 100)
    return path


def schema_page_garbage(path: Path) -> Path:
    good_store(path)
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xa5" * 3000)
    return path


def records_page_garbage(path: Path) -> Path:
    """The root page of the `records` table overwritten; the schema itself is intact."""
    good_store(path)
    conn = apsw.Connection(str(path))
    try:
        conn.pragma("wal_checkpoint", "TRUNCATE")
        page_size = conn.pragma("page_size")
        (root,) = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'records'").fetchone()
    finally:
        conn.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xa5" * page_size)
    return path


def not_a_database(path: Path) -> Path:
    path.write_bytes(bytes(range(256)) * 32)
    return path


def a_directory(path: Path) -> Path:
    path.mkdir()
    return path


BROKEN = {
    f.__name__: f
    for f in (truncated, header_garbage, schema_page_garbage, records_page_garbage, not_a_database, a_directory)
}


def one_line(exit_code: int, stdout: str, stderr: str) -> tuple:
    """What a reader's failure should look like: (exit code, stdout, stderr lines, the line's prefix)."""
    return exit_code, stdout, stderr.count("\n"), stderr[:12]


@pytest.mark.parametrize("reader", READERS, ids=IDS)
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_every_reader_says_one_line_and_exits_3_on_a_broken_store(tmp_path, reader, broken):
    store = BROKEN[broken](tmp_path / "store.db")
    result = CliRunner().invoke(app, [*reader, "--store", str(store)])
    assert one_line(result.exit_code, result.stdout, result.stderr) == (3, "", 1, "agentwatch: "), result.stderr


def run_cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=60, **kw)  # fmt: skip


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_every_reader_says_one_line_and_exits_3_when_the_wal_is_unlinked_under_a_writer(tmp_path, reader):
    """The rows live only in the WAL (nothing checkpointed yet) when someone deletes it."""
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append([Append(f"r-{i}", "event", b'{"i":%d}' % i) for i in range(50)])
        os.unlink(f"{path}-wal")
        proc = run_cli(*reader, "--store", path)
    assert one_line(proc.returncode, proc.stdout, proc.stderr) == (3, "", 1, "agentwatch: "), proc.stderr


@pytest.mark.parametrize("reader", READERS, ids=IDS)
def test_every_reader_says_one_line_and_exits_3_on_a_store_this_user_cannot_read(tmp_path, reader):
    store = good_store(tmp_path / "data" / "store.db")  # data/ 0700: another user cannot even look
    os.chmod(tmp_path, 0o755)
    python, env = python_for_others()
    with system_user() as reader_user:
        proc = subprocess.run([*python, "-m", "agentwatch.cli", *reader, "--store", str(store)], capture_output=True,
                              text=True, timeout=60, cwd="/", env={"PATH": os.environ["PATH"], "HOME": "/nonexistent",
                              **env}, **as_user(reader_user))  # fmt: skip
    assert one_line(proc.returncode, proc.stdout, proc.stderr) == (3, "", 1, "agentwatch: "), proc.stderr
    assert "Permission denied" in proc.stderr


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_import_into_a_broken_store_says_one_line_and_exits_3(tmp_path, broken):
    store = BROKEN[broken](tmp_path / "store.db")
    line = '{"hook_event_name": "Stop", "session_id": "s"}\n'
    result = CliRunner().invoke(app, ["import", "--store", str(store), "-"], input=line)
    assert one_line(result.exit_code, result.stdout, result.stderr) == (3, "", 1, "agentwatch: "), result.stderr
