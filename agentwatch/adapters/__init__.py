"""Harness adapters: each turns one harness's hook payload into normalized fields.

An adapter module exposes `normalize(payload, event_hint) -> dict` returning any
of the normalized record's fields (event, session_id, turn_id, cwd, model,
tool, decision, agent, harness_version). Unknown harnesses use `generic`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

HARNESSES = ("claude-code", "codex", "gemini-cli", "cursor", "copilot", "vscode", "cline", "openhands")


def adapter_for(harness: str) -> ModuleType:
    if harness in HARNESSES:
        try:
            return importlib.import_module(f".{harness.replace('-', '_')}", __name__)
        except ModuleNotFoundError:
            pass
    return importlib.import_module(".generic", __name__)
