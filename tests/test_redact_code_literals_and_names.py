"""Literals that become keys in code, stand-ins that hold a secret, and names (record/redact/formats.py
DECODERS and `_assigned_literal`; rules.py `filler_beside_secret`; rules.toml `[names]`).

The decoders are the APIs' own documented calls that turn a string into a key's bytes (each row
of formats.DECODERS cites its page): a literal decoded into a variable named for a key is that
key. The stand-in cases follow AWS's documentation, whose example keys end in EXAMPLE (IAM User
Guide, "Manage access keys for IAM users"), and ruff's S105 name pattern (`secrete?`).
"""

from __future__ import annotations

import json

import pytest

from agentwatch.record import redact
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
KEY = "q9XvTz4LmPa2Wc7B"  # 16 characters of base64's alphabet, no word in it


def file_read(path: str, text: str) -> dict:
    """A record holding text as a file the agent read (the raw Claude Code payload, docs/harnesses.md)."""
    return {"schema": 1, "raw": {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                 "tool_input": {"file_path": path},
                                 "tool_response": {"type": "text", "file": {"filePath": path, "content": text}}}}


def stored(path: str, text: str) -> str:
    fast = POLICY.encode(file_read(path, text))
    assert fast == canonical_json(POLICY.apply(file_read(path, text)))  # the fast path and the walk agree
    return fast.decode()


def content(path: str, text: str) -> str:
    """The file's text as the store holds it."""
    return json.loads(stored(path, text))["raw"]["tool_response"]["file"]["content"]


@pytest.mark.parametrize("path,line", [
    ("Crypto.cs", f'byte[] key = Convert.FromBase64String("{KEY}");'),
    ("Crypto.cs", f'byte[] key = new ASCIIEncoding().GetBytes("{KEY}");'),
    ("Crypto.cs", f'var aesKey = Encoding.UTF8.GetBytes("{KEY}");'),
    ("crypto.py", f'signing_key = base64.b64decode("{KEY}")'),
    ("crypto.py", f'HMAC_SECRET: bytes = bytes.fromhex("{KEY.encode().hex()}")'),
    ("crypto.py", f'key = binascii.unhexlify("{KEY.encode().hex()}")'),
    ("crypto.go", f'key, _ := base64.StdEncoding.DecodeString("{KEY}")'),
    ("crypto.go", f'secret, err := hex.DecodeString("{KEY.encode().hex()}")'),
    ("crypto.js", f'const key = Buffer.from("{KEY}", "base64");'),
    ("Crypto.java", f'byte[] secretKey = Base64.getDecoder().decode("{KEY}");'),
    ("crypto.php", f'$key = base64_decode("{KEY}");'),
    ("crypto.rb", f'key = Base64.strict_decode64("{KEY}")'),
])
def test_a_literal_decoded_into_a_key_is_masked(path, line):
    out = stored(path, f"{line}\nuse(key);\n")
    value = KEY.encode().hex() if "hex" in line.lower() else KEY
    assert value not in out
    assert "[REDACTED:assignment:" in out


@pytest.mark.parametrize("path,line", [
    ("Image.cs", f'var data = Convert.FromBase64String("{KEY}");'),  # not a key's variable
    ("img.py", f'pixels = base64.b64decode("{KEY}")'),
    ("Crypto.cs", 'byte[] key = Convert.FromBase64String(Environment.GetEnvironmentVariable("APP_KEY"));'),
])
def test_a_decoded_literal_elsewhere_keeps_its_bytes(path, line):
    assert stored(path, line) == canonical_json(file_read(path, line)).decode()


def test_a_variable_given_the_literal_before_the_call_is_followed():
    text = (f'string someHardCodedBase64String = "{KEY}";\n'
            "byte[] key = Convert.FromBase64String(someHardCodedBase64String);\n")
    assert KEY not in stored("Crypto.cs", text)
    jdbc = 'String user = "app";\nString pw = "Qz7mWv2Lk9";\nc = DriverManager.getConnection(url, user, pw);\n'
    out = content("Db.java", jdbc)
    assert "Qz7mWv2Lk9" not in out and '"app"' in out  # the password's variable, not the user's


def test_a_call_argument_before_an_unclosed_callback_is_read():
    # jsforce's `conn.login(username, password, callback)`: the callback's body runs on past the line
    text = "conn.login('user@example.com', 'Qz7mWv2Lk9', function(err, res) {"
    out = content("login.js", text)
    assert "Qz7mWv2Lk9" not in out and "user@example.com" in out


def test_a_visual_basic_initializer_member():
    text = 'Dim uri = New UriBuilder With {.UserName = "app", .Password = "t0ps3cr3tQ"}'
    out = content("Client.vb", text)
    assert "t0ps3cr3tQ" not in out and '"app"' in out


def test_an_xml_element_named_pass_reaches_the_format_layer():
    text = "<Server><Host>db</Host><User>app</User><Pass>Qz7mWv2Lk9</Pass></Server>"
    assert "Qz7mWv2Lk9" not in stored("recentservers.xml", text)


@pytest.mark.parametrize("value", ["ExamplePas123", "dummy_Qz7mWv2Lk9", "sample-9fQ2xLm4Pz"])
def test_a_filler_word_beside_a_secret_does_not_hide_it(value):
    assert value not in stored(".env", f"DB_PASSWORD={value}\n")


@pytest.mark.parametrize("value", [
    "your-api-key-here", "example", "dummy-pass", "<your-token>", "testing",
    "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented example keys
])
def test_a_stand_in_keeps_its_bytes(value):
    text = f"AWS_SECRET_ACCESS_KEY={value}\n"
    assert stored(".env", text) == canonical_json(file_read(".env", text)).decode()


@pytest.mark.parametrize("line,kept", [
    ('const nonSecret = "hello world"', True),  # the name says it is not a secret
    ('ENV_VAR_NAME_NO_SECRETS = "SOME_VALUE"', True),
    ("const otpCheck = 'Verify OTP Google Mobile Authenticator (2FAS)'", True),  # a check, not the code
    ('secrete = "s3cr3tQz"', False),  # ruff S105's name pattern, `secrete?`
])
def test_names_that_say_what_they_hold(line, kept):
    out = stored("app.js" if line.startswith("const") else "app.py", line)
    assert (out == canonical_json(file_read("app.js" if line.startswith("const") else "app.py", line)).decode()) is kept


def test_the_self_test_reports_a_filler_word_that_hides_a_secret(monkeypatch):
    from agentwatch.record.redact import rules

    assert redact.self_test(POLICY).ok
    monkeypatch.setattr(rules, "filler_beside_secret", lambda value: False)
    failures = redact.self_test(POLICY).failures
    assert [f.split(":")[0] for f in failures] == ["format filler-beside-secret"]


@pytest.mark.parametrize("line,secret", [
    ('const ec2 = new AWS.EC2({secretAccessKey: "NotSoSecretKey1"});', "NotSoSecretKey1"),
    ('const c = {adminPassword: "AdminPassword123"};', "AdminPassword123"),
])
def test_a_secret_word_numbered_is_no_label(line, secret):
    assert secret not in content("app.js", line)


@pytest.mark.parametrize("line", [
    "SECRET_KEY_ACCOUNT = 'secret-key'",  # a label naming the secret
    'const api = {apiToken: "apiToken"};',  # the name again
])
def test_labels_keep_their_bytes(line):
    path = "app.js" if line.startswith("const") else "app.py"
    assert stored(path, line) == canonical_json(file_read(path, line)).decode()


def test_request_and_superagent_auth_arguments():
    # request: .auth(username, password, sendImmediately, bearer); superagent: .auth(user, password)
    out = content("client.js", "request.get(url).auth(null, null, true, 'q9XvTz4LmPa2');\n"
                               "superagent.get(u).auth('tobi', 'Qz7mWv2Lk9').end(cb);\n")
    assert "q9XvTz4LmPa2" not in out and "Qz7mWv2Lk9" not in out and "'tobi'" in out


def test_an_authentication_scheme_alone_keeps_its_bytes_and_its_credentials_do_not():
    chosen = "const h = {\"Authorization\": `${foo ? 'Bearer' : 'OAuth'} ${accessToken}`};"
    assert stored("client.js", chosen) == canonical_json(file_read("client.js", chosen)).decode()
    out = content("client.js", 'const h = {"Authorization": "OAuth q9XvTz4LmPa2Wc7B"};')
    assert "q9XvTz4LmPa2Wc7B" not in out and '"OAuth ' in out  # the scheme stays, its credentials go


@pytest.mark.parametrize("line,kept", [
    ("dbpwd=Qz7mWv2Lk9", False),  # `pwd` ending a longer name
    ("ROOTPWD=Qz7mWv2Lk9", False),
    ("nopwd=Server=localhost;Integrated Security=True", True),  # says there is none
    ("RESETPWD=Qz7mWv2Lk9", True),  # an action's name
    ("OLDPWD=/home/dev", True),  # the shell's previous directory
])
def test_pwd_at_the_end_of_a_name(line, kept):
    assert (stored(".env", line) == canonical_json(file_read(".env", line)).decode()) is kept


def test_a_tool_named_for_finding_secrets_is_no_secrets_name():
    line = "\tdocker build -t detect-secrets:redhat-ubi -t trufflehog-scan:latest .\n"
    assert stored("Makefile", line) == canonical_json(file_read("Makefile", line)).decode()


def test_a_pytest_node_id_with_an_xdist_group_is_no_url_credential():
    # pytest-xdist's `--dist loadgroup` prints a node id with its group after `@`
    text = "tests/test_beta.py::test_beta0@gname PASSED\ntests/test_delta.py::Gamma1::test_gamma0@gname PASSED\n"
    assert stored("out.txt", text) == canonical_json(file_read("out.txt", text)).decode()
    assert "Qz7mWv2Lk9" not in content("out.txt", "redis://:Qz7mWv2Lk9@cache:6379\n")


def test_a_url_password_with_colons_is_masked_whole():
    # RFC 3986 section 3.2.1: userinfo may hold `:`; the first one ends the user name
    out = content("client.kt", 'val uri = "http://user:azer:ty1Q3z@domain.example"\n')
    assert "azer" not in out and "ty1Q3z" not in out and "http://user:" in out
