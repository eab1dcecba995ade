"""Soaks own their state like tests do: store, socket, spool and XDG dirs live in a temp dir."""

from __future__ import annotations

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
    for var in ("AGENTWATCH_STORE", "AGENTWATCH_SOCKET", "AGENTWATCH_SPOOL", "AGENTWATCH_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return home
