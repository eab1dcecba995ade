"""`sql` never loses a value (issue 31, item 1): on a terminal long values wrap in their column (tmux
at 80 and 120 columns, golden screens); into a pipe or a file every value is whole, as TSV in
PostgreSQL's COPY text format; --timeout bounds every output mode, the printing included; reading
pragmas with an argument run while setting ones stay refused."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from support import sessions as fixture_sessions
from support import tmux
from test_views_tmux import WIDTHS, agentwatch, terminal_env
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.cli.rows import fit_widths, wrap
from agentwatch.store.append import Append, Store

# Serial (`make test` runs this file alone, after the parallel phase):
# it asserts a `sql` process's wall time (start-up and 1 s of rows within 8 s).
pytestmark = pytest.mark.serial

LONG_SESSION = "5c0ffee0-1234-4abc-9def-0123456789ab"
# A value with every character TSV escapes, a NULL, a number and a long text.
AWKWARD = "tab\there\nnew line\\back\rcr"


@pytest.fixture(scope="module")
def session_store(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sqlviews")
    with pytest.MonkeyPatch.context() as mp:
        fixture_sessions.build(directory / "store.db", mp, harnesses=["claude-code"])
    return directory


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as s:
        s.append([Append(f"r-{i}", "event", b'{"i":%d}' % i) for i in range(3)])
    return path


def sql(store, *args):
    result = CliRunner().invoke(app, ["sql", "--store", str(store), *args])
    return result.exit_code, result.stdout, result.stderr


def parse_tsv(text: str) -> list[list[str | None]]:
    """Read COPY text format back: the inverse of what the command writes."""
    out = []
    for line in text.splitlines():
        row: list[str | None] = []
        for field in line.split("\t"):
            if field == "\\N":
                row.append(None)
                continue
            value, i = [], 0
            while i < len(field):
                if field[i] == "\\":
                    value.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}[field[i + 1]])
                    i += 2
                else:
                    value.append(field[i])
                    i += 1
            row.append("".join(value))
        out.append(row)
    return out


def test_into_a_pipe_every_value_is_whole_as_tsv(store):
    awkward = "'tab' || char(9) || 'here' || char(10) || 'new line\\back' || char(13) || 'cr'"
    query = f"SELECT 1 AS n, NULL AS absent, '{LONG_SESSION}' AS session, {awkward} AS awkward, hex(zeroblob(300)) AS long"
    code, out, err = sql(store, query)
    assert (code, err) == (0, "")
    assert parse_tsv(out) == [["n", "absent", "session", "awkward", "long"],
                              ["1", None, LONG_SESSION, AWKWARD, "0" * 600]]
    assert out.count("\n") == 2 and "…" not in out


def test_tsv_is_asked_for_by_name_and_the_formats_exclude_each_other(store):
    assert sql(store, "--tsv", "SELECT seq FROM records ORDER BY seq") == (0, "seq\n1\n2\n3\n", "")
    assert sql(store, "--tsv", "--csv", "SELECT 1") == (2, "", "agentwatch: choose one of --json, --csv, --tsv and --wide\n")


def test_wide_prints_the_table_uncut_into_a_pipe(store):
    code, out, _ = sql(store, "--wide", f"SELECT seq, '{LONG_SESSION}' || seq AS session FROM records ORDER BY seq")
    assert code == 0
    assert out.splitlines() == [
        "seq  session",
        "───  ─────────────────────────────────────",
        f"1    {LONG_SESSION}1",
        f"2    {LONG_SESSION}2",
        f"3    {LONG_SESSION}3",
    ]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name,query", [
    ("columns", "SELECT seq, session_id, tool_name, json_extract(payload, '$.tool.input') AS input FROM events "
                "WHERE tool_name IS NOT NULL ORDER BY seq LIMIT 3"),
    ("star", "SELECT * FROM events ORDER BY seq LIMIT 1"),
])  # fmt: skip
def test_on_a_terminal_long_values_wrap_and_nothing_is_cut(session_store, tmp_path, width, name, query):
    with tmux.Terminal(tmp_path, width=width, height=80, env=terminal_env()) as term:
        screen = term.run(f'{agentwatch()} sql --store store.db "{query}"', cwd=session_store, exit_code=0)
    tmux.check_golden(f"sql-{name}-{width}.txt", screen)
    assert "…" not in screen
    assert max(len(line) for line in screen.splitlines()) <= width


def test_the_table_holds_every_character_of_every_value(store):
    """Unwrapping the terminal table gives the values back (wrapping drops only the spaces it breaks at)."""
    value = "word " * 40 + "x" * 150
    lines = wrap(value.strip(), 17)
    assert max(map(len, lines)) <= 17
    assert "".join(lines).replace(" ", "") == value.replace(" ", "")
    assert fit_widths([3, 36, 5, 200], 80) == [3, 36, 5, 30]
    assert fit_widths([3, 36, 9, 66], 80) == [3, 36, 9, 26]  # the id stays whole, the long value wraps
    assert fit_widths([10] * 16, 120) is None  # too many columns: the rows print as blocks


SLOW_ROWS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 50000000) SELECT x, hex(randomblob(300)) FROM c"


@pytest.mark.parametrize("fmt", [[], ["--wide"], ["--tsv"], ["--csv"], ["--json"]], ids=["tsv-by-default", "wide", "tsv", "csv", "json"])
def test_the_time_limit_bounds_the_printing_in_every_mode(store, tmp_path, fmt):
    with open(tmp_path / "out", "wb") as out:
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "agentwatch.cli", "sql", "--store", str(store), "--timeout", "1",
                               *fmt, SLOW_ROWS], stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)  # fmt: skip
        took = time.monotonic() - started
    assert (proc.returncode, proc.stderr) == (2, "agentwatch: query stopped: it ran longer than 1 s (--timeout)\n")
    assert took < 8  # start-up on a shared machine, then 1 s of rows


@pytest.mark.parametrize("query,expected", [
    ("pragma table_info(records)", ["cid", "name", "type", "notnull", "dflt_value", "pk"]),
    ("SELECT name FROM pragma_table_info('records') WHERE cid = 0", ["name"]),
    ("pragma quick_check(1)", ["quick_check"]),
])  # fmt: skip
def test_reading_pragmas_with_an_argument_run(store, query, expected):
    code, out, err = sql(store, "--tsv", query)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split("\t") == expected


def test_pragma_table_info_names_the_columns(store):
    assert sql(store, "SELECT name FROM pragma_table_info('records') WHERE cid < 2") == (0, "name\nseq\nrecord_id\n", "")


@pytest.mark.parametrize("query", ["pragma query_only = 0", "pragma query_only(0)", "pragma journal_mode = delete",
                                   "pragma user_version = 7", "pragma writable_schema(1)"])  # fmt: skip
def test_pragmas_that_set_stay_refused(store, query):
    assert sql(store, query) == (2, "", "agentwatch: only reading is allowed: this statement would write or change the connection\n")


def test_an_empty_result_keeps_its_header(store):
    assert sql(store, "SELECT seq, kind FROM records WHERE 0") == (0, "seq\tkind\n", "")
    assert sql(store, "--wide", "SELECT seq, kind FROM records WHERE 0") == (0, "seq  kind\n───  ────\n", "")
    code, out, _ = sql(store, "--csv", "SELECT seq FROM records WHERE 0")
    assert (code, out.splitlines()) == (0, ["seq"])


def test_the_table_shows_blobs_numbers_null_and_wide_characters_whole(store):
    code, out, _ = sql(store, "--wide", "SELECT x'00ff' AS b, 1.5 AS f, NULL AS n, '雪雪' AS w")
    assert (code, out.splitlines()) == (0, ["b     f    n     w", "────  ───  ────  ────", "00ff  1.5  NULL  雪雪"])
