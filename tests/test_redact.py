"""Redaction before store: every fake secret, in every field position, never reaches the store."""

from __future__ import annotations

import base64
import json
import os
import stat

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentwatch.record import normalize, redact
from agentwatch.record.redact import commands, rules
from agentwatch.record.redact.corpus import BENIGN, FORMAT_BENIGN, fake, format_samples, rule_samples, secrets_corpus
from agentwatch.store.append import Store
from agentwatch.store.chain import canonical_json

SALT = bytes(range(32))
POLICY = redact.Policy(redact.REDACTED, SALT)
CORPUS = secrets_corpus()
SECRETS = sorted({secret for _, secret, _ in CORPUS})


def forms(secret: str) -> list[bytes]:
    """The byte forms a leaked secret could take in a row: as is, JSON-escaped, and its long lines."""
    out = {secret.encode(), json.dumps(secret)[1:-1].encode()}
    out.update(line.encode() for line in secret.splitlines() if len(line) >= 16)
    return sorted(out)


def leaked(data: bytes, secrets=SECRETS) -> list[str]:
    return [s[:8] + "…" for s in secrets if any(f in data for f in forms(s))]


@pytest.mark.parametrize("kind,secret,text", CORPUS, ids=[f"{i}-{k}" for i, (k, _, _) in enumerate(CORPUS)])
def test_every_corpus_secret_is_masked_with_its_kind(kind, secret, text):
    out = POLICY.redact_text(text)
    assert secret not in out
    assert f"[REDACTED:{kind}:hmac-sha256:" in out


@pytest.mark.parametrize("text", BENIGN)
def test_benign_look_alikes_are_left_alone(text):
    assert POLICY.redact_text(text) == text


def test_mask_is_stable_per_salt_and_differs_across_salts():
    kind, secret, text = CORPUS[0]
    first, again = POLICY.redact_text(text), POLICY.redact_text(f"again: {text}")
    mask = POLICY.mask(kind, secret)
    assert mask in first and mask in again
    assert len(mask.rsplit(":", 1)[1]) == redact.MASK_HEX + 1  # 12 hex and "]"
    other = redact.Policy(redact.REDACTED, bytes(32))
    assert other.mask(kind, secret) != mask


def test_redaction_is_idempotent():
    for _, _, text in CORPUS:
        once = POLICY.redact_text(text)
        assert POLICY.redact_text(once) == once


def test_self_test_passes_and_reports_without_echoing_secrets(monkeypatch):
    result = redact.self_test()
    structure = len(redact._structure_documents("x"))
    assert result.failures == ()
    formats = len(format_samples()) + len(FORMAT_BENIGN)  # the format-aware layer (#33)
    printed = len(commands.print_table())  # commands whose output is a secret
    assert printed == 27
    assert result.ok and result.checked == (len(CORPUS) + len(rule_samples()) + structure + len(BENIGN) + formats
                                            + printed)
    assert result.as_dict()["ok"] is True
    # A broken rule set is reported, and the report never contains a secret.
    monkeypatch.setattr(rules.RuleSet, "redact", lambda self, text, mask, extra=None, path="": text)
    broken = redact.self_test()
    assert not broken.ok and broken.failures
    assert not leaked("\n".join(broken.failures).encode())


# --- whole documents --------------------------------------------------------------------------


def envelopes_for(secret_text: str, n: int) -> list[dict]:
    """One secret in every field position an envelope can carry it."""
    rid = f"0190f1c2-0000-7000-8000-{n:012d}"
    base = {"harness": "claude-code", "ts_observed_ns": 1, "pid": 2, "ppid": 3}
    claude = {"session_id": "s-1", "cwd": "/home/alice/src", "transcript_path": "/tmp/t.jsonl"}
    return [
        {**base, "record_id": rid + "a", "payload": {**claude, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                                     "tool_use_id": "toolu_01x",
                                                     "tool_input": {"command": f"run {secret_text}"},
                                                     "tool_response": {"stdout": secret_text, "stderr": ""}}},
        {**base, "record_id": rid + "b", "payload": {**claude, "hook_event_name": "UserPromptSubmit",
                                                     "prompt": f"use this: {secret_text}"}},
        {**base, "record_id": rid + "c", "payload": {"deep": [{"deeper": {"deepest": [[secret_text]]}}]}},
        {**base, "record_id": rid + "d", "payload": {"env": {"DB_PASSWORD": secret_text, "API_TOKEN": secret_text}}},
        {**base, "record_id": rid + "e", "payload": {secret_text: "the secret is a key", "k": {secret_text: 1}}},
        {**base, "record_id": rid + "f", "payload": {**claude, "hook_event_name": "PreToolUse", "tool_name": "WebFetch",
                                                     "tool_input": {"url": f"https://example.com/?q={secret_text}"}}},
        {**base, "record_id": rid + "g", "payload_text": json.dumps({"line": secret_text})},
        {**base, "record_id": rid + "h", "harness": "codex", "payload_text": "", "argv": ["notify", json.dumps(
            {"type": "agent-turn-complete", "last-assistant-message": secret_text})]},
        {**base, "record_id": rid + "i", "payload_b64": base64.b64encode(b"\xff\xfe " + secret_text.encode()).decode()},
        {**base, "record_id": rid + "j", "payload_text": "not json " + secret_text},
        {**base, "record_id": rid + "k", "harness": "cursor",
         "payload": {"hook_event_name": "beforeMCPExecution", "tool_name": "db",
                     "tool_input": json.dumps({"password": secret_text, "query": "select 1"})}},
    ]


def as_text(env: dict) -> dict | None:
    """The same envelope with its payload as the hook client sends it (text, scanned as such)."""
    if "payload" not in env:
        return None
    out = {k: v for k, v in env.items() if k != "payload"}
    out["record_id"] = env["record_id"] + "t"
    out["payload_text"] = json.dumps(env["payload"], ensure_ascii=False)
    return out


def all_envelopes() -> list[dict]:
    envs = [env for n, (_, _, text) in enumerate(CORPUS) for env in envelopes_for(text, n)]
    return envs + [t for t in map(as_text, envs) if t is not None]


def test_every_field_position_is_redacted_by_to_append():
    for env in all_envelopes():
        row = normalize.to_append(env, policy=POLICY)
        assert not leaked(row.payload), env["record_id"]
        json.loads(row.payload)


def test_to_append_redacts_by_default_with_the_install_salt(isolated_env):
    _, secret, text = CORPUS[0]
    env = {"record_id": "r1", "harness": "claude-code", "payload": {"prompt": text}}
    row = normalize.to_append(env)
    assert secret.encode() not in row.payload and b"[REDACTED:" in row.payload
    salt_file = redact.default_salt_file()
    assert salt_file.is_file() and stat.S_IMODE(salt_file.stat().st_mode) == 0o600
    assert normalize.to_append(env, policy=redact.Policy(redact.FULL)).payload != row.payload


def test_store_files_never_hold_a_secret_before_or_after_checkpoint(tmp_path):
    """The whole corpus through to_append + Store: main db, -wal and -shm, byte for byte."""
    path = tmp_path / "store.db"
    envs = all_envelopes()
    store = Store(path)
    try:
        for i in range(0, len(envs), 50):
            store.append([normalize.to_append(env, policy=POLICY) for env in envs[i:i + 50]])
        wal = path.with_name(path.name + "-wal")
        shm = path.with_name(path.name + "-shm")
        assert wal.stat().st_size > 0, "the rows should still be in the WAL"
        files = [path, wal, shm]
        for f in files:
            assert not leaked(f.read_bytes()), f.name
        assert b"[REDACTED:" in wal.read_bytes()  # the rows really are there
        store.conn.pragma("wal_checkpoint(TRUNCATE)")
        for f in files:
            if f.exists():
                assert not leaked(f.read_bytes()), f.name
        count = store.conn.execute("SELECT count(*) FROM records").fetchone()[0]
    finally:
        store.close()
    assert count == len(envs)
    for f in tmp_path.iterdir():
        assert not leaked(f.read_bytes()), f.name
    assert b"[REDACTED:" in path.read_bytes()


def test_content_digests_are_rekeyed_when_content_was_masked():
    _, secret, text = next(c for c in CORPUS if c[0] == "assignment")
    doc = {"tool": {"name": "Bash", "input": {"command": text}, "input_sha256": "sha256:" + "ab" * 32},
           "prompt": {"sha256": "sha256:" + "cd" * 32, "length": 3}, "raw": {"prompt": text}}
    out = POLICY.apply(doc)
    assert out["tool"]["input_sha256"].startswith("hmac-sha256:")
    assert out["prompt"]["sha256"].startswith("hmac-sha256:")
    clean = {"tool": {"name": "Bash", "input": {"command": "ls"}, "input_sha256": "sha256:" + "ab" * 32}}
    assert POLICY.apply(clean) == clean
    # Only the digest of what changed: a secret in the response leaves the input's digest
    # as the pre event has it, so pre/post pairing by input digest still works.
    post = {"tool": {"input": {"command": "ls"}, "input_sha256": "sha256:" + "ab" * 32, "response": text}}
    assert POLICY.apply(post)["tool"]["input_sha256"] == "sha256:" + "ab" * 32
    assert doc["tool"]["input_sha256"].startswith("sha256:"), "the caller's document is not modified"


def test_a_value_under_a_secret_name_is_masked_whole_whatever_its_type():
    doc = {"password": "hunter2", "db": {"client_secret": "abc", "apiKey": "x1", "API-KEY": "x2"},
           "token": ["t1", "t2"], "credentials": {"user": "alice", "pass": "p"}, "passwords": {"a": "b"},
           "api_keys": [], "max_tokens": "4096", "PWD": "/home/alice", "password_hash": "ok",
           "secret": "${FROM_ENV}", "access_token": 42, "db_password": 123456, "usage": {"input_tokens": 7}}
    out = POLICY.apply(doc)
    mask = POLICY.mask
    assert out["password"] == mask("secret_field", "hunter2")
    assert out["db"] == {k: mask("secret_field", v) for k, v in doc["db"].items()}
    assert out["token"] == mask("secret_field", '["t1","t2"]')
    assert out["credentials"] == mask("secret_field", '{"pass":"p","user":"alice"}')
    assert out["passwords"] == mask("secret_field", '{"a":"b"}')
    assert out["api_keys"] == []  # nothing to hide
    assert out["db_password"] == mask("secret_field", "123456")  # a number under a password name
    assert out["access_token"] == 42  # token counts and ids stay numbers
    assert out["max_tokens"] == "4096" and out["PWD"] == "/home/alice" and out["password_hash"] == "ok"
    assert out["secret"] == "${FROM_ENV}" and out["usage"] == {"input_tokens": 7}


@pytest.mark.parametrize("doc,path", [
    ({"containerDefinitions": [{"environment": [{"name": "DB_PASSWORD", "value": "hunter2x"}]}]},
     ("containerDefinitions", 0, "environment", 0, "value")),
    ({"env": [{"name": "GITHUB_TOKEN", "value": "hunter2x"}, {"name": "HOME", "value": "/root"}]}, ("env", 0, "value")),
    ({"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "hunter2x"}}, ("Parameter", "Value")),
    ({"ParameterKey": "AdminPassword", "ParameterValue": "hunter2x"}, ("ParameterValue",)),
    ({"variable": {"db_password": {"default": "hunter2x"}}}, ("variable", "db_password")),
])
def test_name_value_pairs_with_a_secret_name_mask_the_value(doc, path):
    out = POLICY.apply(doc)
    node = out
    for step in path:
        node = node[step]
    assert node.startswith("[REDACTED:secret_field:")
    assert b"hunter2x" not in POLICY.encode(doc)
    if "env" in doc:
        assert out["env"][1] == {"name": "HOME", "value": "/root"}


@pytest.mark.parametrize("text,kept", [
    ("machine api.example.com login alice password hunter2x", "machine api.example.com login alice password "),
    ("db.internal:5432:app:alice:hunter2x", "db.internal:5432:app:alice:"),
    ("mysql -u root -phunter2x app", "mysql -u root -p"),
    ("sshpass -p hunter2x ssh alice@host", "sshpass -p "),
    ("docker login -u alice -p hunter2x registry.example.com", "docker login -u alice -p "),
    ("curl -u alice:hunter2x https://api.example.com", "curl -u alice:"),
    ("alice:hunter2x@db.example.com:5432", "alice:"),
    ("postgres://alice:hunter2x@db.example.com/app", "postgres://alice:"),
    ("Server=db;Database=app;Password=hunter2x;", "Server=db;Database=app;Password="),
    ('variable "admin_password" {\n  type = string\n  default = "hunter2x"\n}', 'variable "admin_password"'),
    ("export DB_PASSWORD=hunter2x", "export DB_PASSWORD="),
    ("  password: hunter2x", "  password: "),
    ("[database]\npassword = hunter2x", "[database]\npassword = "),
    ("api_token = '" + "0123456789abcdef" * 2 + "'", "api_token = '"),  # hex under a secret name
])
def test_text_formats_mask_the_credential_and_keep_the_rest(text, kept):
    text, kept = text.replace("\\n", "\n"), kept.replace("\\n", "\n")
    out = POLICY.redact_text(text)
    assert "hunter2x" not in out and "0123456789abcdef" * 2 not in out
    assert out.startswith(kept)


@pytest.mark.parametrize("text", [
    "if not token:\n    raise ValueError('a token is required')",
    "def get_secret(name: str) -> str:",
    "password = getpass.getpass()",
    "token = self.token",
    "def f(token: str, password: Optional[str] = None):",
    "apiKey: config.apiKey,",
    '"maxInputTokens": 131072,',
    "const sliceEndInToken = overlapEnd - tokenStart;",
    "npm:lodash@4.17.21",
    "python:3.11-slim@sha256:" + "ab" * 32,
    "if (token === \"--reasoning-effort\") {",
])
def test_code_that_mentions_a_secret_stays_intact(text):
    text = text.replace("\\n", "\n")
    assert POLICY.redact_text(text) == text


def test_extra_patterns_mask_custom_secrets():
    policy = redact.Policy(redact.REDACTED, SALT, ("ACME-[0-9]{6}",))
    assert "ACME-123456" not in policy.redact_text("id ACME-123456 here")
    grouped = redact.Policy(redact.REDACTED, SALT, (r"employee=(?P<secret>\d+)",))
    out = grouped.redact_text("employee=4242 ok")
    assert out.startswith("employee=[REDACTED:custom:") and "4242" not in out
    assert grouped.encode({"a": "employee=4242"}) == canonical_json(grouped.apply({"a": "employee=4242"}))
    with pytest.raises(ValueError):
        redact.validate_pattern("x*")


def test_lone_surrogates_take_the_escaped_path_and_are_still_redacted():
    _, secret, text = next(c for c in CORPUS if c[0] == "github_token")
    env = {"record_id": "r2", "harness": "claude-code", "payload": {"prompt": "\ud800 " + text}}
    row = normalize.to_append(env, policy=POLICY)
    assert secret.encode() not in row.payload
    assert json.loads(row.payload)["payload_error"].startswith("payload has values")


# --- privacy modes: exact output -----------------------------------------------------------------

DOC = {
    "schema": 1, "harness": "claude-code",
    "event": {"name": "PostToolUse", "kind": "tool_post"},
    "session_id": "s-1", "cwd": "/w",
    "tool": {"name": "Bash", "category": "shell", "call_id": "toolu_01",
             "input": {"command": "echo PASSWORD=hunter2x"}, "input_sha256": "sha256:" + "00" * 32,
             "response": {"stdout": "ok", "exit": 0}},
    "decision": {"value": "deny", "reason": "blocked"},
    "client": {"pid": 7},
    "raw": {"tool_input": {"command": "echo PASSWORD=hunter2x"}, "n": 1},
}


def test_mode_full_keeps_everything():
    policy = redact.Policy(redact.FULL)
    assert policy.apply(DOC) is DOC and policy.encode(DOC) == canonical_json(DOC)


def test_mode_redacted_exact():
    mask = "[REDACTED:assignment:hmac-sha256:152fe9449c1c]"
    expected = json.loads(json.dumps(DOC))
    expected["tool"]["input"]["command"] = f"echo PASSWORD={mask}"
    expected["raw"]["tool_input"]["command"] = f"echo PASSWORD={mask}"
    expected["tool"]["input_sha256"] = "hmac-sha256:7a32d55cedf09a6326c8ac7cac0d1897"
    assert POLICY.mask("assignment", "hunter2x") == mask
    assert POLICY.apply(DOC) == expected
    assert POLICY.encode(DOC) == canonical_json(expected)


def test_mode_hashed_exact():
    policy = redact.Policy(redact.HASHED, SALT)
    h = policy.keyed  # pinned below against a stdlib hmac computation
    expected = json.loads(json.dumps(DOC))
    expected["tool"]["input"] = {"command": h("echo PASSWORD=hunter2x")}
    expected["tool"]["response"] = {"stdout": h("ok"), "exit": 0}
    expected["tool"]["input_sha256"] = h("sha256:" + "00" * 32)
    expected["decision"]["reason"] = h("blocked")
    expected["raw"] = {"tool_input": {"command": h("echo PASSWORD=hunter2x")}, "n": 1}
    expected["privacy"] = {"mode": "hashed"}
    assert h("ok") == "hmac-sha256:13ee23720bc78fddc4521bd0b80700bf"
    assert policy.apply(DOC) == expected
    assert policy.encode(DOC) == canonical_json(expected)


def test_mode_metadata_only_exact():
    policy = redact.Policy(redact.METADATA_ONLY, SALT)
    expected = {
        "schema": 1, "harness": "claude-code",
        "event": {"name": "PostToolUse", "kind": "tool_post"},
        "session_id": "s-1", "cwd": "/w",
        "tool": {"name": "Bash", "category": "shell", "call_id": "toolu_01",
                 "input_sha256": "hmac-sha256:7a32d55cedf09a6326c8ac7cac0d1897"},
        "decision": {"value": "deny"},
        "client": {"pid": 7},
        "privacy": {"mode": "metadata-only", "dropped": {
            "tool.input": {"bytes": 36, "digest": "hmac-sha256:3dd5f935b7150e17c75288ba73e908b7"},
            "tool.response": {"bytes": 24, "digest": "hmac-sha256:d12999c9622716f372c49a356ee4a927"},
            "decision.reason": {"bytes": 9, "digest": "hmac-sha256:585c9391fbc5f5e73b6e0bd59172d9d1"},
            "raw": {"bytes": 57, "digest": "hmac-sha256:667e553464ad978a4d2b138b3bda2c7f"},
        }},
    }
    assert policy.apply(DOC) == expected
    assert policy.encode(DOC) == canonical_json(expected)


def test_modes_are_ordered_weakest_to_strongest():
    assert redact.MODES == ("full", "redacted", "hashed", "metadata-only")
    with pytest.raises(ValueError):
        redact.Policy("paranoid", SALT)
    with pytest.raises(ValueError):
        redact.Policy(redact.REDACTED, b"short")


# --- the salt -----------------------------------------------------------------------------------------


def test_salt_file_is_created_0600_and_reused(tmp_path):
    path = tmp_path / "sub" / "salt"
    first = redact.load_salt(path)
    assert len(first) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert redact.load_salt(path) == first


def test_salt_file_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "salt"
    redact.load_salt(path)
    os.chmod(path, 0o644)
    with pytest.raises(redact.SaltError, match="chmod 600"):
        redact.load_salt(path)


@pytest.mark.parametrize("content", ["not hex", "abcd"])
def test_malformed_salt_is_refused(tmp_path, content):
    path = tmp_path / "salt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content.encode())
    os.close(fd)
    with pytest.raises(redact.SaltError, match="hex"):
        redact.load_salt(path)


def test_missing_salt_without_create_is_an_error(tmp_path):
    with pytest.raises(redact.SaltError, match="cannot read"):
        redact.load_salt(tmp_path / "none", create=False)


# --- the fast path agrees with the full walk ---------------------------------------------------------

FRAGMENTS = [text for _, _, text in CORPUS[::3]] + list(BENIGN[::2]) + [
    "\n", "\t", '"', "'", "\\", "\\n", "=", ":", " ", "@", "://", "~", ".", "-", "_", "é", "\u2028", "\x00",
    "password", "TOKEN", "key", "sk-", "AKIA", "eyJ", "--token ", "-u ", "-----BEGIN", "Q~", "SG.", "ya29.",
    # keywords and shapes of the rules the held-out corpus added (tests/test_redact_corpus2.py)
    "psexec -p ", "-Password ", '<add key="pw" value="', "$2b$12$", "NRAL", "AZDO", " is '", "key-",
    fake("base36-fragment", "abcdefghijklmnopqrstuvwxyz0123456789", 32),
]
text_st = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=8).map("".join)
long_text_st = st.tuples(text_st, st.text(min_size=520, max_size=600), text_st).map("".join)
json_st = st.recursive(
    st.none() | st.booleans() | st.integers() | text_st,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text_st, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(text_st, json_st, max_size=5), st.sampled_from(redact.MODES[1:]))
def test_fast_path_equals_full_walk(doc, mode):
    policy = redact.Policy(mode, SALT)
    assert policy.encode(doc) == canonical_json(policy.apply(doc))


def _tool_doc(raw: dict, tool_input, tool_response, **more) -> dict:
    """A record document whose tool.input and tool.response are the very objects inside raw."""
    raw = {**raw, "tool_input": tool_input, "tool_response": tool_response}
    return {"schema": 1, "raw": raw, "tool": {"name": "Bash", "input": tool_input, "response": tool_response},
            **more}


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text_st, json_st, max_size=3), json_st, json_st | long_text_st | st.fixed_dictionaries(
    {"stdout": long_text_st}), st.sampled_from(redact.MODES[1:]))
def test_values_shared_by_tool_and_raw_are_scanned_once_and_stored_exactly(raw, tool_input, tool_response, mode):
    doc = _tool_doc(raw, tool_input, tool_response)
    try:
        expected = canonical_json(doc)
    except ValueError:
        return  # not storable as it is (a lone surrogate): normalize escapes it first
    data, view = redact.encode_with_scan_view(doc)
    assert data == expected
    if view != data:  # a view: the shared values, each replaced by its placeholder
        elided = {k: redact._PLACEHOLDERS[k] for k, v in (("input", tool_input), ("response", tool_response))
                  if isinstance(v, (dict, list, str))}
        assert view == canonical_json({**doc, "tool": {**doc["tool"], **elided}})
    policy = redact.Policy(mode, SALT)
    assert policy.encode(doc) == canonical_json(policy.apply(doc))


def test_a_secret_only_in_the_shared_tool_response_is_masked_in_both_places():
    for _, secret, text in CORPUS:
        doc = _tool_doc({"cwd": "/home/dev"}, {"command": "cat .env"}, {"stdout": "line\n" * 110 + text})
        assert redact.encode_with_scan_view(doc)[1] != canonical_json(doc)  # the view path, not the plain one
        data = POLICY.encode(doc)
        assert data == canonical_json(POLICY.apply(doc))
        assert not leaked(data, [secret])


def test_only_large_shared_values_get_a_view():
    small = _tool_doc({"cwd": "/home/dev"}, {"command": "ls"}, {"stdout": "a.py\n"})
    data, view = redact.encode_with_scan_view(small)
    assert data == view == canonical_json(small)  # the splice would cost more than scanning twice
    large = _tool_doc({"cwd": "/home/dev"}, {"command": "ls"}, {"stdout": "a.py\n" * 103})
    data, view = redact.encode_with_scan_view(large)
    assert data == canonical_json(large)
    assert view == canonical_json({**large, "tool": {**large["tool"], **redact._PLACEHOLDERS}})


def test_a_payload_holding_the_placeholder_text_is_encoded_whole():
    placeholder = redact._PLACEHOLDERS["response"]
    response = {"stdout": "done\n" * 103}
    doc = _tool_doc({"note": placeholder}, {"command": "ls"}, response)
    data, view = redact.encode_with_scan_view(doc)
    assert data == view == canonical_json(doc)  # two occurrences: no splice, the whole document is scanned
    doc = _tool_doc({"note": "x"}, {"command": "ls"}, response)
    data, view = redact.encode_with_scan_view(doc)
    assert data == canonical_json(doc)
    assert view == canonical_json({**doc, "tool": {**doc["tool"], **redact._PLACEHOLDERS}})


# Falsifying examples found by random runs (issue 13, `make fuzz`): kept as explicit examples.
GLUED = "passwordAKIA2A5UW33YDZB4L4ZQAKIA2A5UW33YDZB4L4ZQ\\AKIA2A5UW33YDZB4L4ZQ"
AFTER_BACKSLASH = "\\AKIA2A5UW33YDZB4L4ZQ"


@settings(max_examples=300, deadline=None)
@given(text_st)
@example(GLUED)
@example(AFTER_BACKSLASH)
def test_fast_path_and_rule_walk_agree_on_every_string(text):
    """The fast path is the rules' own keyword index: where it passes a string, the walk changes nothing."""
    ruleset = rules.builtin()
    if ruleset.redact(text, POLICY.mask) != text:
        assert ruleset.suspicious(text, json=False)
        if _jsonable(text):
            assert ruleset.suspicious(canonical_json({"k": [text]}).decode())
    if _jsonable(text):
        doc = {"k": text, text: [text]}
        assert POLICY.encode(doc) == canonical_json(POLICY.apply(doc))


def test_glued_aws_key_ids_are_each_masked():
    out = POLICY.redact_text(GLUED)
    assert "2A5UW33YDZB4L4ZQ" not in out
    assert out.count("[REDACTED:aws_access_key_id:") == 2  # the glued pair is one run, the third its own
    assert POLICY.encode({"k": GLUED}) == canonical_json(POLICY.apply({"k": GLUED}))


@pytest.mark.parametrize("backend", rules.KeywordIndex.BACKENDS)
def test_every_keyword_index_backend_finds_the_same_occurrences(backend):
    index = rules.load(backend=backend).index
    assert index.backend == backend  # hyperscan and pyahocorasick are installed with the project
    reference = rules.load(backend="python").index
    texts = [t for _, _, t in CORPUS] + list(BENIGN) + [t for *_, t in rule_samples()] + [GLUED, "PaSsWoRd=x"]
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        assert index.hits(data) == reference.hits(data)


@settings(max_examples=200, deadline=None)
@given(text_st)
def test_keyword_index_backends_agree_on_generated_text(text):
    data = text.encode("utf-8", "surrogatepass")
    expected = PYTHON_INDEX.hits(data)
    for index in OTHER_INDEXES:
        assert index.hits(data) == expected


PYTHON_INDEX = rules.load(backend="python").index
OTHER_INDEXES = [rules.load(backend=b).index for b in ("hyperscan", "ahocorasick")]


def _jsonable(text: str) -> bool:
    try:
        canonical_json(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("before", ["\n", "\t", '"', "\\", "\x01", "\u2028"])
def test_secret_right_after_an_escaped_character(before):
    """JSON escapes put letters (the n of \\n) next to a token in the bytes the fast path scans."""
    for _, secret, text in CORPUS:
        doc = {"k": before + text, before + text: [before + text + before]}
        data = POLICY.encode(doc)
        assert data == canonical_json(POLICY.apply(doc))
        assert not leaked(data, [secret])


# --- payload text the client sent: escapes and blanks never hide a secret -------------------------------

def stored_equals_full_walk(env: dict) -> bytes:
    row = normalize.to_append(env, uid=1000, policy=POLICY)
    assert row.payload == canonical_json(POLICY.apply(normalize.record_document(env, uid=1000)))
    return row.payload


GH_BODY = fake("escaped-gh", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 36)


@pytest.mark.parametrize("text", [
    '{"cmd": "pass\\u0077ord=hunter2x"}',  # \u0077 is "w": the text has no "password=" in it
    '{"cmd": "export DB_PASS\\u0057ORD=hunter2x"}',
    '{"password"\n : "hunter2x"}',  # blanks a trigger does not allow between a key and its ":"
    '{"password"      \t   :"hunter2x"}',
    '{"u": "https:\\/\\/bob:hunter2x@example.com\\/"}',
    '{"k": "ghp\\u005f' + GH_BODY + '"}',
    '{"k": "AbC3dEf4GhI5\\/jKl6MnO7pQr8StU9"}',  # \/ joins two halves into one random-looking token
    '{"t": "password\\u0009=hunter2x"}',  # canonical JSON writes a tab as \\t, which the trigger allows
])
def test_escapes_and_blanks_in_the_payload_text_cannot_hide_a_secret(text):
    env = {"record_id": "r", "harness": "claude-code", "payload_text": text, "ppid": 3}
    data = stored_equals_full_walk(env)
    assert b"hunter2x" not in data and GH_BODY.encode() not in data and b"jKl6MnO7pQr8StU9" not in data


# Pieces of a JSON string literal: the corpus fragments as json.dumps spells them, and other spellings.
ESCAPED = ["\\u0041", "\\/", "\\u0009", "\\t", "\\n", "\\\\", '\\"', "\\u001f", "\\u001F", "\\u00e9"]
literal_st = st.lists(
    st.sampled_from(ESCAPED) | (st.sampled_from(FRAGMENTS) | st.text(max_size=6)).map(
        lambda t: json.dumps(t, ensure_ascii=False)[1:-1]),
    max_size=8,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(literal_st, literal_st), max_size=5),
       st.sampled_from(["", " ", "\n  ", "\t"]), st.sampled_from(["claude-code", "cursor", "aider"]))
def test_payload_text_path_equals_full_walk(pairs, blank, harness):
    body = "".join(f'{blank}"{k}"{blank}:{blank}"{v}",' for k, v in pairs)
    text = "{" + body + '"tool_name": "Bash", "hook_event_name": "PreToolUse", "tool_input": {"c": 1}}'
    try:
        json.loads(text)
    except ValueError:  # a lone surrogate escape, or the like
        return
    stored_equals_full_walk({"record_id": "r", "harness": harness, "payload_text": text, "ppid": 3})


# -- large blobs and binary text (record/redact/blobs.py, docs/redaction.md "Large blobs") ----------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _blob(label: str, n: int) -> str:
    return fake(f"blob-{label}", _B64, n)


def _masker(kind: str, secret: str) -> str:
    return redact.Policy(salt=b"s" * 16).mask(kind, secret)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([kind_secret_text[2] for kind_secret_text in secrets_corpus()[:80]]),
                       st.integers(4096, 9000), st.sampled_from(["", " ", "\n", "=", "\"", ":"])),
             min_size=1, max_size=3),
    st.booleans(),
)
# Found by the exploring profile: a token or an assignment glued between two runs is inside one
# blob's middle (RuleSet._split_blobs cuts the blob at a distinctive prefix or an `=`).
@example([(secrets_corpus()[0][2], 4096, ""), (secrets_corpus()[42][2], 4096, "")], False)  # an AWS key id, a Slack token
@example([(secrets_corpus()[0][2], 4096, ""), (secrets_corpus()[58][2], 4096, "")], False)  # `PASSWORD=…`
def test_bounded_blob_walk_gives_the_whole_scan_s_text(parts, glued):
    ruleset = rules.builtin()
    text = "".join(f"{secret}{sep if not glued else ''}{_blob(str(i), n)}{sep}" for i, (secret, n, sep) in enumerate(parts))
    assert blobs_found(text)
    assert ruleset.redact(text, _masker) == ruleset._redact_whole(text, _masker)


def blobs_found(text: str) -> bool:
    from agentwatch.record.redact import blobs

    return bool(blobs.blob_spans(text))


def test_the_rules_never_see_a_blob_s_middle(monkeypatch):
    ruleset = rules.builtin()
    seen: list[int] = []
    whole = ruleset._redact_whole
    monkeypatch.setattr(ruleset, "_redact_whole",
                        lambda s, mask, extra=None, path="": seen.append(len(s)) or whole(s, mask, extra, path))
    blob = _blob("mib", 1 << 20)
    text = f'{{"password": "hunter2hunter2x"}} {blob} trailing token ghp_{"a1B2" * 9}'
    out = ruleset.redact(text, _masker)
    assert seen == [len(text) - (1 << 20) + 4096]  # one walk, of the text with a 4,096-character run in the blob's place
    assert blob in out and "hunter2hunter2x" not in out and "ghp_" not in out


def test_binary_text_is_redacted_run_by_run():
    ruleset = rules.builtin()
    noise = bytes(range(256)) * 64  # a quarter are control characters: binary
    secret = f"ghp_{'Zq9x' * 9}"
    raw = noise + f"config password = hunter2hunter2x token {secret} end".encode() + noise
    latin = raw.decode("latin-1")
    out = ruleset.redact(latin, _masker)
    assert secret not in out and "hunter2hunter2x" not in out
    assert out.startswith(noise.decode("latin-1")) and out.endswith(noise.decode("latin-1"))


def test_a_secret_glued_inside_a_blob_s_middle_is_not_found():
    """The documented miss: a token past the edges of a 4,096-character base64 run."""
    ruleset = rules.builtin()
    secret = f"ghp_{'Zq9x' * 9}"
    text = _blob("a", 3000) + secret + _blob("b", 3000)
    assert secret in ruleset.redact(text, _masker)
    short = _blob("a", 100) + secret + _blob("b", 100)  # no blob: the whole scan finds it
    assert secret not in ruleset.redact(short, _masker)


def test_the_benign_rules_read_a_bounded_value_whatever_the_text(monkeypatch):
    """`auth=(` repeated: each assignment's unquoted value runs to the end of the text, and the
    benign rules read each whole (6 s for 4,000 repeats). They now read at most BENIGN_MAX
    characters of a value, and a longer one is masked."""
    seen: list[int] = []
    placeholder = rules._placeholder
    monkeypatch.setattr(rules, "_placeholder", lambda value: seen.append(len(value)) or placeholder(value))
    text = "auth=(" * 4000
    out = POLICY.redact_text(text)
    assert seen and max(seen) <= rules.BENIGN_MAX
    assert out.startswith("auth=[REDACTED:assignment:") and "(" not in out  # all after the first name masked
