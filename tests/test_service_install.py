"""`agentwatch service install|uninstall|run --system` with real users (issue #24, classes 8 and 12).

Run as root (CI is): `service install` makes the service's user and group with useradd, adds a
developer made here to the group, creates the directories, has the service user create the store,
the key and the witness, writes the unit (to a path of the test's own) and the developer's config.
The daemon is then started as the service user with the unit's environment, as systemd would (no
systemd runs here), a real hook is sent as the developer, whose config file install wrote, and
as the developer the test reads, verifies, and tries to write the evidence. A second install
changes nothing; uninstall keeps the evidence, --purge removes it and the account.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from support.users import python_for_others
from test_service_users import ATTEMPTS, _answers_ping

import agentwatch
from agentwatch.daemon import service
from agentwatch.daemon.service_setup import layout_for, member_config, service_environment

HOOK = Path(agentwatch.__file__).parent / "hook.py"


def _needs_root() -> None:
    reason = None if os.geteuid() == 0 else "needs root to create users (CI runs as root)"
    if reason is None and not (shutil.which("useradd") and shutil.which("groupadd") and shutil.which("usermod")):
        reason = "useradd/groupadd/usermod are not installed"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def _gone(name: str) -> None:
    subprocess.run(["userdel", name], capture_output=True)
    subprocess.run(["groupdel", name], capture_output=True)


@pytest.fixture
def site():
    """A developer with a home of their own, a base directory for the layout, and cleanup of both users."""
    _needs_root()
    tag = uuid.uuid4().hex[:6]
    svc, dev = f"awsvc{tag}", f"awdev{tag}"
    root = Path(tempfile.mkdtemp(prefix="agentwatch-install-"))
    os.chmod(root, 0o755)
    home = root / "home" / dev
    subprocess.run(["useradd", "--user-group", "--no-create-home", "--home-dir", str(home), "--shell",
                    "/usr/sbin/nologin", dev], check=True, capture_output=True)
    try:
        dev_pw = pwd.getpwnam(dev)
        home.mkdir(parents=True)
        os.chmod(home.parent, 0o755)
        os.chown(home, dev_pw.pw_uid, dev_pw.pw_gid)
        os.chmod(home, 0o700)
        yield svc, dev_pw, root
    finally:
        _gone(dev)
        _gone(svc)
        shutil.rmtree(root, ignore_errors=True)


def _cli(python: list[str], env_add: dict, args: list[str], *, who: pwd.struct_passwd | None = None,
         env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    base = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", **env_add}
    run_as = {}
    if who is not None:  # the developer, with the groups the account database gives them now
        run_as = {"user": who.pw_uid, "group": who.pw_gid,
                  "extra_groups": [g for g in os.getgrouplist(who.pw_name, who.pw_gid) if g != who.pw_gid]}
    return subprocess.run([*python, "-m", "agentwatch.cli", *args], env={**base, **(env or {})}, capture_output=True,
                          text=True, cwd="/", timeout=120, **run_as, **kw)


def _dev_env(dev: pwd.struct_passwd) -> dict:
    """The developer's environment: a home and nothing of agentwatch's; the config file says the rest."""
    return {"HOME": dev.pw_dir}


def _mode(path: Path) -> str:
    return f"{stat.S_IMODE(os.stat(path).st_mode):04o}"


def _owner(path: Path) -> str:
    st = os.stat(path)
    return f"{pwd.getpwuid(st.st_uid).pw_name}:{grp.getgrgid(st.st_gid).gr_name}"


def test_one_command_installs_the_other_account_deployment_and_uninstalls_it(site):
    svc, dev, root = site
    python, pyenv = python_for_others()
    base, run, unit = root / "var-lib-agentwatch", root / "run-agentwatch", root / "etc" / "agentwatch.service"
    where = ["--user", svc, "--base", str(base), "--runtime-dir", str(run), "--unit-path", str(unit)]
    install = ["service", "install", "--system", *where, "--member", dev.pw_name, "--python", python[0],
               "--no-start", "--json"]

    # Without root it refuses, changing nothing.
    refused = _cli(python, pyenv, install, who=dev, env=_dev_env(dev))
    assert refused.returncode == 2 and "run it as root" in refused.stderr, refused.stdout + refused.stderr
    assert not base.exists() and not unit.exists()
    with pytest.raises(KeyError):
        pwd.getpwnam(svc)

    done = _cli(python, pyenv, install)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [(s["step"], s["action"]) for s in report["steps"]] == [
        (f"group {svc}", "create"), (f"user {svc}", "create"), (f"member {dev.pw_name}", "add"),
        (f"directory {base}", "create"), (f"directory {run}", "create"), ("store, key and witness", "create"),
        (f"unit {unit}", "create"), ("start", "skip"),
        (f"config of {dev.pw_name} {dev.pw_dir}/.config/agentwatch/config.toml", "create")]
    assert report["changed"] is True and report["next"] == (
        "systemctl daemon-reload && systemctl enable --now agentwatch.service")

    svc_pw, svc_gr = pwd.getpwnam(svc), grp.getgrnam(svc)
    assert (svc_pw.pw_gid, svc_pw.pw_dir, svc_pw.pw_shell) == (svc_gr.gr_gid, str(base), "/usr/sbin/nologin")
    assert svc_gr.gr_mem == [dev.pw_name]
    layout = layout_for("systemd", svc, base, run)
    store = Path(layout.environment()["AGENTWATCH_STORE"])
    keys, witness = base / "state" / "keys", base / "witness"
    key = next(keys.glob("*.key"))
    modes = {str(p.relative_to(root)): (_owner(p), _mode(p)) for p in
             (base, run, store.parent, store, base / "state", keys, key, key.with_suffix(".pub"),
              base / "state" / "checkpoints", next((base / "state" / "checkpoints").glob("*.json")), witness,
              witness / ".cosigner.key", witness / "cosigner.pub", next(witness.glob("*.json")))}
    own = f"{svc}:{svc}"
    assert modes == {
        "var-lib-agentwatch": (own, "0750"), "run-agentwatch": (own, "0750"),
        "var-lib-agentwatch/data": (own, "0750"), "var-lib-agentwatch/data/store.db": (own, "0640"),
        "var-lib-agentwatch/state": (own, "0750"), "var-lib-agentwatch/state/keys": (own, "0750"),
        f"var-lib-agentwatch/state/keys/{key.name}": (own, "0600"),
        f"var-lib-agentwatch/state/keys/{key.stem}.pub": (own, "0640"),
        "var-lib-agentwatch/state/checkpoints": (own, "0750"),
        f"var-lib-agentwatch/state/checkpoints/{key.stem}.json": (own, "0640"),
        "var-lib-agentwatch/witness": (own, "0750"), "var-lib-agentwatch/witness/.cosigner.key": (own, "0600"),
        "var-lib-agentwatch/witness/cosigner.pub": (own, "0640"),
        f"var-lib-agentwatch/witness/{next(witness.glob('*.json')).name}": (own, "0640")}
    assert unit.read_text() == service.systemd_system_unit(layout, python=python[0])
    assert (_owner(unit), _mode(unit)) == ("root:root", "0644")
    config = Path(dev.pw_dir) / ".config" / "agentwatch" / "config.toml"
    assert config.read_text() == member_config(layout)
    assert (_owner(config), _mode(config), _mode(config.parent)) == (f"{dev.pw_name}:{dev.pw_name}", "0600", "0700")

    # Again: nothing changes, and it says so.
    again = _cli(python, pyenv, [a for a in install if a != "--json"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-2:] == [
        f"nothing to do: the systemd service for {svc} is installed as this command installs it",
        "next: systemctl daemon-reload && systemctl enable --now agentwatch.service"]
    assert [line.split()[0] for line in again.stdout.splitlines() if not line.startswith((" ", "nothing", "next"))] \
        == ["unchanged"] * 7 + ["skip", "unchanged"]

    # The daemon as the unit runs it: the service user, its environment and umask.
    svc_env = {**service_environment(layout), **pyenv}
    log = open(root / "daemon.log", "wb")
    daemon = subprocess.Popen([*python, "-m", "agentwatch.cli", "serve", "--checkpoint-interval", "0.2",
                               "--verify-interval", "0"], user=svc_pw.pw_uid, group=svc_pw.pw_gid, extra_groups=[],
                              umask=0o027, env=svc_env, stdout=log, stderr=log, cwd="/")
    sock = Path(layout.environment()["AGENTWATCH_SOCKET"])
    try:
        deadline = time.monotonic() + 30
        while not _answers_ping(sock):
            assert daemon.poll() is None, (root / "daemon.log").read_text()
            assert time.monotonic() < deadline, "the service daemon did not answer ping"
            time.sleep(0.05)
        groups = [g for g in os.getgrouplist(dev.pw_name, dev.pw_gid) if g != dev.pw_gid]
        hook = subprocess.run([python[0], "-I", "-S", str(HOOK), "claude-code"],
                              input=json.dumps({"session_id": "dev-session", "hook_event_name": "Stop"}),
                              env={"PATH": "/usr/bin:/bin", "HOME": dev.pw_dir}, user=dev.pw_uid, group=dev.pw_gid,
                              extra_groups=groups, capture_output=True, text=True, cwd="/", timeout=60)
        assert hook.returncode == 0, hook.stderr
        assert not list(Path(dev.pw_dir).rglob("*.json")), "the hook spooled instead of being acknowledged"

        as_dev = {"who": dev, "env": _dev_env(dev)}
        counted = _cli(python, pyenv, ["sql", "--json", "SELECT count(*) AS n, min(json_extract(payload, "
                                       "'$.client.uid')) AS uid FROM records WHERE kind = 'event'"], **as_dev)
        assert json.loads(counted.stdout) == [{"n": 1, "uid": dev.pw_uid}], counted.stderr
        health = _cli(python, pyenv, ["health", "--json"], **as_dev)
        doc = json.loads(health.stdout)
        assert (health.returncode, doc["status"], doc["evidence_trust"]) == (0, "recording", "witness: other account"), \
            health.stderr
        deadline = time.monotonic() + 30
        while True:  # the hook's row signed into a checkpoint the witness cosigned
            verify = _cli(python, pyenv, ["verify", "--json"], **as_dev)
            if verify.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert json.loads(verify.stdout)["evidence"]["trust"] == "witness: other account"
        text = _cli(python, pyenv, ["verify"], **as_dev)
        assert "witness: other account" in text.stdout, text.stdout + text.stderr

        attempts = subprocess.run([python[0], "-c", ATTEMPTS, str(store), str(key), str(next(witness.glob("*.json"))),
                                   str(Path(dev.pw_dir) / "scratch")], env={"PATH": "/usr/bin:/bin", **pyenv},
                                  user=dev.pw_uid, group=dev.pw_gid, extra_groups=groups, capture_output=True,
                                  text=True, cwd="/", timeout=60)
        assert json.loads(attempts.stdout) == {
            **{f"{what}: {how}": "PermissionError" for what in ("store", "key", "witness")
               for how in ("open for writing", "delete", "replace")},
            "key: read": "PermissionError", "witness cosigner key: read": "PermissionError",
            "store: SQL delete": "sqlite3.OperationalError"}, attempts.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(30)
        log.close()
    assert code == 0, (root / "daemon.log").read_text()

    # Uninstall: no systemd here, so the stop is left to run by hand (exit 1); the evidence stays.
    gone = _cli(python, pyenv, ["service", "uninstall", "--system", *where, "--json"])
    report = json.loads(gone.stdout)
    assert (gone.returncode, report["next"]) == (1, "systemctl disable --now agentwatch.service"), gone.stderr
    assert [(s["step"], s["action"]) for s in report["steps"]] == [
        ("stop", "manual"), (f"unit {unit}", "remove"), (f"directory {run}", "remove"),
        (f"directory {base}", "keep"), (f"user {svc}", "keep")]
    assert not unit.exists() and not run.exists() and store.exists()
    assert pwd.getpwnam(svc).pw_uid == svc_pw.pw_uid
    still = _cli(python, pyenv, ["verify", "--full", "--json"], who=dev, env=_dev_env(dev))
    assert (still.returncode, json.loads(still.stdout)["findings"]) == (0, []), still.stderr
    again = _cli(python, pyenv, ["service", "uninstall", "--system", *where])
    assert again.returncode == 0 and f"nothing to do: the systemd service for {svc} is not installed" in again.stdout

    purged = _cli(python, pyenv, ["service", "uninstall", "--system", *where, "--purge", "--json"])
    assert purged.returncode == 0, purged.stdout + purged.stderr
    assert [(s["step"], s["action"]) for s in json.loads(purged.stdout)["steps"]] == [
        (f"unit {unit}", "unchanged"), (f"directory {base}", "remove"), (f"user {svc}", "remove"),
        (f"group {svc}", "remove")]
    assert not base.exists()
    for lookup in (pwd.getpwnam, grp.getgrnam):
        with pytest.raises(KeyError):
            lookup(svc)
    assert config.exists(), "the developer's own config file is theirs to remove"


def test_the_launchd_plan_is_printed_and_nothing_is_changed(tmp_path):
    # macOS is not available here: its plan is what is checked, command by command.
    python, pyenv = python_for_others()
    unit = tmp_path / "LaunchDaemons" / "agentwatch.serve.plist"
    done = _cli(python, pyenv, ["service", "install", "--system", "--kind", "launchd", "--dry-run", "--json",
                                "--member", "root"])
    assert done.returncode == 2 and "not the service account or root" in done.stderr
    done = _cli(python, pyenv, ["service", "install", "--system", "--kind", "launchd", "--dry-run", "--json",
                                "--user", "_awtest", "--unit-path", str(unit)])
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    steps = {s["step"]: s for s in plan["steps"]}
    assert [s["step"] for s in plan["steps"]] == [
        "group _awtest", "user _awtest", "directory /usr/local/var/agentwatch", "directory /usr/local/var/agentwatch/run",
        "store, key and witness", f"unit {unit}", "start"]
    assert steps["group _awtest"]["commands"] == [
        ["dscl", ".", "-list", "/Users", "UniqueID"], ["dscl", ".", "-list", "/Groups", "PrimaryGroupID"],
        ["dscl", ".", "-create", "/Groups/_awtest"], ["dscl", ".", "-create", "/Groups/_awtest", "PrimaryGroupID", "<ID>"],
        ["dscl", ".", "-create", "/Groups/_awtest", "RealName", "agentwatch recorder"],
        ["dscl", ".", "-create", "/Groups/_awtest", "Password", "*"]]
    assert ["dscl", ".", "-create", "/Users/_awtest", "NFSHomeDirectory", "/usr/local/var/agentwatch"] in \
        steps["user _awtest"]["commands"]
    assert ["dscl", ".", "-create", "/Users/_awtest", "IsHidden", "1"] in steps["user _awtest"]["commands"]
    assert steps["start"]["commands"] == [["launchctl", "enable", "system/agentwatch.serve"],
                                          ["launchctl", "bootstrap", "system", str(unit)]]
    assert (plan["dry_run"], plan["exit_code"]) == (True, 0)
    assert not unit.parent.exists()
    # The socket lies under the base directory, which the service user owns: /var/run is emptied at boot.
    env = service.system_layout("launchd").environment()
    assert env["AGENTWATCH_SOCKET"] == "/usr/local/var/agentwatch/run/agentwatch.sock"


def test_install_without_root_or_system_is_refused(tmp_path):
    python, pyenv = python_for_others()
    done = _cli(python, pyenv, ["service", "install"])
    assert done.returncode == 2 and "add --system" in done.stderr


def test_service_run_passes_everything_after_the_command_to_it(tmp_path):
    # `service run` has --user and --system of its own; after the command's name they are the command's.
    # The inner command here is `service print systemd --system --user inner`, whose unit names its --user;
    # it runs as `nobody` (the outer --user), which needs root to switch to.
    _needs_root()
    python, pyenv = python_for_others()
    outer = ["service", "run", "--system", "--user", "nobody", "--base", str(tmp_path / "srv"),
             "--runtime-dir", str(tmp_path / "run")]
    done = _cli(python, pyenv, [*outer, "service", "print", "systemd", "--system", "--user", "inner"])
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith(("User=", "Group="))] == \
        ["User=inner", "Group=inner"]
    # `sessions` has no --user: the inner command refuses it (click's usage error, exit 2), not service run.
    done = _cli(python, pyenv, [*outer, "sessions", "--user", "x"])
    assert done.returncode == 2 and "No such option: --user" in done.stderr, done.stderr
    assert "no user named" not in done.stderr


def _evidence_modes(base: Path, store: Path) -> dict[str, str]:
    """The mode of each file and directory of the store, the signer and the witness."""
    def one(pattern: str) -> Path:
        found = list(base.glob(pattern))
        assert len(found) == 1, (pattern, found)
        return found[0]

    paths = {"data": store.parent, "data/STORE": store, "state": base / "state", "state/keys": base / "state" / "keys",
             "state/keys/*.key": one("state/keys/*.key"), "state/keys/*.pub": one("state/keys/*.pub"),
             "state/checkpoints": base / "state" / "checkpoints",
             "state/checkpoints/*.json": one("state/checkpoints/*.json"), "witness": base / "witness",
             "witness/.cosigner.key": base / "witness" / ".cosigner.key",
             "witness/cosigner.pub": base / "witness" / "cosigner.pub", "witness/*.json": one("witness/*.json")}
    return {name: _mode(path) for name, path in paths.items()}


SERVICE_MODES = {
    "data": "0750", "data/STORE": "0640",
    "state": "0750", "state/keys": "0750", "state/keys/*.key": "0600", "state/keys/*.pub": "0640",
    "state/checkpoints": "0750", "state/checkpoints/*.json": "0640",
    "witness": "0750", "witness/.cosigner.key": "0600", "witness/cosigner.pub": "0640", "witness/*.json": "0640"}


@pytest.mark.parametrize("how", ["service run", "as the service user, umask 077"])
def test_a_store_made_by_a_service_user_command_is_the_groups_to_read(site, how):
    # Issue #24, class 12: the service user's `import` made a 0600 store in a 0700 directory, which
    # the developers could not read, and the remedy the docs gave was refused. Now any command run
    # in the service layout makes the layout's modes, and every reader works for a member.
    svc, dev, root = site
    python, pyenv = python_for_others()
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", svc],
                   check=True, capture_output=True)
    subprocess.run(["usermod", "-aG", svc, dev.pw_name], check=True, capture_output=True)
    svc_pw = pwd.getpwnam(svc)
    base, run = root / "srv", root / "run"
    base.mkdir(mode=0o750)
    os.chown(base, svc_pw.pw_uid, svc_pw.pw_gid)
    os.chmod(base, 0o750)
    layout = layout_for("systemd", svc, base, run)
    store = Path(layout.environment()["AGENTWATCH_STORE"])
    lines = root / "session.jsonl"
    lines.write_text("".join(json.dumps({"session_id": "imported", "hook_event_name": "Stop", "n": i}) + "\n"
                             for i in range(3)))
    os.chmod(lines, 0o644)
    args = ["import", "--harness", "claude-code", str(lines)]
    if how == "service run":
        done = _cli(python, pyenv, ["service", "run", "--system", "--user", svc, "--base", str(base),
                                    "--runtime-dir", str(run), *args])
    else:
        done = subprocess.run([*python, "-m", "agentwatch.cli", *args], env={**service_environment(layout), **pyenv},
                              user=svc_pw.pw_uid, group=svc_pw.pw_gid, extra_groups=[], umask=0o077,
                              capture_output=True, text=True, cwd="/", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "signed checkpoint 3" in done.stderr
    for leftover in (Path(f"{store}-wal"), Path(f"{store}-shm")):
        if leftover.exists():
            assert _mode(leftover) == "0640"
    assert _evidence_modes(base, store) == SERVICE_MODES
    assert {_owner(p) for p in base.rglob("*")} == {f"{svc}:{svc}"}

    # The member's config, as install writes it; every reader, as the member, on the stopped store.
    config = Path(dev.pw_dir) / ".config" / "agentwatch"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(member_config(layout))
    for path in (config.parent, config, config / "config.toml"):
        os.chown(path, dev.pw_uid, dev.pw_gid)
        os.chmod(path, 0o600 if path.suffix == ".toml" else 0o700)
    as_dev = {"who": dev, "env": _dev_env(dev)}
    outputs = {}
    for reader in (["sql", "--json", "SELECT count(*) AS n FROM events"], ["sessions"], ["show", "imported"],
                   ["tail", "--json"], ["export", "--format", "jsonl"], ["verify", "--full", "--json"]):
        result = _cli(python, pyenv, reader, **as_dev)
        assert (reader[0], result.returncode) == (reader[0], 0), result.stdout + result.stderr
        outputs[reader[0]] = result.stdout
    assert json.loads(outputs["sql"]) == [{"n": 3}]
    assert len(outputs["export"].splitlines()) == 3
    assert [json.loads(line)["kind"] for line in outputs["tail"].splitlines()].count("event") == 3
    verified = json.loads(outputs["verify"])
    assert (verified["findings"], verified["evidence"]["trust"]) == ([], "witness: other account")
    # The member wrote nothing beside the store.
    assert {_owner(p) for p in base.rglob("*")} == {f"{svc}:{svc}"}


def test_the_per_user_layout_keeps_everything_owner_only(tmp_path):
    # docs/chain.md states both layouts' modes: the per-user one is 0600 files in 0700 directories.
    python, pyenv = python_for_others()
    base = tmp_path / "home"
    base.mkdir(mode=0o700)
    store = base / "data" / "store.db"
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"session_id": "s", "hook_event_name": "Stop"}) + "\n")
    env = {"AGENTWATCH_STORE": str(store), "AGENTWATCH_STATE_DIR": str(base / "state"),
           "AGENTWATCH_CHECKPOINT_WITNESS_DIRS": json.dumps([str(base / "witness")]), "HOME": str(base),
           "XDG_STATE_HOME": str(base / "xdg-state"), "XDG_DATA_HOME": str(base / "xdg-data"),
           "XDG_CONFIG_HOME": str(base / "xdg-config")}
    done = _cli(python, pyenv, ["import", "--harness", "claude-code", str(lines)], env=env, umask=0o022)
    assert done.returncode == 0, done.stderr
    assert _evidence_modes(base, store) == {k: ("0700" if v == "0750" else "0600") for k, v in SERVICE_MODES.items()}


def test_an_interpreter_the_service_user_cannot_run_stops_the_install_and_a_rerun_finishes_it(site):
    svc, dev, root = site
    python, pyenv = python_for_others()
    private = root / "root-only"
    private.mkdir(mode=0o700)
    hidden = private / "python3"
    shutil.copy(python[0], hidden)
    base, run, unit = root / "srv", root / "run", root / "agentwatch.service"
    where = ["--user", svc, "--base", str(base), "--runtime-dir", str(run), "--unit-path", str(unit), "--no-start"]
    failed = _cli(python, pyenv, ["service", "install", "--system", *where, "--python", str(hidden)])
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert failed.stderr == (f"agentwatch: as {svc}: {svc} cannot run {hidden}: install agentwatch where the service "
                             "user can run it (docs/deployment.md, step 1) or name it with --python\n")
    # What came before the failed step is done; nothing was created as the service user, no unit written.
    assert pwd.getpwnam(svc).pw_dir == str(base) and base.is_dir() and run.is_dir()
    assert list(base.iterdir()) == [] and not unit.exists()
    done = _cli(python, pyenv, ["service", "install", "--system", *where, "--python", python[0], "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert [s["action"] for s in json.loads(done.stdout)["steps"]] == [
        "unchanged", "unchanged", "unchanged", "unchanged", "create", "create", "skip"]
