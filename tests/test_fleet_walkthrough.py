"""docs/fleet.md's set-up, followed step by step against a throw-away server.

Every block the document marks `<!-- walkthrough: NAME -->` is used as written:
postgresql.conf lines appended, the TLS commands run in the data directory as
the server's user, the pg_hba.conf lines put in front, the SQL run as
`postgres`, the .pgpass lines written to a password file, the `agentwatch`
command lines run. Only the document's host name, port, subnet and the
`listen_addresses` wildcard are swapped for the test server's (127.0.0.1, its
port). The server is a fresh one from the machine's binaries
(tests/support/postgres.py), not the session's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.fleet import schema
from agentwatch.fleet.connect import FleetUnreachable
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

DOC = Path(__file__).resolve().parent.parent / "docs" / "fleet.md"
runner = CliRunner()


def blocks() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- walkthrough: (\S+) -->\n```[a-z]*\n(.*?)```", text, flags=re.S)
    return dict(found)


def test_the_document_marks_every_step():
    assert sorted(blocks()) == ["admin.pgpass", "admin.sql", "init", "machines.pgpass", "pg_hba.conf",
                                "postgresql.conf", "roles.sql", "ship", "tls"]


def test_the_versions_the_document_states_are_the_ones_the_tests_ran_on():
    from support.postgres import require_binaries

    out = subprocess.run([str(require_binaries() / "postgres"), "--version"], capture_output=True, text=True,
                         check=True).stdout
    version = re.search(r"(\d+\.\d+)", out).group(1)
    assert f"The tests ran on **PostgreSQL {version}**" in DOC.read_text(encoding="utf-8")


def commands(block: str) -> list[list[str]]:
    return [shlex.split(line) for line in block.splitlines() if line.strip() and not line.startswith("#")]


def statements(block: str) -> list[str]:
    return [s.strip() for s in block.split(";") if s.strip()]


def test_a_newcomer_following_docs_fleet_md_ships_over_tls_and_reconciles(tmp_path, monkeypatch):
    from support import postgres

    steps = blocks()
    for var in [v for v in os.environ if v.startswith("PG")]:
        monkeypatch.delenv(var, raising=False)
    server = postgres.Server(postgres.require_binaries())
    try:
        here = f"127.0.0.1:{server.port}"

        def local(text: str) -> str:
            return (text.replace("db.internal:5432", here).replace("10.0.0.0/8", "127.0.0.1/32")
                    .replace("listen_addresses = '*'", "listen_addresses = '127.0.0.1'"))

        # 2. Listening, TLS, the log, the WAL; the machines' subnet in pg_hba.conf, TLS only.
        with open(server.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n" + local(steps["postgresql.conf"]))
        for line in steps["tls"].splitlines():
            subprocess.run(line, shell=True, cwd=server.data, user=server.user, check=True, capture_output=True)
        # The test's own set-up login keeps the Unix socket; over TCP only the document's lines.
        (server.data / "pg_hba.conf").write_text("local all all trust\n" + local(steps["pg_hba.conf"]),
                                                 encoding="utf-8")
        server.restart()

        # 3. A default install's superuser is `postgres`, without a password.
        with psycopg.connect(server.admin_dsn(), autocommit=True) as conn:
            conn.execute("CREATE ROLE postgres SUPERUSER LOGIN")
        as_postgres = f"host={server.dir} port={server.port} user=postgres dbname=postgres"
        with psycopg.connect(as_postgres, autocommit=True) as conn:
            for statement in statements(steps["admin.sql"]):
                conn.execute(statement)
        (init,) = commands(steps["init"])
        url = local(init[-1])
        # Without the password file: the error the document warns of.
        with pytest.raises(FleetUnreachable, match="no password supplied"):
            schema.init(url)
        passfile = tmp_path / "pgpass"
        passfile.write_text(local(steps["admin.pgpass"]), encoding="utf-8")
        passfile.chmod(0o600)
        monkeypatch.setenv("PGPASSFILE", str(passfile))

        # 4. fleet init, as written.
        assert init[:3] == ["agentwatch", "fleet", "init"]
        result = runner.invoke(app, [*init[1:-1], url, "--json"])
        assert result.exit_code == 0, result.output
        assert '"denials": "on"' in result.stdout

        # 5. The roles, as the administrator.
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in statements(steps["roles.sql"]):
                conn.execute(statement)

        # 6. The machines' credentials.
        with open(passfile, "a", encoding="utf-8") as f:
            f.write(local(steps["machines.pgpass"]))

        # 7. A CI runner ships its store; the auditor reconciles.
        store = tmp_path / "store.db"
        with Store(store) as s:
            s.append([Append(f"ev-{i}", "event", canonical_json(
                {"harness": "claude-code", "session_id": "s-1", "event": {"name": "PreToolUse", "kind": "tool_pre"},
                 "tool": {"name": "Bash", "call_id": f"c-{i}", "input": {"command": f"make {i}"}}}))
                for i in range(25)])
        ship, reconcile = commands(steps["ship"])
        ship = [local(a) for a in ship]
        result = runner.invoke(app, [*ship[1:], "--store", str(store), "--json"])
        assert result.exit_code == 0, result.output
        assert '"rows_shipped": 25' in result.stdout
        reconcile = [local(a) for a in reconcile]
        result = runner.invoke(app, reconcile[1:])
        assert result.exit_code == 0, result.output
        assert "host ci-runner-7, login ci_runner_7" in result.stdout
        assert result.stdout.rstrip().endswith("within bounds")

        # Over TLS, and only over TLS.
        audit_url = reconcile[-1]
        with psycopg.connect(audit_url) as conn:
            assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)
        with pytest.raises(psycopg.OperationalError, match="no pg_hba.conf entry"):
            psycopg.connect(audit_url.replace("sslmode=require", "sslmode=disable")).close()
    finally:
        server.destroy()
