"""`--limit N` and the next page on every list command (issue #25, item 4; agentwatch/readers/paging.py).

Each command is walked page by page through the CLI, following the cursor its stderr line names,
and the pages are checked against the same command unpaged: every row exactly once, none
skipped, the last page without a cursor, and a limit that ends exactly at the list's end naming
no next page. The walks at `--limit 1` (a cursor at every row) call the same command in this
process (typer's runner: the same code, stdout and stderr kept apart), their pages checked against
the list a process printed; every other walk starts a process per page. The store holds one session of each of the eight harnesses
(tests/support/sessions.py, built from the harnesses' own published payloads).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support import sessions as fixture_sessions
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.readers import paging

MORE = re.compile(r"^agentwatch: more remain; the next page: (--before|--from) (\d+)$", re.M)


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    fixture_sessions.build(path, monkeypatch)
    return path


def run(tmp_path, *args: str, ok=(0,)) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "agentwatch.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AGENTWATCH_SOCKET": str(tmp_path / "no-daemon.sock")})
    assert done.returncode in ok, done.stderr
    return done


def run_here(tmp_path, *args: str, ok=(0,)) -> subprocess.CompletedProcess:
    """`run` in this process: the same command through typer's runner, stdout and stderr apart."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTWATCH_SOCKET", str(tmp_path / "no-daemon.sock"))
        result = CliRunner().invoke(app, list(args))
    assert result.exit_code in ok, (result.stderr, result.exception)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def walk(tmp_path, argv: list[str], limit: int, rows_of, *, ok=(0,), first: tuple[str, int] | None = None):
    """Pages of `argv --limit limit`, each started at the cursor the previous one named; (pages, cursors).
    A page per row (`--limit 1`) runs in this process; larger pages each start a process."""
    runner = run_here if limit == 1 else run
    pages, cursors, cursor = [], [], first
    while True:
        extra = [cursor[0], str(cursor[1])] if cursor else []
        done = runner(tmp_path, *argv, "--limit", str(limit), *extra, ok=ok)
        pages.append(rows_of(done.stdout))
        found = MORE.findall(done.stderr)
        assert len(found) <= 1
        if not found:
            return pages, cursors
        cursor = (found[0][0], int(found[0][1]))
        cursors.append(cursor)
        assert len(pages) < 100


def jsonl(text: str) -> list[int]:
    return [json.loads(line)["seq"] for line in text.splitlines()]


def check_back(pages: list[list], whole: list, limit: int) -> None:
    """Pages read back from the newest: each page in order, the pages newest first."""
    assert [len(p) for p in pages[:-1]] == [limit] * (len(pages) - 1)
    assert 1 <= len(pages[-1]) <= limit
    assert [row for page in reversed(pages) for row in page] == whole
    assert len({json.dumps(r, sort_keys=True) for r in whole}) == len(whole)


def test_sessions_pages(store, tmp_path):
    argv = ["sessions", "--store", str(store), "--json"]
    ids = lambda out: [s["session_id"] for s in json.loads(out)]  # noqa: E731
    whole = ids(run(tmp_path, *argv).stdout)
    assert len(whole) == 8
    for limit in (1, 3, 7):
        pages, cursors = walk(tmp_path, argv, limit, ids)
        assert len(pages) == -(-8 // limit)
        assert {c[0] for c in cursors} == {"--before"}
        # oldest first within a page and across pages
        assert [s for page in reversed(pages) for s in page] == whole
        assert [len(p) for p in pages] == [limit] * (8 // limit) + ([8 % limit] if 8 % limit else [])
    pages, cursors = walk(tmp_path, argv, 8, ids)  # the page ends exactly at the last session
    assert (pages, cursors) == ([whole], [])


def test_show_pages(store, tmp_path):
    argv = ["show", "8a1c2f0e", "--store", str(store), "--json"]
    doc = json.loads(run(tmp_path, *argv).stdout)
    whole = [i["seq"] for i in doc["items"]]
    assert doc["next"] is None and len(whole) == 9
    for limit in (1, 3, 5):
        pages, cursors = walk(tmp_path, argv, limit, lambda out: [i["seq"] for i in json.loads(out)["items"]])
        check_back(pages, whole, limit)
        assert [c[1] for c in cursors] == [p[0] for p in pages[:-1]]
    done = run(tmp_path, *argv, "--limit", "3")
    assert json.loads(done.stdout)["next"] == {"before": whole[-3]}
    pages, cursors = walk(tmp_path, argv, 9, lambda out: [i["seq"] for i in json.loads(out)["items"]])
    assert (pages, cursors) == ([whole], [])
    assert run(tmp_path, *argv, "-f", "--before", "5", ok=(2,)).returncode == 2


def test_tail_pages_forward(store, tmp_path):
    argv = ["tail", "--store", str(store), "--json"]
    whole = jsonl(run(tmp_path, *argv, "--from", "1").stdout)
    assert whole == list(range(1, 58))
    assert jsonl(run_here(tmp_path, *argv, "--from", "1").stdout) == whole
    for limit in (1, 10, 19):
        pages, cursors = walk(tmp_path, argv, limit, jsonl, first=("--from", 1))
        assert [s for p in pages for s in p] == whole
        assert [len(p) for p in pages[:-1]] == [limit] * (len(pages) - 1)
        assert [c[1] for c in cursors] == [p[-1] + 1 for p in pages[:-1]]
    pages, cursors = walk(tmp_path, argv, 57, jsonl, first=("--from", 1))
    assert (pages, cursors) == ([whole], [])


def test_export_pages_forward(store, tmp_path):
    argv = ["export", "--format", "jsonl", "--store", str(store)]
    whole = jsonl(run(tmp_path, *argv).stdout)
    assert whole == list(range(1, 58))
    assert jsonl(run_here(tmp_path, *argv).stdout) == whole
    for limit in (1, 10, 19, 56):
        pages, cursors = walk(tmp_path, argv, limit, jsonl, first=("--from", 1))
        assert [s for p in pages for s in p] == whole
        assert [len(p) for p in pages] == [limit] * (57 // limit) + ([57 % limit] if 57 % limit else [])
        assert [c[1] for c in cursors] == [p[-1] + 1 for p in pages[:-1]]
    pages, cursors = walk(tmp_path, argv, 57, jsonl, first=("--from", 1))
    assert (pages, cursors) == ([whole], [])


def test_export_otlp_report_names_the_next_page(store, tmp_path):
    from agentwatch.readers import export

    got = export.export(store, fmt="otlp", endpoint="http://127.0.0.1:9", from_seq=1, limit=20,
                        sender=lambda url, body: b"")
    assert (got.records, got.first_seq, got.last_seq, got.to_json()["next"]) == (20, 1, 20, {"from": 21})
    got = export.export(store, fmt="otlp", endpoint="http://127.0.0.1:9", from_seq=21, limit=37,
                        sender=lambda url, body: b"")
    assert (got.records, got.first_seq, got.last_seq, got.to_json()["next"]) == (37, 21, 57, None)


def test_coverage_pages(store, tmp_path):
    argv = ["coverage", "--store", str(store), "--json"]
    key = lambda out: [(r["harness"], r["session_id"]) for r in json.loads(out)]  # noqa: E731
    whole = key(run(tmp_path, *argv, ok=(0, 1)).stdout)
    assert len(whole) == 8
    for limit in (1, 3, 8):
        pages, cursors = walk(tmp_path, argv, limit, key, ok=(0, 1))
        assert [len(p) for p in pages] == [limit] * (8 // limit) + ([8 % limit] if 8 % limit else [])
        assert [k for p in reversed(pages) for k in p] == whole  # the sessions follow one another
    assert run(tmp_path, *argv, "8a1c2f0e", "--limit", "2", ok=(2,)).returncode == 2


def test_hold_list_pages(store, tmp_path):
    for i in range(5):
        run(tmp_path, "hold", "add", "--harness", "codex", "--reason", f"case {i}", "--store", str(store))
    argv = ["hold", "list", "--store", str(store), "--json"]
    seqs = lambda out: [h["seq"] for h in json.loads(out)]  # noqa: E731
    whole = seqs(run(tmp_path, *argv).stdout)
    assert whole == [58, 59, 60, 61, 62]
    for limit in (1, 2, 4, 5):
        pages, cursors = walk(tmp_path, argv, limit, seqs)
        check_back(pages, whole, limit)
        assert len(cursors) == len(pages) - 1


def test_an_empty_page_of_holds_says_holds_exist(store, tmp_path):
    for i in range(2):
        run(tmp_path, "hold", "add", "--harness", "codex", "--reason", f"case {i}", "--store", str(store))
    argv = ["hold", "list", "--store", str(store)]
    first, second = [h["hold_id"] for h in json.loads(run(tmp_path, *argv, "--json").stdout)]
    run(tmp_path, "hold", "release", first, "--reason", "done", "--store", str(store))
    assert [h["seq"] for h in json.loads(run(tmp_path, *argv, "--all", "--json").stdout)] == [58, 59]
    done = run(tmp_path, *argv, "--before", "58")
    assert (done.stdout, done.stderr) == ("no holds in force before seq 58; 1 in force at or after it "
                                          "(drop --before to list them)\n", "")
    done = run(tmp_path, *argv, "--all", "--before", "58", "--limit", "1")
    assert (done.stdout, done.stderr) == ("no holds before seq 58; 2 at or after it (drop --before to list them)\n", "")
    assert run(tmp_path, *argv, "--before", "58", "--json").stdout == "[]\n"
    # A store with no hold at all still says just that.
    run(tmp_path, "hold", "release", second, "--reason", "done", "--store", str(store))
    assert run(tmp_path, *argv, "--before", "58").stdout == "no holds in force\n"


def test_processes_pages_the_findings(store, tmp_path):
    # No process witness ran on this store: one page, no findings, no cursor.
    done = run(tmp_path, "processes", "--store", str(store), "--json", "--limit", "2")
    assert json.loads(done.stdout)["findings"] == [] and json.loads(done.stdout)["next"] is None
    assert MORE.findall(done.stderr) == []


@pytest.mark.parametrize("n", [0, 1, 2, 5, 6, 7, 13])
@pytest.mark.parametrize("limit", [1, 2, 3, 6, 7])
def test_page_back_every_item_once(n, limit):
    items = list(range(10, 10 + 3 * n, 3))
    pages, before = [], None
    while True:
        page, before = paging.page_back(items, lambda x: x, limit=limit, before=before)
        pages.append(page)
        if before is None:
            break
    assert [x for p in reversed(pages) for x in p] == items
    assert all(len(p) == limit for p in pages[:-1]) and len(pages[-1]) <= limit
    assert len(pages) == max(1, -(-n // limit))
