"""Debian's headless Chromium, driven from the tests: the DOM after the page ran, and screenshots.

`dump_dom` returns what the browser holds once the page has loaded and anything on it ran
(`--dump-dom` serializes the live DOM, so an injected script that changed the page shows in
it); `screenshot` writes a PNG at a given window size. Chromium runs as root here (CI does),
so its sandbox is off (`--no-sandbox`); it gets a profile directory of its own per call and
no network but loopback is ever named to it.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "test-artifacts" / "ui"
NAMES = ("chromium", "chromium-browser", "google-chrome")


def binary() -> str:
    """The browser, or the test's end: under CI a failure, elsewhere a skip saying why."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    problem = "no headless Chromium on this machine"
    if os.environ.get("CI"):
        pytest.fail(f"{problem}; CI runs the browser tests (`make test` installs chromium when it is missing)")
    pytest.skip(f"{problem}: the review page's browser tests need it (`make browser`)")


def _run(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="aw-chromium-") as profile:
        return subprocess.run(
            [binary(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=timeout,
        )


def dump_dom(url: str, *, wait_ms: int = 1000) -> str:
    """The page's DOM after load, and after `wait_ms` of virtual time for anything it set off."""
    proc = _run([f"--virtual-time-budget={wait_ms}", "--dump-dom", url])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def screenshot(url: str, name: str, *, width: int = 1280, height: int = 800) -> Path:
    """A PNG of the page at width x height, kept under test-artifacts/ui/; its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    proc = _run([f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={out}", url])
    assert proc.returncode == 0 and out.exists(), proc.stderr[-2000:]
    return out


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])
