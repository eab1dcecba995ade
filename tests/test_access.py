"""Who can read the recorder's files, and what a planted symlink can make it do.

Referenced, not repeated here: a client of another uid is refused
(tests/test_server.py::test_peer_with_another_uid_is_refused); a symlink or a
regular file at the socket path is refused and left alone
(tests/test_server.py::test_non_socket_at_the_socket_path_is_refused_and_left_alone);
forensic SQL cannot write or ATTACH (tests/test_cli.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from support.daemon import Daemon, envelope, wait_for
from support.faultload import HOOK_PY, payload_text

pytestmark = pytest.mark.usefixtures("reap_daemons")


class PermissiveDaemon(Daemon):
    """A daemon started under umask 000: its files must be private whatever the umask."""

    def spawn(self) -> subprocess.Popen:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=log, stdin=subprocess.DEVNULL, umask=0)
        return self.proc


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def hook(d: Daemon, *, umask: int = 0) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "AGENTWATCH_SOCKET": str(d.socket),
           "AGENTWATCH_SPOOL": str(d.spool), "AGENTWATCH_LEDGER": str(d.root / "ledger.jsonl")}  # fmt: skip
    subprocess.run([sys.executable, "-I", "-S", str(HOOK_PY), "claude-code"], input=payload_text(0).encode(),
                   env=env, check=True, timeout=60, umask=umask)  # fmt: skip


def test_every_file_and_directory_is_owner_only_even_under_umask_000(tmp_path):
    d = PermissiveDaemon(tmp_path / "root")
    hook(d)  # no daemon yet: the real hook creates the spool and spools, under umask 000
    (spooled,) = os.listdir(d.spool / "new")
    assert mode(d.spool / "new" / spooled) == 0o600
    assert mode(d.root / "ledger.jsonl") == 0o600
    for sub in ("", "tmp", "new"):
        assert mode(d.spool / sub) == 0o700, sub
    # A file the drainer will quarantine, so bad/ holds bytes and a reason note.
    (d.spool / "new" / "zz-garbage.json").write_bytes(b"\xff not an envelope")
    os.chmod(d.spool / "new" / "zz-garbage.json", 0o600)
    d.start()
    try:
        assert d.request(envelope("access-1"))["ok"] is True
        wait_for(lambda: d.health()["counters"]["spool_quarantined"] == 1, "the garbage file to be quarantined")
        wait_for(lambda: (d.spool / "bad" / "zz-garbage.json.reason").exists(), "its reason note")
        store = d.store
        checks = {
            store: 0o600, f"{store}-wal": 0o600, f"{store}-shm": 0o600, f"{store}.lock": 0o600,
            store.parent: 0o700, d.socket: 0o600, d.socket.parent: 0o700, f"{d.socket}.lock": 0o600,
            d.spool / "bad": 0o700,
            d.spool / "bad" / "zz-garbage.json": 0o600, d.spool / "bad" / "zz-garbage.json.reason": 0o600,
        }  # fmt: skip
        found = {str(p): mode(p) for p in checks}
        assert found == {str(p): m for p, m in checks.items()}
        assert not os.listdir(d.spool / "new")
    finally:
        assert d.stop() == 0
    assert mode(d.store) == 0o600


def _refused(d: Daemon, words: str) -> str:
    proc = d.spawn()
    try:
        code = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None  # it served instead of refusing
    out = d.output()
    assert code in (2, 3), out
    assert words in out, out
    return out


def test_store_path_symlink_is_not_followed(tmp_path):
    d = Daemon(tmp_path / "root")
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    d.store.parent.mkdir(parents=True, mode=0o700)
    d.store.symlink_to(target)
    _refused(d, "symlink")
    assert target.read_bytes() == b""
    assert not os.path.lexists(f"{target}-wal") and not os.path.lexists(f"{d.store}-wal")


def test_socket_directory_symlink_is_refused(tmp_path):
    d = Daemon(tmp_path / "root")
    real = tmp_path / "real-run"
    real.mkdir(mode=0o700)
    d.socket.parent.parent.mkdir(parents=True, exist_ok=True)
    d.socket.parent.symlink_to(real)
    _refused(d, "not a directory")
    assert os.listdir(real) == []


@pytest.mark.parametrize("where", ["spool", "spool/new"])
def test_spool_symlink_is_refused_and_nothing_is_written_or_deleted_through_it(tmp_path, where):
    d = Daemon(tmp_path / "root")
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    (victim / "precious.json").write_bytes(b"keep me")
    link = d.spool if where == "spool" else d.spool / "new"
    link.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    link.symlink_to(victim)
    _refused(d, "symlink")
    assert sorted(os.listdir(victim)) == ["precious.json"]
    assert (victim / "precious.json").read_bytes() == b"keep me"
