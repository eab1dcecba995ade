"""Cline: one executable per event, named after the event, in a hooks directory.

Cline passes the event only through the executable's name, so each script
runs the client with `--event <Event>`. A script is agentwatch's when it
carries the MARKER comment; a file of that name without it is someone
else's hook and is never overwritten (install refuses and names it) nor
removed. When the client cannot run at all (agentwatch removed, interpreter
gone) the script still replies `{"cancel":false}`, the neutral answer, and
exits 0.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from agentwatch import platform_layer

from . import command as cmd
from .core import FileChange, InstallError, Listing, read_bytes

NAME = "cline"
# The hook files Cline's runtimes run (sdk/packages/core/src/hooks/hook-file-config.ts maps each to
# an SDK event; apps/vscode/src/sdk/hooks-adapter.ts wires the extension's). TaskResume runs only
# with CLINE_HOOK_AGENT_RESUME=1 and PreCompact maps to no event, so neither is written.
EVENTS = ["TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel",
          "TaskError", "SessionShutdown"]
MARKER = "# agentwatch: managed hook"
NEUTRAL = '{"cancel":false}'
SCRIPT_MODE = 0o755
NOTES = ["if Cline does not run these scripts, check that hooks are enabled in its settings"]


def documents_dir() -> Path:
    """The user's documents folder as Cline finds it: `xdg-user-dir DOCUMENTS` on Linux, else ~/Documents.

    (apps/vscode/src/core/storage/documents-path.ts; the CLI uses ~/Documents.)
    """
    if platform_layer.is_linux():
        program = shutil.which("xdg-user-dir")
        if program is not None:
            try:
                done = subprocess.run([program, "DOCUMENTS"], stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=5, check=False)
            except (OSError, subprocess.SubprocessError):
                done = None
            found = done.stdout.decode("utf-8", "replace").strip() if done and done.returncode == 0 else ""
            if found and os.path.isabs(found):
                return Path(found)
    return Path.home() / "Documents"


def cline_dir() -> Path:
    """Cline's own directory: $CLINE_DIR, else ~/.cline (sdk/packages/shared/src/storage/paths.ts)."""
    env = os.environ.get("CLINE_DIR", "").strip()
    return Path(env) if env and os.path.isabs(env) else Path.home() / ".cline"


def hooks_dir(scope: str, project: Path) -> Path:
    """The directory the VS Code extension reads (the first of hooks_dirs)."""
    return hooks_dirs(scope, project)[0]


def hooks_dirs(scope: str, project: Path) -> list[Path]:
    """Every directory install writes, so that each of Cline's runtimes runs the scripts once.

    The extension reads `<documents>/Cline/Hooks` (apps/vscode/src/core/storage/disk.ts,
    ensureHooksDirectoryExists, through documents-path.ts). The CLI and SDK read
    `~/Documents/Cline/Hooks` and `$CLINE_DIR/hooks` (~/.cline/hooks), both
    (sdk/packages/shared/src/storage/paths.ts, resolveHooksConfigSearchPaths). Where the
    documents folder is ~/Documents one directory serves both runtimes, and writing the
    second too would run every script twice in the CLI; elsewhere the CLI's is ~/.cline/hooks.
    Project scope: `.clinerules/hooks`, which both read.
    """
    if scope != "user":
        return [project / ".clinerules" / "hooks"]
    extension = documents_dir() / "Cline" / "Hooks"
    if extension == Path.home() / "Documents" / "Cline" / "Hooks":
        return [extension]
    return [extension, cline_dir() / "hooks"]


def command_line(event: str, via: Path | None = None) -> str:
    words = cmd.argv(NAME, event, via=str(via) if via is not None else None)
    return f"{cmd.shell_words(words)} || printf '%s\\n' {shlex.quote(NEUTRAL)}"


def script(event: str, via: Path | None = None) -> bytes:
    return (
        "#!/bin/sh\n"
        f"{MARKER} (agentwatch install cline); `agentwatch uninstall cline` removes it.\n"
        f"# Records Cline's {event} event; always exits 0 and replies {NEUTRAL}.\n"
        f"{command_line(event, via)}\n"
    ).encode("utf-8")


def is_ours(data: bytes | None) -> bool:
    if data is None:
        return False
    head = data[:4096].decode("utf-8", "replace").splitlines()[:3]
    return any(line.startswith(MARKER) for line in head)


def _scripts(directory: Path) -> dict[str, bytes]:
    """{event name: bytes} of agentwatch's scripts in `directory`."""
    found: dict[str, bytes] = {}
    try:
        entries = sorted(p for p in directory.iterdir() if p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return found
    except OSError:
        return found
    for path in entries:
        if "." in path.name:
            continue  # event names have no dots; backups and temporary files do
        data = read_bytes(path)
        if data is not None and is_ours(data):
            found[path.name] = data
    return found


def plan(scope: str, project: Path, install: bool) -> tuple[list[FileChange], dict[str, bytes]]:
    """The file changes for install (or uninstall), and agentwatch's scripts as found."""
    changes: list[FileChange] = []
    found: dict[str, bytes] = {}
    for directory in hooks_dirs(scope, project):
        existing = _scripts(directory)
        for name, data in existing.items():
            found.setdefault(name, data)
        if install:
            for event in EVENTS:
                path = directory / event
                if path.is_dir():
                    raise InstallError(f"refusing to install: {path} is a directory, expected Cline's {event} hook file")
                before = read_bytes(path)
                if before is not None and not is_ours(before):
                    raise InstallError(
                        f"refusing to overwrite {path}: it exists and is not agentwatch's (no {MARKER!r} line); "
                        "move it away or merge it by hand"
                    )
                changes.append(FileChange(path, before, script(event, directory), mode=SCRIPT_MODE))
        for name, data in existing.items():
            if not install or name not in EVENTS:
                changes.append(FileChange(directory / name, data, None))
    return changes, found


def listing(scope: str, project: Path) -> Listing:
    directories = hooks_dirs(scope, project)
    found = [(d, _scripts(d)) for d in directories]
    existing: dict[str, bytes] = {}
    for _, scripts in found:
        for name, data in scripts.items():
            existing.setdefault(name, data)
    events = [e for e in EVENTS if e in existing] + sorted(e for e in existing if e not in EVENTS)
    commands = []
    for event in events:
        lines = existing[event].decode("utf-8", "replace").splitlines()
        commands += [line for line in lines if line and not line.startswith("#")][:1]
    if not existing:
        state = "not_installed"
    else:
        try:
            exact = all(scripts.get(e) == script(e, d) for d, scripts in found for e in EVENTS) and all(
                len(scripts) == len(EVENTS) for _, scripts in found)
        except InstallError:
            exact = False
        state = "installed" if exact else "outdated"
    return Listing(NAME, scope, str(directories[0]), state, events, commands)
