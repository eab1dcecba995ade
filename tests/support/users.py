"""Real second users, for what another uid on the machine can do.

The suite runs as root, so a test can create a user with `useradd`, chown a
path to it or run a process as it, and remove it again with `userdel`. Under
CI a missing `useradd` or a non-root run fails the test; elsewhere it skips,
saying why.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import time
from contextlib import contextmanager
from typing import Iterator

import pytest


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "creating a second user needs root"
    if not (shutil.which("useradd") and shutil.which("userdel")):
        return "useradd/userdel not found"
    return None


def _run(argv: list[str]) -> None:
    # Another process may hold the passwd lock for a moment (useradd exits 10 or 1 then): retry.
    for attempt in range(50):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if proc.returncode == 0:
            return
        if "lock" not in proc.stderr or attempt == 49:
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
        time.sleep(0.1)


@contextmanager
def system_user(prefix: str = "awt", *, private_group: bool = False) -> Iterator[pwd.struct_passwd]:
    """A fresh user (no home, no login shell), removed on exit.

    Its primary group is `users`, or with `private_group` a group of its own, named after it.
    """
    reason = _unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs real users for this test: {reason}")
        pytest.skip(reason)
    name = f"{prefix}{secrets.token_hex(4)}"
    group = "--user-group" if private_group else "--no-user-group"
    _run(["useradd", "--no-create-home", group, "--shell", "/bin/false", name])
    try:
        yield pwd.getpwnam(name)
    finally:
        _run(["userdel", name])
        if private_group:
            subprocess.run(["groupdel", name], capture_output=True, timeout=60)  # gone with the user already, usually


def as_user(user: pwd.struct_passwd) -> dict:
    """subprocess.run/Popen keywords that run the child as `user` (uid, gid, no supplementary groups)."""
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def _others_can_run(path: str) -> bool:
    real = os.path.realpath(path)
    if not os.stat(real).st_mode & 0o001:
        return False
    parent = os.path.dirname(real)
    while parent != "/":
        if not os.stat(parent).st_mode & 0o001:
            return False
        parent = os.path.dirname(parent)
    return True


def python_for_others() -> tuple[list[str], dict]:
    """An interpreter another user can run, with this checkout and its installed packages importable.

    The test interpreter may live where only root can enter (a pyenv under /root); then the
    system's python3 of the same version runs the code, from this checkout and the venv's
    site-packages. Returns (argv prefix, environment additions).
    """
    import site
    import sys
    import sysconfig

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [root, sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    if _others_can_run(sys.executable):
        return [sys.executable], env
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (shutil.which(version, path="/usr/bin:/usr/local/bin:/bin"),):
        if candidate and _others_can_run(candidate):
            return [candidate], env
    reason = f"no {version} that another user can run"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)
