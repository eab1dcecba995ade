"""A value shaped like a strong password (record/redact/passwords.py), other languages' password
names, and a Kubernetes Secret whose `data:` comes before its `kind:`.

The password shapes are the composition rules password policies publish (an upper-case and a
lower-case letter, a digit, a symbol; xkcd 936's `Tr0ub4dor&3` is the best-known example of a
password made to them). The benign cases are one per principle the module's docstring names.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentwatch.record import redact
from agentwatch.record.redact import passwords
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))


def stored(doc: dict) -> bytes:
    fast = POLICY.encode(doc)
    assert fast == canonical_json(POLICY.apply(doc))  # the fast path and the walk agree
    return fast


def output(text: str) -> dict:
    """A record holding text as a command's output (the raw Claude Code payload, docs/harnesses.md)."""
    return {"schema": 1, "raw": {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                 "tool_input": {"command": "cat notes.txt"},
                                 "tool_response": {"stdout": text, "stderr": ""}}}


@pytest.mark.parametrize("secret", [
    "Tr0ub4dor&3",  # xkcd 936
    "Summer2024!x",  # a season, a year and a symbol: what composition rules produce
    "1qaz@WSX3edc",  # a keyboard walk
    "b@dP@$sW0rD",  # letters swapped for symbols
    "P@ssw0rd$1",  # `$` followed by a digit is no variable in a value
    "zK8#mQ2~vL5n",  # random, from a password manager
])
@pytest.mark.parametrize("where", ["{}", "Default: {}", "password was {} (rotated)", "ARG CTF={}", "'{}'"])
def test_a_password_shape_is_masked_wherever_it_stands(secret, where):
    text = where.format(secret)
    out = POLICY.redact_text(text)
    assert secret not in out
    assert "[REDACTED:" in out
    assert secret.encode() not in stored(output(text))


def test_only_the_value_after_a_name_is_masked():
    assert POLICY.redact_text("user:Tr0ub4dor&3") == "user:[REDACTED:password_shape:hmac-sha256:" + (
        POLICY.redact_text("Tr0ub4dor&3").split(":hmac-sha256:")[1])


@pytest.mark.parametrize("text", [
    "$solutionPath", "[string]$Sha1x", "x=$Version2", "$1Bearer",  # variables and positional parameters
    "Outer$Inner1.class", "com.example.Key@1b6d3586",  # Java's names
    "jsonMatch![0]);", "@lru_cache(maxsize=UTF8_MAX)", "([a-z_][a-z0-9_]{2,50}|setUp)$",  # code, a pattern
    "<YourStrong@Passw0rd>", "${DB_PASSWORD}x1A!", "a-zA-Z0-9_$",  # a placeholder, a reference, a class
    "https://Host1.example/a!b", "C:\\Users\\Dev1\\a!b", "http%2F%2FHost1!",  # paths and URLs
    "Dev1@Example.com", "React@18.2.0", "sr_RS.UTF-8@latin", "page=2&Sort=Asc1",  # addresses, versions, queries
    "@Param1", "#navBar2", "!isReady2", "@Reviewer2!", "~python:ipaddress.IPv4Address", "~73K-char",  # sigils
    "**Python3**", "main.py#L42", "Parser#visitExpr2", "Sheet1!A1:B2",  # markup, places in files, cells
    "Cost$0.014", "&nbsp;Item1", "#x20-#xD7FF", "=?utf-8?q?W=C3=B6rld!?=", "%Y-%m-%dT%H!1A",  # amounts, markup
    "2*x**Beta1", "x^2+Y1", "50%Off1A",  # `*`, `^` and `%` alone are no password's sign
    "Ab1!", "ABCDEFG1!", "abcdefg1!", "Abcdefgh!",  # short, or a class missing
])
def test_what_is_not_a_password_keeps_its_bytes(text):
    assert list(passwords.spans(text)) == []
    assert POLICY.redact_text(text) == text


def test_a_rule_that_knows_the_kind_wins_over_the_shape():
    out = POLICY.redact_text("*:*:*:postgres:Tr0ub4dor&3\n", "/home/u/.pgpass")
    assert out.startswith("*:*:*:postgres:[REDACTED:pgpass:")


_TEXT = st.text(st.sampled_from(list("aZ9!@#$&~%^*_-.:=,;/\\\"'`()[]{}<> \t\n\u00a0\u2028\x1c\x1bé")), max_size=60)


@settings(max_examples=400, deadline=None)
@given(_TEXT, _TEXT)
@example("x", "\u00a0Tr0ub4dor&3")
@example("", "Ab1!\x1bcdefgh")
def test_the_fast_path_sees_every_shape_the_walk_masks(prefix, text):
    s = prefix + text
    if not list(passwords.spans(s)):
        return
    assert passwords.present(s.encode("utf-8", "surrogatepass"), json=False)
    assert passwords.present(canonical_json({"t": s}))


@pytest.mark.parametrize(("path", "text"), [
    ("Vault.java", 'v.setMotDePasse("{w}");'),  # French, as find-sec-bugs' custom-API test names its setter
    ("Vault.java", 'v.setParola("{w}");'),  # Romanian and Turkish (parolă, parola)
    ("Config.java", 'config.passwort = "{w}";'),  # German
    ("app.yml", "contrasena: {w}"),  # Spanish, without its tilde
    (".env", "senha={w}"),  # Portuguese
    ("settings.py", "wachtwoord = '{w}'"),  # Dutch
])
def test_password_names_in_other_languages(path, text):
    w = "letmein"
    assert w not in POLICY.redact_text(text.format(w=w), "/srv/app/" + path)
    read = {"schema": 1, "raw": {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                 "tool_input": {"file_path": "/srv/app/" + path},
                                 "tool_response": {"file": {"filePath": "/srv/app/" + path, "content": text.format(w=w)}}}}
    assert w.encode() not in stored(read)


def test_kubernetes_secret_data_before_its_kind():
    # `kubectl get secret db -o yaml` prints a Secret's fields in this order (data, kind, metadata, type)
    text = ("apiVersion: v1\ndata:\n  password: bGV0bWVpbg==\n  username: YXBw\nkind: Secret\n"
            "metadata:\n  name: db\ntype: Opaque\n")
    out = POLICY.redact_text(text)
    assert "bGV0bWVpbg==" not in out and "YXBw" not in out
    config_map = text.replace("kind: Secret", "kind: ConfigMap")
    assert POLICY.redact_text(config_map.replace("password:", "color:")) == config_map.replace("password:", "color:")
