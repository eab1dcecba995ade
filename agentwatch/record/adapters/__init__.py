"""Harness adapters: each turns one harness's hook payload into normalized fields.

An adapter module exposes `normalize(payload, event_hint) -> dict` returning the
normalized fields of the record document (docs/record.md): always `event`, and
any of session_id, turn_id, cwd, model, permission_mode, transcript_path,
ts_harness, agent, tool, decision, prompt, harness_version. It must accept any
JSON value without raising. Unknown harnesses use `generic`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

HARNESSES = ("claude-code", "codex", "gemini-cli", "cursor", "copilot", "vscode", "cline", "openhands")


_LOADED: dict[str, ModuleType] = {}


def adapter_for(harness: str) -> ModuleType:
    """The adapter module for a harness name; `generic` for any other name."""
    module = _LOADED.get(harness)
    if module is None:
        name = harness.replace("-", "_") if harness in HARNESSES else "generic"
        module = importlib.import_module(f".{name}", __name__)
        if harness in HARNESSES or len(_LOADED) < 64:  # other names are untrusted input: bound the cache
            _LOADED[harness] = module
    return module
