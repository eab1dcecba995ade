"""The hook's input as harnesses really deliver it: late, never, or larger than a frame.

Run as harnesses run the client (a real `python -I -S hook.py` process, tests/support/hook_fakes.py),
and stored through normalize into a real store, so each case is checked where it matters: the
call still pairs, and a record whose input did not arrive says so.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time

import pytest
from support.hook_fakes import FakeDaemon, SocketDir, hook_cmd, run_hook

from agentwatch import hookclient
from agentwatch.record import normalize
from agentwatch.store.append import Store

# Serial (`make test` runs this file alone, after the parallel phase):
# it asserts that every cut hook run ends within 2 s and times the hook's stdin wait
# (AGENTWATCH_HOOK_STDIN_MS): a test on the other core would eat into both.
pytestmark = pytest.mark.serial

MAX_LINE = 1 << 20
SESSION = "8a1c2f0e-5b7d-4c3e-9f10-2d4e6a8b0c1e"


def write_call(content: str) -> tuple[dict, dict]:
    """Claude Code's PreToolUse and PostToolUse of a Write (https://code.claude.com/docs/en/hooks: the
    Write tool's tool_input {file_path, content}; its tool_response {type, filePath, content})."""
    common = {"session_id": SESSION, "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{SESSION}.jsonl",
              "cwd": "/home/dev/shop", "permission_mode": "acceptEdits", "tool_name": "Write",
              "tool_input": {"file_path": "/home/dev/shop/fixtures/catalog.json", "content": content},
              "tool_use_id": "toolu_01WriteBig"}
    pre = {**common, "hook_event_name": "PreToolUse"}
    post = {**common, "hook_event_name": "PostToolUse",
            "tool_response": {"type": "create", "filePath": "/home/dev/shop/fixtures/catalog.json",
                              "content": content, "structuredPatch": []}}
    return pre, post


def test_a_write_over_one_mib_keeps_its_call_and_marks_what_was_cut(monkeypatch, store_path):
    content = json.dumps([{"sku": f"SKU-{i:06d}", "name": "Espresso cup, é", "price": i % 97}
                          for i in range(21_000)], ensure_ascii=False)
    assert len(content.encode()) > 1_300_000
    digest = "sha256:" + hashlib.sha256(content.encode()).hexdigest()
    with SocketDir() as directory:
        monkeypatch.setenv("AGENTWATCH_SOCKET", str(directory / "agentwatch.sock"))
        monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", "10000")
        with FakeDaemon(directory / "agentwatch.sock") as daemon:
            took = []
            for payload in write_call(content):
                started = time.monotonic()
                done = run_hook("claude-code", stdin=json.dumps(payload, ensure_ascii=False).encode())
                took.append(time.monotonic() - started)
                assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    pre_line, post_line = daemon.lines
    assert all(len(line) - 1 <= MAX_LINE for line in daemon.lines)
    pre_env, post_env = json.loads(pre_line), json.loads(post_line)
    assert pre_env["cut_fields"] == ["/tool_input/content"]
    assert post_env["cut_fields"] == ["/tool_response/content", "/tool_input/content"]  # the arguments last
    with Store(store_path) as store:
        for env in (pre_env, post_env):
            assert env["truncated"] is True
            assert env["raw_sha256"] == "sha256:" + hashlib.sha256(
                json.dumps(write_call(content)[env is post_env], ensure_ascii=False).encode()).hexdigest()
            store.append([normalize.to_append(env)])
        docs = [json.loads(r[0]) for r in store.conn.execute("SELECT payload FROM events ORDER BY seq")]
        cursor = store.conn.execute("SELECT tool_name, call_id, paired_by, outcome, start_seq, end_seq, "
                                    "session_id FROM tool_calls")
        calls = list(cursor)
    assert calls == [("Write", "toolu_01WriteBig", "call_id", "ok", 1, 2, SESSION)]
    for doc in docs:
        marker = doc["tool"]["input"]["content"]
        assert marker["agentwatch_cut"] == {"orig_bytes": len(content.encode()), "sha256": digest}
        assert marker["head"] == content[:1024]
        assert doc["tool"]["input"]["file_path"] == "/home/dev/shop/fixtures/catalog.json"
        assert doc["cut_fields"][-1] == "/tool_input/content" and "payload_error" not in doc
    assert docs[1]["tool"]["response"]["content"] == docs[1]["tool"]["input"]["content"]
    # the hook's own budget is its stdin wait (2 s) plus the ack wait; cutting costs far less
    assert max(took) < 2.0, took


def test_cutting_keeps_small_fields_exact_and_refuses_what_it_cannot_shrink():
    budget = 64 << 10
    doc = {"id": "x" * 2000, "big": "é" * 100_000, "list": ["y" * 80_000, 3]}
    text, cut = hookclient.cut_fields(json.dumps(doc).encode(), budget)
    kept = json.loads(text)
    assert cut == ["/big", "/list/0"]
    assert kept["id"] == doc["id"] and kept["list"][1] == 3
    assert kept["big"]["agentwatch_cut"]["orig_bytes"] == 200_000
    assert hookclient.cut_fields(json.dumps("z" * 200_000).encode(), budget) is None  # one bare string
    assert hookclient.cut_fields(b'{"a": [' + b"1," * 100_000 + b"1]}", budget) is None  # no large string
    assert hookclient.cut_fields(b'{"not json', budget) is None


def _spawn(monkeypatch, tmp_path, budget_ms: int | None = None) -> subprocess.Popen:
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    if budget_ms is not None:
        monkeypatch.setenv("AGENTWATCH_HOOK_STDIN_MS", str(budget_ms))
    return subprocess.Popen(hook_cmd("claude-code"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _spooled_doc() -> dict:
    from agentwatch import config

    [path] = sorted((config.load().spool / "new").iterdir())
    return normalize.record_document(normalize.check_envelope(json.loads(path.read_bytes())))


def test_input_that_arrives_late_is_read_whole(monkeypatch, tmp_path):
    # The case: stdin 400 ms late used to give an empty record of kind `other`
    proc = _spawn(monkeypatch, tmp_path)
    time.sleep(0.4)
    proc.stdin.write(b'{"session_id":"s1","hook_event_name":"Stop"')
    proc.stdin.flush()
    time.sleep(0.3)
    proc.stdin.write(b',"stop_hook_active":false}')
    proc.stdin.close()
    assert proc.wait(timeout=20) == 0
    proc.stdout.close()
    doc = _spooled_doc()
    assert (doc["event"], doc["session_id"]) == ({"name": "Stop", "kind": "stop"}, "s1")
    assert "payload_error" not in doc and "stdin_incomplete" not in doc


def test_input_that_never_arrives_is_marked(monkeypatch, tmp_path):
    proc = _spawn(monkeypatch, tmp_path, budget_ms=300)
    try:
        assert proc.wait(timeout=20) == 0  # stdin stays open all along
    finally:
        proc.stdin.close()
        proc.stdout.close()
    doc = _spooled_doc()
    assert doc["payload_error"] == "no input: stdin stayed open and nothing arrived within the hook's budget"
    assert (doc["event"]["kind"], doc["stdin_incomplete"], doc["orig_bytes"]) == ("other", True, 0)


def test_input_closed_empty_is_marked(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    assert run_hook("claude-code", stdin=b"").returncode == 0
    doc = _spooled_doc()
    assert doc["payload_error"] == "no input: stdin was closed empty"
    assert "stdin_incomplete" not in doc


def test_a_call_without_an_id_still_pairs_when_only_its_end_is_too_large(monkeypatch, store_path):
    # github/docs content/copilot/reference/hooks-reference.md: preToolUse {toolName, toolArgs},
    # postToolUse adds toolResult {resultType, textResultForLlm}; no call id, so calls pair on the
    # arguments' digest. A 640 KB file fits the start's frame whole; the end (arguments and a
    # 640 KB result) does not, and only its result may be cut.
    body = "line of the generated report, naïve café\n" * 15_000
    args = json.dumps({"path": "/home/dev/api/report.txt", "file_text": body})
    base = {"sessionId": "cs-77", "cwd": "/home/dev/api", "toolName": "create", "toolArgs": args}
    pre = {**base, "timestamp": 1764501600000}
    post = {**base, "timestamp": 1764501601000,
            "toolResult": {"resultType": "success", "textResultForLlm": "Created file:\n" + body}}
    with SocketDir() as directory:
        monkeypatch.setenv("AGENTWATCH_SOCKET", str(directory / "agentwatch.sock"))
        monkeypatch.setenv("AGENTWATCH_HOOK_TIMEOUT_MS", "10000")
        with FakeDaemon(directory / "agentwatch.sock") as daemon:
            for event, payload in (("preToolUse", pre), ("postToolUse", post)):
                data = json.dumps(payload, ensure_ascii=False).encode()
                assert run_hook("copilot", "--event", event, stdin=data).returncode == 0
    pre_env, post_env = (json.loads(line) for line in daemon.lines)
    assert "cut_fields" not in pre_env and pre_env["truncated"] is False
    assert post_env["cut_fields"] == ["/toolResult/textResultForLlm"]
    with Store(store_path) as store:
        store.append([normalize.to_append(pre_env)])
        store.append([normalize.to_append(post_env)])
        calls = list(store.conn.execute("SELECT tool_name, paired_by, outcome, start_seq, end_seq FROM tool_calls"))
    assert calls == [("create", "fifo", "ok", 1, 2)]


def test_both_halves_of_a_call_cut_the_same_arguments():
    """The start fits a frame only when its escaped form does; the end then cuts the same values."""
    body = "line of the generated report, naïve café\n" * 17_000
    args = json.dumps({"path": "/home/dev/api/report.txt", "file_text": body})
    pre = json.dumps({"sessionId": "cs-77", "toolName": "create", "toolArgs": args}).encode()
    post = json.dumps({"sessionId": "cs-77", "toolName": "create", "toolArgs": args,
                       "toolResult": {"resultType": "success", "textResultForLlm": body}}).encode()
    assert len(pre) < hookclient._CUT_BUDGET and hookclient._too_large(pre)  # its escapes push it over
    (pre_text, pre_cut), (post_text, post_cut) = (hookclient.cut_fields(d, hookclient._CUT_BUDGET) for d in (pre, post))
    assert (pre_cut, post_cut) == (["/toolArgs"], ["/toolResult/textResultForLlm", "/toolArgs"])
    assert json.loads(pre_text)["toolArgs"] == json.loads(post_text)["toolArgs"]
