"""Every test and soak owns its state: store, socket, spool, ledger and XDG dirs live in a
temp dir, and no AGENTWATCH_* variable from the caller's environment leaks in.

Property tests run under one of three hypothesis profiles: `ci` (chosen when CI
is set) is derandomized, so a run never depends on luck; `dev` (otherwise, as in
`make test` in a fresh clone) is derandomized too, so it agrees with CI; `fuzz`
(`make fuzz`) explores with fresh random seeds and keeps what it finds in
.hypothesis/. HYPOTHESIS_PROFILE picks one explicitly. The choice is made here,
not left to a library default. A falsifying example, once found, becomes an
explicit @example.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

# Fixtures shared by tests/ and soak/, defined beside the helpers they drive in tests/support/
# (pyproject's pytest `pythonpath` puts tests/ on the path): `daemon` (a started `agentwatch serve`) and
# `reap_daemons` (kills what a failed test left running).
pytest_plugins = ["support.daemon", "support.faultload"]

# A suite started in the background of a non-interactive shell (`make soak &`) inherits SIGINT
# ignored, and so would every process it starts: the tests that press Ctrl-C on a real `tail`,
# `import` or `sql` would wait for an exit that never comes. A handler here (not SIG_IGN) makes
# the processes the tests start get SIGINT's default again, as in a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "ci", derandomize=True, database=None, print_blob=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],  # a shared CI machine is slow at times; that is no failure
)
settings.register_profile(
    "fuzz", derandomize=False, max_examples=2000, print_blob=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", parent=settings.get_profile("ci"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_report_header(config):
    """The SQLite the store runs on and its binding: a failure on another machine starts here."""
    import apsw

    return [f"sqlite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}), "
            f"hypothesis profile {settings._current_profile}"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for var, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        path = home / sub
        path.mkdir(mode=0o700)
        monkeypatch.setenv(var, str(path))
    monkeypatch.setenv("HOME", str(home))
    for var in [v for v in os.environ if v.startswith("AGENTWATCH_") and not v.startswith(("AGENTWATCH_BENCH", "AGENTWATCH_SOAK"))]:
        monkeypatch.delenv(var, raising=False)
    return home
