"""Every test and soak owns its state: store, socket, spool, ledger and XDG dirs live in a
temp dir, and no AGENTWATCH_* variable from the caller's environment leaks in."""

from __future__ import annotations

import os

import pytest


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
