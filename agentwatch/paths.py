"""The platform's default directories, and nothing else.

XDG variables win where they are set; otherwise the platform's own places
(agentwatch.platform_layer; docs/config.md has the table). Which store, socket
and spool a command uses is a setting: `config.load` resolves it (flag,
environment, config files, then the defaults built from these directories in
`config.KEYS`).
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
