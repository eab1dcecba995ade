"""What `install` wrote, remembered so the daemon can watch it (docs/install.md, "What the daemon watches").

One JSON file, `$XDG_STATE_HOME/agentwatch/installed.json` (0600), lists per
harness and scope the config file (Cline: the hooks directory), the exact
entries agentwatch wrote per event and the other files of that harness that
can change where or whether the hook delivers (Claude Code's
settings.local.json beside a project settings.json). `install` adds or replaces
its entry after writing the config; `uninstall` removes it. The daemon reads
the file at every look, so an install made while it runs is watched from the
next look on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agentwatch import paths
from agentwatch.verify.atomic import write_atomic

SCHEMA = 1
FILE_NAME = "installed.json"


@dataclass
class Installed:
    """One harness's hook install in one scope."""

    harness: str
    scope: str
    path: str  # the config file, or Cline's hooks directory
    kind: str  # "json" (entries under `hooks` in a JSON file) | "scripts" (one file per event)
    grouped: bool = True  # json: hooks.<Event> = [{matcher, hooks: [...]}] (else a flat list of handlers)
    expected: dict[str, Any] = field(default_factory=dict)  # json: event -> entry; scripts: event -> sha256
    related: list[str] = field(default_factory=list)  # other files of the harness that can redirect or disable

    def to_json(self) -> dict:
        return {"harness": self.harness, "scope": self.scope, "path": self.path, "kind": self.kind,
                "grouped": self.grouped, "expected": self.expected, "related": self.related}

    @classmethod
    def from_json(cls, doc: dict) -> "Installed":
        return cls(str(doc["harness"]), str(doc["scope"]), str(doc["path"]), str(doc.get("kind", "json")),
                   bool(doc.get("grouped", True)), dict(doc.get("expected") or {}),
                   [str(p) for p in doc.get("related") or []])

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.harness, self.scope, self.path)


def default_path() -> Path:
    return paths.state_dir() / FILE_NAME


def load(path: Optional[Path] = None) -> list[Installed]:
    """Every remembered install; [] when nothing was installed (or the file is unreadable: said by `problem`)."""
    return read(path)[0]


def read(path: Optional[Path] = None) -> tuple[list[Installed], Optional[str]]:
    """(installs, a problem reading the manifest or None)."""
    path = path or default_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot read {path}: {exc.strerror or exc}"
    try:
        doc = json.loads(data)
        return [Installed.from_json(e) for e in doc.get("installs", [])], None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return [], f"{path} is not a manifest agentwatch wrote ({type(exc).__name__})"


def remember(entry: Installed, path: Optional[Path] = None) -> None:
    """Add `entry`, replacing one for the same harness, scope and file."""
    path = path or default_path()
    entries = [e for e in load(path) if e.key != entry.key]
    entries.append(entry)
    _write(path, entries)


def forget(harness: str, scope: str, config_path: str, path: Optional[Path] = None) -> None:
    path = path or default_path()
    entries = load(path)
    kept = [e for e in entries if e.key != (harness, scope, config_path)]
    if len(kept) != len(entries):
        _write(path, kept)


def _write(path: Path, entries: list[Installed]) -> None:
    doc = {"schema": SCHEMA, "installs": [e.to_json() for e in sorted(entries, key=lambda e: e.key)]}
    data = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")
    write_atomic(path, data, 0o600)


def watched_paths(entries: list[Installed]) -> list[str]:
    """Every file (or directory) a look at the installs reads."""
    out: list[str] = []
    for entry in entries:
        for p in (entry.path, *entry.related):
            if p not in out:
                out.append(p)
    return out


def fingerprint(paths_: list[str]) -> tuple:
    """What a cheap look sees of each path (stat identity); equal fingerprints: nothing to re-read."""
    out: list[tuple] = []
    for p in paths_:
        try:
            st = os.stat(p)
        except OSError as exc:
            out.append((p, "missing", exc.errno))
            continue
        listing: tuple = ()
        if os.path.isdir(p):
            try:
                names = sorted(os.listdir(p))
            except OSError:
                names = []
            listing = tuple((n, _stat_key(os.path.join(p, n))) for n in names)
        out.append((p, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, listing))
    return tuple(out)


def _stat_key(p: str) -> tuple:
    try:
        st = os.stat(p)
    except OSError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
