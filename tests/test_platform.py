"""The platform layer, and macOS simulated on Linux.

macOS cannot run in CI here, so its branches run with the OS calls replaced by fakes that
return what macOS returns: an `xucred` for LOCAL_PEERCRED, a pid for LOCAL_PEERPID, a
per-user directory for `confstr(_CS_DARWIN_USER_TEMP_DIR)`, and an `fcntl(F_FULLFSYNC)`
that is recorded. The constants and layouts are checked against the published headers
(apple-oss-distributions/xnu: bsd/sys/un.h, bsd/sys/ucred.h, bsd/sys/fcntl.h; unistd.h).
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import posix
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.hook_fakes import SocketDir

from agentwatch import config, paths, platform_layer
from agentwatch.store import db

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentwatch"


# -- the layouts, from the headers ----------------------------------------------------------


def test_constants_match_the_published_headers():
    # bsd/sys/un.h: SOL_LOCAL 0, LOCAL_PEERCRED 0x001, LOCAL_PEERPID 0x002.
    assert (platform_layer.SOL_LOCAL, platform_layer.LOCAL_PEERCRED, platform_layer.LOCAL_PEERPID) == (0, 1, 2)
    # bsd/sys/fcntl.h: F_FULLFSYNC 51. unistd.h: _CS_DARWIN_USER_TEMP_DIR 65537.
    assert (platform_layer.F_FULLFSYNC, platform_layer.CS_DARWIN_USER_TEMP_DIR) == (51, 65537)


def test_xucred_layout_matches_sys_ucred_h():
    # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[NGROUPS]; }
    # with NGROUPS 16 and XUCRED_VERSION 0: 4 + 4 + 2 (+2 padding before the gid_t array) + 64.
    assert platform_layer.XUCRED.size == 76
    assert platform_layer.XUCRED_VERSION == 0
    packed = platform_layer.XUCRED.pack(0, 501, 2, 20, 12, *([0] * 14))
    assert struct.unpack_from("@I", packed, 0) == (0,)
    assert struct.unpack_from("@I", packed, 4) == (501,)
    assert struct.unpack_from("@h", packed, 8) == (2,)
    assert struct.unpack_from("@2I", packed, 12) == (20, 12)


def test_linux_ucred_layout_matches_socket_7():
    # struct ucred { pid_t pid; uid_t uid; gid_t gid; }
    assert platform_layer.UCRED.size == 12


# -- peer credentials -------------------------------------------------------------------------


class FakeMacSocket:
    """Answers getsockopt as macOS does for a connected AF_UNIX socket."""

    def __init__(self, uid: int, pid: int, version: int = 0):
        self.answers = {
            (0, 1): platform_layer.XUCRED.pack(version, uid, 1, 20, *([0] * 15)),
            (0, 2): platform_layer.PID.pack(pid),
        }

    def getsockopt(self, level, option, size):
        try:
            answer = self.answers[(level, option)]
        except KeyError:
            raise OSError(42, "Protocol not available") from None
        assert size == len(answer)
        return answer


def test_linux_peer_credentials_are_the_real_peers():
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        assert platform_layer.peer_credentials(a) == (os.getpid(), os.getuid())
    finally:
        a.close()
        b.close()


def test_macos_peer_credentials_come_from_xucred_and_peerpid(monkeypatch):
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    assert platform_layer.peer_credentials(FakeMacSocket(uid=501, pid=4242)) == (4242, 501)


def test_macos_refuses_an_xucred_of_another_version(monkeypatch):
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    assert platform_layer.peer_credentials(FakeMacSocket(uid=501, pid=1, version=7)) == (None, None)


def test_a_bsd_without_peerpid_still_gives_the_uid(monkeypatch):
    monkeypatch.setattr(platform_layer, "SYSTEM", "freebsd14")
    sock = FakeMacSocket(uid=1001, pid=99)
    del sock.answers[(0, 2)]
    assert platform_layer.peer_credentials(sock) == (None, 1001)


def test_a_linux_socket_without_so_peercred_is_not_trusted(monkeypatch):
    class NoCred:
        def getsockopt(self, *args):
            raise OSError(92, "Protocol not available")

    assert platform_layer.peer_credentials(NoCred()) == (None, None)


def test_a_platform_with_no_peer_credentials_is_refused_at_start(monkeypatch, tmp_path):
    from agentwatch.daemon.server import serve
    from agentwatch.daemon.settings import ServeConfig
    from agentwatch.errors import AgentwatchError

    monkeypatch.setattr(platform_layer, "SYSTEM", "sunos5")
    cfg = ServeConfig(store=tmp_path / "s.db", socket=tmp_path / "run" / "s.sock", spool=tmp_path / "spool")
    with pytest.raises(AgentwatchError, match=r"sunos5.*SO_PEERCRED or LOCAL_PEERCRED") as info:
        serve(cfg)
    assert info.value.exit_code == 2
    assert not (tmp_path / "s.db").exists()  # refused before anything was created


# -- durability -------------------------------------------------------------------------------


def test_macos_writer_and_checkpointer_connections_use_fullfsync(monkeypatch, tmp_path):
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    store = tmp_path / "s.db"
    writer = db.open_writer(store)
    checkpointer = db.open_checkpointer(store)
    try:
        assert db.sync_settings(writer) == {"synchronous": 2, "fullfsync": 1, "checkpoint_fullfsync": 1}
        assert db.sync_settings(checkpointer) == {"synchronous": 2, "fullfsync": 1, "checkpoint_fullfsync": 1}
    finally:
        writer.close()
        checkpointer.close()


def test_linux_writer_keeps_plain_fsync(tmp_path):
    writer = db.open_writer(tmp_path / "s.db")
    try:
        assert db.sync_settings(writer) == {"synchronous": 2, "fullfsync": 0, "checkpoint_fullfsync": 0}
    finally:
        writer.close()


def record_fcntl(monkeypatch, fail: bool = False) -> list:
    calls = []

    def fake(fd, cmd, *args):
        calls.append(cmd)
        if fail:
            raise OSError(45, "Operation not supported")
        return 0

    monkeypatch.setattr(fcntl, "fcntl", fake)
    return calls


def test_macos_full_fsync_asks_for_f_fullfsync(monkeypatch, tmp_path):
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    calls = record_fcntl(monkeypatch)
    synced = []
    monkeypatch.setattr(posix, "fsync", lambda fd: synced.append(fd))
    with open(tmp_path / "f", "wb") as f:
        platform_layer.full_fsync(f.fileno())
    assert (calls, synced) == ([51], [])


def test_macos_full_fsync_falls_back_where_the_file_system_has_none(monkeypatch, tmp_path):
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    calls = record_fcntl(monkeypatch, fail=True)
    synced = []
    monkeypatch.setattr(posix, "fsync", lambda fd: synced.append(fd))
    with open(tmp_path / "f", "wb") as f:
        platform_layer.full_fsync(f.fileno())
        assert (calls, synced) == ([51], [f.fileno()])


def test_linux_full_fsync_is_fsync(monkeypatch, tmp_path):
    calls = record_fcntl(monkeypatch)
    synced = []
    monkeypatch.setattr(posix, "fsync", lambda fd: synced.append(fd))
    with open(tmp_path / "f", "wb") as f:
        platform_layer.full_fsync(f.fileno())
        assert (calls, synced) == ([], [f.fileno()])


# -- paths ------------------------------------------------------------------------------------


def fake_macos(monkeypatch, private: Path) -> None:
    monkeypatch.setattr(platform_layer, "SYSTEM", "darwin")
    monkeypatch.setattr(posix, "confstr", lambda name: f"{private}/" if name == 65537 else None, raising=False)


def test_macos_socket_goes_to_the_private_temp_dir_unless_xdg_says_otherwise(monkeypatch, tmp_path):
    private = tmp_path / "var-folders-T"
    fake_macos(monkeypatch, private)
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert paths.runtime_dir() == private / "agentwatch"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    assert paths.runtime_dir() == tmp_path / "xdg" / "agentwatch"


def test_macos_data_and_state_go_to_application_support_unless_xdg_says_otherwise(monkeypatch, tmp_path):
    fake_macos(monkeypatch, tmp_path / "T")
    home = Path(os.environ["HOME"])
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert paths.data_dir() == home / "Library" / "Application Support" / "agentwatch"
    assert paths.state_dir() == home / "Library" / "Application Support" / "agentwatch" / "state"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    assert paths.data_dir() == tmp_path / "d" / "agentwatch"


def test_linux_without_xdg_runtime_dir_falls_back_per_uid(monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert paths.runtime_dir() == Path(f"/tmp/agentwatch-{os.getuid()}")


def test_the_hook_client_agrees_with_paths_on_macos(monkeypatch, tmp_path):
    from agentwatch import hookclient

    fake_macos(monkeypatch, tmp_path / "T")
    for var in ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "AGENTWATCH_SOCKET", "AGENTWATCH_SPOOL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hookclient, "_environ", lambda: posix.environ)
    assert os.fsdecode(hookclient.socket_path()) == str(config.load().socket)
    assert os.fsdecode(hookclient.spool_path()) == str(config.load().spool)


# -- a whole record, macOS simulated end to end ------------------------------------------------

# The daemon under simulated macOS: the platform is darwin, confstr names the private
# directory, getsockopt answers LOCAL_PEERCRED/LOCAL_PEERPID with this process's uid and the
# caller's pid as macOS would, and F_FULLFSYNC is honoured by the real fsync.
_DAEMON = r"""
import fcntl, os, posix, sys
from agentwatch import platform_layer
from agentwatch.daemon.server import serve
from agentwatch.daemon.settings import ServeConfig
from pathlib import Path

private = sys.argv[1]
platform_layer.SYSTEM = "darwin"
posix.confstr = lambda name: private + "/" if name == 65537 else None
def getsockopt(sock, level, option, size):
    if (level, option) == (0, 1):
        return platform_layer.XUCRED.pack(0, os.getuid(), 1, os.getgid(), *([0] * 15))
    if (level, option) == (0, 2):
        return platform_layer.PID.pack(12345)
    raise OSError(42, "Protocol not available")
platform_layer._getsockopt = getsockopt
real_fcntl = fcntl.fcntl
def fake_fcntl(fd, cmd, *args):
    if cmd == 51:
        os.fsync(fd)
        return 0
    return real_fcntl(fd, cmd, *args)
fcntl.fcntl = fake_fcntl
from agentwatch import config
cfg = ServeConfig(store=Path(sys.argv[2]), socket=config.load().socket, spool=Path(sys.argv[3]),
                  attest_interval=0, verify_interval=0)
sys.exit(serve(cfg))
"""


@pytest.fixture
def short_dir():
    """A private directory outside tmp_path, removed afterwards: AF_UNIX paths stop at 107 bytes."""
    with SocketDir() as path:
        yield path


def test_simulated_macos_acks_a_hook_with_fullfsync_and_a_private_socket(monkeypatch, tmp_path, short_dir):
    from agentwatch import hookclient
    from agentwatch.daemon import health

    private = short_dir / "var-folders" / "T"
    private.mkdir(parents=True, mode=0o700)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    store, spool = tmp_path / "store.db", tmp_path / "spool"
    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", _DAEMON, str(private), str(store), str(spool)],
                                env=env, stdout=out, stderr=out, cwd=tmp_path)
    try:
        fake_macos(monkeypatch, private)
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        sock = config.load().socket
        assert sock == private / "agentwatch" / "agentwatch.sock"
        deadline = time.monotonic() + 20
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        assert os.fsdecode(hookclient.socket_path()) == str(sock)

        # A hook event is acknowledged through the LOCAL_PEERCRED path.
        record_id = hookclient.uuid7()
        frame = (json.dumps({"v": 1, "op": "append", "record_id": record_id, "harness": "claude-code",
                             "payload": {"hook_event_name": "SessionStart", "session_id": "mac"}}) + "\n").encode()
        seq = hookclient.send(os.fsencode(sock), frame, record_id, 5000)
        assert seq == 2  # acknowledged, after the start attestation

        report = health.query(sock, 5.0)
        assert report["durability"] == {"mode": "full",
                                        "sqlite": {"synchronous": 2, "fullfsync": 1, "checkpoint_fullfsync": 1}}

        # A hook that gets no ack spools, and the spool file and its directory are full-fsynced.
        calls = record_fcntl(monkeypatch)
        written = hookclient.spool_write(os.fsencode(spool), hookclient.uuid7(), frame)
        assert Path(os.fsdecode(written)).parent == spool / "new"
        assert calls == [51, 51]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0, log.read_text()


# -- no platform constant outside the platform layer ----------------------------------------

PLATFORM_NAMES = {"SO_PEERCRED", "LOCAL_PEERCRED", "LOCAL_PEERPID", "F_FULLFSYNC", "SOL_LOCAL", "confstr",
                  "fullfsync", "checkpoint_fullfsync", "DARWIN_USER_TEMP_DIR", "CS_DARWIN_USER_TEMP_DIR"}


def platform_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
            if name == "platform" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{node.lineno}: sys.platform")
                continue
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        if name in PLATFORM_NAMES or (isinstance(name, str) and name.startswith(("darwin", "PRAGMA fullfsync"))):
            found.append(f"{node.lineno}: {name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fsync":
            found.append(f"{node.lineno}: fsync (use platform_layer.full_fsync)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "system" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "platform":
            found.append(f"{node.lineno}: platform.system()")
    return found


def test_no_module_outside_the_platform_layer_reads_a_platform_constant():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "platform_layer.py":
            continue
        found = platform_reads(path)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_the_platform_check_sees_what_it_looks_for(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os, socket, sys\n"
                     "socket.SO_PEERCRED\nif sys.platform == 'darwin': pass\nos.fsync(3)\n")
    assert sorted(platform_reads(probe)) == ["2: SO_PEERCRED", "3: darwin", "3: sys.platform",
                                             "4: fsync (use platform_layer.full_fsync)"]
