"""Every command resolves its store and socket through config.load: flag over environment over
the config file (docs/config.md).

Each command runs three times. In the `file` case only the config file names a path; in `env`
the environment names another; in `flag` a flag names a third. Only the path that should win
exists (a store holding one event of a session named after the case, or a socket a fake
daemon listens on), so a command that read the wrong layer fails or answers from nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.hook_fakes import FakeDaemon, SocketDir, hook_cmd
from typer.testing import CliRunner

from agentwatch import config
from agentwatch.cli import app

# Serial (`make test` runs this file alone, after the parallel phase):
# hooks on the default 250 ms budget must deliver over the socket (to a fake daemon and to a
# real one), not spool.
pytestmark = pytest.mark.serial

LAYERS = ("file", "env", "flag")
runner = CliRunner()


@pytest.fixture
def short_dir():
    """A socket's directory outside tmp_path (AF_UNIX paths stop at 107 bytes), removed afterwards."""
    with SocketDir() as path:
        yield path


def write_config(text: str) -> Path:
    path = config.user_config_path()[0]
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


class Layers:
    """The three candidate paths of one setting, and the arguments and environment naming them."""

    def __init__(self, key: str, flag: str, root: Path, name: str, winner: str):
        self.key, self.flag, self.winner = key, flag, winner
        self.paths = {layer: root / layer / name for layer in LAYERS}
        for path in self.paths.values():
            path.parent.mkdir(mode=0o700, exist_ok=True)

    @property
    def expected(self) -> Path:
        return self.paths[self.winner]

    def apply(self, monkeypatch) -> list[str]:
        """Set the file and the environment as the case asks; the flag arguments to add."""
        write_config(f'{self.key} = "{self.paths["file"]}"\n')
        if self.winner in ("env", "flag"):
            monkeypatch.setenv(config.KEYS[self.key].env, str(self.paths["env"]))
        return [self.flag, str(self.paths["flag"])] if self.winner == "flag" else []


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def make_store(path: Path, session: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    source = path.parent / "in.jsonl"
    source.write_text(json.dumps({"hook_event_name": "Stop", "session_id": session}) + "\n")
    result = run("import", "--store", path, source, "--harness", "claude-code")
    assert result.exit_code == 0, result.stderr


# command -> (arguments before the flag, a store to make first, check(result, layers))
def _stdout_names_session(result, layers):
    assert result.exit_code == 0, result.stderr
    assert f"session-{layers.winner}" in result.stdout


def _ok(result, layers):
    assert result.exit_code == 0, result.stderr


def _creates_only_expected(result, layers):
    assert result.exit_code == 0, result.stderr
    assert [p.exists() for p in layers.paths.values()] == [p == layers.expected for p in layers.paths.values()]


def _path_json(result, layers):
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"store": str(layers.expected), "exists": False}


def _config_json(result, layers):
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["config"]["store"] == str(layers.expected)
    assert doc["sources"]["store"] == {"file": f"file:{config.user_config_path()[0]}",
                                       "env": "env:AGENTWATCH_STORE", "flag": "flag:--store"}[layers.winner]


def _service(result, layers):
    assert result.exit_code == 0, result.stderr
    assert f"AGENTWATCH_STORE={layers.expected}" in result.stdout


STORE_COMMANDS = {
    "path": (["path", "--json"], False, _path_json),
    "sql": (["sql", "SELECT session_id FROM events", "--json"], True, _stdout_names_session),
    "tail": (["tail", "--json"], True, _stdout_names_session),
    "sessions": (["sessions", "--json"], True, _stdout_names_session),
    "show": (["show", "session-{winner}", "--json"], True, _stdout_names_session),
    "export": (["export", "--format", "jsonl"], True, _stdout_names_session),
    "reconcile": (["reconcile", "--json"], True, _ok),
    "verify": (["verify", "--json"], True, _ok),
    "key": (["key", "--json"], True, _ok),
    "checkpoint": (["checkpoint", "--json"], True, _ok),
    "prove": (["prove", "1"], True, _ok),
    "erase": (["erase", "1", "--reason", "test", "--json"], True, _ok),
    "hold list": (["hold", "list", "--json"], True, _ok),
    "retention run": (["retention", "run", "--days", "30", "--json"], True, _ok),
    "archive": (["archive", "--before", "2000-01-01T00:00:00Z", "--output", "{source}.archive", "--json"], True, _ok),
    "init": (["init", "--json"], False, _creates_only_expected),
    "import": (["import", "{source}", "--json"], False, _creates_only_expected),
    "config show": (["config", "show", "--json"], False, _config_json),
    "service print": (["service", "print", "systemd"], False, _service),
}


@pytest.mark.parametrize("winner", LAYERS)
@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_store_flag_over_env_over_file(command, winner, tmp_path, monkeypatch):
    args, needs_store, check = STORE_COMMANDS[command]
    layers = Layers("store", "--store", tmp_path, "store.db", winner)
    source = tmp_path / "lines.jsonl"
    source.write_text(json.dumps({"hook_event_name": "Stop", "session_id": f"session-{winner}"}) + "\n")
    if needs_store:
        make_store(layers.expected, f"session-{winner}")
    extra = layers.apply(monkeypatch)
    result = run(*[a.format(winner=winner, source=source) for a in args], *extra)
    check(result, layers)


def _refuse(line: bytes, seq: int) -> bytes:
    return b'{"ok":false,"error":"bad_request","message":"a fake daemon"}\n'


SOCKET_COMMANDS = {
    "health": (["health", "--json", "--timeout", "5"], "health"),
    "tail": (["tail", "--json"], "subscribe"),
}


@pytest.mark.parametrize("winner", LAYERS)
@pytest.mark.parametrize("command", sorted(SOCKET_COMMANDS))
def test_socket_flag_over_env_over_file(command, winner, tmp_path, monkeypatch, short_dir):
    args, op = SOCKET_COMMANDS[command]
    layers = Layers("socket", "--socket", short_dir, "s.sock", winner)
    if command == "tail":
        make_store(config.load().store, "session")
    extra = layers.apply(monkeypatch)
    with FakeDaemon(layers.expected, reply=_refuse) as daemon:
        run(*args, *extra)
    assert [json.loads(line)["op"] for line in daemon.lines] == [op]


@pytest.mark.parametrize("winner", ("file", "env"))
def test_hook_socket_env_over_file(winner, tmp_path, monkeypatch, short_dir):
    """The hook client has no flags: the environment, then the config file.

    A socket the environment names over the one the file names is a redirect the hook refuses
    unless the allow file lists it (docs/hook.md, "Sockets named by the environment"; the
    refusal itself: tests/test_hook_attestation.py), so the env case lists it.
    """
    layers = Layers("socket", "--socket", short_dir, "s.sock", winner)
    layers.apply(monkeypatch)
    if winner == "env":
        allow = Path(os.environ["XDG_CONFIG_HOME"]) / "agentwatch" / "hook-sockets"
        allow.parent.mkdir(parents=True, exist_ok=True)
        allow.write_text(f"{layers.expected}\n")
    with FakeDaemon(layers.expected) as daemon:
        done = subprocess.run(hook_cmd("claude-code"), input=b'{"session_id":"s"}', capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr == b""
    assert len(daemon.lines) == 1 and json.loads(daemon.lines[0])["delivery"] == "socket"


@pytest.mark.parametrize("winner", ("file", "env"))
def test_hook_spool_env_over_file(winner, tmp_path, monkeypatch):
    layers = Layers("spool", "--spool", tmp_path, "spool", winner)
    layers.apply(monkeypatch)
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    done = subprocess.run(hook_cmd("claude-code"), input=b'{"session_id":"s"}', capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr == b""
    assert {layer: len(list((p / "new").glob("*.json"))) if p.exists() else 0
            for layer, p in layers.paths.items()} == {layer: int(layer == winner) for layer in LAYERS}


CONFIG_FILES = [
    # (the file, whether the hook's plain-line reader takes it; otherwise tomllib does)
    ('socket = "{a}"\nspool = "{b}"\n', True),
    ('# a comment\nsocket = "{a}"   # trailing\n\n[serve]\nsocket_group = ""\nbatch_max = 5\n', True),
    ("socket = '{a}'\nspool = '{b}'\n[checkpoint]\nwitness_dirs = [\"{b}/w\", '{b}/v']\n", True),
    ('spool = "~/spool"\n', True),
    ('privacy = "hashed"\n[redaction]\nextra_patterns = [\n  "ACME-[0-9]{{8}}",\n]\n[serve]\nlog_level = "debug"\n', False),
    ('socket = """{a}"""\n', False),
    ('"socket" = "{a}"\n', False),
    ('socket = "{a}"\n[ship]\nhost = "h\\u00e9"\n', False),
]


@pytest.mark.parametrize("text, plain", CONFIG_FILES)
def test_hook_reads_the_config_file_as_config_load_does(text, plain, tmp_path):
    from agentwatch import hookclient

    path = write_config(text.format(a=tmp_path / "a.sock", b=tmp_path / "b"))
    assert (hookclient._plain_toml(path.read_bytes()) is not None) == plain
    cfg = config.load(project=False)
    assert Path(os.fsdecode(hookclient.socket_path())) == cfg.socket
    assert Path(os.fsdecode(hookclient.spool_path())) == cfg.spool
    assert hookclient.socket_setting()[1] == (cfg.sources["socket"] != "default")


@pytest.mark.parametrize("text, problem", [
    ('socket = "relative.sock"\n', "must be an absolute path"),
    ("socket = 5\n", "must be a non-empty string"),
    ('socket = "/a"\nsocket = "/b"\n', "not valid TOML"),
])
def test_hook_ignores_a_config_file_config_load_refuses(text, problem, tmp_path):
    from agentwatch import hookclient

    path = write_config(text)
    with pytest.raises(config.ConfigError):
        config.load(project=False)
    with pytest.raises(hookclient.ConfigUnusable, match=problem):
        hookclient.read_config_paths()
    path.chmod(0o600)
    assert hookclient.socket_setting() == (hookclient._default_socket(), False)


def test_hook_ignores_a_config_file_others_can_write(tmp_path):
    from agentwatch import hookclient

    path = write_config(f'socket = "{tmp_path}/x.sock"\n')
    path.chmod(0o666)
    with pytest.raises(config.ConfigError, match="others could change"):
        config.load(project=False)
    with pytest.raises(hookclient.ConfigUnusable, match="writable by others"):
        hookclient.read_config_paths()
    done = subprocess.run(hook_cmd("claude-code"), input=b"{}", capture_output=True, timeout=60)
    assert done.returncode == 0 and b"ignoring the config file" in done.stderr
    default_spool = Path(os.fsdecode(hookclient._default_spool()))
    assert len(list(default_spool.glob("new/*.json"))) == 1


def test_the_config_file_alone_drives_the_daemon_the_hook_and_the_readers(tmp_path, short_dir):
    """No flag and no AGENTWATCH_* variable: serve, the hook, health, sql and the spool all meet."""
    import signal
    import sys

    from support.ingest import wait_until

    root = short_dir
    store, sock, spool = tmp_path / "elsewhere" / "store.db", root / "run" / "aw.sock", tmp_path / "elsewhere" / "spool"
    write_config(f'store = "{store}"\nsocket = "{sock}"\nspool = "{spool}"\n')

    log = tmp_path / "serve.log"

    def serve() -> subprocess.Popen:
        with open(log, "ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", "agentwatch.cli", "serve", "--verify-interval", "0"],
                                    stdout=out, stderr=out)
        # Serving, not only bound: the socket exists while the normalizing workers still start.
        from agentwatch.daemon import health as daemon_health

        wait_until(lambda: proc.poll() is not None or daemon_health.answers(sock), "the daemon to answer ping", 30)
        assert proc.poll() is None, log.read_text()
        return proc

    def hook(session: str) -> None:
        done = subprocess.run(hook_cmd("claude-code"), input=json.dumps({"session_id": session}).encode(),
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and done.stderr == b"", done.stderr

    def events() -> list:
        result = run("sql", "--json", "SELECT session_id FROM events ORDER BY seq")
        assert result.exit_code == 0, result.stderr
        return [row["session_id"] for row in json.loads(result.stdout)]

    daemon = serve()
    try:
        hook("acked")
        health = run("health", "--json")
        assert (health.exit_code, json.loads(health.stdout)["store"]) == (0, str(store)), health.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    hook("spooled")  # no daemon: into the configured spool
    assert len(list((spool / "new").glob("*.json"))) == 1
    daemon = serve()
    try:
        wait_until(lambda: not list((spool / "new").glob("*.json")), "the spool to be drained", 30)
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    assert events() == ["acked", "spooled"]
    assert run("path").stdout == f"{store}\n"


def test_a_config_path_that_is_a_directory_costs_no_record(tmp_path, monkeypatch):
    """The hook names what it cannot read and spools to the default spool; nothing is lost."""
    from agentwatch import hookclient

    monkeypatch.setenv("AGENTWATCH_CONFIG", str(tmp_path))
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    done = subprocess.run(hook_cmd("claude-code"), input=b"{}", capture_output=True, timeout=60)
    assert done.returncode == 0 and b"ignoring the config file" in done.stderr
    assert len(list(Path(os.fsdecode(hookclient._default_spool())).glob("new/*.json"))) == 1



# command -> (arguments, the layers it offers): where a durable consumer keeps its cursor is the
# `state_dir` setting, resolved like every other (readers/consumers.py).
STATE_COMMANDS = {
    "export": (["export", "--format", "jsonl", "--consumer", "c"], LAYERS),
    "tail": (["tail", "--json", "--consumer", "c"], ("file", "env")),
}


@pytest.mark.parametrize("command,winner", [(c, w) for c, (_, offered) in sorted(STATE_COMMANDS.items())
                                            for w in offered])
def test_state_dir_flag_over_env_over_file(command, winner, tmp_path, monkeypatch):
    args, _ = STATE_COMMANDS[command]
    layers = Layers("state_dir", "--state-dir", tmp_path, "state", winner)
    make_store(config.load().store, f"session-{winner}")
    extra = layers.apply(monkeypatch)
    result = run(*args, *extra)
    assert result.exit_code == 0, result.stderr
    assert f"session-{winner}" in result.stdout
    cursors = {layer: [p.name for p in path.glob("consumers/*/c.cursor.json")] for layer, path in layers.paths.items()}
    assert cursors == {layer: (["c.cursor.json"] if layer == winner else []) for layer in LAYERS}
