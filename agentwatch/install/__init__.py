"""`agentwatch install` / `uninstall` / `install --list`: hook entries in each harness's own config.

install(harness, scope) plans the change (core.FileChange: bytes before and
after), and applies it unless dry_run: a backup of every file it changes,
then an atomic write keeping the file's mode. A second install changes
nothing and says `already_installed`. uninstall removes exactly agentwatch's
entries. See docs/install.md for each harness's file, events and caveats.
"""

from __future__ import annotations

from pathlib import Path

from agentwatch.coverage import hookconfig, manifest
from agentwatch.errors import AgentwatchError
from agentwatch.record import adapters

from . import cline, narrowing, overlap, sharing, versions
from .core import ConfigMalformed, ConfigUnwritable, FileChange, InstallError, Listing, Result, apply, read_bytes
from .harnesses import JSON_HARNESSES, JsonHarness, claude_managed_settings
from .jsonconfig import dump, found, hooks_of, is_leftover, merge, parse

HARNESSES = list(adapters.HARNESSES)
SCOPES = ["user", "project"]

__all__ = [
    "HARNESSES", "SCOPES", "ConfigMalformed", "ConfigUnwritable", "InstallError", "Listing", "Result",
    "install", "uninstall", "list_installed", "scopes_of",
]


def scopes_of(harness: str) -> list[str]:
    _check_harness(harness)
    if harness == cline.NAME:
        return list(SCOPES)
    return [s for s in SCOPES if s in JSON_HARNESSES[harness].paths]


def _check_harness(harness: str) -> None:
    if harness not in HARNESSES:
        raise InstallError(f"unknown harness {harness!r}; choose one of: {', '.join(HARNESSES)}")


def _scope(harness: str, scope: str | None) -> str:
    allowed = scopes_of(harness)
    if scope is None:
        # OpenHands reads only the first hooks file it finds, and a project file hides the user one.
        return "project" if harness == "openhands" else allowed[0]
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r}; choose user or project")
    if scope not in allowed:
        raise InstallError(f"{harness} has no {scope}-scope hooks; use --scope {' or '.join(allowed)}")
    return scope


def install(harness: str, scope: str | None = None, project: Path | None = None, dry_run: bool = False,
            narrow: bool = False) -> Result:
    """Merge agentwatch's hook entries into `harness`'s config (or, with dry_run, say what would change).

    Never drops an event installed earlier unless `narrow` (narrowing.py).
    """
    return _run(harness, scope, project, dry_run, install=True, narrow=narrow)


def uninstall(harness: str, scope: str | None = None, project: Path | None = None, dry_run: bool = False) -> Result:
    """Remove exactly agentwatch's hook entries from `harness`'s config."""
    return _run(harness, scope, project, dry_run, install=False)


def _run(harness: str, scope: str | None, project: Path | None, dry_run: bool, install: bool,
         narrow: bool = False) -> Result:
    _check_harness(harness)
    scope = _scope(harness, scope)
    project = Path(project) if project is not None else Path.cwd()
    target = location(harness, scope, project)
    if install:
        clash = overlap.conflicts(harness, scope, lambda h, s: location(h, s, project),
                                  lambda h, s: _installed(h, s, project))
        if clash:
            raise InstallError(overlap.refusal(harness, target, clash))
    elif harness != cline.NAME:
        kept = _uninstall_shared(harness, scope, target, project, dry_run)
        if kept is not None:
            return kept
    if harness == cline.NAME:
        changes, existing = cline.plan(scope, project, install)
        had = bool(existing)
        events = list(cline.EVENTS) if install else sorted(existing)
        command = cline.command_line("EVENT", target) if install else ""
        notes = list(cline.NOTES) if install else []
    else:
        spec = JSON_HARNESSES[harness]
        events, notes = [], []
        added: list[str] = []
        removed: list[str] = []
        if install:
            found_version = versions.version_of(harness)
            version = found_version[0] if found_version else None
            events, notes = spec.select(version)
            step = narrowing.plan(spec, version, events, list(_ours_in(spec, target)))
            if step.narrowed and not narrow:
                found_text = f"{harness} {versions.show(version)} found" if version else f"{harness} version unknown"
                raise InstallError(narrowing.refusal(spec, found_text, step))
            events, added, removed = step.events, step.added, step.removed
            notes = step.notes + notes + versions.other_readers(harness) + spec.notes_for(scope)
        change, had_found = _json_change(spec, target, events if install else None)
        changes, had = [change], bool(had_found)
        if not install:
            events = list(had_found)
        command = spec.command("EVENT" if spec.event_arg else None, target) if install else ""
    changed = any(c.action != "unchanged" for c in changes)
    if install:
        status = "already_installed" if not changed else ("updated" if had else "installed")
    else:
        status = "uninstalled" if had else "not_installed"
    result = Result(harness, scope, "install" if install else "uninstall", status, dry_run, changes, events,
                    command, notes)
    if install and harness != cline.NAME and had:
        result.added, result.removed = added, removed
    if not dry_run:
        for change in changes:
            apply(change)
        try:
            _remember(harness, scope, target, events if install else None)
        except (OSError, AgentwatchError) as exc:  # the config is written; only the watch misses it
            result.notes.append(f"could not record this install for the daemon's watch "
                                f"({manifest.default_path()}): {exc}")
    return result


def _sharers(harness: str, scope: str, target: Path, project: Path) -> list[str]:
    others = [h for h in JSON_HARNESSES if scope in JSON_HARNESSES[h].paths]
    return sharing.sharers(harness, scope, target, lambda h, s: location(h, s, project), others)


def _uninstall_shared(harness: str, scope: str, target: Path, project: Path, dry_run: bool) -> Result | None:
    """An uninstall from a file another harness is installed in too: its entries stay (sharing.py).
    None when no other harness is remembered there: the ordinary uninstall."""
    installed = sharing.remembered(scope, target, _sharers(harness, scope, target, project))
    if not installed:
        return None
    was = bool(sharing.remembered(scope, target, [harness]))
    before = read_bytes(target)
    result = Result(harness, scope, "uninstall", "uninstalled" if was else "not_installed", dry_run,
                    [FileChange(target, before, before)], [], "", [sharing.kept_note(harness, scope, installed)])
    if was and not dry_run:
        _remember(harness, scope, target, None)
    return result


def _remember(harness: str, scope: str, target: Path, events: list[str] | None) -> None:
    """Tell the daemon's watch what this install wrote (coverage/manifest.py); an uninstall forgets it.

    The entries are remembered exactly as written (their `--via` names `target` as given); the
    file by its absolute path, since the daemon runs elsewhere.
    """
    where = str(target.absolute())
    if events is None:
        manifest.forget(harness, scope, where)
        return
    if harness == cline.NAME:
        import hashlib

        expected = {e: "sha256:" + hashlib.sha256(cline.script(e, target)).hexdigest() for e in events}
        manifest.remember(manifest.Installed(harness, scope, where, "scripts", expected=expected))
        return
    spec = JSON_HARNESSES[harness]
    related = []
    if harness == "claude-code":
        managed = claude_managed_settings()
        related = [str(target.absolute().with_name("settings.local.json")), *([str(managed)] if managed else [])]
    manifest.remember(manifest.Installed(harness, scope, where, "json", spec.layout.grouped,
                                         spec.expected(events, target), related))


def location(harness: str, scope: str, project: Path) -> Path:
    """The config file (Cline: the hooks directory) that `harness`'s install writes in `scope`."""
    if harness == cline.NAME:
        return cline.hooks_dir(scope, project)
    return JSON_HARNESSES[harness].paths[scope](project)


def _installed(harness: str, scope: str, project: Path) -> bool:
    if scope not in scopes_of(harness):
        return False
    if harness == cline.NAME:
        return cline.listing(scope, project).installed
    return _json_listing(JSON_HARNESSES[harness], scope, project).installed


def _ours_in(spec: JsonHarness, path: Path) -> dict:
    """{event: our handlers} already in the config; {} when it is missing or unreadable (the
    change that follows reports what is wrong with it)."""
    try:
        return found(parse(path, read_bytes(path)), spec.layout, spec.is_ours)
    except InstallError:
        return {}


def _json_change(spec: JsonHarness, path: Path, events: list[str] | None) -> tuple[FileChange, dict]:
    """The change that leaves exactly `events` as agentwatch's entries (None: none, an uninstall)."""
    before = read_bytes(path)
    doc = parse(path, before)
    hooks_of(path, doc, sorted(set(spec.all_events()) | set(events or [])), spec.layout)
    had = found(doc, spec.layout, spec.is_ours)
    new = merge(doc, spec.expected(events, path) if events else {}, spec.layout, spec.is_ours)
    if new == doc:
        after = before  # nothing to do: not even reformatting
    elif events is None and is_leftover(new, spec.layout):
        after = None  # a file only agentwatch wrote, now empty: remove it
    else:
        after = dump(new, before)
    return FileChange(path, before, after), had


def list_installed(project: Path | None = None) -> list[Listing]:
    """Per harness and scope: is agentwatch installed there, in which file, for which events, with what command."""
    project = Path(project) if project is not None else Path.cwd()
    rows: list[Listing] = []
    for harness in HARNESSES:
        for scope in scopes_of(harness):
            if harness == cline.NAME:
                rows.append(cline.listing(scope, project))
            else:
                rows.append(_json_listing(JSON_HARNESSES[harness], scope, project))
    remembered = {(e.harness, e.scope, e.path): e for e in manifest.load()}
    for row in rows:
        if row.harness in JSON_HARNESSES and row.installed:
            others = _sharers(row.harness, row.scope, Path(row.path), project)
            asked = sharing.remembered(row.scope, Path(row.path), [row.harness, *others])
            row.shared_with = [h for h in asked if h != row.harness]
            if asked and row.harness not in asked:  # the entries are another harness's install
                row.state, row.events, row.commands = "not_installed", [], []
        entry = remembered.get((row.harness, row.scope, str(Path(row.path).absolute())))
        if entry is not None:
            row.findings = [f.to_json() for f in hookconfig.inspect(entry).findings]
    return rows


def _json_listing(spec: JsonHarness, scope: str, project: Path) -> Listing:
    path = spec.paths[scope](project)
    try:
        doc = parse(path, read_bytes(path))
        hooks_of(path, doc, spec.all_events(), spec.layout)
    except (ConfigMalformed, ConfigUnwritable) as exc:
        return Listing(spec.name, scope, str(path), "error", [], [], str(exc))
    mine = found(doc, spec.layout, spec.is_ours)
    commands = list(dict.fromkeys(c for hs in mine.values() for h in hs for c in spec.layout.commands(h) if c))
    if not mine:
        state = "not_installed"
    else:
        # Installed: every entry of ours is the one this version writes for its event. Which events
        # to register depends on the harness version; --list does not run the harness to find out.
        try:
            exact = merge(doc, spec.expected(list(mine), path), spec.layout, spec.is_ours) == doc
        except InstallError:
            exact = False  # no usable interpreter to compare with
        current = set(spec.all_events()) - set(spec.retired)
        state = "installed" if exact and set(mine) <= current else "outdated"
    return Listing(spec.name, scope, str(path), state, list(mine), commands)
