"""What a person sees: a command run in a real terminal (tmux), and the screen it leaves.

    with Terminal(tmp_path, width=80, height=24, env=env) as term:
        screen = term.run("agentwatch health", cwd=tmp_path)

Each Terminal is a tmux server of its own (`-L` with a name under the test's
temp dir), so tests never meet a person's tmux or each other. The command runs
as the pane's only process, with the environment the test gives; `run` waits
for an end marker the command line prints and returns the screen above it,
trailing spaces and blank lines removed. No timing is asserted: waiting is
polling with a deadline that fails the test with what the screen showed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Optional

MARKER = "<<agentwatch-test-done>>"
# Read at import: the root conftest removes AGENTWATCH_* variables from each test's environment.
UPDATE = os.environ.get("AGENTWATCH_UPDATE_GOLDENS") == "1"
DEADLINE_S = 60.0


def available() -> bool:
    return shutil.which("tmux") is not None


def strip_screen(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


class Terminal:
    def __init__(self, tmp: Path, *, width: int, height: int, env: dict[str, str]):
        self.width, self.height = width, height
        self.socket = f"aw-{uuid.uuid4().hex[:12]}"
        self.env = {**env, "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}
        self.env.pop("TMUX", None)
        self.env.pop("COLUMNS", None)
        self.env.pop("LINES", None)
        self.tmp = tmp
        self._session = 0

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run(self._tmux("kill-server"), capture_output=True, env=self.env, timeout=30)

    def _tmux(self, *args: str) -> list[str]:
        return ["tmux", "-u", "-L", self.socket, *args]

    def run(self, command: str, *, cwd: Optional[Path] = None, exit_code: Optional[int] = None) -> str:
        """Run `command` (a shell line) on a fresh screen; the screen above the end marker."""
        self._session += 1
        name = f"s{self._session}"
        script = f"{command}; printf '\\n%s %s\\n' '{MARKER}' \"$?\"; sleep 3600"
        subprocess.run(
            self._tmux("new-session", "-d", "-s", name, "-x", str(self.width), "-y", str(self.height),
                       "-c", str(cwd or self.tmp), "sh -c " + shlex.quote(script)),
            check=True, env=self.env, timeout=30,
        )
        deadline = time.monotonic() + DEADLINE_S
        screen = ""
        while time.monotonic() < deadline:
            screen = subprocess.run(self._tmux("capture-pane", "-p", "-t", name), capture_output=True, text=True,
                                    env=self.env, timeout=30).stdout
            if MARKER in screen:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"{command!r} did not finish in the terminal; the screen:\n{screen}")
        subprocess.run(self._tmux("kill-session", "-t", name), capture_output=True, env=self.env, timeout=30)
        body, _, tail = screen.partition(MARKER)
        code = int(tail.split()[0])
        if exit_code is not None:
            assert code == exit_code, f"{command!r} exited {code}, expected {exit_code}; the screen:\n{body}"
        return strip_screen(body)


def goldens_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "goldens"


def check_golden(name: str, screen: str) -> None:
    """Compare with tests/goldens/NAME; `make goldens` (AGENTWATCH_UPDATE_GOLDENS=1) rewrites it."""
    path = goldens_dir() / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(screen, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}: run `make goldens` and review the diff"
    expected = path.read_text(encoding="utf-8")
    assert screen == expected, f"{name} differs from its golden file (run `make goldens` if intended):\n{screen}"
