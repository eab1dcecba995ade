"""The built wheel carries its migrations and its documentation: a store is created from an installed wheel alone."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("agentwatch-*.whl")
    return built


def test_wheel_ships_every_migration(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p.name for p in (ROOT / "migrations").glob("*.sql"))
    assert shipped
    for name in shipped:
        assert f"agentwatch/migrations/{name}" in names


def test_installed_wheel_creates_a_store(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True, capture_output=True)
    store = tmp_path / "fresh.db"
    source = tmp_path / "in.jsonl"
    source.write_text('{"hook_event_name": "SessionStart", "session_id": "s"}\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    # Run from an unrelated directory so nothing from the checkout is importable.
    done = subprocess.run(
        [str(venv / "bin" / "agentwatch"), "import", "--store", str(store), str(source), "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stored"] == 1
    where = subprocess.run(
        [str(python), "-I", "-c", "import agentwatch.store.migrations as m; print(m.migrations_dir())"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv)
    # The pages help texts cite are installed too: `agentwatch docs NAME` reads them from the wheel.
    page = subprocess.run([str(venv / "bin" / "agentwatch"), "docs", "chain", "--path"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert Path(page).is_relative_to(venv) and Path(page).read_text() == (ROOT / "docs" / "chain.md").read_text()
    assert json.loads(
        subprocess.run(
            [str(venv / "bin" / "agentwatch"), "sql", "--store", str(store), "--json",
             "SELECT name FROM _agentwatch_migrations ORDER BY number"],
            cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
        ).stdout
    ) == [{"name": p.stem} for p in sorted((ROOT / "migrations").glob("*.sql"))]


def test_wheel_holds_only_what_users_run(wheel):
    """Package code, its migrations and metadata: no tests, no test support, no caches."""
    names = zipfile.ZipFile(wheel).namelist()
    package = sorted(n for n in names if not n.startswith("agentwatch-"))
    outside = [n for n in package if not n.startswith("agentwatch/")]
    assert outside == []
    assert [n for n in package if "/testing/" in n or "/tests/" in n or "__pycache__" in n] == []
    expected = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "agentwatch").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ) + sorted(f"agentwatch/migrations/{p.relative_to(ROOT / 'migrations')}"  # the store's, and the fleet's postgres/
               for p in (ROOT / "migrations").rglob("*.sql")) + sorted(
        f"agentwatch/docs/{p.name}" for p in (ROOT / "docs").iterdir() if p.is_file())  # the pages `docs` prints
    assert package == sorted(expected)
