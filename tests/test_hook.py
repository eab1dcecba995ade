"""The hook client, run as harnesses run it: a real `python -I -S hook.py` process.

Every test owns its daemon (a fake on a socket in a private temp dir), its
spool (the XDG data dir the autouse fixture made) and its ledger.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support.hook_fakes import HOOK, FakeDaemon, SocketDir, ack, hook_cmd, run_hook

from agentwatch import config, hook, hookclient
from agentwatch.record.normalize import check_envelope

# Serial (`make test` runs this file alone, after the parallel phase):
# it times the hook's ack deadline against an in-process fake daemon (the default 250 ms
# against an answer 1.5 s late, 150 ms budgets): a test on the other core could push an answer past it.
pytestmark = pytest.mark.serial

MAX_LINE = 1 << 20
ENVELOPE_KEYS = {
    "op", "v", "record_id", "harness", "event", "ts_observed_ns", "ts_mono_ns",
    "pid", "ppid", "orig_bytes", "truncated", "payload_text", "delivery",
}  # fmt: skip
PAYLOAD = (
    b'{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls \\"x\\""}}'
)


def spooled() -> list[Path]:
    new = config.load().spool / "new"
    return sorted(new.iterdir()) if new.exists() else []


def only_spooled() -> dict:
    files = spooled()
    assert len(files) == 1, files
    env = json.loads(files[0].read_bytes())
    assert files[0].name == env["record_id"] + ".json"
    assert files[0].read_bytes().endswith(b"}\n")
    return env


def spawn_with_input(cmd: list[str], data: bytes) -> subprocess.Popen:
    """Start a hook as a harness does: write its input at once, then close stdin."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE)
    proc.stdin.write(data)
    proc.stdin.close()
    return proc


def ledger_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def sock(monkeypatch):
    with SocketDir() as directory:
        path = directory / "agentwatch.sock"
        monkeypatch.setenv("AGENTWATCH_SOCKET", str(path))
        # Tests that expect an ack must not flake when the shared CPU stalls the
        # fake daemon; tests of the deadline set their own.
        monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", "10000")
        yield path


# ------------------------------------------------------------- (a) no daemon


def test_no_daemon_spools_exactly_one_valid_envelope(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    wall0, mono0 = time.time_ns(), time.monotonic_ns()
    done = run_hook("claude-code", stdin=PAYLOAD)
    wall1, mono1 = time.time_ns(), time.monotonic_ns()
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")

    env = only_spooled()
    assert set(env) == ENVELOPE_KEYS
    assert env["op"] == "append" and env["v"] == 1
    assert env["harness"] == "claude-code" and env["event"] is None
    assert env["payload_text"] == PAYLOAD.decode()
    assert env["orig_bytes"] == len(PAYLOAD) and env["truncated"] is False
    assert env["delivery"] == "spool"
    assert env["ppid"] == os.getpid() and env["pid"] > 0 and env["pid"] != os.getpid()
    assert wall0 <= env["ts_observed_ns"] <= wall1
    assert mono0 <= env["ts_mono_ns"] <= mono1
    rid = uuid.UUID(env["record_id"])
    assert rid.version == 7 and str(rid) == env["record_id"]
    assert wall0 // 1_000_000 <= rid.int >> 80 <= wall1 // 1_000_000
    assert check_envelope(env) is env

    root = config.load().spool
    assert list((root / "tmp").iterdir()) == []
    for directory in (root, root / "tmp", root / "new"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(spooled()[0].stat().st_mode) == 0o600


def test_event_option_and_extra_argv(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    done = run_hook("cline", "--event", "PreToolUse", "one", "--two", stdin=b"{}")
    assert done.returncode == 0
    env = only_spooled()
    assert env["event"] == "PreToolUse"
    assert env["argv"] == ["one", "--two"]
    assert env["payload_text"] == "{}"


def test_codex_notify_payload_from_last_argv(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    note = '{"type":"agent-turn-complete","thread-id":"t1","last-assistant-message":"done ✓"}'
    done = subprocess.run(hook_cmd("codex", note), stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    env = only_spooled()
    assert env["payload_text"] == note
    assert env["payload_from"] == "argv"
    assert "argv" not in env
    assert env["orig_bytes"] == len(note.encode()) and env["truncated"] is False


def test_runs_through_a_symlink(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    link = tmp_path / "bin" / "agentwatch-hook.py"
    link.parent.mkdir()
    link.symlink_to(HOOK)
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(link), "openhands"], input=b"{}", capture_output=True, timeout=30
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert only_spooled()["harness"] == "openhands"


# ------------------------------------------------------------- (b) acking daemon


def test_ack_means_no_spool_and_the_daemon_saw_the_exact_envelope(sock, tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("AGENTWATCH_LEDGER", str(ledger))
    with FakeDaemon(sock) as daemon:
        done = run_hook("claude-code", "--event", "PostToolUse", stdin=PAYLOAD)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert spooled() == []
    assert len(daemon.lines) == 1
    line = daemon.lines[0]
    assert line.endswith(b"}\n") and line.count(b"\n") == 1
    env = json.loads(line)
    assert set(env) == ENVELOPE_KEYS
    assert env["payload_text"] == PAYLOAD.decode()
    assert env["event"] == "PostToolUse" and env["delivery"] == "socket"
    assert env["ppid"] == os.getpid()

    (entry,) = ledger_lines(ledger)
    assert set(entry) == {"record_id", "outcome", "seq", "reason", "ts_ns", "latency_us"}
    assert entry["record_id"] == env["record_id"]
    assert (entry["outcome"], entry["seq"], entry["reason"]) == ("acked", 1, None)
    assert entry["ts_ns"] >= env["ts_observed_ns"] and entry["latency_us"] >= 0


def test_default_socket_path_is_used(monkeypatch):
    monkeypatch.delenv("AGENTWATCH_SOCKET", raising=False)
    monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", "10000")
    path = config.load().socket
    if len(str(path)) > 100:
        pytest.skip("temp dir too deep for an AF_UNIX path")
    with FakeDaemon(path) as daemon:
        done = run_hook("codex", stdin=b"{}")
    assert done.returncode == 0
    assert len(daemon.lines) == 1 and spooled() == []


def test_many_acks_are_counted_exactly(sock, tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("AGENTWATCH_LEDGER", str(ledger))
    with FakeDaemon(sock) as daemon:
        procs = [spawn_with_input(hook_cmd("cursor"), b'{"n":%d}' % i) for i in range(20)]
        assert [proc.wait(timeout=60) for proc in procs] == [0] * 20
    assert spooled() == []
    seen = sorted(json.loads(json.loads(line)["payload_text"])["n"] for line in daemon.lines)
    assert seen == list(range(20))
    entries = ledger_lines(ledger)
    assert len(entries) == 20
    assert [e["outcome"] for e in entries] == ["acked"] * 20
    assert sorted(e["seq"] for e in entries) == list(range(1, 21))


# ------------------------------------------------------------- (c), (d) no valid ack


def _silent(line, seq):
    return None


def _rid(line: bytes) -> bytes:
    return json.loads(line)["record_id"].encode()


@pytest.mark.parametrize(
    "name, reply",
    [
        ("silent", _silent),
        ("garbage", lambda line, seq: b"HTTP/1.1 400 Bad Request\r\n\r\n"),
        ("not-json-object", lambda line, seq: b"[1,2]\n"),
        ("unavailable", lambda line, seq: b'{"ok":false,"error":"unavailable","message":"disk full"}\n'),
        ("shutting-down", lambda line, seq: b'{"ok":false,"error":"shutting_down","message":"bye"}\n'),
        ("other-record", lambda line, seq: b'{"ok":true,"seq":7,"record_id":"someone-else"}\n'),
        ("no-seq", lambda line, seq: b'{"ok":true,"record_id":"%s"}\n' % _rid(line)),
        ("bool-seq", lambda line, seq: b'{"ok":true,"seq":true,"record_id":"%s"}\n' % _rid(line)),
        ("no-ok", lambda line, seq: b'{"seq":1}\n'),
        ("no-newline-then-close", lambda line, seq: b'{"ok":true'),
    ],
)
def test_no_valid_ack_spools_quietly(sock, tmp_path, monkeypatch, name, reply):
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("AGENTWATCH_LEDGER", str(ledger))
    monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", "150")

    def answer_then_close(line, seq):
        out = reply(line, seq)
        if name == "no-newline-then-close":
            raise OSError("close")  # ends the connection after the partial reply
        return out

    with FakeDaemon(sock, answer_then_close if name == "no-newline-then-close" else reply) as daemon:
        done = run_hook("claude-code", stdin=PAYLOAD)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert len(daemon.lines) == 1
    env = only_spooled()
    sent = json.loads(daemon.lines[0])
    assert env == {**sent, "delivery": "spool"}
    (entry,) = ledger_lines(ledger)
    assert (entry["record_id"], entry["outcome"], entry["seq"]) == (env["record_id"], "spooled", None)
    expected = {"silent": "timeout", "unavailable": "unavailable", "shutting-down": "shutting_down"}
    assert entry["reason"] == expected.get(name, "error")


@pytest.mark.parametrize("error", ["bad_json", "too_large", "bad_request", "unknown_op", "bad_utf8"])
def test_frame_rejected_is_spooled_and_said_on_stderr(sock, error):
    reply = b'{"ok":false,"error":"%s","message":"nope"}\n' % error.encode()
    with FakeDaemon(sock, lambda line, seq: reply):
        done = run_hook("claude-code", stdin=PAYLOAD)
    assert done.returncode == 0 and done.stdout == b""
    env = only_spooled()
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1
    assert f"rejected record {env['record_id']} ({error}: nope); spooling it" in lines[0]


def _late_ack(delay_s):
    def reply(line, seq):
        time.sleep(delay_s)
        return ack(line, seq)

    return reply


@pytest.mark.parametrize(
    "timeout_ms, delay_s, outcome",
    [(None, 1.5, "spooled"), ("5000", 0.4, "acked"), ("not-a-number", 1.5, "spooled")],
)
def test_ack_deadline_default_and_env(sock, tmp_path, monkeypatch, timeout_ms, delay_s, outcome):
    """Default 250 ms: an ack 1.5 s late is too late; AGENTWATCH_HOOK_TIMEOUT_MS can wait longer."""
    if timeout_ms is None:
        monkeypatch.delenv("AGENTWATCH_HOOK_TIMEOUT_MS")
    else:
        monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", timeout_ms)
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("AGENTWATCH_LEDGER", str(ledger))
    with FakeDaemon(sock, _late_ack(delay_s)):
        done = run_hook("claude-code", stdin=b"{}")
    assert done.returncode == 0
    (entry,) = ledger_lines(ledger)
    assert entry["outcome"] == outcome
    assert len(spooled()) == (1 if outcome == "spooled" else 0)


# ------------------------------------------------------------- (e), (f) payload forms


def test_non_utf8_stdin_is_sent_as_base64(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    data = b'{"path":"\xff\xfe caf\xe9"}'
    assert run_hook("cursor", stdin=data).returncode == 0
    env = only_spooled()
    assert "payload_text" not in env
    assert base64.b64decode(env["payload_b64"], validate=True) == data
    assert env["orig_bytes"] == len(data) and env["truncated"] is False


def _frame_len(env: dict) -> int:
    # The spool line is the socket frame with delivery "spool" (one byte shorter than "socket").
    return len(json.dumps(env, ensure_ascii=False, separators=(",", ":")).encode()) + 1


@pytest.mark.parametrize(
    "kind, data",
    [
        ("text", b'{"big":"' + b"x" * (3 << 20)),  # not JSON: cut as text (JSON is cut by field)
        ("escapes", b'"\\' * (400 << 10)),  # every byte doubles when escaped
        ("split-char", b"a" + "é".encode() * (1 << 20)),  # the 1 MiB cut lands inside a character
        ("binary", b"\xff" + os.urandom(2 << 20)),
    ],
)
def test_oversized_stdin_is_truncated_to_one_frame(sock, monkeypatch, kind, data):
    monkeypatch.setenv("AGENTWATCH_HOOK_STDIN_MS", "5000")  # this tests the size cap, not the clock
    with FakeDaemon(sock) as daemon:
        assert run_hook("claude-code", stdin=data).returncode == 0
    assert spooled() == []
    (line,) = daemon.lines
    assert len(line) - 1 <= MAX_LINE
    env = json.loads(line)
    assert env["truncated"] is True
    assert env["orig_bytes"] == len(data)
    assert env["raw_sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    if kind == "binary":
        kept = base64.b64decode(env["payload_b64"])
    else:
        kept = env["payload_text"].encode()
    assert len(kept) > (256 << 10) and data.startswith(kept)
    assert check_envelope(env) is env


def test_input_under_the_cap_is_whole(sock, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_HOOK_STDIN_MS", "5000")
    data = b'{"k":"' + b"y" * (900 << 10) + b'"}'
    with FakeDaemon(sock) as daemon:
        assert run_hook("claude-code", stdin=data).returncode == 0
    env = json.loads(daemon.lines[0])
    assert env["truncated"] is False and "raw_sha256" not in env
    assert env["payload_text"].encode() == data


# ------------------------------------------------------------- (g) stdin never closed


@pytest.mark.parametrize("written", [b'{"partial":', b""])
def test_stdin_never_closed_does_not_hang(tmp_path, monkeypatch, written):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    proc = subprocess.Popen(hook_cmd("claude-code"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        proc.stdin.write(written)
        proc.stdin.flush()
        returncode = proc.wait(timeout=20)  # stdin stays open all along
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    assert returncode == 0
    env = only_spooled()
    assert env["payload_text"] == written.decode()
    assert env["stdin_incomplete"] is True and env["truncated"] is True
    assert env["orig_bytes"] == len(written)
    assert env["raw_sha256"] == "sha256:" + hashlib.sha256(written).hexdigest()


# ------------------------------------------------------------- (h) stdout, exit status


@pytest.mark.parametrize(
    "harness, expected",
    [
        ("gemini-cli", b"{}"),
        ("cline", b'{"cancel":false}'),
        ("claude-code", b""),
        ("codex", b""),
        ("cursor", b""),
        ("copilot", b""),
        ("vscode", b""),
        ("openhands", b""),
        ("something-else", b""),
    ],
)
def test_stdout_carries_only_the_neutral_reply(sock, harness, expected):
    with FakeDaemon(sock):
        acked = run_hook(harness, stdin=b"{}")
    down = run_hook(harness, stdin=b"{}")  # daemon gone: spooled
    for done in (acked, down):
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, b"")
    assert len(spooled()) == 1


def test_unwritable_spool_exits_0_and_says_so(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("AGENTWATCH_SPOOL", str(blocker / "spool"))  # ENOTDIR, even for root
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("AGENTWATCH_LEDGER", str(ledger))
    done = run_hook("gemini-cli", stdin=b"{}")
    assert done.returncode == 0 and done.stdout == b"{}"
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "could not spool record" in lines[0]
    (entry,) = ledger_lines(ledger)
    assert (entry["outcome"], entry["seq"], entry["reason"]) == ("failed", None, "no_daemon")


def test_usage_error_still_exits_0_and_records_nothing():
    done = run_hook(stdin=b"{}")
    assert done.returncode == 0 and done.stdout == b""
    assert done.stderr.startswith(b"agentwatch-hook: usage:")
    assert spooled() == []


def test_closed_stdout_does_not_change_the_exit_status(sock):
    pipe = subprocess.PIPE
    proc = subprocess.Popen(hook_cmd("gemini-cli"), stdin=pipe, stdout=pipe, stderr=pipe)
    proc.stdout.close()  # the harness stopped listening: the `{}` write gets EPIPE
    _, err = proc.communicate(b"{}", timeout=30)
    assert proc.returncode == 0 and err == b""
    assert len(spooled()) == 1


def test_internal_error_and_interrupt_are_swallowed(monkeypatch, capfd):
    previous = signal.getsignal(signal.SIGINT)
    try:
        for exc in (RuntimeError("boom"), KeyboardInterrupt(), BrokenPipeError()):

            def explode(*args, exc=exc):
                raise exc

            monkeypatch.setattr(hookclient, "record", explode)
            assert hook.run(["gemini-cli"]) == 0
            out, err = capfd.readouterr()
            assert out == "{}"
            assert err.startswith("agentwatch-hook: internal error, record not captured:")
    finally:
        signal.signal(signal.SIGINT, previous)


def test_cli_hook_command_records(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    done = subprocess.run(
        [sys.executable, "-m", "agentwatch.cli", "hook", "gemini-cli", "--event", "AfterTool", "x"],
        input=b'{"a":1}',
        capture_output=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}", b"")
    env = only_spooled()
    assert (env["harness"], env["event"], env["argv"]) == ("gemini-cli", "AfterTool", ["x"])
    assert env["payload_text"] == '{"a":1}'


@pytest.mark.parametrize("args", [["--event"], ["--event", "Stop"], ["--bogus", "claude-code"]])
def test_cli_hook_command_malformed_call_exits_0_and_records_nothing(args):
    done = subprocess.run(
        [sys.executable, "-m", "agentwatch.cli", "hook", *args], input=b"{}", capture_output=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.startswith(b"agentwatch-hook: usage:")
    assert spooled() == []


# ------------------------------------------------------------- (i) concurrency


def test_50_concurrent_clients_without_daemon_make_50_files(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    procs = [spawn_with_input(hook_cmd("claude-code"), b'{"n":%d}' % i) for i in range(50)]
    assert [proc.wait(timeout=60) for proc in procs] == [0] * 50
    files = spooled()
    assert len(files) == 50
    envs = [json.loads(f.read_bytes()) for f in files]
    assert sorted(json.loads(e["payload_text"])["n"] for e in envs) == list(range(50))
    assert len({e["record_id"] for e in envs}) == 50
    assert {f.name for f in files} == {e["record_id"] + ".json" for e in envs}
    assert list((config.load().spool / "tmp").iterdir()) == []


# ------------------------------------------------------------- (j) ids, paths, imports


def test_uuid7_layout_and_uniqueness():
    ms = 1_764_460_800_123
    ids = [hookclient.uuid7(ms) for _ in range(5000)]
    assert len(set(ids)) == 5000
    for text in ids[:100]:
        u = uuid.UUID(text)
        assert str(u) == text and len(text) == 36
        assert u.version == 7 and u.variant == uuid.RFC_4122
        assert u.int >> 80 == ms
    # Later milliseconds sort later, as text: the store's UNIQUE index grows at its end.
    later = [hookclient.uuid7(ms + step) for step in (1, 2, 1000, 86_400_000)]
    assert sorted([ids[0], *later]) == [ids[0], *later]
    now = hookclient.uuid7()
    assert abs((uuid.UUID(now).int >> 80) - time.time_ns() // 1_000_000) < 60_000


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"AGENTWATCH_SOCKET": "/x/s.sock", "AGENTWATCH_SPOOL": "/x/spool"},
        {"AGENTWATCH_SOCKET": "rel/s.sock", "AGENTWATCH_SPOOL": "rel/spool"},
        {"XDG_RUNTIME_DIR": None, "XDG_DATA_HOME": None},
        {"XDG_RUNTIME_DIR": "relative/run", "XDG_DATA_HOME": "relative/data"},
        {"XDG_RUNTIME_DIR": "/run/user/1000/", "XDG_DATA_HOME": "/data/"},
        {"XDG_DATA_HOME": None, "HOME": "/home/someone/"},
    ],
)
def test_default_paths_agree_with_the_package(monkeypatch, env):
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    assert Path(os.fsdecode(hookclient.socket_path())) == config.load().socket
    assert Path(os.fsdecode(hookclient.spool_path())) == config.load().spool


def test_default_paths_agree_in_the_isolated_process(monkeypatch):
    """The same check where it matters: `-I -S`, no os module, env read from posix."""
    code = (
        "import sys; sys.path.append(sys.argv[1]); import hookclient as h; "
        "print(h.socket_path().decode()); print(h.spool_path().decode())"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(HOOK.parent)], capture_output=True, timeout=30)
    sock, spool = done.stdout.decode().splitlines()
    assert Path(sock) == config.load().socket
    assert Path(spool) == config.load().spool


def test_client_files_import_only_the_standard_library():
    for path in (HOOK, HOOK.parent / "hookclient.py", HOOK.parent / "platform_layer.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # `from . import hookclient` / `platform_layer`, the in-package path only
                    assert node.names[0].name == ("hookclient" if path == HOOK else "platform_layer")
                    continue
                names = [node.module]
            else:
                continue
            for name in names:
                if name == "agentwatch.daemon" and path.name == "hookclient.py":
                    continue  # the slow path's redaction before spooling, imported only there
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in ("hookclient", "platform_layer", "_sha2"), (path.name, name)


def test_hot_path_imports_stay_small(sock):
    """Guards start-up cost without timing it: the heavy modules stay out."""
    with FakeDaemon(sock):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-X", "importtime", str(HOOK), "claude-code"],
            input=b"{}",
            capture_output=True,
            timeout=30,
        )
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert "hookclient" in imported
    assert imported.isdisjoint({"os", "json", "re", "socket", "enum", "hashlib", "typing", "agentwatch"}), imported
