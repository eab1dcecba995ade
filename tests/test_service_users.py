"""The service deployment with real users (docs/deployment.md): the developer cannot rewrite the evidence.

A system user (made with `useradd`) runs the daemon and owns the store, the checkpoint key
and the witness, laid out as `agentwatch service print systemd --system` lays them out.
A developer user in the service's group sends hooks through the group socket. As that
developer the test then tries to modify, delete and replace the store, the key and the
witness (each refused by the kernel), and to read the signing and cosigning keys, checks that every record carries the developer's
uid from SO_PEERCRED, and runs `agentwatch verify` read-only. Needs root (CI runs as
root); under CI a missing prerequisite fails the test, elsewhere it is skipped.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import apsw
import pytest

import agentwatch
from agentwatch.daemon.service import SystemLayout, systemd_system_unit

HOOK = Path(agentwatch.__file__).parent / "hook.py"
REPO = Path(agentwatch.__file__).resolve().parent.parent
SITE = Path(apsw.__file__).resolve().parent.parent  # site-packages


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"service-user test cannot run in CI: {reason}")
    pytest.skip(reason)


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


class Users:
    """A service user (with its group) and a developer user in that group; removed at exit."""

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.svc, self.dev = f"awsvc{tag}", f"awdev{tag}"
        _run("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", self.svc)
        try:
            _run("useradd", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", self.svc,
                 self.dev)
        except BaseException:
            self.remove()
            raise
        self.svc_pw, self.dev_pw = pwd.getpwnam(self.svc), pwd.getpwnam(self.dev)

    def remove(self) -> None:
        for name in (getattr(self, "dev", None), getattr(self, "svc", None)):
            if name:
                subprocess.run(["userdel", name], capture_output=True)
                subprocess.run(["groupdel", name], capture_output=True)  # when userdel left the group


def _python_for(users: Users, env: dict) -> str:
    """An interpreter both users can execute that imports this checkout (the venv's may sit under /root)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [sys.executable, os.path.realpath(sys.executable), f"/usr/bin/python{version}",
                  f"/usr/local/bin/python{version}"]
    for candidate in dict.fromkeys(candidates):
        if not os.path.exists(candidate):
            continue
        try:
            probe = subprocess.run([candidate, "-c", "import sys, apsw, cryptography, typer, agentwatch; "
                                    "print('%d.%d' % sys.version_info[:2])"],
                                   user=users.dev_pw.pw_uid, group=users.dev_pw.pw_gid, extra_groups=[],
                                   env=env, capture_output=True, text=True, cwd="/")
        except PermissionError:  # not executable for the user (e.g. a venv under /root)
            continue
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    _unavailable(f"no Python {version} that an unprivileged user can run with this checkout's packages")
    raise AssertionError("unreachable")


@pytest.fixture
def deployment():
    if os.geteuid() != 0:
        _unavailable("needs root to create users (CI runs as root)")
    if not shutil.which("useradd") or not shutil.which("userdel"):
        _unavailable("useradd/userdel are not installed")
    users = Users()
    base = Path(tempfile.mkdtemp(prefix="agentwatch-svc-"))
    try:
        os.chmod(base, 0o755)
        yield users, base
    finally:
        users.remove()
        shutil.rmtree(base, ignore_errors=True)


def step4_config(var_lib: Path, run: Path) -> str:
    """The config file of docs/deployment.md step 4, its /var/lib/agentwatch and /run/agentwatch moved."""
    text = (REPO / "docs" / "deployment.md").read_text()
    step = text[text.index("4. Point each developer's hooks and readers at it"):text.index("5. Check it")]
    block = step.split("```toml\n", 1)[1].split("```", 1)[0]
    toml = "\n".join(line.strip() for line in block.splitlines()) + "\n"
    assert "/var/lib/agentwatch/data/store.db" in toml and "/run/agentwatch/agentwatch.sock" in toml
    return toml.replace("/var/lib/agentwatch", str(var_lib)).replace("/run/agentwatch", str(run))


def _write_as(pw: pwd.struct_passwd, path: Path, text: str) -> None:
    """Write a file the way its owner would: the file 0600 and every directory made 0700, all theirs."""
    for directory in reversed([p for p in path.parents if not p.exists()]):
        directory.mkdir(mode=0o700)
        os.chown(directory, pw.pw_uid, pw.pw_gid)
    path.write_text(text)
    os.chmod(path, 0o600)
    os.chown(path, pw.pw_uid, pw.pw_gid)


def _as(users: Users, who: str, argv: list[str], env: dict, **kw) -> subprocess.CompletedProcess:
    pw = users.svc_pw if who == "svc" else users.dev_pw
    extra = [] if who == "svc" else [users.svc_pw.pw_gid]
    return subprocess.run(argv, user=pw.pw_uid, group=pw.pw_gid, extra_groups=extra, env=env, capture_output=True,
                          text=True, cwd="/", timeout=60, **kw)


ATTEMPTS = r"""
import json, os, sqlite3, sys
store, key, witness, scratch = sys.argv[1:5]
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "done"
    except OSError as exc:
        out[name] = type(exc).__name__
    except sqlite3.Error as exc:
        out[name] = "sqlite3." + type(exc).__name__
def replace(target):
    with open(scratch, "w") as f:
        f.write("forged")
    os.replace(scratch, target)
def sql_delete():
    con = sqlite3.connect(store)
    try:
        con.execute("DELETE FROM records WHERE seq = 1")
        con.commit()
    finally:
        con.close()
for name, path in (("store", store), ("key", key), ("witness", witness)):
    attempt(name + ": open for writing", lambda p=path: open(p, "r+b").close())
    attempt(name + ": delete", lambda p=path: os.unlink(p))
    attempt(name + ": replace", lambda p=path: replace(p))
attempt("key: read", lambda: open(key, "rb").read())
attempt("witness cosigner key: read", lambda: open(os.path.join(os.path.dirname(witness), ".cosigner.key"), "rb").read())
attempt("store: SQL delete", sql_delete)
print(json.dumps(out))
"""


def test_the_developer_cannot_rewrite_the_evidence_but_is_recorded_and_verifies(deployment):
    users, base = deployment
    srv, run, devhome = base / "srv", base / "run", base / "devhome"
    for d, owner, mode in ((srv, users.svc_pw, 0o2750), (run, users.svc_pw, 0o2750), (devhome, users.dev_pw, 0o700)):
        d.mkdir()
        os.chown(d, owner.pw_uid, owner.pw_gid)
        os.chmod(d, mode)
    layout = SystemLayout(user=users.svc, group=users.svc, base=srv, runtime=run)
    assert f"User={users.svc}" in systemd_system_unit(layout)
    common = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{SITE}{os.pathsep}{REPO}", "LANG": "C.UTF-8"}
    svc_env = {**common, **layout.environment()}
    # The developer sets no AGENTWATCH_* variable: docs/deployment.md step 4's config file alone
    # points the hook, the readers and verify at the service, as written there (its directories
    # moved under this test's own).
    dev_env = {**common, "HOME": str(devhome), "XDG_STATE_HOME": str(devhome / "state"),
               "XDG_DATA_HOME": str(devhome / "data"), "XDG_CONFIG_HOME": str(devhome / "config"),
               "XDG_RUNTIME_DIR": str(devhome / "run")}
    _write_as(users.dev_pw, devhome / "config" / "agentwatch" / "config.toml", step4_config(srv, run))
    python = _python_for(users, common)
    store = Path(layout.environment()["AGENTWATCH_STORE"])
    sock = Path(layout.environment()["AGENTWATCH_SOCKET"])

    log = open(base / "daemon.log", "wb")
    daemon = subprocess.Popen([python, "-m", "agentwatch.cli", "serve", "--checkpoint-interval", "0.2",
                               "--verify-interval", "0"], user=users.svc_pw.pw_uid, group=users.svc_pw.pw_gid,
                              extra_groups=[], umask=0o027, env=svc_env, stdout=log, stderr=log, cwd="/")
    try:
        deadline = time.monotonic() + 30
        while not _answers_ping(sock):  # serving, not only bound: the normalizing workers start first
            assert daemon.poll() is None, (base / "daemon.log").read_text()
            assert time.monotonic() < deadline, "the service daemon did not answer ping"
            time.sleep(0.05)
        for i in range(3):
            hook = _as(users, "dev", [python, "-I", "-S", str(HOOK), "claude-code"], dev_env,
                       input=json.dumps({"session_id": "dev-session", "hook_event_name": "Stop", "n": i}))
            assert hook.returncode == 0, hook.stderr
        assert not list((devhome / "data").rglob("*.json")), "a hook spooled instead of being acknowledged"

        key = next((srv / "state" / "keys").glob("*.key"))
        deadline = time.monotonic() + 30
        while not (srv / "witness" / "cosigner.pub").exists():  # written after the first cosignature
            assert time.monotonic() < deadline, "no checkpoint reached the witness"
            time.sleep(0.05)
        witness = next((srv / "witness").glob("*.json"))

        attempts = _as(users, "dev", [python, "-c", ATTEMPTS, str(store), str(key), str(witness),
                                      str(devhome / "scratch")], dev_env)
        assert attempts.returncode == 0, attempts.stderr
        assert json.loads(attempts.stdout) == {
            "store: open for writing": "PermissionError",
            "store: delete": "PermissionError",
            "store: replace": "PermissionError",
            "key: open for writing": "PermissionError",
            "key: delete": "PermissionError",
            "key: replace": "PermissionError",
            "witness: open for writing": "PermissionError",
            "witness: delete": "PermissionError",
            "witness: replace": "PermissionError",
            "key: read": "PermissionError",
            "witness cosigner key: read": "PermissionError",
            "store: SQL delete": "sqlite3.OperationalError",
        }

        health = _as(users, "dev", [python, "-m", "agentwatch.cli", "health", "--json"], dev_env)
        assert (health.returncode, json.loads(health.stdout)["status"]) == (0, "recording"), health.stderr
        path = _as(users, "dev", [python, "-m", "agentwatch.cli", "path"], dev_env)
        assert path.stdout == f"{store}\n", path.stderr
        sessions = _as(users, "dev", [python, "-m", "agentwatch.cli", "sql", "--json",
                                      "SELECT count(*) AS n FROM events WHERE session_id = 'dev-session'"], dev_env)
        assert json.loads(sessions.stdout) == [{"n": 3}], sessions.stderr

        verify = _as(users, "dev", [python, "-m", "agentwatch.cli", "verify", "--json"], dev_env)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        report = json.loads(verify.stdout)
        assert report["ok"] is True
        assert {c["source"].split(":")[0] for c in report["evidence"]["checkpoints"]} == {"signer", "witness"}
        # The developer checked evidence another account holds (issue #24, class 8).
        assert report["evidence"]["trust"] == "witness: other account"
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(30)
        log.close()
    assert code == 0, (base / "daemon.log").read_text()

    # Every developer record carries the developer's uid, as the kernel reported it.
    con = apsw.Connection(f"file:{store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        uids = [json.loads(p)["client"]["uid"] for (p,) in
                con.execute("SELECT payload FROM records WHERE kind = 'event' ORDER BY seq")]
    finally:
        con.close()
    assert uids == [users.dev_pw.pw_uid] * 3
    final = _as(users, "dev", [python, "-m", "agentwatch.cli", "verify", "--full", "--json"], dev_env)
    assert (final.returncode, json.loads(final.stdout)["findings"]) == (0, []), final.stderr


def test_every_reader_works_for_a_group_member_on_a_cleanly_stopped_store(deployment):
    # Issue #24, class 12: with the daemon stopped cleanly its WAL and shared memory are gone, and a
    # group member, who cannot create files beside the store, got "attempt to write a readonly
    # database" from every reader.
    users, base = deployment
    srv, run, devhome = base / "srv", base / "run", base / "devhome"
    for d, owner, mode in ((srv, users.svc_pw, 0o2750), (run, users.svc_pw, 0o2750), (devhome, users.dev_pw, 0o700)):
        d.mkdir()
        os.chown(d, owner.pw_uid, owner.pw_gid)
        os.chmod(d, mode)
    layout = SystemLayout(user=users.svc, group=users.svc, base=srv, runtime=run)
    common = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{SITE}{os.pathsep}{REPO}", "LANG": "C.UTF-8"}
    svc_env = {**common, **layout.environment()}
    dev_env = {**common, "HOME": str(devhome), "XDG_STATE_HOME": str(devhome / "state"),
               "XDG_DATA_HOME": str(devhome / "data"), "XDG_CONFIG_HOME": str(devhome / "config"),
               "XDG_RUNTIME_DIR": str(devhome / "run"),
               **{k: layout.environment()[k] for k in ("AGENTWATCH_SOCKET", "AGENTWATCH_STORE",
                                                      "AGENTWATCH_STATE_DIR", "AGENTWATCH_CHECKPOINT_WITNESS_DIRS")}}
    python = _python_for(users, common)
    store = Path(layout.environment()["AGENTWATCH_STORE"])
    sock = Path(layout.environment()["AGENTWATCH_SOCKET"])
    with open(base / "daemon.log", "wb") as log:
        daemon = subprocess.Popen([python, "-m", "agentwatch.cli", "serve", "--verify-interval", "0"],
                                  user=users.svc_pw.pw_uid, group=users.svc_pw.pw_gid, extra_groups=[], umask=0o027,
                                  env=svc_env, stdout=log, stderr=log, cwd="/")
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert daemon.poll() is None, (base / "daemon.log").read_text()
            assert time.monotonic() < deadline, "the service daemon did not bind its socket"
            time.sleep(0.05)
        for i in range(3):
            hook = _as(users, "dev", [python, "-I", "-S", str(HOOK), "claude-code"], dev_env,
                       input=json.dumps({"session_id": "dev-session", "hook_event_name": "Stop", "n": i}))
            assert hook.returncode == 0, hook.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0, (base / "daemon.log").read_text()
    assert not Path(f"{store}-wal").exists() and not Path(f"{store}-shm").exists()
    cli = [python, "-m", "agentwatch.cli"]
    for args in (["verify", "--full", "--json"], ["verify"], ["sessions"], ["show", "dev-session"], ["tail"],
                 ["sql", "SELECT count(*) FROM records"], ["export", "--format", "jsonl"], ["reconcile"]):
        done = _as(users, "dev", cli + args, dev_env)
        assert (args[0], done.returncode) == (args[0], 0), done.stdout + done.stderr
    # Nothing was left behind by the readers: the directory is the service's alone.
    assert not Path(f"{store}-wal").exists() and not Path(f"{store}-shm").exists()


def _answers_ping(sock: Path) -> bool:
    """A ping over the socket (as root: the client's own-user socket check is not what is tested here)."""
    import socket as socketmod

    if not sock.exists():
        return False
    try:
        with socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(str(sock))
            s.sendall(b'{"op": "ping"}\n')
            return json.loads(s.recv(4096).split(b"\n", 1)[0]).get("ok") is True
    except (OSError, ValueError):
        return False
