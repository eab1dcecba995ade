"""Tables a command prints (formats._tables): a query's result and a CLI's listing.

Each table is written from its tool's own description of the format: psql's `aligned` and
expanded (`\\x`) output (PostgreSQL docs, "psql", `\\pset format`), the mysql client's batch
table and the `mysql.user` grant table (MySQL Reference Manual, "mysql Client Options" and
"The mysql System Schema"), sqlite3's `.mode box`, `.mode table` and `.mode markdown`
(sqlite.org, "Command Line Shell For SQLite", "Changing Output Formats"), and a listing drawn
with box-drawing characters (Unicode block U+2500..U+257F). A column headed by a secret name
is masked in every row; a row whose first cell is a secret name has its next cell masked;
documentation tables (a variable, its default, a description) keep their bytes.
"""

from __future__ import annotations

import json

import pytest

from agentwatch.record import redact
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
W = "hunter2Plum"  # a chosen password: no token's shape, only the table's header or first cell names it
H = "*81F5E21E35407D884A6CD4A731AEBFB6AF209E1B"  # the shape of a mysql_native_password hash


def shown(command: str, output: str) -> str:
    """The stored output of a shell call that printed this table."""
    doc = {"schema": 1, "raw": {"tool_name": "Bash", "tool_input": {"command": command},
                                "tool_response": {"stdout": output, "stderr": ""}}}
    fast = POLICY.encode(doc)
    assert fast == canonical_json(POLICY.apply(doc))  # the fast path and the walk agree
    return json.loads(fast)["raw"]["tool_response"]["stdout"]


PSQL_ALIGNED = (f" usename  |   passwd\n----------+-------------\n postgres | {W}\n app      | md5{'a3' * 16}\n"
                " replica  | \n(3 rows)\n")
PSQL_EXPANDED = f"-[ RECORD 1 ]------\nusename  | app\npasswd   | {W}\nvaluntil | \n"
MYSQL_TABLE = ("+------+-----------+-------------------------------------------+\n"
               "| user | host      | authentication_string                     |\n"
               "+------+-----------+-------------------------------------------+\n"
               f"| root | localhost | {H} |\n"
               f"| app  | %         | {W}                               |\n"
               "+------+-----------+-------------------------------------------+\n")
SQLITE_BOX = ("┌──────┬─────────────┐\n│ name │  api_token  │\n├──────┼─────────────┤\n"
              f"│ ann  │ {W} │\n│ bob  │ NULL        │\n└──────┴─────────────┘\n")
SQLITE_TABLE = (f"+------+-------------+\n| name |  api_token  |\n+------+-------------+\n| ann  | {W} |\n"
                "+------+-------------+\n")
SQLITE_MARKDOWN = f"| name |  api_token  |\n|------|-------------|\n| ann  | {W} |\n| bob  |             |\n"
LISTING = ("┌──────────────┬─────────────┐\n│ NAME         │ VALUE       │\n├──────────────┼─────────────┤\n"
           f"│ DB_PASSWORD  │ {W} │\n│ DB_HOST      │ db.internal │\n└──────────────┴─────────────┘\n")
LISTING_DOUBLE = f"║ PGPASSWORD │ {W} ║\n║ PGHOST     │ db.internal ║\n"


@pytest.mark.parametrize(("command", "table"), [
    ("psql -c 'select usename, passwd from pg_shadow'", PSQL_ALIGNED),
    ("psql -x -c 'select usename, passwd, valuntil from pg_shadow'", PSQL_EXPANDED),
    ("mysql -t -e 'select user, host, authentication_string from mysql.user'", MYSQL_TABLE),
    ("sqlite3 -box app.db 'select name, api_token from users'", SQLITE_BOX),
    ("sqlite3 -table app.db 'select name, api_token from users'", SQLITE_TABLE),
    ("sqlite3 -markdown app.db 'select name, api_token from users'", SQLITE_MARKDOWN),
    ("secrets list", LISTING),
    ("variables", LISTING_DOUBLE),
], ids=["psql-aligned", "psql-expanded", "mysql", "sqlite-box", "sqlite-table", "sqlite-markdown", "listing",
        "listing-double"])
def test_a_secret_in_a_printed_table_is_masked_and_the_rest_kept(command, table):
    out = shown(command, table)
    assert W not in out
    assert out.count("[REDACTED:") == table.count(W) + table.count(H) + table.count("md5" + "a3" * 16)
    assert H not in out
    secrets = (W, H, "md5" + "a3" * 16)
    kept = [line for line in table.splitlines() if not any(x in line for x in secrets)]
    assert [line for line in out.splitlines() if "[REDACTED:" not in line] == kept  # the rest keeps its bytes


def test_every_row_of_a_secret_column_is_masked_and_its_empty_or_null_cells_kept():
    out = shown("psql", PSQL_ALIGNED)
    assert out.count("[REDACTED:") == 2
    assert " replica  | \n(3 rows)\n" in out
    box = shown("sqlite3 -box", SQLITE_BOX)
    assert "│ bob  │ NULL        │" in box
    assert box.count("[REDACTED:") == 1


def test_the_other_columns_and_the_other_rows_keep_their_bytes():
    out = shown("secrets list", LISTING)
    assert "│ DB_HOST      │ db.internal │" in out
    assert out.replace(out.split("│ DB_PASSWORD  │ ")[1].split(" │")[0], W) == LISTING


@pytest.mark.parametrize("text", [
    # A README's table of settings: a name, its default, what it is for.
    "| Variable | Default | Description |\n| --- | --- | --- |\n| `ROOM_SECRET` | unset | Shared invite secret. |\n"
    "| `API_TOKEN` | `${API_TOKEN}` | The token the client sends. |\n| `PASSWORD` | (none) | Optional. |\n",
    # A table of options: each cell after the name is prose or a placeholder.
    "| Option   | Description                   |\n|----------|-------------------------------|\n"
    "| password | The password for the database |\n| token    | <your-token>                  |\n",
    # A secret column whose values are masked already, or filler.
    "| name | password |\n|------|----------|\n| ann  | ******** |\n| bob  | [REDACTED] |\n",
    # Pipes between commands, not cells.
    "ps aux | grep token | head\ncat .env | grep -c PASSWORD\n",
    # A test report: `PASS` is a status, the next cell a test's name.
    "| Status | Test |\n|---|---|\n| PASS | test_login |\n| FAIL | test_logout |\n| pass | 12 |\n",
    "| pass | test_login | 0.2s |\n| pass | test_logout | 0.1s |\n",
    # A model's usage: `token` counts and model names.
    "| token | count |\n|---|---|\n| gpt-4 | 1200 |\n| claude | 900 |\n",
    "| model | tokens |\n|---|---|\n| sonnet-4 | 18k |\n",
])
def test_documentation_tables_and_pipelines_keep_their_bytes(text):
    assert shown("cat README.md", text) == text


def test_a_row_with_more_cells_than_a_person_reads_is_left_to_the_line_rules():
    header = "| " + " | ".join(f"c{i}" for i in range(70)) + " |\n"
    rule = "|" + "---|" * 70 + "\n"
    row = "| password | " + " | ".join(["x"] * 69) + " |\n"
    text = header + rule + row + row
    assert shown("cat wide.md", text) == text
