"""Nothing unredacted at rest: what the hook spools on its slow path is masked before it is written.

The hook runs as a harness runs it (`python -I -S hook.py`), with no daemon listening, so
it spools; the data directory is then searched byte for byte for the secret. The spooled
envelope is stored through `normalize.to_append`, the path the drain takes, and the mask
it carries is the one the daemon would have made under the same salt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.hook_fakes import run_hook

from agentwatch import paths
from agentwatch.record import normalize, redact
from agentwatch.record.redact import spool as spool_redact
from agentwatch.record.redact.corpus import ALNUM, fake

SECRET = fake("spool-aws-secret", ALNUM + "+/", 40)  # an AWS secret access key's shape (40 base64 characters)
PHRASE = "letmein" + fake("spool-phrase", "abcdefghijklmnopqrstuvwxyz", 6)


def payload(text: str) -> bytes:
    return json.dumps({
        "session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Read",
        "tool_input": {"file_path": "/srv/app/.env"},
        "tool_response": {"type": "text", "file": {"filePath": "/srv/app/.env", "content": text}},
    }).encode()


def files_under(root: Path) -> list[Path]:
    return [Path(d) / f for d, _, fs in os.walk(root) for f in fs]


def test_the_spool_holds_no_secret_and_the_drain_stores_the_daemons_masks(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(tmp_path / "nobody.sock"))
    text = f"AWS_SECRET_ACCESS_KEY={SECRET}\ndb_password={PHRASE}\n"
    done = run_hook("claude-code", stdin=payload(text))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")

    files = files_under(paths.data_dir())
    spooled = [f for f in files if f.parent.name == "new"]
    assert len(spooled) == 1
    for f in files:  # the spool and everything else the hook wrote
        data = f.read_bytes()
        assert SECRET.encode() not in data and PHRASE.encode() not in data, f

    env = json.loads(spooled[0].read_bytes())
    policy = redact.default_policy()  # the salt the hook found, as the daemon reads it
    stored = normalize.to_append(env, policy=policy).payload
    assert SECRET.encode() not in stored and PHRASE.encode() not in stored
    assert policy.mask("assignment", PHRASE).encode() in stored


def test_privacy_full_spools_the_frame_as_it_is(monkeypatch, tmp_path):
    line = json.dumps({"op": "append", "record_id": "r1", "harness": "claude-code",
                       "payload_text": payload(f"db_password={PHRASE}\n").decode()}).encode() + b"\n"
    assert spool_redact.redact_line(line, redact.Policy(redact.FULL)) == line
    masked = spool_redact.redact_line(line, redact.Policy(redact.REDACTED, bytes(range(32))))
    assert PHRASE.encode() not in masked and json.loads(masked)["record_id"] == "r1"


def test_a_line_without_secrets_is_spooled_byte_for_byte():
    line = json.dumps({"op": "append", "record_id": "r2", "harness": "codex",
                       "payload_text": '{"a": 1,  "b": "plain"}', "argv": ["x"]}).encode() + b"\n"
    assert spool_redact.redact_line(line, redact.Policy(redact.REDACTED, bytes(range(32)))) == line


def test_argv_and_non_utf8_payloads_are_masked_and_digests_rekeyed():
    policy = redact.Policy(redact.REDACTED, bytes(range(32)))
    import base64

    raw = b"\xff\xfe password = \"" + PHRASE.encode() + b"\"\n"
    line = json.dumps({"op": "append", "record_id": "r3", "harness": "codex", "raw_sha256": "sha256:" + "0" * 64,
                       "payload_b64": base64.b64encode(raw).decode(),
                       "argv": [f"sshpass -p {PHRASE} ssh host"]}).encode() + b"\n"
    env = json.loads(spool_redact.redact_line(line, policy))
    assert PHRASE not in env["argv"][0]
    assert PHRASE.encode() not in base64.b64decode(env["payload_b64"])
    assert env["raw_sha256"].startswith("hmac-sha256:")


def test_a_broken_redactor_never_costs_the_record(monkeypatch):
    from agentwatch import hookclient
    from agentwatch.daemon import spool_redact as hook_side

    def broken(line):
        raise RuntimeError("boom")

    monkeypatch.setattr(hook_side, "redact_for_spool", broken)
    said = []
    monkeypatch.setattr(hookclient, "say", said.append)
    assert hookclient.redact_for_spool(b'{"x":1}\n') == b'{"x":1}\n'
    assert said == ["spooling a record unredacted: RuntimeError: boom"]


def test_a_real_daemon_drains_the_masked_frame_and_stores_its_masks(monkeypatch, tmp_path):
    from support.daemon import Daemon, wait_for

    d = Daemon(tmp_path)
    monkeypatch.setenv("AGENTWATCH_SOCKET", str(d.socket))  # nobody listens yet: the hook spools
    monkeypatch.setenv("AGENTWATCH_SPOOL", str(d.spool))
    done = run_hook("claude-code", stdin=payload(f"DEBUG=1\ndb_password={PHRASE}\nAWS_SECRET_ACCESS_KEY={SECRET}\n"))
    assert (done.returncode, done.stderr) == (0, b"")
    (spooled,) = (d.spool / "new").iterdir()
    assert PHRASE.encode() not in spooled.read_bytes() and SECRET.encode() not in spooled.read_bytes()
    d.start()
    try:
        wait_for(lambda: not os.listdir(d.spool / "new"), "spool/new to be drained")
        (row,) = d.rows("event")
        stored = json.dumps(row["payload"])
        assert PHRASE not in stored and SECRET not in stored
        assert redact.default_policy().mask("assignment", PHRASE) in stored  # the daemon's salt, the hook's mask
    finally:
        assert d.stop() == 0
