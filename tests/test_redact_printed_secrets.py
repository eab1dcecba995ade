"""Commands whose standard output is a secret (commands.toml, `[[prints]]`): the record's output of
such a call is masked whole, in every harness's shape, on the fast path, the walk and the spool.

The harness payloads are the fixtures of tests/fixtures/harness (each built from its harness's
published hook schema or docs, and naming them); only the command and its output are changed."""

from __future__ import annotations

import json

import pytest
from support import adapter_cases

from agentwatch.record import normalize, redact
from agentwatch.record.redact import commands, spool
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
WEAK = "hunter2-Plum"  # a chosen password: no token's shape, no name beside it in the output
SHELL_EVENTS = [("claude-code", "PostToolUse"), ("codex", "PostToolUse"), ("gemini-cli", "AfterTool"),
                ("cursor", "afterShellExecution"), ("copilot", "postToolUse"), ("cline", "PostToolUse"),
                ("openhands", "PostToolUse")]


def _envelope(harness: str, event: str, command: str, output: str) -> dict:
    """The harness's shell-call fixture with its command and its output replaced."""
    env = adapter_cases.envelope(harness, event)
    tool = normalize.record_document(env)["tool"]
    text = env["payload_text"]
    old_output = tool["response"] if isinstance(tool["response"], str) else next(
        v for v in _strings(tool["response"]) if " " in v)
    for old, new in ((tool["input"]["command"], command), (old_output, output)):
        assert json.dumps(old)[1:-1] in text
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    env["payload_text"] = text
    return env


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _stored(env: dict) -> bytes:
    doc = normalize.record_document(env)
    fast = POLICY.encode(doc)
    assert fast == canonical_json(POLICY.apply(doc))  # the fast path and the walk agree
    return fast


def test_every_row_cites_the_tools_documentation_and_names_its_tool():
    rows = commands.print_table()
    assert len(rows) == 27
    assert len({(r.tool, r.subcommand) for r in rows}) == 27
    for row in rows:
        assert row.source.startswith("https://") or row.source.startswith("macOS security(1)"), row
        assert row.tool in row.source or row.tool in ("op", "bw", "pass", "gh", "pwgen", "secret-tool", "security"), row
        assert commands.prints_secret(commands.sample_command(row)) == row.tool


@pytest.mark.parametrize(("harness", "event"), SHELL_EVENTS)
def test_the_output_of_a_command_that_prints_a_secret_is_masked_in_every_harness(harness, event):
    out = _stored(_envelope(harness, event, "pass show db/prod", f"{WEAK}\nlogin: app\n"))
    assert WEAK.encode() not in out
    assert b"[REDACTED:command_output:" in out
    assert b"pass show db/prod" in out  # the command line itself holds no secret and stays


@pytest.mark.parametrize(("harness", "event"), SHELL_EVENTS)
def test_the_spool_masks_it_too(harness, event):
    env = _envelope(harness, event, "vault kv get -field=password secret/db", WEAK + "\n")
    line = spool.redact_line((json.dumps(env) + "\n").encode(), POLICY)
    assert WEAK.encode() not in line
    assert b"[REDACTED:command_output:" in line


@pytest.mark.parametrize("command", [
    "gh auth token",
    "gh auth token | head -c 12",
    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
    "kubectl get secret/db -ojsonpath={.data.password}",
    "sudo -E vault kv get -field=password secret/db",
    "cd infra && gcloud auth print-access-token",
    "echo \"$(op read op://prod/db/password)\"",
    "echo `pass show db/prod`",
    "security find-generic-password -s db -w",
    "aws secretsmanager get-secret-value --secret-id db --query SecretString --output text",
    "openssl rand -base64 24",
    "gh auth token 2>/dev/null",
])
def test_a_secret_that_reaches_the_terminal(command):
    assert commands.prints_secret(command)
    out = _stored(_envelope("claude-code", "PostToolUse", command, WEAK + "\n"))
    assert WEAK.encode() not in out


@pytest.mark.parametrize("command", [
    "gh auth status",
    "export GH_TOKEN=$(gh auth token) && npm test",                         # captured
    'curl -H "Authorization: Bearer $(gh auth token)" https://api.github.com/user',
    "gh auth token > ~/.token",                                             # written to a file
    "aws ecr get-login-password | docker login --username AWS --password-stdin 1.dkr.ecr.us-east-1.amazonaws.com",
    "gh auth token | wc -c",                                                # consumed by a reader
    "kubectl get secret db -o yaml",                                        # names beside values: the name rules judge it
    "vault kv get secret/db",
    "aws secretsmanager get-secret-value --secret-id db",                   # JSON: `SecretString` names the value
    "openssl req -new -key k.pem",
    "echo pass show",
])
def test_output_that_does_not_show_a_printed_secret_keeps_its_bytes(command):
    assert commands.prints_secret(command) == ""
    env = _envelope("claude-code", "PostToolUse", command, "Login Succeeded 12 passed\n")
    assert b"Login Succeeded 12 passed" in _stored(env)


def test_a_long_command_line_is_still_read():
    assert commands.prints_secret("echo " + "x " * 100_000 + "; gh auth token") == "gh"
