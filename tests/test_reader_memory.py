"""Readers stay bounded on a hostile store (issue #24, class 5; docs/reliability.md).

A packed stream of a few dozen KiB that inflates to a valid document of tens of MiB, with a
matching projection, made `verify`, `tail`, `sql` and `show` peak at 834-858 MiB. Now a document
is inflated to at most packing.MAX_DOCUMENT_BYTES and a reader reads no value longer than
db.READER_MAX_VALUE, so each command's peak stays below PEAK_BOUND whatever one row holds.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentwatch.store import packing
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

PEAK_BOUND = 200 << 20  # bytes of resident memory for one reader command on this store
WRAP = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL).returncode; print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def event(i: int, **extra) -> Append:
    return Append(f"e-{i}", "event", canonical_json({
        "schema": 1, "harness": "claude-code", "session_id": "s-1",
        "event": {"name": "PreToolUse", "kind": "tool_pre"}, "tool": {"name": "Bash", "input": {"command": f"ls {i} " * 150}},
        **extra}))


def hostile_store(path, document_mib: int, packed: bool, monkeypatch) -> tuple[int, int]:
    """A store whose last event holds a `document_mib` MiB document: packed by a writer that ignores
    the bound (as an attacker's own copy of the library would), or stored plain."""
    if packed:
        monkeypatch.setattr(packing, "MAX_DOCUMENT_BYTES", 1 << 30)
    with Store(path, pack=packed) as store:
        store.append([event(i) for i in range(packing.TRAIN_SAMPLES + 10)])  # a dictionary is trained
        store.append([event(10_000, blob="x" * (document_mib << 20))])
        found = store.conn.execute("SELECT payload_z IS NOT NULL, coalesce(length(payload_z), 0) FROM records "
                                   "WHERE record_id = 'e-10000'").fetchone()
    monkeypatch.undo()
    return found


def peak(*args: str) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", WRAP, sys.executable, "-m", "agentwatch.cli", *args],
                          capture_output=True, text=True, timeout=300)
    rc, kib = done.stdout.split()
    return int(rc), int(kib) * 1024


READERS = [["verify", "--full"], ["tail"], ["sql", "SELECT payload FROM events"], ["show", "s-1"],
           ["export", "--format", "jsonl"], ["sessions"]]


# (how the document is stored, its size, the exit of verify --full): within the bound a reader
# inflates it; past it verify names the row (it cannot reproduce its hash), and a plain value past
# the readers' value limit is refused with a clear error (exit 3).
CASES = [("packed", 15, 0), ("packed", 60, 1), ("plain", 60, 3)]


@pytest.mark.parametrize("how, document_mib, verify_exit", CASES, ids=[f"{h}-{n}MiB" for h, n, _ in CASES])
def test_every_reader_stays_bounded_on_a_hostile_document(tmp_path, monkeypatch, how, document_mib, verify_exit):
    path = tmp_path / "store.db"
    packed, z = hostile_store(path, document_mib, how == "packed", monkeypatch)
    assert (packed, z < 1 << 20) == (int(how == "packed"), True)  # packed: a small stream, a large document
    for args in READERS:
        rc, rss = peak(*args, "--store", str(path))
        print(f"{how} {document_mib} MiB: {args[0]}: exit {rc}, peak {rss >> 20} MiB")
        assert rss < PEAK_BOUND, (args, rc, rss >> 20)
        if args[0] == "sql" and how == "plain":
            assert rc == 2  # "query stopped: a value longer than 17 MiB ...", one line
        elif args[0] == "verify" or how == "plain":
            assert (args[0], rc) == (args[0], verify_exit)  # plain past the limit: every other reader exits 3
        else:
            assert (args[0], rc) == (args[0], 0)
