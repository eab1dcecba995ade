"""Refusing an install that would make one harness run agentwatch's hook twice for one event.

Harnesses read each other's config files (READS below, from each harness's
documentation): VS Code runs the hooks in Claude Code's settings files and in
`.github/hooks/` and `~/.copilot/hooks/`, Copilot CLI those in the
repository's `.claude/settings.json` and its own, Cursor those in Claude
Code's settings, and every harness reads both its user and its project file.
When two files that one harness reads both hold agentwatch's entries, that
harness runs the hook twice for each event and the event would be stored
twice under two record ids. agentwatch does not store it twice: install
refuses to create the second file's entries and says which harness would
read both and what already records its events (docs/install.md,
"Overlapping configs"). Copilot CLI and VS Code share one file, so
installing both there is one set of entries, not an overlap.

OpenHands reads only the first hooks file it finds, so its two scopes never
overlap (the project file hides the user one instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

# harness -> the (installer, scope) files it runs hooks from.
READS: dict[str, list[tuple[str, str]]] = {
    "claude-code": [("claude-code", "user"), ("claude-code", "project")],
    "codex": [("codex", "user"), ("codex", "project")],
    "gemini-cli": [("gemini-cli", "user"), ("gemini-cli", "project")],
    "cursor": [("cursor", "user"), ("cursor", "project"), ("claude-code", "user"), ("claude-code", "project")],
    "copilot": [("copilot", "user"), ("copilot", "project"), ("claude-code", "project")],
    "vscode": [("vscode", "user"), ("vscode", "project"), ("claude-code", "user"), ("claude-code", "project")],
    "cline": [("cline", "user"), ("cline", "project")],
    "openhands": [],
}

Location = Callable[[str, str], Path]  # (installer, scope) -> the file or directory it writes
Installed = Callable[[str, str], bool]  # (installer, scope) -> agentwatch's entries are there


def conflicts(harness: str, scope: str, where: Location, installed: Installed) -> list[tuple[str, Path, str]]:
    """(reader, other file, its install) for each harness that would run agentwatch's hook twice."""
    target = where(harness, scope)
    found: list[tuple[str, Path, str]] = []
    for reader, files in READS.items():
        paths = {where(h, s): (h, s) for h, s in files}
        if target not in paths:
            continue
        for path, (other, other_scope) in paths.items():
            if path != target and installed(other, other_scope):
                found.append((reader, path, f"{other} --scope {other_scope}"))
    return found


def refusal(harness: str, target: Path, found: list[tuple[str, Path, str]]) -> str:
    readers = sorted({reader for reader, _, _ in found})
    others = sorted({(str(path), how) for _, path, how in found})
    return (
        f"refusing to install {harness} in {target}: "
        + ", ".join(readers) + (" runs" if len(readers) == 1 else " run")
        + " the agentwatch hooks in "
        + " and ".join(f"{path} (agentwatch install {how})" for path, how in others)
        + " too, so each of its events would be recorded twice. Those hooks already record its events "
        "(each record names its sender from the payload); to record through this file instead, run "
        + " and ".join(f"agentwatch uninstall {how}" for _, how in others) + " first"
    )
