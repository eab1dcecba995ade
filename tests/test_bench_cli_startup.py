"""Start-up of the commands that do little (`make bench`; figures printed, never asserted): `path`,
`health` (no daemon), `key`, `--help` and a one-row `sql`, each against the same run's baseline of
importing the command-line library alone (`python -c "import typer"`). The aim (issue 31, item 9)
is at most 2x that baseline; docs/benchmarks.md has the figures and where the time goes."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import pytest

RUNS = 7


def _wall(args: list[str], cwd) -> float:
    """Median wall seconds of RUNS runs."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(args, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@pytest.mark.bench
def test_bench_cli_startup(tmp_path):
    from agentwatch.store.append import Append, Store

    with Store(tmp_path / "s.db") as s:
        s.append([Append("r-1", "event", b'{"i":1}')])
    cli = [sys.executable, "-m", "agentwatch.cli"]
    baseline = _wall([sys.executable, "-c", "import typer"], tmp_path)
    commands = {
        "path": [*cli, "path", "--store", "s.db"],
        "health (no daemon)": [*cli, "health", "--socket", "none.sock"],
        "key": [*cli, "key", "--store", "s.db"],
        "--help": [*cli, "--help"],
        "sql one row": [*cli, "sql", "--store", "s.db", "SELECT count(*) FROM records"],
    }
    print(f"\nCLI start-up, median of {RUNS}; baseline `import typer` {baseline * 1000:.0f} ms")
    for name, args in commands.items():
        wall = _wall(args, tmp_path)
        print(f"  {name:<20} {wall * 1000:6.0f} ms  {wall / baseline:4.1f}x the baseline")
