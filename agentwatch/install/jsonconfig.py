"""Merging agentwatch's hook entries into a harness's JSON config, touching nothing else.

Two layouts cover the JSON harnesses:

- grouped (Claude Code, Codex, Gemini CLI, OpenHands):
  `hooks.<Event> = [{matcher?, hooks: [handler, ...]}, ...]`; agentwatch adds
  one group of its own per event.
- flat (Cursor, Copilot, VS Code): `hooks.<event> = [handler, ...]`;
  agentwatch adds one handler per event.

A handler is agentwatch's when its command (the `command` key, or `bash` for
Copilot) is the hook client for this harness (command.is_ours). Merging is
by that marker, never by position: other entries, other events and other
top-level keys keep their values and their order. An entry of ours that is
outdated (another interpreter, another path) is replaced where it stands;
ours under an event agentwatch no longer registers is removed.

The config is parsed strictly: invalid JSON (comments included: they would
be lost on rewrite), duplicate keys (one would be lost), a non-object at the
top or at `hooks`, a non-list event, or a non-object entry under an event
agentwatch writes are refused with ConfigMalformed, naming file and place.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .core import ConfigMalformed


@dataclass
class Layout:
    """How one harness's hooks file is shaped."""

    grouped: bool
    command_key: str = "command"
    skeleton: dict = field(default_factory=dict)  # top-level keys a new file starts with
    # A file only agentwatch writes (.github/hooks/agentwatch.json): deleted when nothing else is left.
    dedicated: bool = False
    # Command keys earlier installs used (Copilot's `bash`): an entry under one is ours too, and replaced.
    old_command_keys: tuple[str, ...] = ()

    def commands(self, handler: dict) -> list:
        return [handler.get(key) for key in (self.command_key, *self.old_command_keys)]


# ---------------------------------------------------------------- parse / dump


def parse(path: Path, data: bytes | None) -> dict:
    """The config as an ordered dict; {} for a missing or empty file."""
    if data is None or not data.strip():
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigMalformed(path, f"is not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]

    def pairs(items: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in items:
            if key in out:
                raise ConfigMalformed(path, f"has the key {key!r} twice in one object (rewriting would drop one)")
            out[key] = value
        return out

    def constant(name: str) -> Any:
        raise ConfigMalformed(path, f"is not valid JSON ({name} is not a JSON value)")

    try:
        doc = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as exc:
        hint = " (comments or trailing commas are not JSON; agentwatch will not rewrite such a file)"
        raise ConfigMalformed(
            path, f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}{hint}"
        ) from None
    if not isinstance(doc, dict):
        raise ConfigMalformed(path, f"top level is a JSON {_kind(doc)}, expected an object")
    return doc


def dump(doc: dict, original: bytes | None) -> bytes:
    """Serialize with the original's indentation (2 spaces for a new file) and final newline."""
    indent: int | str | None = 2
    newline = True
    if original is not None and original.strip():
        text = original.decode("utf-8", "replace")
        match = re.search(r"\n([ \t]+)\S", text)
        if match:
            ws = match.group(1)
            indent = ws if "\t" in ws else len(ws)
        elif "\n" not in text.strip():
            indent = None  # a one-line file stays one line
        newline = text.endswith("\n")
    out = json.dumps(doc, indent=indent, ensure_ascii=False)
    return (out + ("\n" if newline else "")).encode("utf-8")


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


# ---------------------------------------------------------------- validation


def hooks_of(path: Path, doc: dict, events: list[str], layout: Layout) -> dict | None:
    """The `hooks` object, after checking the places agentwatch reads and writes."""
    hooks = doc.get("hooks")
    if hooks is None:
        if "hooks" in doc:
            raise ConfigMalformed(path, "`hooks` is null, expected an object")
        return None
    if not isinstance(hooks, dict):
        raise ConfigMalformed(path, f"`hooks` is a JSON {_kind(hooks)}, expected an object")
    for event in events:
        if event not in hooks:
            continue
        entries = hooks[event]
        if not isinstance(entries, list):
            raise ConfigMalformed(path, f"`hooks.{event}` is a JSON {_kind(entries)}, expected an array")
        for i, entry in enumerate(entries):
            where = f"hooks.{event}[{i}]"
            if not isinstance(entry, dict):
                raise ConfigMalformed(path, f"`{where}` is a JSON {_kind(entry)}, expected an object")
            if layout.grouped and "hooks" in entry:
                inner = entry["hooks"]
                if not isinstance(inner, list):
                    raise ConfigMalformed(path, f"`{where}.hooks` is a JSON {_kind(inner)}, expected an array")
                for j, handler in enumerate(inner):
                    if not isinstance(handler, dict):
                        raise ConfigMalformed(
                            path, f"`{where}.hooks[{j}]` is a JSON {_kind(handler)}, expected an object"
                        )
    return hooks


# ---------------------------------------------------------------- finding ours


def _handlers(entry: Any, layout: Layout) -> list:
    """The handlers an entry holds: a group's `hooks`, or the entry itself (flat, or a flat item in a grouped file)."""
    if not isinstance(entry, dict):
        return []
    if layout.grouped and isinstance(entry.get("hooks"), list):
        return entry["hooks"]
    return [entry]


def ours_in(entry: Any, layout: Layout, is_ours: Callable[[Any], bool]) -> list:
    return [h for h in _handlers(entry, layout) if isinstance(h, dict) and any(map(is_ours, layout.commands(h)))]


def _strip(entry: dict, layout: Layout, is_ours: Callable[[Any], bool]) -> dict | None:
    """The entry without our handlers, or None when nothing of anyone else's is left in it."""
    if layout.grouped and isinstance(entry.get("hooks"), list):
        kept = [h for h in entry["hooks"] if not (isinstance(h, dict) and any(map(is_ours, layout.commands(h))))]
        if not kept:
            return None
        stripped = dict(entry)
        stripped["hooks"] = kept
        return stripped
    return None if ours_in(entry, layout, is_ours) else entry


def found(doc: dict, layout: Layout, is_ours: Callable[[Any], bool]) -> dict[str, list[dict]]:
    """{event: [our handlers]} for every event holding one, in file order."""
    hooks = doc.get("hooks")
    result: dict[str, list[dict]] = {}
    if not isinstance(hooks, dict):
        return result
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            continue
        mine = [h for entry in entries for h in ours_in(entry, layout, is_ours)]
        if mine:
            result[event] = mine
    return result


# ---------------------------------------------------------------- merge


def merge(doc: dict, expected: dict[str, dict], layout: Layout, is_ours: Callable[[Any], bool]) -> dict:
    """A copy of `doc` holding exactly `expected` ({event: entry}) as agentwatch's entries.

    `expected` empty is an uninstall. Only our entries move; an event list or
    the `hooks` object that ends up empty because our entries left is removed.
    """
    new = copy.deepcopy(doc)
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        if not expected:
            return new
        for key, value in layout.skeleton.items():
            new.setdefault(key, value)
        hooks = new["hooks"] = {}
    emptied = False
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue  # not an event list (Gemini's hooks.enabled, say): not ours to judge
        want = expected.get(event)
        mine = [i for i, entry in enumerate(entries) if ours_in(entry, layout, is_ours)]
        if not mine:
            continue
        if want is not None and len(mine) == 1 and entries[mine[0]] == want:
            continue  # already exactly right
        rebuilt: list = []
        placed = False
        for i, entry in enumerate(entries):
            if i not in mine:
                rebuilt.append(entry)
                continue
            rest = _strip(entry, layout, is_ours)
            if rest is not None:
                rebuilt.append(rest)  # ours shared an entry with someone else's: keep theirs
            elif want is not None and not placed:
                rebuilt.append(copy.deepcopy(want))  # replace ours where it stood
                placed = True
        if want is not None and not placed:
            rebuilt.append(copy.deepcopy(want))
        if rebuilt:
            hooks[event] = rebuilt
        else:
            del hooks[event]
            emptied = True
    for event, want in expected.items():
        entries = hooks.get(event)
        if entries is None:
            hooks[event] = [copy.deepcopy(want)]
        elif not any(ours_in(entry, layout, is_ours) for entry in entries):
            entries.append(copy.deepcopy(want))
    if emptied and not hooks:
        del new["hooks"]
    return new


def is_leftover(doc: dict, layout: Layout) -> bool:
    """True when a dedicated file holds nothing but the skeleton agentwatch started it with."""
    rest = {k: v for k, v in doc.items() if not (k in layout.skeleton and v == layout.skeleton[k])}
    return layout.dedicated and (not rest or rest == {"hooks": {}})
