"""One hooks file, two harnesses: who asked for agentwatch's entries in it (docs/install.md).

Copilot CLI and VS Code read the same hook files (`.github/hooks/*.json`, and
`~/.copilot/hooks/` in newer VS Code builds), every JSON file of the directory.
A file per harness would make each run agentwatch twice, so `copilot` and
`vscode` install one file and one set of entries. Which of the two asked for
it is what the install manifest (coverage/manifest.py) remembers per harness,
scope and file: an uninstall of one leaves the entries while the other is
still installed there, and `install --list` reports each by what it asked.

A file no sharer is remembered for (written before the manifest, or the
manifest lost) is both harnesses' install, as the entries say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from agentwatch.coverage import manifest


def sharers(harness: str, scope: str, target: Path, location: Callable[[str, str], Path],
            harnesses: list[str]) -> list[str]:
    """The other harnesses whose install in `scope` writes `target` too."""
    return [h for h in harnesses if h != harness and location(h, scope) == target]


def remembered(scope: str, target: Path, among: list[str]) -> list[str]:
    """Those of `among` the manifest remembers installing into `target` in `scope`."""
    where = str(target.absolute())
    known = {(e.harness, e.scope, e.path) for e in manifest.load()}
    return [h for h in among if (h, scope, where) in known]


def kept_note(harness: str, scope: str, others: list[str]) -> str:
    names = " and ".join(others)
    return (f"the entries stay: {names} is installed in this file too, and {harness} runs the same file, so its "
            f"events are still recorded; `agentwatch uninstall {others[0]} --scope {scope}` removes them")
