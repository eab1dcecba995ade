"""The installed version of a harness, read from its own CLI, to decide which events to register.

Some harnesses reject a whole config file over one event name they do not
know (Claude Code's settings schema allows no other key under `hooks`;
Cursor's validator reports "Unknown hook type"), so an event newer than the
installed build must not be written there. `version_of` runs the harness's
`--version` (a short timeout, no shell, no stdin) and reads the first
dotted number it prints; None when the program is not on PATH, fails, or
prints no version. The installer then writes only the events every
hooks-capable build accepts, and says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess

# The programs that print each harness's version, tried in order. Each is the program whose
# validator reads the config the events are gated for.
PROGRAMS = {
    "claude-code": ("claude",),
    "codex": ("codex",),
    "gemini-cli": ("gemini",),
    "cursor": ("cursor",),
    "copilot": ("copilot",),
    "cline": ("cline",),
    "openhands": ("openhands",),
}
# Other programs that read the same config, with versions of their own that say nothing about
# which events the gated program accepts: Cursor's CLI agent, whose versions are dates
# (`cursor-agent --version`: 2025.08.25-…), reads ~/.cursor/hooks.json beside the editor, whose
# validator refuses an unknown hook type. Installs say they were found, never gate on them.
ALSO_READ_BY = {"cursor": ("cursor-agent",)}
TIMEOUT_S = 5.0
_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?:\.(\d+))?")

Version = tuple[int, int, int]


def parse(text: str) -> Version | None:
    """The first `X.Y[.Z]` in `text` that is not a date (`2025.08.25`), as a tuple."""
    for match in _VERSION.finditer(text):
        major, minor, patch = match.groups()
        if int(major) >= 1900:  # a year: a date-stamped build, not a release number
            continue
        return int(major), int(minor), int(patch or 0)
    return None


def version_of(harness: str) -> tuple[Version, str] | None:
    """(version, program path) of the installed harness, or None when it cannot be read."""
    for program in PROGRAMS.get(harness, ()):
        path = shutil.which(program)
        if path is None:
            continue
        try:
            done = subprocess.run(
                [path, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S, check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode != 0:
            continue
        version = parse(done.stdout.decode("utf-8", "replace")) or parse(done.stderr.decode("utf-8", "replace"))
        if version is not None:
            return version, path
    return None


def other_readers(harness: str) -> list[str]:
    """Notes on the other programs found that read `harness`'s config (ALSO_READ_BY)."""
    notes = []
    for program in ALSO_READ_BY.get(harness, ()):
        path = shutil.which(program)
        if path is None:
            continue
        printed = _first_line(path)
        notes.append(f"{program} {printed or '(version not printed)'} also reads this file; its versions "
                     f"are its own, so the events are gated on {' or '.join(PROGRAMS[harness])} --version")
    return notes


def _first_line(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip()[:80] if done.returncode == 0 and lines else ""


def show(version: Version) -> str:
    return ".".join(map(str, version))
