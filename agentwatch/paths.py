"""Default locations, overridable by flags and AGENTWATCH_* env vars.

XDG variables win where they are set; otherwise the platform's own places
(agentwatch.platform_layer; docs/config.md has the table).
"""

from __future__ import annotations

import os
from pathlib import Path

from agentwatch import platform_layer

APP = "agentwatch"


def _xdg(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value) / APP if value and os.path.isabs(value) else None


def data_dir() -> Path:
    return _xdg("XDG_DATA_HOME") or Path(platform_layer.fallback_data_dir(str(Path.home()), APP))


def state_dir() -> Path:
    return _xdg("XDG_STATE_HOME") or Path(platform_layer.fallback_state_dir(str(Path.home()), APP))


def runtime_dir() -> Path:
    # No XDG_RUNTIME_DIR (macOS, a container): the per-user temporary directory where the
    # platform has one, else a per-uid directory under /tmp, checked before use.
    return _xdg("XDG_RUNTIME_DIR") or Path(platform_layer.fallback_runtime_dir(os.getuid(), APP))


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
