"""`agentwatch service install|uninstall|run --system`: the service deployment in one command.

The deployment (docs/deployment.md) puts the daemon, the store, the checkpoint key and the
witness in a system account of their own, so the recorded agent, running as the developer,
cannot rewrite the evidence. `install` does what that page's manual steps do, in order, each
step first looking at what is there and changing only what differs:

1. the group and the system user (Linux: groupadd/useradd; macOS: dscl), and each member
   added to the group (usermod -aG; dseditgroup);
2. the service's base directory and its socket directory, owned by the service user, 0750;
3. the store, the checkpoint key and the witness, created by the service user itself (a child
   process that drops to its uid, with the unit's environment and umask 0027), so they are its
   files with the service layout's modes (0640 files, 0750 directories, the keys 0600);
4. the systemd unit or launchd plist, root's, 0644;
5. reload, enable and start it where the service manager runs here;
6. each member's `~/.config/agentwatch/config.toml`, written as the member when it has none,
   printed when it has one that says something else.

A second run changes nothing and says so. `uninstall` stops and removes the unit and the socket
directory; the store, the key, the witness and the account stay (a uid that owns files is not
freed for another account to take) unless `--purge`.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from agentwatch import platform_layer
from agentwatch.daemon import service
from agentwatch.errors import EXIT_PROBLEM, EXIT_UNREACHABLE, AgentwatchError, UsageError

KINDS = ("systemd", "launchd")
UNIT_PATH = {"systemd": Path("/etc/systemd/system/agentwatch.service"),
             "launchd": Path(f"/Library/LaunchDaemons/{service.LABEL}.plist")}
DIR_MODE = 0o750
SERVICE_UMASK = 0o027
PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# System accounts on macOS take an id below 500 (the login window hides them); the first free
# one from here up is used for both the user and its group.
MACOS_FIRST_ID = 300
MACOS_LAST_ID = 499


class SetupFailed(AgentwatchError):
    """A step of the install could not be done: what was done before it stays, and is reported."""

    exit_code = EXIT_UNREACHABLE


@dataclass
class Step:
    what: str                     # "group agentwatch", "member alice", "unit /etc/…"
    action: str                   # create, update, add, remove, run, unchanged, keep, print, skip, manual
    detail: str = ""
    commands: list[list[str]] = field(default_factory=list)  # what it runs (or what to run by hand)
    apply: Optional[Callable[[], None]] = None
    text: str = ""                # a snippet to show (a member's config to merge by hand)

    @property
    def changes(self) -> bool:
        return self.apply is not None

    def to_json(self) -> dict:
        doc = {"step": self.what, "action": self.action, "detail": self.detail,
               "commands": [list(c) for c in self.commands]}
        if self.text:
            doc["text"] = self.text
        return doc


@dataclass
class Outcome:
    command: str                  # install | uninstall
    kind: str
    user: str
    dry_run: bool
    steps: list[Step]
    exit_code: int = 0
    next_command: str = ""        # what to run by hand to start (or stop) the service

    @property
    def changed(self) -> bool:
        return any(s.changes for s in self.steps)

    def to_json(self) -> dict:
        return {"command": self.command, "kind": self.kind, "user": self.user, "dry_run": self.dry_run,
                "changed": self.changed, "exit_code": self.exit_code, "next": self.next_command or None,
                "steps": [s.to_json() for s in self.steps]}

    def text(self) -> str:
        verb = {True: "would ", False: ""}[self.dry_run]
        lines = []
        for s in self.steps:
            action = f"{verb}{s.action}" if s.changes else s.action
            line = f"{action:<16} {s.what}"
            if s.detail:
                line += f": {s.detail}"
            lines.append(line)
            for c in s.commands:
                lines.append("    $ " + " ".join(_shell_word(w) for w in c))
            if s.text:
                lines.extend("    | " + t for t in s.text.rstrip("\n").splitlines())
        if not self.changed:
            lines.append(f"nothing to do: the {self.kind} service for {self.user} is "
                         + ("installed as this command installs it" if self.command == "install" else "not installed"))
        if self.next_command:
            lines.append(f"next: {self.next_command}")
        return "\n".join(lines) + "\n"


def _shell_word(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./=:@%+," for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def default_kind() -> str:
    return "launchd" if platform_layer.is_macos() else "systemd"


def layout_for(kind: str, user: Optional[str], base: Optional[Path] = None,
               runtime: Optional[Path] = None) -> service.SystemLayout:
    layout = service.system_layout(kind, user)
    if base is not None or runtime is not None:
        base = Path(os.path.abspath(base)) if base is not None else layout.base
        runtime = Path(os.path.abspath(runtime)) if runtime is not None else (
            base / "run" if kind == "launchd" else layout.runtime)
        layout = service.SystemLayout(user=layout.user, group=layout.group, base=base, runtime=runtime)
    return layout


def member_config(layout: service.SystemLayout) -> str:
    """The lines a member's ~/.config/agentwatch/config.toml needs (docs/deployment.md, step 4)."""
    env = layout.environment()
    witness = json.loads(env["AGENTWATCH_CHECKPOINT_WITNESS_DIRS"])
    return ("# The agentwatch system service (written by `agentwatch service install`): hooks and\n"
            "# readers use its daemon and store; its account holds the key and the witness.\n"
            f"store = {json.dumps(env['AGENTWATCH_STORE'])}\n"
            f"socket = {json.dumps(env['AGENTWATCH_SOCKET'])}\n"
            f"state_dir = {json.dumps(env['AGENTWATCH_STATE_DIR'])}\n"
            "\n[checkpoint]\n"
            f"witness_dirs = {json.dumps(witness)}\n")


# --- the parts of install ---------------------------------------------------------------------

@dataclass
class Options:
    kind: str
    layout: service.SystemLayout
    members: list[str]
    dry_run: bool = False
    no_start: bool = False
    unit_path: Optional[Path] = None
    python: Optional[str] = None

    @property
    def unit(self) -> Path:
        return self.unit_path or UNIT_PATH[self.kind]


def _group(name: str) -> Optional[grp.struct_group]:
    try:
        return grp.getgrnam(name)
    except KeyError:
        return None


def _user(name: str) -> Optional[pwd.struct_passwd]:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _nologin() -> str:
    for shell in ("/usr/sbin/nologin", "/sbin/nologin", "/usr/bin/false", "/bin/false"):
        if os.path.exists(shell):
            return shell
    return "/usr/sbin/nologin"


def _run(argv: list[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env={"PATH": PATH_ENV, "LANG": "C"})
    except OSError as exc:
        raise SetupFailed(f"{argv[0]}: cannot run it ({exc.strerror})") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise SetupFailed(f"{' '.join(argv)} exited {done.returncode}" + (f": {said[-1]}" if said else ""))


def _run_all(commands: list[list[str]]) -> Callable[[], None]:
    def apply() -> None:
        for argv in commands:
            _run(argv)
    return apply


def _account_steps(opts: Options) -> list[Step]:
    layout, steps = opts.layout, []
    group, user = _group(layout.group), _user(layout.user)
    if opts.kind == "systemd":
        if group is None:
            cmd = [["groupadd", "--system", layout.group]]
            steps.append(Step(f"group {layout.group}", "create", "", cmd, _run_all(cmd)))
        else:
            steps.append(Step(f"group {layout.group}", "unchanged", f"gid {group.gr_gid}"))
        if user is None:
            cmd = [["useradd", "--system", "--gid", layout.group, "--home-dir", str(layout.base), "--no-create-home",
                    "--shell", _nologin(), "--comment", "agentwatch recorder", layout.user]]
            steps.append(Step(f"user {layout.user}", "create", "", cmd, _run_all(cmd)))
        else:
            steps.append(Step(f"user {layout.user}", "unchanged", f"uid {user.pw_uid}"))
    else:
        steps.extend(_macos_account_steps(layout, group, user))
    for member in opts.members:
        pw = _user(member)
        if pw is None:
            raise UsageError(f"--member {member}: no user named {member!r} on this machine")
        if pw.pw_name == layout.user or pw.pw_uid == 0:
            raise UsageError(f"--member {member}: the members are the developers whose agents are recorded, "
                             "not the service account or root")
        if group is not None and (member in group.gr_mem or pw.pw_gid == group.gr_gid):
            steps.append(Step(f"member {member}", "unchanged", f"in group {layout.group}"))
            continue
        cmd = ([["usermod", "-aG", layout.group, member]] if opts.kind == "systemd" else
               [["dseditgroup", "-o", "edit", "-a", member, "-t", "user", layout.group]])
        steps.append(Step(f"member {member}", "add", f"to group {layout.group} (effective at {member}'s next login)",
                          cmd, _run_all(cmd)))
    return steps


def _macos_account_steps(layout: service.SystemLayout, group, user) -> list[Step]:
    """dscl: a hidden system group and user with one id below 500, no password, no shell."""
    steps = []
    gpath, upath = f"/Groups/{layout.group}", f"/Users/{layout.user}"
    ident = "<ID>"  # the first id from MACOS_FIRST_ID free for both, looked up when applied

    def group_cmds(gid: str) -> list[list[str]]:
        return [["dscl", ".", "-create", gpath], ["dscl", ".", "-create", gpath, "PrimaryGroupID", gid],
                ["dscl", ".", "-create", gpath, "RealName", "agentwatch recorder"],
                ["dscl", ".", "-create", gpath, "Password", "*"]]

    def user_cmds(uid: str, gid: str) -> list[list[str]]:
        return [["dscl", ".", "-create", upath], ["dscl", ".", "-create", upath, "UniqueID", uid],
                ["dscl", ".", "-create", upath, "PrimaryGroupID", gid],
                ["dscl", ".", "-create", upath, "UserShell", "/usr/bin/false"],
                ["dscl", ".", "-create", upath, "NFSHomeDirectory", str(layout.base)],
                ["dscl", ".", "-create", upath, "RealName", "agentwatch recorder"],
                ["dscl", ".", "-create", upath, "Password", "*"],
                ["dscl", ".", "-create", upath, "IsHidden", "1"]]

    probe = [["dscl", ".", "-list", "/Users", "UniqueID"], ["dscl", ".", "-list", "/Groups", "PrimaryGroupID"]]
    if group is None:
        def make_group() -> None:
            gid = str(_macos_free_id())
            _run_all(group_cmds(gid))()
        steps.append(Step(f"group {layout.group}", "create",
                          f"{ident}: the first id from {MACOS_FIRST_ID} that no user or group has (found with the "
                          "first two commands)", probe + group_cmds(ident), make_group))
    else:
        steps.append(Step(f"group {layout.group}", "unchanged", f"gid {group.gr_gid}"))
    if user is None:
        def make_user() -> None:
            gid = str(grp.getgrnam(layout.group).gr_gid)
            uid = gid if _macos_id_free(int(gid), users_only=True) else str(_macos_free_id())
            _run_all(user_cmds(uid, gid))()
        steps.append(Step(f"user {layout.user}", "create", "uid: the group's id when no user has it",
                          user_cmds(ident, ident), make_user))
    else:
        steps.append(Step(f"user {layout.user}", "unchanged", f"uid {user.pw_uid}"))
    return steps


def _macos_ids(what: str, attribute: str) -> set[int]:
    done = subprocess.run(["dscl", ".", "-list", what, attribute], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise SetupFailed(f"dscl . -list {what} {attribute} exited {done.returncode}: {done.stderr.strip()}")
    ids = set()
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1].lstrip("-").isdigit():
            ids.add(int(parts[-1]))
    return ids


def _macos_id_free(ident: int, users_only: bool = False) -> bool:
    taken = _macos_ids("/Users", "UniqueID")
    if not users_only:
        taken |= _macos_ids("/Groups", "PrimaryGroupID")
    return ident not in taken


def _macos_free_id() -> int:
    taken = _macos_ids("/Users", "UniqueID") | _macos_ids("/Groups", "PrimaryGroupID")
    for ident in range(MACOS_FIRST_ID, MACOS_LAST_ID + 1):
        if ident not in taken:
            return ident
    raise SetupFailed(f"no id from {MACOS_FIRST_ID} to {MACOS_LAST_ID} is free for the service account")


def _directory_steps(opts: Options) -> list[Step]:
    layout, steps = opts.layout, []
    for directory in dict.fromkeys((layout.base, layout.runtime)):
        what = f"directory {directory}"
        try:
            st = os.lstat(directory)
        except FileNotFoundError:
            st = None
        owner = f"{layout.user}:{layout.group}"
        cmds = [["mkdir", "-p", str(directory)], ["chown", owner, str(directory)],
                ["chmod", f"{DIR_MODE:o}", str(directory)]]
        if st is None:
            steps.append(Step(what, "create", f"{owner}, 0{DIR_MODE:o}", cmds, _make_dir(directory, layout)))
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise SetupFailed(f"{directory}: exists and is not a directory (a symlink is not followed); move it aside")
        user, group = _user(layout.user), _group(layout.group)
        if (user is not None and group is not None and st.st_uid == user.pw_uid and st.st_gid == group.gr_gid
                and stat.S_IMODE(st.st_mode) == DIR_MODE):
            steps.append(Step(what, "unchanged", f"{owner}, 0{DIR_MODE:o}"))
        else:
            steps.append(Step(what, "update", f"was uid {st.st_uid} gid {st.st_gid} mode "
                              f"{stat.S_IMODE(st.st_mode):04o}; now {owner}, 0{DIR_MODE:o}",
                              cmds[1:], _make_dir(directory, layout)))
    return steps


def _make_dir(directory: Path, layout: service.SystemLayout) -> Callable[[], None]:
    def apply() -> None:
        missing = [p for p in (directory, *directory.parents) if not os.path.lexists(p)]
        for parent in reversed(missing[1:]):  # parents nobody has made yet: root's, like /usr/local/var
            os.mkdir(parent, 0o755)
            os.chmod(parent, 0o755)
        if missing:
            os.mkdir(directory, 0o700)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchown(fd, pwd.getpwnam(layout.user).pw_uid, grp.getgrnam(layout.group).gr_gid)
            os.fchmod(fd, DIR_MODE)
        finally:
            os.close(fd)
    return apply


def _evidence_paths(layout: service.SystemLayout) -> tuple[Path, Path, Path]:
    env = layout.environment()
    return (Path(env["AGENTWATCH_STORE"]), Path(env["AGENTWATCH_STATE_DIR"]) / "keys",
            Path(json.loads(env["AGENTWATCH_CHECKPOINT_WITNESS_DIRS"])[0]) / "cosigner.pub")


def _evidence_step(opts: Options) -> Step:
    store, keys, witness = _evidence_paths(opts.layout)
    what = "store, key and witness"
    try:
        have = store.exists() and any(keys.glob("*.key")) and witness.exists()
    except OSError:
        have = False
    if have:
        return Step(what, "unchanged", f"{store}, {keys}, {witness.parent}")
    python = opts.python or service.serve_command()[0]
    return Step(what, "create", f"as {opts.layout.user}, with the unit's environment and umask "
                f"0{SERVICE_UMASK:o}: `init` makes {store} (0640), then a first checkpoint is signed, which makes "
                f"the key in {keys} (0600) and the witness {witness.parent} (0750)",
                [["agentwatch", "service", "run", "--system", "--user", opts.layout.user, "init"]],
                lambda: _prepare_as_service(opts, python))


def service_environment(layout: service.SystemLayout) -> dict[str, str]:
    """The environment the unit gives `agentwatch serve`, for commands run as the service user."""
    return {"PATH": PATH_ENV, "LANG": "C.UTF-8", **layout.environment()}


def _prepare_as_service(opts: Options, python: str) -> None:
    """Create the store, the key and the witness as the service user, with the unit's environment."""
    from agentwatch import config
    from agentwatch.evidence import checkpoints
    from agentwatch.verify import identity

    def prepare() -> None:
        if not os.access(python, os.X_OK):
            raise SetupFailed(f"{opts.layout.user} cannot run {python}: install agentwatch where the service user "
                              "can run it (docs/deployment.md, step 1) or name it with --python")
        cfg = config.load(project=False)
        done = identity.init_store(cfg.store)
        if done.exit_code:
            raise SetupFailed(f"{cfg.store}: init refused ({done.status}); `agentwatch service run verify` says why")
        checkpoints.sign_store(cfg.store, state_dir=cfg["state_dir"],
                               witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])

    as_user(pwd.getpwnam(opts.layout.user), service_environment(opts.layout), prepare, umask=SERVICE_UMASK)


def as_user(pw: pwd.struct_passwd, env: dict[str, str], fn: Callable[[], None], *, umask: int,
            groups: Optional[list[int]] = None) -> None:
    """Run `fn` in a child process that is `pw` (its uid, gid and only `groups`), with `env` and `umask`.

    The child is a fork of this process, so nothing it runs needs to be found again on disk; its
    error, if any, is raised here as SetupFailed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to the user for good, then do the work
        code = 1
        try:
            os.close(read)
            os.setgroups(groups or [])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            os.umask(umask)
            os.environ.clear()
            os.environ.update(env)
            os.chdir("/")
            fn()
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
            try:
                os.write(write, str(exc).encode("utf-8", "replace")[:4000])
            except OSError:
                pass
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as pipe:
        chunks.append(pipe.read())
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        said = b"".join(chunks).decode("utf-8", "replace") or f"exit status {os.waitstatus_to_exitcode(status)}"
        raise SetupFailed(f"as {pw.pw_name}: {said}")


def _write_root_file(path: Path, text: str) -> Callable[[], None]:
    def apply() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(fd, 0o644)
            os.write(fd, text.encode("utf-8"))
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    return apply


def _unit_text(opts: Options) -> str:
    if opts.kind == "systemd":
        return service.systemd_system_unit(opts.layout, python=opts.python)
    return service.launchd_daemon_plist(opts.layout, python=opts.python)


def _unit_step(opts: Options) -> Step:
    text, path = _unit_text(opts), opts.unit
    try:
        old = path.read_text("utf-8")
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupFailed(f"{path}: cannot read the installed unit ({exc})") from None
    if old == text:
        return Step(f"unit {path}", "unchanged")
    what = "the systemd unit" if opts.kind == "systemd" else "the LaunchDaemon"
    return Step(f"unit {path}", "create" if old is None else "update", f"{what}, root's, 0644",
                [], _write_root_file(path, text))


def systemd_running() -> bool:
    """systemd is this machine's service manager (sd_booted(3)): not so in most containers."""
    return os.path.isdir("/run/systemd/system")


def _unit_name(opts: Options) -> str:
    return opts.unit.name if opts.kind == "systemd" else service.LABEL


def _probe(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except OSError:
        return 127, ""
    return done.returncode, done.stdout.strip()


def start_commands(opts: Options, unit_changed: bool) -> list[list[str]]:
    """Reload, enable and start; `unit_changed`: an installed unit was rewritten, so restart it too."""
    name = _unit_name(opts)
    if opts.kind == "systemd":
        cmds = [["systemctl", "daemon-reload"], ["systemctl", "enable", "--now", name]]
        return cmds + ([["systemctl", "try-restart", name]] if unit_changed else [])
    target = f"system/{name}"
    boot = [["launchctl", "enable", target], ["launchctl", "bootstrap", "system", str(opts.unit)]]
    return ([["launchctl", "bootout", target]] if unit_changed else []) + boot


def _start_step(opts: Options, unit_changed: bool) -> tuple[Step, str, int]:
    """(the step, the command to run by hand when it cannot run here, the exit code it leaves)."""
    cmds = start_commands(opts, unit_changed)
    by_hand = " && ".join(" ".join(_shell_word(w) for w in c) for c in cmds)
    if opts.no_start:
        return Step("start", "skip", "--no-start", cmds), by_hand, 0
    manager_here = systemd_running() if opts.kind == "systemd" else platform_layer.is_macos()
    if not manager_here:
        manager = "systemd" if opts.kind == "systemd" else "launchd"
        return (Step("start", "manual", f"{manager} is not running here; start the service where it runs", cmds),
                by_hand, EXIT_PROBLEM)
    name = _unit_name(opts)
    if not unit_changed:
        if opts.kind == "systemd":
            running = (_probe(["systemctl", "is-enabled", name])[1] == "enabled"
                       and _probe(["systemctl", "is-active", name])[1] == "active")
        else:
            running = _probe(["launchctl", "print", f"system/{name}"])[0] == 0
        if running:
            return Step("start", "unchanged", "enabled and running"), "", 0
    if opts.kind == "launchd" and _probe(["launchctl", "print", f"system/{name}"])[0] != 0:
        cmds = [c for c in cmds if c[:2] != ["launchctl", "bootout"]]
    return Step("start", "run", "", cmds, _run_all(cmds)), "", 0


def _member_steps(opts: Options) -> list[Step]:
    text, steps = member_config(opts.layout), []
    wanted = tomllib.loads(text)
    for member in opts.members:
        pw = pwd.getpwnam(member)
        path = Path(pw.pw_dir) / ".config" / "agentwatch" / "config.toml"
        what = f"config of {member} {path}"
        try:
            # Read as the member would see it: the file is theirs; a symlink is not followed.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                have = f.read()
        except FileNotFoundError:
            have = None
        except OSError as exc:
            steps.append(Step(what, "print", f"cannot read it ({exc.strerror}); put these lines in it", text=text))
            continue
        if have is not None:
            try:
                current = tomllib.loads(have.decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                current = {}
            same = all(current.get(k) == wanted[k] for k in ("store", "socket")) and all(
                current.get("checkpoint", {}).get(k) == v for k, v in wanted["checkpoint"].items())
            if same:
                steps.append(Step(what, "unchanged", "names the service's store and socket"))
            else:
                steps.append(Step(what, "print", "it exists and says something else: merge these lines into it",
                                  text=text))
            continue
        if not os.path.isdir(pw.pw_dir) or os.stat(pw.pw_dir).st_uid != pw.pw_uid:
            steps.append(Step(what, "print", f"{pw.pw_dir} is not {member}'s own directory: put these lines in "
                              "the member's config file", text=text))
            continue
        steps.append(Step(what, "create", f"as {member}, 0600", [], _write_member_config(pw, path, text)))
    return steps


def _write_member_config(pw: pwd.struct_passwd, path: Path, text: str) -> Callable[[], None]:
    def write() -> None:
        from agentwatch import safefs

        safefs.private_dir(path.parent, "config directory")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)

    def apply() -> None:
        # Written by the member's own uid, so nothing in their home (a planted symlink) makes root write elsewhere.
        as_user(pw, {"HOME": pw.pw_dir, "PATH": PATH_ENV}, write, umask=0o077)
    return apply


def _require(opts: Options, what: str) -> None:
    if opts.kind not in KINDS:
        raise UsageError(f"unknown service kind {opts.kind!r} (expected systemd or launchd)")
    if opts.dry_run:
        return
    if os.geteuid() != 0:
        raise UsageError(f"service {what} --system changes system accounts and files: run it as root "
                         f"(sudo agentwatch service {what} --system …), or add --dry-run to see what it would do")
    if opts.kind != default_kind():
        raise UsageError(f"a {opts.kind} service cannot be {what}ed on {platform_layer.SYSTEM}; "
                         f"--dry-run shows what it would do")


def install(opts: Options) -> Outcome:
    """Plan the install against what is there, and apply it unless dry_run (module docstring)."""
    _require(opts, "install")
    steps = _account_steps(opts)
    if not opts.dry_run:
        _apply(steps)
    steps2 = _directory_steps(opts)
    if not opts.dry_run:
        _apply(steps2)
    unit = _unit_step(opts)
    evidence = _evidence_step(opts)
    rest = [evidence, unit]
    if not opts.dry_run:
        _apply(rest)
    start, by_hand, code = _start_step(opts, unit.action == "update")
    if not opts.dry_run:
        _apply([start])
    members = _member_steps(opts)
    if not opts.dry_run:
        _apply(members)
    outcome = Outcome("install", opts.kind, opts.layout.user, opts.dry_run, [*steps, *steps2, *rest, start, *members])
    if start.action in ("manual", "skip"):
        outcome.next_command = by_hand
    outcome.exit_code = 0 if opts.dry_run else code
    return outcome


def _apply(steps: list[Step]) -> None:
    for step in steps:
        if step.apply is not None:
            try:
                step.apply()
            except OSError as exc:
                raise SetupFailed(f"{step.what}: {exc.strerror or exc}") from None


def uninstall(opts: Options, *, purge: bool = False) -> Outcome:
    """Stop and remove the unit and the socket directory; with purge also the files and the account."""
    _require(opts, "uninstall")
    layout, steps = opts.layout, []
    name, unit_exists = _unit_name(opts), opts.unit.exists()
    manager_here = systemd_running() if opts.kind == "systemd" else platform_layer.is_macos()
    stop = ([["systemctl", "disable", "--now", name]] if opts.kind == "systemd" else
            [["launchctl", "bootout", f"system/{name}"]])
    next_command = ""
    if unit_exists:
        if manager_here:
            def stop_it() -> None:
                if opts.kind == "systemd":
                    _run_all(stop)()
                else:
                    _probe(stop[0])  # not loaded is as good as stopped
            steps.append(Step("stop", "run", "", stop, stop_it))
        else:
            steps.append(Step("stop", "manual", "the service manager is not running here", stop))
            next_command = " ".join(stop[0])
        reload = [["systemctl", "daemon-reload"]] if opts.kind == "systemd" and manager_here else []

        def remove_unit() -> None:
            opts.unit.unlink()
            _run_all(reload)()
        steps.append(Step(f"unit {opts.unit}", "remove", "", [["rm", str(opts.unit)], *reload], remove_unit))
    else:
        steps.append(Step(f"unit {opts.unit}", "unchanged", "not installed"))
    if layout.runtime != layout.base and os.path.lexists(layout.runtime):
        if _served(layout) and not manager_here:  # stopped by hand later; its socket stays until then
            steps.append(Step(f"directory {layout.runtime}", "keep", "a daemon still serves the store: stop it, "
                              "then run uninstall again"))
        else:
            steps.append(Step(f"directory {layout.runtime}", "remove", "the socket directory",
                              [["rm", "-r", str(layout.runtime)]], lambda: shutil.rmtree(layout.runtime)))
    if purge:
        steps.extend(_purge_steps(opts))
    else:
        if os.path.lexists(layout.base):
            steps.append(Step(f"directory {layout.base}", "keep", "the store, the key and the witness stay "
                              "verifiable by the members; --purge deletes them"))
        if _user(layout.user) is not None:
            steps.append(Step(f"user {layout.user}", "keep", "it owns the kept files; --purge removes it"))
    if opts.members:
        steps.append(Step("member configs", "keep", "each member's ~/.config/agentwatch/config.toml is theirs: "
                          "remove its store, socket and [checkpoint] lines"))
    if not opts.dry_run:
        _apply(steps)
    outcome = Outcome("uninstall", opts.kind, layout.user, opts.dry_run, steps)
    outcome.next_command = next_command
    outcome.exit_code = EXIT_PROBLEM if next_command and not opts.dry_run else 0
    return outcome


def _purge_steps(opts: Options) -> list[Step]:
    layout, steps = opts.layout, []
    if os.path.lexists(layout.base):
        def remove_base() -> None:
            _refuse_while_served(layout)
            shutil.rmtree(layout.base)
        steps.append(Step(f"directory {layout.base}", "remove", "the store, the key and the witness (--purge)",
                          [["rm", "-r", str(layout.base)]], remove_base))
    if _user(layout.user) is not None:
        cmd = ([["userdel", layout.user]] if opts.kind == "systemd" else
               [["dscl", ".", "-delete", f"/Users/{layout.user}"]])
        steps.append(Step(f"user {layout.user}", "remove", "", cmd, _run_all(cmd)))
    if _group(layout.group) is not None:
        cmd = ([["groupdel", layout.group]] if opts.kind == "systemd" else
               [["dscl", ".", "-delete", f"/Groups/{layout.group}"]])

        def remove_group() -> None:
            if _group(layout.group) is not None:  # userdel may have taken the user's group with it
                _run_all(cmd)()
        steps.append(Step(f"group {layout.group}", "remove", "and with it each member's membership", cmd,
                          remove_group))
    return steps


def _served(layout: service.SystemLayout) -> bool:
    """A writer (the daemon) holds the service's store now."""
    from agentwatch.store.writerlock import AlreadyServing, WriterLock

    store = _evidence_paths(layout)[0]
    if not store.exists():
        return False
    lock = WriterLock(store)
    try:
        lock.acquire()
    except AlreadyServing:
        return True
    except AgentwatchError:
        return False
    lock.release()
    return False


def _refuse_while_served(layout: service.SystemLayout) -> None:
    if _served(layout):
        raise SetupFailed(f"a daemon serves {_evidence_paths(layout)[0]}: stop the service before --purge")


def run_as_service(layout: service.SystemLayout, args: list[str]) -> int:
    """`agentwatch service run ARGS`: `agentwatch ARGS` as the service user, with the unit's environment
    and umask, so what it creates is the service's with the service layout's modes."""
    if os.geteuid() != 0:
        raise UsageError("service run switches to the service user: run it as root (sudo agentwatch service run …)")
    pw = _user(layout.user)
    if pw is None:
        raise UsageError(f"no user named {layout.user!r}: `agentwatch service install --system` makes it")
    env = service_environment(layout)
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]  # where this installation's code is found, if set
    argv = [sys.executable, "-m", "agentwatch.cli", *args]
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            os.umask(SERVICE_UMASK)
            os.chdir("/")
            os.execve(argv[0], argv, env)
        except OSError as exc:
            os.write(2, f"agentwatch: as {pw.pw_name}: cannot run {argv[0]} ({exc.strerror})\n".encode())
        os._exit(EXIT_UNREACHABLE)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
