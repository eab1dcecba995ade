"""Default locations, following XDG, overridable by flags and AGENTWATCH_* env vars."""

from __future__ import annotations

import os
from pathlib import Path

APP = "agentwatch"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / APP


def state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state") / APP


def runtime_dir() -> Path:
    value = os.environ.get("XDG_RUNTIME_DIR")
    if value and os.path.isabs(value):
        return Path(value) / APP
    # No per-user runtime dir (e.g. a container): fall back under /tmp, per uid.
    return Path("/tmp") / f"{APP}-{os.getuid()}"


def default_store() -> Path:
    env = os.environ.get("AGENTWATCH_STORE")
    return Path(env) if env else data_dir() / "store.db"


def default_socket() -> Path:
    env = os.environ.get("AGENTWATCH_SOCKET")
    return Path(env) if env else runtime_dir() / "agentwatch.sock"


def default_spool() -> Path:
    env = os.environ.get("AGENTWATCH_SPOOL")
    return Path(env) if env else data_dir() / "spool"


def resolve_store(store: str | os.PathLike | None) -> Path:
    return Path(store) if store else default_store()
