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

# The programs that print each harness's version, tried in order.
PROGRAMS = {
    "claude-code": ("claude",),
    "codex": ("codex",),
    "gemini-cli": ("gemini",),
    "cursor": ("cursor-agent", "cursor"),
    "copilot": ("copilot",),
    "cline": ("cline",),
    "openhands": ("openhands",),
}
TIMEOUT_S = 5.0
_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?:\.(\d+))?")

Version = tuple[int, int, int]


def parse(text: str) -> Version | None:
    """The first `X.Y[.Z]` in `text`, as a tuple."""
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


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


def show(version: Version) -> str:
    return ".".join(map(str, version))
