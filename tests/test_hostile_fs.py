"""Directories, sockets and spools another uid controls (issue 13, class 5).

Real second users (`useradd`; the suite runs as root) squat the paths a
victim's hook and daemon would use; umask 000 runs check that nothing the
project creates, parents included, is open to others. tests/test_safefs.py
pins the rules; these run the real CLI, daemon and hook.
"""

from __future__ import annotations

import grp
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.daemon import envelope, wait_for
from support.faultload import HOOK_PY, payload_text
from support.hook_fakes import FakeDaemon, SocketDir
from support.users import as_user, python_for_others, system_user

# Serial (`make test` runs this file alone, after the parallel phase):
# the hook, on its default 250 ms budget, must be acknowledged by an in-process fake daemon
# (the private-socket case), not spool.
pytestmark = [pytest.mark.serial, pytest.mark.usefixtures("reap_daemons")]


# A group other users are in: group write for it lets them in (the user's own private group would not).
USERS_GID = grp.getgrnam("users").gr_gid


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- the product under umask 000 -----------------------------------------------------------------


def cli(*args, env=None, umask=-1, **kw):
    return subprocess.run([sys.executable, "-m", "agentwatch.cli", *map(str, args)], capture_output=True,
                          env=env, umask=umask, timeout=60, **kw)  # fmt: skip


def fresh_env(root: Path) -> dict:
    """HOME and the XDG directories under `root`, none of them made yet: the product makes them all."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "AGENTWATCH_"))}
    env.update(HOME=str(root / "home"), XDG_DATA_HOME=str(root / "home/deep/data"),
               XDG_STATE_HOME=str(root / "home/deep/state"), XDG_CONFIG_HOME=str(root / "home/deep/config"),
               XDG_RUNTIME_DIR=str(root / "run/user"))  # fmt: skip
    return env


def not_private(*roots: Path) -> dict[str, str]:
    """Everything under `roots` (roots included) whose mode is not 0700 (directory) or 0600 (anything else)."""
    found = {}
    for root in roots:
        for dirpath, _dirs, filenames in os.walk(root):
            for path in [Path(dirpath)] + [Path(dirpath) / n for n in filenames]:
                want = 0o700 if path.is_dir() and not path.is_symlink() else 0o600
                if mode(path) != want:
                    found[str(path.relative_to(root.parent))] = f"{mode(path):04o}"
    return found


@pytest.fixture
def short_root():
    """The umask case's root, outside pytest's tmp_path: its socket, `run/user/agentwatch/agentwatch.sock`
    under tmp_path, would pass AF_UNIX's 107 bytes where xdist makes tmp_path longer."""
    with SocketDir() as path:
        yield path


def test_under_umask_000_every_directory_made_is_0700_and_every_file_0600(short_root):
    env = fresh_env(short_root)
    (short_root / "run").mkdir(mode=0o755)  # as on a system: /run exists, the user's runtime directory not yet
    # No daemon yet: the hook spools, making the data directory and all its parents.
    hook = subprocess.run([sys.executable, "-I", "-S", str(HOOK_PY), "claude-code"], input=payload_text(0).encode(),
                          env=env, capture_output=True, timeout=60, umask=0)  # fmt: skip
    assert (hook.returncode, hook.stderr) == (0, b"")
    daemon = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "serve", "--attest-interval", "0",
                               "--verify-interval", "0"], env=env, umask=0, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)  # fmt: skip
    sock = short_root / "run/user/agentwatch/agentwatch.sock"
    spool_new = short_root / "home/deep/data/agentwatch/spool/new"
    try:
        wait_for(lambda: daemon.poll() is not None or (sock.exists() and not os.listdir(spool_new)),
                 "the daemon to serve and drain the spool")  # fmt: skip
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(sock))
            client.sendall(json.dumps(envelope("umask-1")).encode() + b"\n")
            assert json.loads(client.makefile().readline())["ok"] is True
    finally:
        daemon.terminate()
        out = daemon.communicate(timeout=60)[0]
    assert daemon.returncode == 0, out
    # verify keeps its anchor under XDG_STATE_HOME; import makes a new store's directories.
    assert cli("verify", env=env, umask=0).returncode == 0
    source = short_root / "in.jsonl"
    source.write_text(payload_text(1) + "\n")
    assert cli("import", "--store", short_root / "new/a/b/store.db", source, env=env, umask=0).returncode == 0
    assert cli("install", "claude-code", env=env, umask=0).returncode == 0
    made = [short_root / "home", short_root / "run/user", short_root / "new"]
    assert sorted(os.listdir(short_root / "home")) == [".claude", "deep"]
    assert not_private(*made) == {}


def test_install_keeps_an_existing_configs_mode(tmp_path, isolated_env):
    settings = Path(isolated_env) / ".claude" / "settings.json"
    settings.parent.mkdir(mode=0o700)
    settings.write_text('{"model": "opus"}\n')
    os.chmod(settings, 0o640)
    assert cli("install", "claude-code", umask=0).returncode == 0
    assert (mode(settings), json.loads(settings.read_text())["model"]) == (0o640, "opus")


@pytest.mark.parametrize("bits", [0o777, 0o775])
def test_install_refuses_a_config_directory_others_can_write(isolated_env, bits):
    claude = Path(isolated_env) / ".claude"
    claude.mkdir()
    os.chmod(claude, bits)
    os.chown(claude, -1, USERS_GID)
    proc = cli("install", "claude-code")
    err = proc.stderr.decode()
    assert (proc.returncode, err.count("\n"), os.listdir(claude)) == (2, 1, [])
    assert f"{claude}: harness config directory has mode {bits:04o}, must be not writable by group or others" in err


def test_install_refuses_a_config_directory_another_user_owns(isolated_env):
    with system_user() as other:
        claude = Path(isolated_env) / ".claude"
        claude.mkdir(mode=0o755)
        os.chown(claude, other.pw_uid, other.pw_gid)
        proc = cli("install", "claude-code")
        assert (proc.returncode, os.listdir(claude)) == (2, [])
        assert f"harness config directory is owned by uid {other.pw_uid}, not by this user" in proc.stderr.decode()


# -- the hook: a socket or spool that is not the user's own ---------------------------------------


def run_hook(env: dict, python: str = sys.executable, **kw):
    return subprocess.run([python, "-I", "-S", str(HOOK_PY), "claude-code"], input=payload_text(7).encode(),
                          env=env, capture_output=True, timeout=60, **kw)  # fmt: skip


def outcomes(ledger: Path) -> list[tuple[str, str]]:
    return [(e["outcome"], e["reason"]) for e in map(json.loads, ledger.read_text().splitlines())]


def test_the_hook_never_talks_to_a_socket_another_user_planted_in_tmp():
    """XDG_RUNTIME_DIR unset: the socket falls back to /tmp/agentwatch-<uid>/, which anyone can make first."""
    with system_user() as victim, system_user() as attacker:
        home = Path(tempfile.mkdtemp(prefix="aw-victim-"))
        squat = Path(f"/tmp/agentwatch-{victim.pw_uid}")
        try:
            os.chown(home, victim.pw_uid, victim.pw_gid)
            squat.mkdir(mode=0o755)
            with FakeDaemon(squat / "agentwatch.sock") as fake:
                os.chmod(fake.path, 0o777)
                for path in (squat, fake.path):
                    os.chown(path, attacker.pw_uid, attacker.pw_gid)
                env = {"PATH": os.environ["PATH"], "HOME": str(home), "AGENTWATCH_LEDGER": str(home / "ledger")}
                python = python_for_others()[0][0]  # -I: the hook needs no path of ours
                proc = run_hook(env, python, **as_user(victim))
                assert (proc.returncode, fake.lines) == (0, [])
            assert outcomes(home / "ledger") == [("spooled", "unsafe_socket")]
            assert len(os.listdir(home / ".local/share/agentwatch/spool/new")) == 1
            err = proc.stderr.decode()
            assert err.count("\n") == 1 and f"is owned by uid {attacker.pw_uid}, not by this user" in err
            # The victim's daemon will not serve from the squatted directory either.
            python, pyenv = python_for_others()
            serve = subprocess.run([*python, "-m", "agentwatch.cli", "serve"], env={**env, **pyenv}, cwd=home,
                                   capture_output=True, text=True, timeout=60, **as_user(victim))  # fmt: skip
            assert serve.returncode == 2, serve.stderr
            assert f"{squat}: socket directory is owned by uid {attacker.pw_uid}, not by this user" in serve.stderr
        finally:
            subprocess.run(["rm", "-rf", "--", str(squat), str(home)], check=True)


def private_env(tmp_path: Path, sock: Path) -> dict:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "AGENTWATCH_SOCKET": str(sock),
            "AGENTWATCH_SPOOL": str(tmp_path / "spool"), "AGENTWATCH_LEDGER": str(tmp_path / "ledger")}  # fmt: skip


@pytest.mark.parametrize("how", ["private", "dir_group_writable", "dir_is_symlink", "socket_world_writable",
                                 "socket_is_symlink"])  # fmt: skip
def test_the_hook_connects_only_to_a_socket_nobody_else_can_touch(tmp_path, how):
    with SocketDir() as real:
        with FakeDaemon(real / "agentwatch.sock") as fake:
            os.chmod(fake.path, 0o600)
            sock = fake.path
            if how == "dir_group_writable":
                os.chmod(real, 0o770)
            elif how == "dir_is_symlink":
                (real / "link").symlink_to(real)
                sock = real / "link" / "agentwatch.sock"
            elif how == "socket_world_writable":
                os.chmod(fake.path, 0o777)
            elif how == "socket_is_symlink":
                sock = real / "link.sock"
                sock.symlink_to(fake.path)
            assert run_hook(private_env(tmp_path, sock)).returncode == 0
            delivered = len(fake.lines)
        want = [("acked", None)] if how == "private" else [("spooled", "unsafe_socket")]
        assert (delivered, outcomes(tmp_path / "ledger")) == (int(how == "private"), want)


@pytest.mark.parametrize("where", ["spool", "spool/tmp", "spool/new"])
def test_the_hook_never_spools_through_a_symlink(tmp_path, where):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "spool").mkdir(mode=0o700)
    if where == "spool":
        (tmp_path / "spool").rmdir()
    (tmp_path / where).symlink_to(elsewhere, target_is_directory=True)
    proc = run_hook(private_env(tmp_path, tmp_path / "nobody.sock"))
    assert (proc.returncode, outcomes(tmp_path / "ledger"), os.listdir(elsewhere)) == (0, [("failed", "no_daemon")], [])
    assert b"could not spool record" in proc.stderr and b"is not a directory" in proc.stderr


def test_the_hook_never_spools_into_a_directory_another_user_owns(tmp_path):
    with system_user() as attacker:
        spool = tmp_path / "spool"
        spool.mkdir()
        os.chmod(spool, 0o777)
        os.chown(spool, attacker.pw_uid, attacker.pw_gid)
        proc = run_hook(private_env(tmp_path, tmp_path / "nobody.sock"))
        assert (outcomes(tmp_path / "ledger"), os.listdir(spool)) == ([("failed", "no_daemon")], [])
        assert f"is owned by uid {attacker.pw_uid}, not by this user".encode() in proc.stderr


# -- readers that talk to the daemon -------------------------------------------------------------


def test_health_and_tail_do_not_believe_a_socket_others_can_write(tmp_path, store_path):
    source = tmp_path / "in.jsonl"
    source.write_text(payload_text(1) + "\n" + payload_text(2) + "\n")
    assert cli("import", "--store", store_path, source).returncode == 0
    with SocketDir() as real, FakeDaemon(real / "agentwatch.sock") as fake:
        os.chmod(fake.path, 0o666)
        health = cli("health", "--socket", fake.path)
        tail = cli("tail", "--json", "--store", store_path, "--socket", fake.path)
        asked = list(fake.lines)
    assert (health.returncode, asked) == (3, [])
    assert f"not connecting: {fake.path}: has mode 0666, writable by others" in health.stderr.decode()
    assert (tail.returncode, [json.loads(line)["seq"] for line in tail.stdout.splitlines()]) == (0, [1, 2])


# -- the user's config file ----------------------------------------------------------------------


@pytest.mark.parametrize("how", ["file_world_writable", "dir_group_writable", "file_of_another_user"])
def test_a_config_file_others_can_write_is_refused(isolated_env, how):
    """Whoever can write the user's config decides where records go (socket, store) and what is redacted."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "agentwatch" / "config.toml"
    config.parent.mkdir(mode=0o700)
    config.write_text('privacy = "full"\n')
    os.chmod(config, 0o600)
    with system_user() as other:
        if how == "file_world_writable":
            os.chmod(config, 0o666)
            said = f"{config}: config file has mode 0666: others could change where records go"
        elif how == "dir_group_writable":
            os.chmod(config.parent, 0o770)
            os.chown(config.parent, -1, USERS_GID)
            said = f"{config}: refusing to read the config file: {config.parent}: mode 0770 lets other users rename"
        else:
            os.chown(config, other.pw_uid, other.pw_gid)
            said = f"{config}: config file is owned by uid {other.pw_uid}, not by this user"
        proc = cli("config", "show")
    err = proc.stderr.decode()
    assert (proc.returncode, proc.stdout, err.count("\n")) == (2, b"", 2), err  # the refusal, then the next step
    assert said in err.splitlines()[0]
    assert err.splitlines()[1] == ("agentwatch: next: `agentwatch docs config` lists every setting, its values "
                                   "and where each is read from")


def _listening(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another account needs root")
def test_a_socket_the_user_named_may_be_another_accounts_but_never_writable_by_all(tmp_path):
    """AGENTWATCH_SOCKET (the service deployment): another owner is accepted, a directory its
    group or everyone can write, or a socket everyone can write, is not; the default path
    keeps the owner-only rule."""
    from agentwatch import hookclient

    other = 65534  # nobody
    cases = {  # directory mode, socket mode -> accepted when named
        (0o750, 0o660): True, (0o755, 0o600): True,
        (0o770, 0o660): False, (0o757, 0o660): False, (0o750, 0o666): False,
    }
    got = {}
    for (dir_mode, sock_mode) in cases:
        d = tmp_path / f"run-{dir_mode:o}-{sock_mode:o}"
        d.mkdir()
        sock = _listening(d / "s.sock")
        try:
            os.chown(d, other, other)
            os.chown(d / "s.sock", other, other)
            os.chmod(d, dir_mode)
            os.chmod(d / "s.sock", sock_mode)
            path = os.fsencode(d / "s.sock")
            try:
                hookclient.check_socket(path, configured=True)
                got[(dir_mode, sock_mode)] = True
            except hookclient.Unsafe:
                got[(dir_mode, sock_mode)] = False
            with pytest.raises(hookclient.Unsafe, match="owned by uid 65534"):
                hookclient.check_socket(path)  # not named: the owner-only rule
        finally:
            sock.close()
    assert got == cases
