"""Forensic SQL is bounded: one statement, refused as a whole before any runs; a time limit and a
memory cap; Ctrl-C stops a running statement (issue 13, class 6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.store.append import Append, Store

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
# One value growing 2 KB a row towards 200 MB, in SQLite's memory.
GROWING = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) "
           "SELECT length(group_concat(hex(randomblob(1000)))) FROM c")  # fmt: skip


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as s:
        s.append([Append(f"r-{i}", "event", b'{"i":%d}' % i) for i in range(3)])
    return path


def sql(store, *args):
    result = CliRunner().invoke(app, ["sql", "--store", str(store), *args])
    return result.exit_code, result.stdout, result.stderr


SEVERAL = "agentwatch: one statement per query: results of several would be mixed\n"
WRITES = "agentwatch: only reading is allowed: this statement would write or change the connection\n"


@pytest.mark.parametrize(("query", "said"), [("SELECT 1; DELETE FROM records", WRITES), ("SELECT 1; SELECT 2", SEVERAL),
                                             ("SELECT 1;;SELECT 2 -- x", SEVERAL)])  # fmt: skip
def test_a_second_statement_is_refused_before_the_first_prints_anything(store, query, said):
    """Nothing of the first statement's rows: with --json, stdout holds only the error document."""
    message = said.removeprefix("agentwatch: ").rstrip("\n")
    document = {"error": {"code": 2, "kind": "usage", "message": message, "next": "agentwatch sql --help"}}
    code, out, err = sql(store, "--json", query)
    assert (code, json.loads(out), err) == (2, document, said)


@pytest.mark.parametrize("query", ["SELECT count(*) AS n FROM records;", "SELECT count(*) AS n FROM records; -- done\n"])
def test_one_statement_with_a_trailing_semicolon_or_comment_runs(store, query):
    assert sql(store, "--json", query) == (0, '[\n{"n": 3}\n]\n', "")


def test_a_query_past_its_time_limit_is_stopped(store):
    assert sql(store, "--timeout", "0.3", ENDLESS) == (
        2, "", "agentwatch: query stopped: it ran longer than 0.3 s (--timeout)\n")


def test_a_query_past_its_memory_cap_is_stopped(store):
    # 8 MB: below the 17 MiB a reader reads or builds as one value (store/db.py), which stops it otherwise.
    assert sql(store, "--max-memory", "8", GROWING) == (
        2, "", "agentwatch: query stopped: it needs more than the 8 MB memory cap (--max-memory)\n")
    assert sql(store, GROWING) == (
        2, "", "agentwatch: query stopped: a value longer than 17 MiB, the most a reader reads or builds at once\n")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads CPU time from /proc")
def test_ctrl_c_interrupts_a_running_statement(store):
    proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "sql", "--store", str(store), ENDLESS],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        # Past start-up for sure: the statement has been running for a while of CPU time.
        deadline = time.monotonic() + 60
        while _cpu_seconds(proc.pid) < 1.0 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)  # well before the 30 s default time limit
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out, err) == (130, "", "agentwatch: interrupted (Ctrl-C); the query only reads, and the rows printed are incomplete\n")
