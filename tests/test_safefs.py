"""The rules in agentwatch/safefs.py: directories made 0700 whatever the umask, and existing ones
another user owns or can write refused (issue 13, class 5). The product-level runs are in
tests/test_hostile_fs.py."""

from __future__ import annotations

import grp
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from support.users import as_user, python_for_others, system_user

from agentwatch import safefs


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_private_dir_makes_every_missing_parent_0700_whatever_the_umask(tmp_path):
    target = tmp_path / "a" / "b" / "c"
    for umask in (0o000, 0o277):  # 0277 would leave the owner unable to write its own directory
        old = os.umask(umask)
        try:
            safefs.private_dir(target)
        finally:
            os.umask(old)
        assert {p: mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")} == {"a": 0o700, "a/b": 0o700, "a/b/c": 0o700}
        for p in ("a/b/c", "a/b", "a"):
            (tmp_path / p).rmdir()


@pytest.mark.parametrize("bits", [0o020, 0o002, 0o777])
def test_an_existing_directory_others_can_write_is_refused(tmp_path, bits):
    target = tmp_path / "data"
    target.mkdir()
    os.chmod(target, 0o700 | bits)
    os.chown(target, -1, grp.getgrnam("users").gr_gid)  # a group others are in, not this user's own
    with pytest.raises(safefs.UnsafePath, match=r"has mode 0[0-7]{3}, must be not writable by group or others"):
        safefs.private_dir(target)
    below = target / "agentwatch"
    with pytest.raises(safefs.UnsafePath, match="lets other users rename what is in it"):
        safefs.private_dir(below)
    assert not below.exists()


def test_a_sticky_world_writable_parent_is_fine_and_a_symlinked_leaf_is_not(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    assert safefs.private_dir(shared / "mine") == shared / "mine"
    assert mode(shared / "mine") == 0o700
    (shared / "link").symlink_to(shared / "mine")
    with pytest.raises(safefs.UnsafePath, match="is a symlink"):
        safefs.private_dir(shared / "link")


def test_a_directory_of_another_user_is_refused(tmp_path):
    with system_user() as other:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, other.pw_uid, other.pw_gid)
        with pytest.raises(safefs.UnsafePath, match=f"owned by uid {other.pw_uid}, not by this user"):
            safefs.private_dir(theirs)
        with pytest.raises(safefs.UnsafePath, match=f"owned by uid {other.pw_uid}, who could move anything below it"):
            safefs.private_dir(theirs / "agentwatch" / "spool")
        assert os.listdir(theirs) == []


CHECK = """
import os, sys
from agentwatch import safefs
try:
    safefs.check_own_dir(sys.argv[1], os.lstat(sys.argv[1]))
    print("ok")
except safefs.UnsafePath as exc:
    print("refused:", exc)
"""


def test_group_write_is_fine_for_the_users_own_private_group_only():
    """Debian-style user private groups (umask 002): a group per user, named after it, nobody else in it."""
    python, env = python_for_others()
    with system_user(private_group=True) as me, system_user() as other:
        root = Path(tempfile.mkdtemp(prefix="aw-upg-"))
        try:
            os.chmod(root, 0o755)
            verdicts = {}
            for name, gid in (("own group", me.pw_gid), ("shared group", other.pw_gid)):
                target = root / name.replace(" ", "-")
                target.mkdir()
                os.chmod(target, 0o775)
                os.chown(target, me.pw_uid, gid)
                proc = subprocess.run([*python, "-c", CHECK, str(target)], capture_output=True, text=True,
                                      timeout=60, env={"PATH": os.environ["PATH"], **env}, **as_user(me))  # fmt: skip
                verdicts[name] = proc.stdout.strip() or proc.stderr
        finally:
            shutil.rmtree(root)
    assert verdicts == {
        "own group": "ok",
        "shared group": f"refused: {root}/shared-group: directory has mode 0775, must be not writable by group or "
        f"others; other users could change what is in it (chmod 700 {root}/shared-group, or choose another location)",
    }
