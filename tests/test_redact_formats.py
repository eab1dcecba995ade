"""The format-aware text layer (record/redact/formats.py), the flag table (commands.toml) and the benign references.

Cases are written from each format's own description (INI, YAML 1.2, Java properties,
Apple plists, PHP `define`, Go declarations, Apache htpasswd, PostgreSQL's password file,
each tool's manual for its flags), not copied from a scanner's samples. The fifth held-out
corpus (tests/support/redaction_corpus5.py) is scored here too: its recorded figures, and
the fast path agreeing with the walk in every carrier.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

import redaction_corpus5 as corpus5  # noqa: E402

from agentwatch.record import redact  # noqa: E402
from agentwatch.record.redact import commands, formats, rules  # noqa: E402
from agentwatch.record.redact.corpus import FORMAT_BENIGN, format_samples  # noqa: E402
from agentwatch.store.chain import canonical_json  # noqa: E402

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
W = "letmein"  # a phrase: no key's shape, so only the format tells it is a value


def stored(doc: dict) -> bytes:
    fast = POLICY.encode(doc)
    assert fast == canonical_json(POLICY.apply(doc))  # the fast path and the walk agree
    return fast


@pytest.mark.parametrize(("label", "path", "secret", "text"), format_samples(), ids=lambda x: str(x)[:20])
def test_a_phrase_in_each_format_is_masked_in_every_carrier(label, path, secret, text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, path.lstrip("/") or "x.txt", text)}
        if carrier == "file-read" and path:
            doc["raw"]["tool_input"]["file_path"] = path
        assert secret.encode() not in stored(doc), (label, carrier)


@pytest.mark.parametrize("text", [
    f"[db]\nhost = a\npassword = {W}\n",                       # INI
    f"DB_HOST=a\npassword={W}\n",                              # .env
    f"server.port=1\nspring.datasource.password={W}\n",        # properties
    f"db:\n  host: a\n  password: {W}\n",                      # YAML
    f"passwords:\n  - {W}1\n  - {W}2\nuser: a\n",             # a YAML list under a secret name
    f"- key: password\n  value: {W}\n",                        # YAML key/value siblings
    f"env:\n- name: DB_PASSWORD\n  value: {W}\n",              # Kubernetes env in YAML
    f"<key>password</key>\n<string>{W}</string>",              # plist
    f"<property><name>db.password</name><value>{W}</value></property>",  # Hadoop-style XML
    f"define('AUTH_KEY', '{W} and more');",                    # PHP define
    f"$config['db_password'] = '{W}';",                        # PHP array
    f'os.getenv("PASSWORD", "{W}")',                           # a default in a getenv call
    f'environ.get("DB_PWD", "{W}")',  # (`pwd` alone names the working directory: not a secret name)
    f'const a, password string = "x", "{W}"',                  # Go multiple declaration
    f"SECRET_KEY = os.environ.get('SECRET_KEY') or '{W}'",     # a fallback literal
    'Output:\n' + json.dumps({"Parameter": {"Name": "/prod/db/password", "Value": W}}),  # JSON in output
    json.dumps([{"name": "DB_PASS", "value": W}], indent=2),   # JSON env list printed by a command
    json.dumps({"id": "https://kv1.vault.azure.net/secrets/dbconn/0123", "value": W}, indent=2),  # a Key Vault bundle
    f"# redis.conf\nport 6379\nrequirepass {W}\n",               # redis.conf directives
    f"define( 'NONCE_SALT', '{W}:3#|m}}vA!6R~wq)]Hh4*' );",     # WordPress keys and salts
])
def test_pairs_in_text_formats(text):
    out = POLICY.redact_text(text)
    assert W not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(("path", "text", "kind"), [
    ("/app/config/master.key", "0123456789abcdef0123456789abcdef\n", "rails_master_key"),
    ("/var/www/.htpasswd", "admin:$apr1$abcdefgh$0123456789abcdefghijkl\n", "password_hash"),
    ("/home/u/.pgpass", f"db:5432:app:app:{W}\n", "pgpass"),
])
def test_credential_files_known_by_their_path(path, text, kind):
    doc = {"raw": {"tool_name": "Read", "tool_input": {"file_path": path}, "tool_response": {"content": text}}}
    out = stored(doc).decode()
    assert f"[REDACTED:{kind}:" in out
    assert text.strip().split(":")[-1] not in out


@pytest.mark.parametrize("text", [
    "def f(token: str):\n    return token",
    "if not token:\n    raise ValueError('a token is required')",
    "password = getpass()",
    "tokens: string[],",
    "ENV DRONE_TOKEN={DRONE_TOKEN}",
    "Password: !Ref MasterUserPassword",
    'url = "https://x.invalid/?apikey=%s" % key',
    "    auth: _t.AuthType = None",
    "password = ,.:-",
    *FORMAT_BENIGN,
])
def test_references_placeholders_and_code_keep_their_bytes(text):
    assert POLICY.redact_text(text) == text


# A credential header as a name/value pair: HAR 1.2's `request.headers` is a list of
# {"name", "value"} objects (W3C Web Performance WG, "HTTP Archive (HAR) format", the headers
# section); a Kubernetes container's `env` is a list of EnvVar {name, value} (core/v1 API).
# The header's name is RFC 9110's `Authorization` (11.6.2) or `Proxy-Authorization` (11.7.2).
@pytest.mark.parametrize(("text", "kept"), [
    (json.dumps({"request": {"headers": [{"name": "Accept", "value": "text/html"},
                                         {"name": "Authorization", "value": f"Bearer {W}9Zq"}]}}), "text/html"),
    (json.dumps({"headers": [{"name": "Proxy-Authorization", "value": f"Basic {W}9Zq"}]}), "Proxy-Authorization"),
    (f"spec:\n  containers:\n    - name: app\n      env:\n        - name: authorization\n          value: \"{W}9Zq\"\n",
     "name: authorization"),
])
def test_a_credential_header_as_a_pair_masks_its_value(text, kept):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "har/session.har", text)}
        out = stored(doc).decode()
        assert f"{W}9Zq" not in out, carrier
        assert kept in out, carrier


@pytest.mark.parametrize("text", [
    json.dumps({"headers": [{"name": "Authorization", "value": "Bearer ${API_TOKEN}"}]}),  # a reference after the scheme
    json.dumps({"headers": [{"name": "Authorization", "value": "Basic"}]}),               # the scheme alone
    "env:\n  - name: authorization\n    value: Bearer {{ token }}\n",
    json.dumps({"endpoint": "http://somewhere", "auth": "basic"}),                        # a scheme chosen by name
])
def test_a_credential_header_pair_without_credentials_keeps_its_bytes(text):
    assert POLICY.redact_text(text) == text
    assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


def test_image_data_uris_and_ssh_public_keys_keep_their_bytes():
    body = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    for text in (f'<img src="data:image/png;base64,{body}">',
                 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx8Q3vV2kQ9mZ1yR7pT0sW4nL6bK8cJ5dH2fA3eX9uY user@host"):
        assert POLICY.redact_text(text) == text
        assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


def test_every_row_of_the_flag_table_cites_the_tools_documentation():
    rows = commands.table()
    assert {r.tool for r in rows} >= {"curl", "wget", "mysql", "psql", "sqlcmd", "kubectl", "docker", "helm",
                                       "keytool", "openssl", "sshpass", "redis-cli", "az", "aws", "gcloud", "git"}
    assert all(re.match(r"https://", r.source) for r in rows)
    assert all(r.value in ("whole", "after-colon", "after-eq", "after-percent", "pass-arg", "auth-header", "next", "last") for r in rows)


@pytest.mark.parametrize(("line", "secret"), [
    ("curl --proxy-tlspassword s3cretpw https://x.invalid", "s3cretpw"),
    ('curl -u "admin:s3cretpw" https://x.invalid', "s3cretpw"),
    ("wget --ftp-password=s3cretpw ftp://x.invalid/f", "s3cretpw"),
    ("wget --proxy-password s3cretpw https://x.invalid/f", "s3cretpw"),
    ("mysql -u root -ps3cretpw app", "s3cretpw"),
    ("psql 'host=db user=app password=s3cretpw'", "s3cretpw"),
    ("sqlcmd -S db -P s3cretpw", "s3cretpw"),
    ("kubectl create secret generic x --from-literal=pwd=s3cretpw", "s3cretpw"),
    ("docker login -u me -p s3cretpw registry.invalid", "s3cretpw"),
    ("helm repo add r https://r.invalid --username me --password s3cretpw", "s3cretpw"),
    ("keytool -importkeystore -deststorepass s3cretpw -destkeystore k.jks", "s3cretpw"),
    ("openssl pkcs12 -export -passout pass:s3cretpw -out a.p12", "s3cretpw"),
    ("sshpass -p s3cretpw ssh host", "s3cretpw"),
    ("redis-cli -h cache --pass s3cretpw", "s3cretpw"),
    ("az login --service-principal -u id -p s3cretpw --tenant t", "s3cretpw"),
    ("aws configure set aws_secret_access_key s3cretpw", "s3cretpw"),
    ("gcloud sql users set-password root --instance=i --password=s3cretpw", "s3cretpw"),
    ('git -c http.extraHeader="Authorization: Basic s3cretpw" clone https://x.invalid/r', "s3cretpw"),
    ("cd /tmp && sudo PGHOST=db redis-cli -a s3cretpw ping", "s3cretpw"),
    ("redis-cli CONFIG SET requirepass s3cretpw", "s3cretpw"),
    ("echo -n 'admin:s3cretpw' | base64", "s3cretpw"),          # Basic credentials built by hand (RFC 7617)
    ("printf '%s' 'admin:s3cretpw' | base64 -w0", "s3cretpw"),
])
def test_credential_flags_of_each_tool(line, secret):
    assert secret not in POLICY.redact_text(line)
    assert secret.encode() not in stored({"raw": {"tool_input": {"command": line}}})


@pytest.mark.parametrize("line", [
    "openssl rsa -passin env:KEY_PASS -in a.pem",
    "mysql -p app",
    "kubectl get pods -o wide",
    "docker run -p 8080:80 nginx",
    "curl -u \"$USER:$PASS\" https://x.invalid",
    "echo hello | base64",
    "echo 'a:b' > f && base64 f",
])
def test_flags_without_a_secret_stay(line):
    assert POLICY.redact_text(line) == line


def test_the_layer_never_fails_open_on_text_it_cannot_parse():
    # broken JSON, a YAML fragment cut mid-line: the line rules still read it
    for text in ('{"password": "' + W + '", "x": [1, 2', "db:\n  password: " + W + "\n  host: [a, b"):
        assert W not in POLICY.redact_text(text)
    assert formats.spans(rules.builtin(), "x" * (formats.MAX_TEXT + 1)) == []


def test_fifth_corpus_figures_are_the_recorded_ones():
    recorded = json.loads(corpus5.FIGURES.read_text())
    measured = corpus5.score(POLICY)
    assert measured["failures"] == recorded["failures"]
    assert measured["counts"] == recorded["counts"]
    before = json.loads(corpus5.BEFORE.read_text())
    assert corpus5.totals(before) == {"upstream-positive": (132, 156), "upstream-negative": (168, 240)}
    # the ninth round's password shape masks checkov's `"admin_login": "Pa$$w0rd"` (a negative upstream)
    assert corpus5.totals(recorded) == {"upstream-positive": (144, 156), "upstream-negative": (208, 240)}


def test_fifth_corpus_names_its_sources():
    data = corpus5.load()
    assert data["upstream"] == ["GitGuardian/sample_secrets@da09702283c7", "Yelp/detect-secrets@5e141933554a",
                                "bridgecrewio/checkov@03d5fdad8d61"]
    samples = data["samples"]
    assert len(samples) == 99
    assert len({s["source"] for s in samples}) == 99
    assert all(all(x in s["text"] for x in s["secrets"]) for s in samples if s["set"] == "upstream-positive")


def test_fifth_corpus_fast_path_and_walk_agree_in_every_carrier():
    for sample in corpus5.load()["samples"]:
        for carrier in corpus5.CARRIERS:
            doc = {"schema": 1, "raw": corpus5.payload(carrier, sample["path"], sample["text"])}
            assert POLICY.encode(doc) == canonical_json(POLICY.apply(doc)), (sample["source"], carrier)


def test_public_pem_blocks_keep_their_bytes_and_private_ones_do_not():
    import base64
    import hashlib

    body = base64.b64encode(b"".join(hashlib.sha256(bytes([i])).digest() for i in range(6))).decode()
    block = "-----BEGIN {}-----\n" + body[:64] + "\n" + body[64:128] + "\n-----END {}-----\n"
    for label in ("PUBLIC KEY", "CERTIFICATE"):
        text = block.format(label, label)
        assert POLICY.redact_text(text) == text
    assert body[:64] not in POLICY.redact_text(block.format("PRIVATE KEY", "PRIVATE KEY"))


def test_a_braintree_access_token_in_its_format():
    token = "access_token$production$" + "k3x9" * 4 + "$" + "0a1b2c3d" * 4
    assert token[24:] not in POLICY.redact_text(f"BT_TOKEN = {token}")


def test_the_self_test_fails_when_the_format_layer_or_the_flag_table_is_broken(monkeypatch):
    assert redact.self_test(POLICY).ok
    monkeypatch.setattr(formats, "spans", lambda ruleset, s, path="": [])
    monkeypatch.setattr(commands, "spans", lambda s: [])
    monkeypatch.setattr(formats, "call_spans", lambda ruleset, s: [])
    failures = redact.self_test(POLICY).failures
    # every format only the layer reads, and every flag only the table knows, is reported by name
    # (.htpasswd and .pgpass are read by their path, formats.path_spans, which stays; PHP's
    # `define('DB_PASSWORD', '…')` and Python's `getenv("DB_PASSWORD", "…")` end with a secret's
    # name and a literal closing the call, a pair the line rules read too; and in a file that is not
    # code the line rules read `name=value` as a literal, so `.env`, INI, properties and npmrc too)
    assert sorted(f.split(":")[0] for f in failures) == [
        "format box-listing", "format curl", "format decoded-key", "format go", "format jdbc-call", "format json-output",
        "format keytool", "format kubectl", "format pass-pair", "format plist", "format query-table",
        "format redis-cli", "format setter", "format sqlcmd", "format wget",
        "format yaml", "format yaml-pairs"]
    assert all("correcthorse" not in f for f in failures)  # a report never echoes a secret


# -- properties: the layer on generated texts in its formats -----------------------------------------

NAMES = ["password", "db_password", "API_TOKEN", "secret", "user", "host", "tokens", "auth", "key", "pwd", "Passwd"]
VALUES = ["letmein", "${DB_PASS}", "{X}", "%s", "!Ref P", "x", "'q u o t e d'", '"dq"', "", "123", "a.b(c)", "- item"]
LINE = st.tuples(st.sampled_from(["", "  ", "- ", "export ", "ENV "]), st.sampled_from(NAMES),
                 st.sampled_from([" = ", "=", ": ", ":", " => ", " "]), st.sampled_from(VALUES)).map("".join)
FRAGMENT = LINE | st.sampled_from([
    "[section]", "<key>password</key><string>v4lue</string>", '{"name": "DB_PASSWORD", "value": "p w"}',
    "define('DB_PASSWORD', 'v4lue');", 'getenv("TOKEN", "v4lue")', "curl -u a:b4 x", "mysql -pv4lue db",
    "kubectl create secret generic s --from-literal=k=v4lue", "echo 'u:p4ss' | base64", "{", "[", '"', "\\n",
]) | st.text(max_size=6)
TEXT = st.lists(FRAGMENT, max_size=8).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(["", "/srv/app/.env", "/srv/app/config.yml", "/x/settings.ini", "/x/a.json",
                              "/x/.htpasswd", "/x/.pgpass", "/x/config/master.key"]))
def test_the_layer_on_generated_texts_never_raises_and_the_fast_path_agrees(text, path):
    ruleset = rules.builtin()
    out = ruleset.redact(text, POLICY.mask, None, path)
    assert isinstance(out, str)
    if path == "" and out != text:
        assert ruleset.suspicious(text, json=False)
        assert ruleset.suspicious(canonical_json({"k": [text]}).decode())
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, path.lstrip("/") or "x.txt", text)}
        assert POLICY.encode(doc) == canonical_json(POLICY.apply(doc))


@pytest.mark.parametrize(("command", "secret"), [
    ("cat > /srv/app/settings.ini <<'EOF'\n[db]\npassword=letmein\nEOF", "letmein"),
    ("cat > ~/.pgpass <<'EOF'\ndb:5432:app:app:letmein\nEOF\nchmod 600 ~/.pgpass", "letmein"),
    ('tee /srv/app/.env <<EOF\nDB_PASSWORD=letmein\nEOF', "letmein"),
])
def test_a_here_document_is_read_as_the_file_it_writes(command, secret):
    assert secret not in POLICY.redact_text(command)
    assert secret.encode() not in stored({"raw": {"tool_input": {"command": command}}})


@pytest.mark.parametrize("line", [
    "admin:$apr1$abcdefgh$0123456789abcdefghijkl",   # Apache MD5 (htpasswd -m)
    "bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",          # base64 SHA-1 (htpasswd -s)
])
def test_htpasswd_hashes_without_a_path(line):
    assert line.split(":", 1)[1][6:] not in POLICY.redact_text(line)


RUN = "Xk9mR2vL8qT4wZ7nB3cF6hJ1sD5gA0pE"  # random-looking, no format: only the entropy rule would take it


@pytest.mark.parametrize("text", [f"credentialId: {RUN}", json.dumps({"request_id": RUN}),
                                  f"https://x.invalid/items?id={RUN}&page=2", f"GET /v1?a=1&session_id={RUN}"])
def test_identifiers_keep_their_bytes(text):
    assert POLICY.redact_text(text) == text


@pytest.mark.parametrize("text", [f"[DEBUG] Using ID={RUN}", f"token: {RUN}", f"x?key={RUN}", RUN])
def test_runs_that_are_not_after_an_identifiers_name_are_still_masked(text):
    assert RUN not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", ["--password \u00a0 x", "--password=\u2003 x", "curl -u \u3000 x"])
def test_a_flag_whose_value_is_unicode_blanks_is_judged_not_crashed_on(text):
    # the rules' ASCII classes take U+00A0 as a value character; str.split() takes it as a blank
    assert isinstance(POLICY.redact_text(text), str)
    stored({"raw": {"tool_input": {"command": text}}})


# --- source code is not read as configuration ---------------------------------------------------
# A Python dict display (Python reference, "Dictionary displays": `{key: value, ...}`), a JS object
# literal and Go keyword-style composite literals put a quoted label before a quoted string and a
# comma after it; in YAML a quoted scalar ends its line, so such a line is not a YAML pair.
@pytest.mark.parametrize(("path", "text"), [
    ("checks.py", "CHECKS = {\n    'Slack Token': 'CKV_A_14',\n    'NPM tokens': 'CKV_A_12',\n}\n"),
    ("checks.js", "export const CHECKS = {\n  'Auth Token': 'rule-token-1',\n  'Api Key': 'rule-api-2',\n};\n"),
    ("checks.go", 'var checks = map[string]string{\n\t"Secret Key": "CHECK_SECRET_3",\n}\n'),
    ("call.py", "client = make(password_field='pw_input', token_header='X-Token',)\n"),
])
def test_labels_in_source_code_are_not_configuration_pairs(path, text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, path, text)}
        assert stored(doc) == canonical_json(doc), carrier


def test_a_json_member_line_is_still_a_pair():
    # RFC 8259: a member is a string, a colon and a value; a line of an object ends with a comma.
    line = f'    "db_password": "{W}-x9",'
    assert W not in POLICY.redact_text(line)
    assert W not in POLICY.redact_text("noise\n" + line + "\n")


# --- messages written for a person ----------------------------------------------------------------
# Translation catalogs (i18next JSON, Chrome's messages.json, Rails' YAML locales) and form
# labels put sentences under secret-named keys; the sentence is what a user reads.
@pytest.mark.parametrize(("path", "text"), [
    ("locales/en.json", json.dumps({"password": {"message": "Enter your password"},
                                    "password_hint": "Use at least 8 characters.",
                                    "token_expired": "Your session has expired. Please sign in again."}, indent=2)),
    ("locales/fr.yml", "fr:\n  password_forgot: Mot de passe oublié ?\n  password_wrong: Le mot de passe est incorrect.\n"),
    ("form.ts", 'const labels = { password: "Choose a new password", apiKey: "Paste your API key here." };\n'),
])
def test_sentences_under_secret_names_keep_their_bytes(path, text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, path, text)}
        assert stored(doc) == canonical_json(doc), carrier
    assert stored({"raw": {"password": "Choose a new password"}}) == canonical_json(
        {"raw": {"password": "Choose a new password"}})


@pytest.mark.parametrize("value", [
    "correct horse battery staple",   # a word-list passphrase: lower case, no closing mark
    "Xk9 Qp2Z mm kk",                 # blanks, but not words people write
    "hunter2",
    "Tr0ub4dor&3 Tr0ub4dor",
])
def test_passphrases_and_passwords_are_not_messages(value):
    assert not rules.message_text(value)
    assert value not in POLICY.redact_text(f"password: {value}\nhost: db\n")
    assert value.encode() not in stored({"raw": {"password": value}})


# --- lookups of the environment are references ----------------------------------------------------
@pytest.mark.parametrize("text", [
    "SECRET_KEY = os.environ['SECRET_KEY']",
    "DB_PASSWORD = os.getenv('DB_PASSWORD')",
    "const config = { apiKey: process.env.API_KEY || '', token: import.meta.env.VITE_TOKEN };",
    'API_TOKEN = ENV.fetch("API_TOKEN")',
])
def test_environment_lookups_keep_their_bytes(text):
    assert POLICY.redact_text(text) == text


def test_a_literal_fallback_after_an_environment_lookup_is_still_a_value():
    assert W not in POLICY.redact_text(f"const apiKey = process.env.API_KEY || '{W}-local';")
    assert W not in POLICY.redact_text(f"SECRET_KEY = os.environ.get('SECRET_KEY', '{W}-dev')")


# --- GitHub global node ids (GitHub docs, "Using global node IDs": legacy ids are base64 of
# `0<length of the type name>:<Type><database id>`) -----------------------------------------------
def _node_id(kind: str, number: int) -> str:
    import base64
    return base64.b64encode(f"0{len(kind)}:{kind}{number}".encode()).decode()


@pytest.mark.parametrize(("kind", "number"), [("User", 5832319), ("Organization", 1), ("Repository", 129626941),
                                              ("PullRequest", 987654321), ("Issue", 44567123)])
def test_legacy_github_node_ids_keep_their_bytes(kind, number):
    node = _node_id(kind, number)
    assert rules.github_node_id(node)
    text = json.dumps({"data": {"node": {"id": node, "__typename": kind}}})
    assert POLICY.redact_text(text) == text
    assert stored({"raw": {"tool_response": {"stdout": text}}}) == canonical_json(
        {"raw": {"tool_response": {"stdout": text}}})


def test_base64_that_is_not_a_node_id_is_still_judged_by_entropy():
    import base64
    wrong_length = base64.b64encode(b"07:Organization1").decode()
    assert rules.github_node_id(base64.b64encode(b"012:Organization1").decode())  # the length does not match the type
    assert not rules.github_node_id(wrong_length)
    key = base64.b64encode(bytes(range(7, 37))).decode()
    assert not rules.github_node_id(key)


# --- an AWS access key: a key id and its secret access key (AWS IAM User Guide, "Manage access
# keys": a 20-character id starting AKIA/ASIA and a 40-character secret) ---------------------------
def _aws_pair(seed: int) -> tuple[str, str]:
    import random
    r = random.Random(seed)
    key_id = "AKIA" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    secret = "".join(r.choice(alphabet) for _ in range(40))
    return key_id, secret[:10] + "ab7Q" + secret[14:]  # one letter of each case and a digit


@pytest.mark.parametrize("template", [
    'conn = boto_like.connect("{i}", "{s}")',
    "s3 = S3Client({i!r}, {s!r}, region='eu-west-1')",
    "credentials:\n  id: {i}\n  secret: {s}\n",
    "{i} {s}",
])
def test_a_secret_access_key_after_its_key_id_is_masked(template):
    for seed in range(5):
        key_id, secret = _aws_pair(seed)
        text = template.format(i=key_id, s=secret)
        out = POLICY.redact_text(text)
        assert secret not in out and key_id not in out, text


def test_forty_characters_after_a_key_id_that_are_not_a_secret_stay():
    key_id, _ = _aws_pair(1)
    for other in ("0123456789abcdef0123456789abcdef01234567",       # a commit sha: one case
                  "arn:aws:iam::123456789012:user/deploy-robot"):
        out = POLICY.redact_text(f"{key_id} {other}")
        assert other in out


# --- `pass` as a JSON member name (RFC 8259 object members), not as a word of text ---------------
def test_pass_as_a_json_member_over_a_string_is_a_password():
    text = json.dumps({"user": "app", "pass": W, "host": "db"}, indent=2)
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "conf.json", text)}
        assert W.encode() not in stored(doc), carrier
    assert W.encode() not in stored({"raw": {"tool_input": {"user": "app", "pass": W}}})


@pytest.mark.parametrize("text", ["--- PASS: TestParse (0.00s)\nPASS\nok  \texample.com/p\t0.01s",
                                  "def f():\n    pass\n", json.dumps({"pass": True, "fail": 0})])
def test_pass_as_a_test_result_or_a_statement_stays(text):
    assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


# --- npm's per-registry auth settings (docs.npmjs.com, "npmrc": `//registry/:_authToken=`, `:_password=`)
@pytest.mark.parametrize("line", [f"//npm.example.invalid/repo/:_password={W}Pass",
                                  f"//npm.example.invalid:4873/:_authToken={W}-tok"])
def test_registry_scoped_npmrc_credentials(line):
    assert W not in POLICY.redact_text(line)
    assert W not in POLICY.redact_text("registry=https://npm.example.invalid/\n" + line + "\n", "/home/u/.npmrc")
    assert POLICY.redact_text("//npm.example.invalid/:always-auth=true") == "//npm.example.invalid/:always-auth=true"


# --- `pass` and `pwd` as the name of a configuration pair ----------------------------------------
@pytest.mark.parametrize(("path", "text"), [
    ("mail.yml", f"smtp:\n  user: a\n  pass: {W}\n"),
    ("db.ini", f"[db]\nuser = a\npass = {W}\n"),
    ("app.json", json.dumps({"db": {"user": "a", "pwd": W}}, indent=2)),
    ("conn.ini", f"[odbc]\nuid = a\npwd = {W}\n"),
])
def test_pass_and_pwd_naming_a_configuration_pair_are_passwords(path, text):
    for carrier in corpus5.CARRIERS:
        assert W.encode() not in stored({"schema": 1, "raw": corpus5.payload(carrier, path, text)}), carrier


@pytest.mark.parametrize("text", ["PWD=/home/dev/project\nOLDPWD=/home/dev\nSHELL=/bin/bash\n",
                                  json.dumps({"pwd": "/srv/app", "cwd": "/srv/app"}),
                                  "pwd: C:\\Users\\dev\\project\nuser: dev\n"])
def test_pwd_over_a_path_is_the_working_directory(text):
    assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


# --- credential arguments of well-known calls (each row of formats.CALLS cites the API's docs) ----
def test_every_call_row_cites_its_documentation():
    assert all(re.match(r"https://", source) and index >= -1 for _, index, _, source in formats.CALLS)  # -1: the last


@pytest.mark.parametrize("text", [
    f'Connection c = DriverManager.getConnection("jdbc:postgresql://db/app", "app", "{W}");',
    f"$pdo = new PDO('mysql:host=db;dbname=app', 'app', '{W}');",
    f"$link = mysqli_connect('db', 'app', '{W}', 'app');",
    f"smtp.login('robot@example.invalid', '{W}')",
    f"r = requests.get(url, auth=HTTPBasicAuth('robot', '{W}'))",
    f"r = requests.get(url, auth=('robot', '{W}'))",
    f'auth := smtp.PlainAuth("", "robot@example.invalid", "{W}", "smtp.example.invalid")',
    f'u := url.UserPassword("robot", "{W}")',
    f'req.SetBasicAuth("robot", "{W}")',
    f"const sequelize = new Sequelize('app', 'robot', '{W}', {{ dialect: 'postgres' }});",
    f'return new PasswordAuthentication("robot", "{W}".toCharArray());',
    f'session.setPassword("{W}");',
    f"keyring.set_password('svc', 'robot', '{W}')",
])
def test_password_arguments_of_well_known_calls(text):
    for carrier in corpus5.CARRIERS:
        assert W.encode() not in stored({"schema": 1, "raw": corpus5.payload(carrier, "src/app.code", text)}), carrier


@pytest.mark.parametrize("text", [
    "c = DriverManager.getConnection(url, user, password);",
    "smtp.login(user, os.environ['SMTP_PASSWORD'])",
    'req.SetBasicAuth("robot", os.Getenv("ROBOT_PASSWORD"))',
    'user.setName("robot"); user.setEmail("robot@example.invalid");',
    "session.setPassword(password);",
    "client.login('robot', '${ROBOT_PASSWORD}')",
])
def test_calls_without_a_literal_password_stay(text):
    assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


@pytest.mark.parametrize("text", ['builder.withAuth("oauth2")', 'client.setCredentials("staging-profile")',
                                  'const { user } = useAuth("session");'])
def test_setters_of_modes_and_names_stay(text):
    assert POLICY.redact_text(text) == text


# --- package manifests (npm's package.json semver ranges, PEP 440 specifiers) and opening brackets
@pytest.mark.parametrize("text", [
    json.dumps({"dependencies": {"jsonwebtoken": "^9.0.2", "passport-jwt": "~4.0.1", "keytar": ">=7.9.0 <8"}},
               indent=2),
    "[tool.poetry.dependencies]\npython-jose = \">=3.3,<4.0\"\nkeyring = \"24.3.1\"\n",
    "AUTH_PASSWORD_VALIDATORS = [\n    {'NAME': 'MinimumLengthValidator'},\n]\n",
    "SECRET_KEYS = {\n    'primary': os.environ['PRIMARY'],\n}\n",
])
def test_versions_and_opening_brackets_under_secret_names_stay(text):
    for path in ("package.json", "pyproject.toml", "settings.py"):
        doc = {"schema": 1, "raw": corpus5.payload("file-read", path, text)}
        assert stored(doc) == canonical_json(doc), path


# --- names: a password-change body holds two secrets; a Helm `existingSecret` and an editor's
# syntax-token colours name none ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["new_password", "current_password", "oldPassword", "DEFAULT_PASSWORD",
                                  "default_token"])
def test_qualified_password_names_are_secret_names(name):
    assert rules.builtin().secret_name(name)
    assert W.encode() not in stored({"raw": {"tool_input": {name: W + "-9x"}}})
    assert W not in POLICY.redact_text(f'{{\n  "{name}": "{W}-9x"\n}}')


@pytest.mark.parametrize("name", ["existingSecret", "existing_secret_name", "editor.tokenColorCustomizations",
                                  "semanticTokenColors", "token_scopes"])
def test_names_of_holders_and_syntax_tokens_are_not_secret_names(name):
    assert not rules.builtin().secret_name(name)


@pytest.mark.parametrize("value", ["change-me", "CHANGE_ME", "changeit"])
def test_documented_defaults_to_change_are_placeholders(value):
    text = f"SECRET_KEY={value}\nDEBUG=1\n"
    assert POLICY.redact_text(text, "/srv/app/.env") == text


# --- more documented carriers of a secret ---------------------------------------------------------
@pytest.mark.parametrize(("line", "secret"), [
    (f"gh secret set DEPLOY_TOKEN --body {W}9 --repo o/r", f"{W}9"),            # gh secret set -b, --body
    (f"$pw = ConvertTo-SecureString '{W}9' -AsPlainText -Force", f"{W}9"),      # PowerShell -AsPlainText
    (f'ConvertTo-SecureString -String "{W}9" -AsPlainText -Force', f"{W}9"),
])
def test_documented_plain_text_secret_arguments(line, secret):
    assert secret not in POLICY.redact_text(line)
    assert secret.encode() not in stored({"raw": {"tool_input": {"command": line}}})


@pytest.mark.parametrize("line", ["gh secret list", "$s = Read-Host -AsSecureString",
                                  "ConvertTo-SecureString $plain -AsPlainText -Force"])
def test_secret_commands_without_a_literal_stay(line):
    assert POLICY.redact_text(line) == line


def test_a_vault_table_masks_the_values_of_secret_keys():
    # `vault kv get` prints its default table format: `Key  Value`, `---  -----`, a row per key
    text = ("====== Data ======\nKey         Value\n---         -----\n"
            f"password    {W}\napi_token   {W}-2\nusername    robot\n")
    out = stored({"raw": {"tool_response": {"stdout": text}}}).decode()
    assert W not in out and "robot" in out and "Key         Value" in out


# --- calls that set a named value (formats.NAMED_CALLS): the value counts under a secret name ----
def test_every_named_call_row_cites_its_documentation():
    assert all(re.match(r"https://", source) for *_, source in formats.NAMED_CALLS)


@pytest.mark.parametrize("text", [
    f'android {{\n  defaultConfig {{\n    buildConfigField "String", "MAPS_API_KEY", "\\"{W}-9\\""\n  }}\n}}',
    f'buildConfigField("String", "API_TOKEN", "\\"{W}-9\\"")',
    f'System.setProperty("javax.net.ssl.keyStorePassword", "{W}-9");',
    f'os.Setenv("DB_PASSWORD", "{W}-9")',
    f"parser.set('database', 'password', '{W}-9')",
])
def test_named_values_set_by_well_known_calls(text):
    for carrier in corpus5.CARRIERS:
        assert W.encode() not in stored({"schema": 1, "raw": corpus5.payload(carrier, "src/app.code", text)}), carrier


@pytest.mark.parametrize("text", [
    'buildConfigField "String", "BASE_URL", "\\"https://api.example.invalid\\""',
    'System.setProperty("java.awt.headless", "true");',
    'os.Setenv("TOKEN_FILE", "/run/secrets/token")',
    "parser.set('server', 'port', '8080')",
])
def test_named_values_that_are_not_secrets_stay(text):
    assert stored({"raw": {"text": text}}) == canonical_json({"raw": {"text": text}})


def test_kubeadm_join_tokens():
    # kubeadm's bootstrap token format is [a-z0-9]{6}.[a-z0-9]{16} (kubeadm docs, "kubeadm token")
    line = "kubeadm join 10.0.0.1:6443 --token k8a2x1.q0w9e8r7t6y5u4i3 --discovery-token-ca-cert-hash sha256:0f"
    assert "q0w9e8r7t6y5u4i3" not in POLICY.redact_text(line)


def test_plain_yaml_names_with_blanks_in_a_configuration_text():
    # YAML 1.2, plain scalars: a mapping key may hold blanks without quotes (`admin password: ...`)
    text = f"database settings:\n  admin password: {W}-9\n  host name: db.internal\n"
    out = POLICY.redact_text(text, "/srv/app/config.yml")
    assert W not in out and "host name: db.internal" in out and "admin password: [REDACTED:" in out
    code = "if not token:\n    raise ValueError('a token is required')\n"
    assert POLICY.redact_text(code, "/srv/app/app.py") == code


# --- more rows of the flag table, each from the tool's manual --------------------------------------
@pytest.mark.parametrize("line", [
    f"ldapsearch -x -D cn=admin,dc=example,dc=invalid -w {W}9 -b dc=example,dc=invalid",
    f"smbclient //files/share -U DOMAIN\\\\robot%{W}9",
    f"htpasswd -b -c /etc/nginx/.htpasswd robot {W}9",
    f"htpasswd -bB .htpasswd robot {W}9",
    f"zip -P {W}9 out.zip notes.txt",
    f"7z a -p{W}9 out.7z notes.txt",
    f"mysqladmin -u root password {W}9",
    f"useradd -m -p {W}9 robot",
    f"rabbitmqctl add_user robot {W}9",
    f"echo '{W}9' | docker login -u robot --password-stdin registry.invalid",
    f"echo 'robot:{W}9' | chpasswd",
])
def test_credentials_in_more_tools_command_lines(line):
    assert f"{W}9" not in POLICY.redact_text(line)
    assert f"{W}9".encode() not in stored({"raw": {"tool_input": {"command": line}}})


@pytest.mark.parametrize("line", ["echo hello | docker run -i alpine cat", "cat token.txt | docker login --password-stdin",
                                  "ldapsearch -x -W -b dc=example,dc=invalid", "htpasswd -c .htpasswd robot",
                                  "zip -r out.zip dir", "7z x out.7z"])
def test_those_tools_without_a_literal_stay(line):
    assert POLICY.redact_text(line) == line


# --- SQL: MySQL's CREATE USER ... IDENTIFIED BY, PostgreSQL's CREATE/ALTER ROLE ... PASSWORD -----------
@pytest.mark.parametrize("text", [
    f"CREATE USER 'app'@'%' IDENTIFIED BY '{W}9';",
    f"ALTER USER app IDENTIFIED WITH caching_sha2_password BY '{W}9';",
    f"CREATE ROLE app WITH LOGIN ENCRYPTED PASSWORD '{W}9';",
    f"ALTER USER app WITH PASSWORD '{W}9';",
    f"CREATE LOGIN app WITH PASSWORD = '{W}9';",
])
def test_passwords_in_sql_user_statements(text):
    for carrier in corpus5.CARRIERS:
        assert W.encode() not in stored({"schema": 1, "raw": corpus5.payload(carrier, "db/init.sql", text)}), carrier


@pytest.mark.parametrize("text", ["ALTER USER app WITH PASSWORD NULL;", "CREATE USER app IDENTIFIED BY :pw;",
                                  "SELECT password_hash FROM users WHERE id = 1;"])
def test_sql_without_a_literal_password_stays(text):
    assert POLICY.redact_text(text) == text


# --- typed declarations with a literal (TypeScript, Rust, Kotlin, Go) ------------------------------
@pytest.mark.parametrize("text", [f'const apiKey: string = "{W}9";', f'const API_KEY: &str = "{W}9";',
                                  f'private val token: String = "{W}9"', f'var password string = "{W}9"'])
def test_typed_declarations_with_a_literal(text):
    assert W not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", ['const tokenType: string = "Bearer";', "token: Optional[str] = None",
                                  'def f(password: str = ""): pass'])
def test_typed_declarations_without_a_secret_stay(text):
    assert POLICY.redact_text(text) == text


# --- values that name or choose (docs/redaction.md, "Benign by principle") ------------------------
# GitHub Actions, "Assigning permissions to jobs": each scope of `permissions:` takes `read`, `write`
# or `none`, and `read-all`/`write-all` set every scope; `id-token: write` lets a job request an
# OIDC token, it is not one.
@pytest.mark.parametrize("text", [
    "permissions:\n  id-token: write\n  contents: read\n",
    "jobs:\n  publish:\n    permissions:\n      id-token: write\n      packages: none\n",
    "permissions: write-all\n",
    "permissions:\n  secret-scanning-alerts: read\n",
])
def test_github_actions_permission_levels_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, ".github/workflows/ci.yml", text)}
        assert json.loads(stored(doc)) == doc, carrier


# A key's file named under a key's name: cosign's docs sign with `--key cosign.key`; sigstore's
# GitHub action and many tools take a key file's path in a `*_KEY`/`key_file` setting. The path
# says where the key is; the key's bytes are not in it.
@pytest.mark.parametrize("text", [
    "env:\n  COSIGN_PRIVATE_KEY: /tmp/cosign.key\n",
    "tls:\n  key_file: path/to/server.pem\n",
    "ssl_key = ~/.ssh/id_ed25519.key\n",
    "PRIVATE_KEY_PATH=./certs/private.pem\n",
    "api_key_file: ${HOME}/secrets/api.txt\n",
])
def test_key_file_paths_under_key_names_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "config/app.yaml", text)}
        assert json.loads(stored(doc)) == doc, carrier


# Gradle, "Gradle Wrapper" (verifying the distribution): `distributionSha256Sum` in
# gradle/wrapper/gradle-wrapper.properties holds the SHA-256 of the distribution's zip, a digest of
# public content; the name `Sha256` is a word of the identifier, not entropy.
def test_a_gradle_wrapper_checksum_stays():
    text = ("distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\n"
            "distributionSha256Sum=" + "5f" * 32 + "\n"
            "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.10-bin.zip\n")
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "gradle/wrapper/gradle-wrapper.properties", text)}
        assert json.loads(stored(doc)) == doc, carrier


# Python packaging, "Entry points specification": an object reference is `importable.module:object`,
# and setuptools writes them one a line under `[options.entry_points]` in setup.cfg. A plugin
# named after what it checks (`hardcoded_password_string = pkg.plugins.mod:func`) names code.
def test_setup_cfg_entry_points_under_secret_names_stay():
    text = ("[options.entry_points]\nexample.plugins =\n"
            "    hardcoded_password_string = example.plugins.passwords:hardcoded_password_string\n"
            "    token_check = example.checks.tokens:check [extra]\n")
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "setup.cfg", text)}
        assert json.loads(stored(doc)) == doc, carrier


# The same names over values that are secrets: the classes above are narrow on purpose.
@pytest.mark.parametrize(("text", "secret"), [
    ("permissions_token: writer9\n", "writer9"),                 # not one of the permission levels
    ("COSIGN_PASSWORD: Zq3/Kx9Vb7/Tm2Wp8Rn4\n", "Zq3/Kx9Vb7/Tm2Wp8Rn4"),  # base64 with slashes: no extension
    ("auth = first.last:hunter22\n", "hunter22"),                # user:password, not a three-name module path
])
def test_secrets_that_resemble_those_classes_are_masked(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "conf/app.cfg", text)}
        assert secret.encode() not in stored(doc), carrier


# --- literals compared with a password or key ----------------------------------------------------
# Python's and Go's `==`/`!=` (and JavaScript's `===`/`!==`) compare a variable with a literal on
# either side; when the variable is a password or key, the literal is the value it must equal.
@pytest.mark.parametrize(("text", "secret"), [
    ('if obj.password == "this cool password":\n    pass\n', "this cool password"),  # read like a phrase
    ('if "f62e5bcda4fae4f82370da0c6f20697b8f8447ef" == password {\n}\n', "f62e5bcda4fae4f82370da0c6f20697b8f8447ef"),
    ("if ('hunter2-prod' !== this.secretKey) { deny(); }\n", "hunter2-prod"),
    ('if api_key != "Zorro Mask 9":\n', "Zorro Mask 9"),
])
def test_a_literal_compared_with_a_secret_is_masked(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "app/check.txt", text)}
        assert secret.encode() not in stored(doc), carrier


@pytest.mark.parametrize("text", [
    'if token === "--flag":\n',          # parsers compare tokens
    'if password == "":\n',               # an empty check
    'if "--verbose" == token {\n',
    'if password == "${PASSWORD}":\n',    # a reference
])
def test_comparisons_without_a_secret_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "app/check.txt", text)}
        assert json.loads(stored(doc)) == doc, carrier


# --- quoted literals under a one-word secret name, and weak passwords in code ---------------------
# A quoted string assigned in code is a literal; under a name that is only the secret's word
# (`password = "..."`) it is the password even when it contains that word, and `"secret"` or
# `"password"` under another secret name is a weak password, not a stand-in.
@pytest.mark.parametrize(("text", "secret"), [
    ('class Conf:\n    password = "class_password"\n', "class_password"),
    ('EMAIL_PASSWORD = "secret"\n', "secret"),
    ('db_secret = "password"\n', "password"),
])
def test_quoted_word_like_literals_under_secret_names_are_masked(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "app/settings.py", text)}
        assert not re.search(rf'"{secret}"'.encode(), stored(doc)), carrier


@pytest.mark.parametrize("text", [
    'SECRET_KEY_ACCOUNT = "secret-key"\n',   # a label naming the secret, under a longer name
    'PGPASSWORD = "password"\n',             # the name's own word
    'password_field = "user.password"\n',
])
def test_labels_and_own_names_under_secret_names_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "app/settings.py", text)}
        assert json.loads(stored(doc)) == doc, carrier


# Develocity's docs ("Authenticating with Develocity"): DEVELOCITY_ACCESS_KEY is `host=accesskey`;
# a workflow fills the key from a reference. hashicorp/vault-action's README ("Key Syntax"): each
# line of its `secrets` input is `path key | OUTPUT_NAME ;`. Both name where the secret is.
@pytest.mark.parametrize("text", [
    "env:\n  DEVELOCITY_ACCESS_KEY: ge.example.com=${{ secrets.DEVELOCITY_TOKEN }}\n",
    "with:\n  secrets: |\n    secret/data/ci/develocity token | DEVELOCITY_TOKEN;\n    secret/data/ci/npm token | NPM_TOKEN\n",
])
def test_references_joined_to_a_name_and_vault_action_paths_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, ".github/workflows/build.yml", text)}
        assert json.loads(stored(doc)) == doc, carrier


# POSIX date: `-u` is UTC and `+FORMAT` its format operand, not curl's `-u user:password`.
def test_date_with_a_utc_format_is_not_a_user_and_password():
    doc = {"schema": 1, "raw": {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                "tool_input": {"command": "date -u +%Y-%m-%dT%H:%M:%SZ"}}}
    assert json.loads(stored(doc)) == doc


@pytest.mark.parametrize(("text", "secret"), [
    ("curl -u admin:Hunter2Prod https://example.com\n", "Hunter2Prod"),
    ("env:\n  DEVELOCITY_ACCESS_KEY: ge.acme.io=Qx7Lm2Vb9Kp4Zr8Tw3\n", "Qx7Lm2Vb9Kp4Zr8Tw3"),
])
def test_the_same_shapes_with_a_secret_are_masked(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, ".github/workflows/build.yml", text)}
        assert secret.encode() not in stored(doc), carrier


# Setters that take a (name, value) pair: Java's System.setProperty(key, value) and
# Properties.setProperty, Go's os.Setenv(key, value), POSIX setenv(name, value, overwrite),
# django-environ's env.str(var, default=...): under a secret name the second argument is the secret.
@pytest.mark.parametrize(("text", "secret"), [
    ('System.setProperty("db.password", "Tr0ub4dor&3");\n', "Tr0ub4dor&3"),
    ('os.Setenv("GITHUB_TOKEN", "letmein77")\n', "letmein77"),
    ('setenv("API_KEY", "letmein77", 1);\n', "letmein77"),
    ('props.set("api_token", "7299:AAWJ-letmein")\n', "7299:AAWJ-letmein"),
    ('SECRET_KEY = env.str("SECRET_KEY", default="letmein77")\n', "letmein77"),
])
def test_setters_with_a_secret_name_and_a_literal(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "src/app.code", text)}
        assert secret.encode() not in stored(doc), carrier


@pytest.mark.parametrize("text", ['cache.set("token", "")\n', 'os.Setenv("TOKEN", "${TOKEN}")\n',
                                  'System.setProperty("user.name", "alice")\n'])
def test_setters_without_a_secret_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "src/app.code", text)}
        assert json.loads(stored(doc)) == doc, carrier


# Django's startproject writes SECRET_KEY = 'django-insecure-' + get_random_secret_key(): 50 characters
# of a-z, 0-9 and !@#$%^&*(-_=+) (django/core/management/utils.py). The prefix marks the key anywhere.
def test_a_django_insecure_secret_key_is_masked_under_any_name():
    key = "django-insecure-" + ("k3!a(z=8" * 7)[:50]
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "notes.txt", f"KEY = '{key}'\nsee {key}\n")}
        assert key[16:40].encode() not in stored(doc), carrier


# RFC 3986 3.2.1 userinfo; GitHub's docs let a token stand as the user name of an HTTPS remote.
@pytest.mark.parametrize(("text", "secret"), [
    ("git clone https://0123456789abcdef0123456789abcdef01234567@github.com/o/r.git\n",
     "0123456789abcdef0123456789abcdef01234567"),
    ("pip install git+https://fedcba9876543210fedcba9876543210@git.acme.io/o/r@1.0#egg=r\n",
     "fedcba9876543210fedcba9876543210"),
])
def test_a_hex_token_as_a_urls_user_name_is_masked(text, secret):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "notes.txt", text)}
        assert secret[:12].encode() not in stored(doc), carrier


@pytest.mark.parametrize("text", ["git clone https://alice@github.com/o/r.git\n",
                                  "see https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567\n"])
def test_a_person_as_a_urls_user_and_a_commit_in_its_path_stay(text):
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "notes.txt", text)}
        assert json.loads(stored(doc)) == doc, carrier


# SonarQube docs, "Managing your tokens": user tokens start squ_, project analysis tokens sqp_, global
# analysis tokens sqa_; the prefix marks them wherever they are written (Windows `setx NAME VALUE`).
@pytest.mark.parametrize("prefix", ["squ_", "sqp_", "sqa_"])
def test_sonarqube_prefixed_tokens_are_masked_under_any_name(prefix):
    token = prefix + "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
    for carrier in corpus5.CARRIERS:
        doc = {"schema": 1, "raw": corpus5.payload(carrier, "ci.cmd", f'setx "CI_VALUE" "{token}"\n')}
        assert token[4:16].encode() not in stored(doc), carrier


# -- the third round (#33): changes of default, each written from the format's own description ------------
@pytest.mark.parametrize("path", ["/home/u/notes.txt", "/var/log/app.log", "/srv/app/README.md"])
def test_a_file_that_is_not_code_reads_an_unquoted_value_as_a_literal(path):
    # One line of `name=value` in a text file: no variable stands there, only the literal.
    for text in (f"password={W}Value", f"secret: {W}Value", f"DB_PASSWORD = {W}Value"):
        assert f"{W}Value" not in POLICY.redact_text(text, path), (text, path)
    # ... and what a text file says in words, or names as a type, stays
    for text in ("password: Ask the team for it.", "token: string", "password=${DB_PASSWORD}"):
        assert POLICY.redact_text(text, path) == text, text


def test_source_code_keeps_reading_an_unquoted_value_as_code():
    for path in ("/srv/app/main.ts", "/srv/app/util.py", ""):
        for text in ("tokens: string[],", "secret = request.headers['apikey']", "finding.Secret = s"):
            assert POLICY.redact_text(text, path) == text, (text, path)


def test_a_unified_diff_is_read_as_the_file_it_changes():
    # POSIX diff, "Unified format": each hunk line after `+`, `-` or a blank; the marker hid the line's start.
    import base64
    import hashlib
    body = base64.b64encode(b"".join(hashlib.sha256(bytes([i])).digest() for i in range(6))).decode()
    diff = ("diff --git a/config.yml b/config.yml\n--- a/config.yml\n+++ b/config.yml\n@@ -1,3 +1,9 @@\n"
            " db:\n-  password: oldOne\n+  password: newOne\n+key: |\n+  -----BEGIN RSA PRIVATE KEY-----\n"
            f"+  {body[:64]}\n+  {body[64:128]}\n+  -----END RSA PRIVATE KEY-----\n")
    out = POLICY.redact_text(diff, "/tmp/change.diff")
    assert "oldOne" not in out and "newOne" not in out and body[:64] not in out and body[64:128] not in out
    assert out.startswith("diff --git a/config.yml b/config.yml\n--- a/config.yml\n+++ b/config.yml\n@@ -1,3 +1,9 @@\n"
                          " db:\n-  password: [REDACTED:")  # the markers and headers keep their bytes
    assert rules.diff_view("no hunk here\n+password: x\n") == "no hunk here\n+password: x\n"


def test_the_diff_view_keeps_every_offset():
    diff = "@@ -1 +1 @@\n-a\n+b\n c\n\\ No newline at end of file\ncommit 1234\n+not a hunk line\n"
    view = rules.diff_view(diff)
    assert len(view) == len(diff)
    assert view == "@@ -1 +1 @@\n a\n b\n c\n\\ No newline at end of file\ncommit 1234\n+not a hunk line\n"


@pytest.mark.parametrize("header", ["MIIEowIBAAKCAQEA", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "MHcCAQEEI"])
def test_a_der_private_key_in_base64_without_armor(header):
    # RFC 8017 A.1.2 (RSAPrivateKey), RFC 5958 (PrivateKeyInfo), RFC 5915 (ECPrivateKey): a SEQUENCE, then
    # the version INTEGER; the base64 of those bytes is the header, whatever the key's length
    import base64
    import hashlib
    key = header + base64.b64encode(b"".join(hashlib.sha512(bytes([i])).digest() for i in range(30))).decode()
    for text in (f'private static final String RSA_KEY = "{key}";', f"key: {key[:64]}\\n{key[64:]}"):
        out = POLICY.redact_text(text)
        assert key[:40] not in out and key[-40:] not in out, text


def test_a_der_public_key_or_certificate_is_not_a_private_key():
    import base64
    import hashlib
    rest = base64.b64encode(b"".join(hashlib.sha256(bytes([i])).digest() for i in range(40))).decode()
    for header in ("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A", "MIIDdzCCAl+gAwIBAgIE"):  # SubjectPublicKeyInfo, a certificate
        assert "[REDACTED:private_key" not in POLICY.redact_text(f"cert = {header}{rest}")


@pytest.mark.parametrize("text", [
    f'props.put("password", "{W}");',
    f"conf.set('secret', '{W}')",
    f'"password" ,"{W}"',
])
def test_a_secret_name_and_a_literal_closing_a_call_are_a_pair(text):
    assert W not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", [
    'fields = ["password", "password_confirmation"]',
    'permit("password", "passwordConfirmation")',
    'let accountKey = Buffer.from("accountKey", "base64");',
    'form.field("password", "")',
])
def test_a_list_of_names_or_an_encoding_is_not_a_pair(text):
    assert POLICY.redact_text(text) == text


@pytest.mark.parametrize("text", [
    f"token = jwt.sign({{ id: user.id }}, '{W}');",
    f'encoded = jwt.encode({{"some": "payload"}}, "{W}", algorithm="HS256")',
    f'mac = hmac.new(b"{W}", msg, hashlib.sha256)',
    f'SecretKeySpec k = new SecretKeySpec("{W}".getBytes(), "AES");',
    f"const h = crypto.createHmac('sha256', '{W}');",
    f'token.SignedString([]byte("{W}"))',
    f'Algorithm a = Algorithm.HMAC256("{W}");',
    f'keyStore.load(in, "{W}".toCharArray());',
    f'f = Fernet(b"{W}")',
    f'ldap_bind($ds, "cn=admin", "{W}");',
    f"oci_connect('scott', '{W}', 'localhost/XE');",
    f"password_verify('{W}', $hash)",
    f'new UsernamePasswordAuthenticationToken("admin", "{W}")',
    f'PBEKeySpec spec = new PBEKeySpec("{W}".toCharArray(), salt, 1000);',
    f'new BasicAWSCredentials("AKIAEXAMPLEID", "{W}")',
])
def test_keys_and_passwords_by_the_argument_their_api_takes_them_in(text):
    assert W not in POLICY.redact_text(text)


def test_in_a_key_argument_a_stand_in_word_is_the_key():
    # under a name `"secret"` stands for a secret; where an API takes its key, it is the key
    out = POLICY.redact_text('encoded = jwt.encode({"some": "payload"}, "secret", algorithm="HS256")')
    assert '"secret"' not in out and out.startswith('encoded = jwt.encode({"some": "payload"}, "[REDACTED:')


@pytest.mark.parametrize("text", [
    "jwt.verify(token, process.env.JWT_SECRET)",
    'jwt.decode(token, options={"verify_signature": False})',
    "hmac.new(key, msg, hashlib.sha256)",
    'ldap_bind($ds, "cn=admin", $password);',
])
def test_a_key_argument_that_is_not_a_literal_stays(text):
    assert POLICY.redact_text(text) == text


@pytest.mark.parametrize("text,masked", [
    (f'String pwd = "{W}";', True),
    (f"const pass = '{W}'", True),
    ('pwd = "/srv/app"', False),  # a directory
    ("--- PASS: TestFoo (0.00s)", False),
    (f'if (password.equals("{W}")) {{}}', True),
    (f'if ("{W}".equals(password)) {{}}', True),
    (f'if (user.getPassword().equals("{W}")) {{}}', True),
    ('if (token.equals("")) {}', False),
    ('if (x.getName().equals("bob")) {}', False),
])
def test_declared_passwords_and_java_equals(text, masked):
    out = POLICY.redact_text(text)
    assert (W not in out) if masked else out == text


@pytest.mark.parametrize("text,secret", [
    (f'RUN echo "admin:{W}" | chpasswd', W),  # Dockerfile reference: RUN <command> (shell form)
    (f"mvn deploy -Dkeystore.password={W} -Dfoo=bar", W),
    (f"java -Djavax.net.ssl.trustStorePassword={W} -jar app.jar", W),
    (f'setx "SONAR_TOKEN" "{W}"', W),
    (f"setx DB_PASSWORD {W} /m", W),
    (f'aws_access_key_id = "{W}"', W),  # half of the pair a credentials file holds
])
def test_commands_and_names_of_round_three(text, secret):
    assert secret not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", [
    "mvn -Dfoo=bar -DskipTests=true package",
    'setx PATH "C:\\bin"',
    'kms_key_id = "1234abcd-12ab-34cd-56ef-1234567890ab"',
    "jobs:\n  call:\n    uses: ./.github/workflows/build.yml\n    secrets: inherit\n",
])
def test_what_round_three_leaves_alone(text):
    assert POLICY.redact_text(text) == text


# -- the fourth round (#33): tuned on corpora 1-8, the ninth and tenth held out ---------------------------
@pytest.mark.parametrize("text", [
    f'String q = "login=a&passwd={W}";',  # a query string in a literal
    f"var1 = 'user=admin&pwd={W}'",
    f'String c = "host=db port=5432 dbname=app user=u password={W}";',  # a libpq conninfo in a literal
    f'String p = "token={W}Tok user=admin";',
    f"password = '''{W}'''",  # Python's triple quotes
    f'password = """{W}"""',
    f'String secret = "{W}\\nrest";',  # an escape inside the literal
    f'let password: String! = "{W}"',  # Swift's implicitly unwrapped type
    f'Dim password As String = "{W}"',  # Visual Basic
    f'Private Const ApiKey As String = "{W}Key"',
])
def test_pairs_inside_a_literal_and_declarations_of_more_languages(text):
    assert W not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", [
    'print("token=" + token)',
    'log.info("password=%s", password)',
    'f"token={token}"',
    "conn = (\n  f\"PWD={os.environ.get('DATABASE_PASS')};\"\n)",  # an f-string's hole names where the value is
    '"SaConnection": "Server={0};User Id={1};Password={2}"',
    'String s = "password=no";',  # a boolean: no password
    'Dim name As String = "bob"',
    'echo "cd $pwd"',
])
def test_a_template_hole_or_a_boolean_inside_a_literal_stays(text):
    assert POLICY.redact_text(text) == text


@pytest.mark.parametrize("text", [
    f'myA.setProperty("pwd", "{W}");',
    f'props.put(Context.SECURITY_CREDENTIALS, "{W}");',  # javax.naming.Context's constant names the password
    f'odbc_connect("dsn", "user", "{W}");',
    f'db2_connect("db", "user", "{W}");',
    f'cubrid_connect("h", 33000, "db", "user", "{W}");',
    f'ldap_exop_passwd($ds, "user", "old", "{W}");',
    f"$enc = new Encrypter('{W}');",
    f'DESKeySpec ks = new DESKeySpec("{W}".getBytes());',
])
def test_named_values_and_php_connections_by_position(text):
    assert W not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", ['map.put("name", "bob");', "map.put(KEY_NAME, \"bob\");", 'odbc_connect($dsn, $u, $p);'])
def test_a_named_value_that_is_not_a_secret_stays(text):
    assert POLICY.redact_text(text) == text


KEYLIKE = "Qm7vXpLr2FzT9baWtHx"


@pytest.mark.parametrize("text", [
    f'if ($auth == "{KEYLIKE}")',
    f'if ("{KEYLIKE}" === $auth)',
    f'if ($auth <=> "{KEYLIKE}")',  # PHP's spaceship operator
    f'if (strcmp($auth, "{KEYLIKE}"))',
    f'if (strcasecmp("{KEYLIKE}", $auth))',
    f'if (hash_equals("{KEYLIKE}", $token))',
    f'if (strcmp($password, "{W}")) {{}}',  # with a password, whatever the literal reads like
])
def test_comparisons_with_a_token_or_auth_mask_a_key_shaped_literal(text):
    out = POLICY.redact_text(text)
    assert KEYLIKE not in out and W not in out


@pytest.mark.parametrize("text", ['if (token === "--flag") {}', 'if auth == "basic":', 'if (strcmp($auth, "none"))'])
def test_comparisons_of_parser_tokens_and_modes_stay(text):
    assert POLICY.redact_text(text) == text


def test_a_vault_action_line_with_a_template_in_its_path_stays():
    text = ("      secrets: |\n"
            "        development/github/token/{REPO_OWNER_NAME_DASH}-lock token | lock_token;\n")
    assert POLICY.redact_text(text, "/srv/.github/workflows/lock.yml") == text


def test_every_call_row_has_the_words_that_let_the_walk_try_it():
    # a row of CALLS runs only on a text holding one of its words: every row has some, in lower case, and
    # each of its documented calls holds one (the calls this file's tests write, by the row they hit)
    for rx, _, needles, _ in formats.CALLS:
        assert needles and all(n == n.lower() for n in needles), rx
    for text in ("keyStore.load(in, \"k\".toCharArray());", "jwt.sign(p, 'k')", "odbc_connect('d', 'u', 'p');",
                 "new UsernamePasswordAuthenticationToken('u', 'p')", "cookieParser('k')"):
        rows = [needles for rx, _, needles, _ in formats.CALLS if re.search(rx + r"\s*\(", text)]
        assert rows and all(any(n in text.lower() for n in nd) for nd in rows), text


# -- the fifth round (#33): tuned on corpora 1-10, the eleventh held out -----------------------------------
@pytest.mark.parametrize("text", [
    f'if (authToken.Equals("{KEYLIKE}", StringComparison.CurrentCulture)) {{ }}',  # C#'s String.Equals
    f'if ("{KEYLIKE}".Equals(foo.GetToken())) {{ }}',
    f"app.use(cookieParser('{W}'));",  # expressjs/cookie-parser: cookieParser(secret)
    f"cookieParser.signedCookies(cookies, '{W}');",
    f"jwtVerify(token, '{W}');",  # panva/jose
    f"crypto.createSecretKey('{W}');",
    f"let password; password = env.PASSWORD ?? '{W}';",  # a fallback after a statement's start
    f"const password = isDev ? '{W}' : 'other';",  # a conditional's branch
    f'char[] pwd = ".{W}-x".toCharArray();',  # a leading dot is not a path
    f'CRYPTOGRAPHY_KEY = "{W}"',  # crypto, cryptography and cipher qualify a key
])
def test_round_five_classes(text):
    assert W not in POLICY.redact_text(text) and KEYLIKE not in POLICY.redact_text(text)


@pytest.mark.parametrize("text", [
    "export BEARER_WORKSPACE=$PWD/../bearer",  # a path under a variable
    "BEARER_BIN=./bin/bearer yarn test",  # a dot-relative path, extension or not
    'const label = ok ? "yes" : "no";',
    "         ';PWD='      . $password .';';",  # the quote after `=` closes the literal `';PWD='`
    "costs:\n  basic_auth_password: 300000\n  session_secret: 600000\n  http_cookies: 600000\n"
    "  sql_injection: 300000\n  xss: 300000\n",  # a table of numbers
    '{"pwd": "."}',
])
def test_round_five_leaves_alone(text):
    assert POLICY.redact_text(text) == text


def test_a_password_of_digits_outside_a_table_is_still_masked():
    for text in ("db:\n  user: app\n  password: 48213907\n", "DB_PASSWORD=48213907"):
        assert "48213907" not in POLICY.redact_text(text, "/srv/app/config.yml")


# -- the sixth round (#33): a statement in source code that names a secret ---------------------------------
@pytest.mark.parametrize("text", [
    "  getSecret: () => 'gm5yb-hJWRoS7ZJTi_YUj_tbU',",
    'v.setMotDePasse("Soleil1234"); // password',
    'client_secret: env("CLIENT_SECRET", "x8Kq2mZ0pLw7"),',
])
def test_a_literal_that_reads_like_a_password_on_a_line_naming_a_secret_in_code(text):
    secret = re.findall(r"""["']([^"']{6,})["']""", text)[-1]
    assert secret not in POLICY.redact_text(text, "/srv/app/main.js")


@pytest.mark.parametrize("text", [
    'const TOKEN_URL = "https://oauth2.googleapis.com/token";',
    'logger.debug("token=%s", tok)',
    'res.cookie("token", token, { sameSite: "strict", maxAge: "3600s" })',
    'throw new Error("password must be 8 chars")',
    'llm = LLM(model="gpt-5.5", api_key=SecretStr("key"))',
    'FERNET_TOKEN_PREFIX: Final[str] = "gAAAAA"',
    ' * @param updateMask (e.g., ["options.ulid", "options.openAiHeaders", "secrets.apiKey"])',
    'const REDIS = "redis://admin:#{ENV.fetch("ADMIN_PASSWORD")}@host:5672"',
    'secret_id = "123e4567-e89b-12d3-a456-426614174000"',
    'token_endpoint = "localhost:8443"',
    'auth_token_version = "v2.3.1"',
    'String variableNameWithSecretaryInIt = "bacdefghij42klmnopqrs";',  # a secretary is not a secret
])
def test_what_reads_as_a_word_a_name_a_path_or_a_template_stays_on_a_secret_line(text):
    assert POLICY.redact_text(text, "/srv/app/main.py") == text


# -- the eighth round (#33): tuned on corpora 1-12, the thirteenth held out --------------------------------
CFN = """Parameters:
  AlexaClientSecret:
    Type: String
    NoEcho: True
    Default: {w}Sec
  Opaque:
    Type: String
    NoEcho: "true"
    Default: {w}Opq
  Stage:
    Type: String
    Default: prod
Resources:
  X:
    Type: AWS::X
"""


def test_a_cloudformation_parameter_marked_noecho_or_named_a_secret_has_its_default_masked():
    # AWS CloudFormation docs, "Parameters": NoEcho masks the value wherever the stack shows it
    out = POLICY.redact_text(CFN.format(w=W), "/srv/stack.yaml")
    assert f"{W}Sec" not in out and f"{W}Opq" not in out and "Default: prod" in out
    # (the layer reads a template that names a secret somewhere, as every text it reads)
    doc = {"Parameters": {"DbPassword": {"Type": "String", "NoEcho": "true"},
                          "Opaque": {"Type": "String", "NoEcho": "true", "Default": f"{W}Json"}}}
    assert f"{W}Json" not in POLICY.redact_text(json.dumps(doc, indent=1), "/srv/stack.json")


@pytest.mark.parametrize("text", [
    f"refresh_token: {W}Rt",  # RFC 6749, 1.5: a refresh token is a credential
    f'{{"refresh_token": "{W}Rt"}}',
    f"/bin/sh -c #(nop) ENV abc=hello password={W}Env",  # a shell file: `name=value` anywhere is a literal
    "api_key_seed = HDS-wP-_QzTDTZbRuDHMF",  # a URL-safe random run with no digit
])
def test_round_eight_classes(text):
    out = POLICY.redact_text(text, "/srv/app/run.sh")
    assert W not in out and "QzTDTZbRuDHMF" not in out


@pytest.mark.parametrize("text", [
    '    "jwtTokenNotProvided": "JWT_SECRET is not set",',  # a message naming a variable
    "    detect-aws-credentials = pre_commit_hooks.detect_aws_credentials:main",  # an entry point
    '\t\t"-v", "${localEnv:HOME}/.gnupg/private-keys-v1.d:/home/dev/.gnupg/private-keys-v1.d:ro",',
    '               -u "releasebot:${{secrets.GITHUB_TOKEN}}" \\',  # a GitHub Actions expression
    "#SSL_private_key=PATH_to_key.pem",  # a key file's name
    "          server-password: MAVEN_PASSWORD",  # the variable that holds it (actions/setup-java)
    "      <minimum-tokens>50</minimum-tokens>",  # a count of tokens
    "          name: PSScriptAnalyzer-tests-${{ matrix.os }}",  # words joined by `-`
    '    req.add_header("X-GitHub-Api-Version", "2022-11-28")',
])
def test_round_eight_leaves_alone(text):
    assert POLICY.redact_text(text, "/srv/app/config.yml") == text


def test_the_docs_count_each_table_of_rules_toml_as_it_is():
    # docs/redaction.md, "What is caught": the number of rules per table, kept in step with rules.toml
    toml = (Path(__file__).resolve().parents[1] / "agentwatch/record/redact/rules.toml").read_text()
    docs = (Path(__file__).resolve().parents[1] / "docs/redaction.md").read_text()
    for table in ("token", "context", "pattern"):
        count = len(re.findall(rf"(?m)^\[\[{table}\]\]$", toml))
        assert f"| `[[{table}]]` ({count}) |" in docs, table


# -- the tenth round: code is code, wherever a secret's name stands beside it -------------------------
# Each benign case is one shape of source code or markup as its language defines it (Python's format
# mini-language and keyword arguments, ECMAScript's optional chaining, PEP 526's annotated assignment,
# YAML's block sequence, .NET's strong-name public key token, RFC 9110's auth scheme).
@pytest.mark.parametrize(("path", "text"), [
    ("x.py", 'print(f"took {webhook_wall:.2f} s, {k_tokens:.1f}k tokens")\n'),  # a format specification
    ("x.py", 'logger.warning("credential_binding_monitor_failed", exc_info=True)\n'),  # a keyword argument
    ("x.py", 'event_service.credential_bindings = {"MY_SECRET": binding}\n'),  # a variable, in source code
    ("x.py", "MIN_CONTEXT_WINDOW_TOKENS: Final[int] = 16384\n"),  # a count of tokens
    ("x.py", "_COOKIE_MAX_AGE_SECONDS = 60 * 60 * 24 * 365 * 10\n"),  # a quantity of time
    ("x.py", 'SECRET_KEY_PATTERNS = [re.compile(r"key"), re.compile(r"token")]\n'),  # a list of calls
    ("x.js", "const accessToken = settings?.auth?.accessToken?.trim?.()\n"),  # optional chaining
    ("x.ts", "const auth = settings?.auth as { accessToken?: string } | undefined\n"),
    ("x.ts", "sessionToken: credentials.sessionToken || \"\",\n"),
    ("x.ts", "const authorization = await authorizeConnectorEvent(event)\n"),  # a keyword of code
    ("ci.yml", '  -H "Authorization: Bearer ${{ steps.app-token.outputs.token }}" \\\n'),  # a scheme, a template
    ("README.md", "- DD_API_KEY: Your Datadog API key\n"),  # a list item's description
    ("app.config", '<assemblyIdentity name="Newtonsoft.Json" publicKeyToken="30ad4fe6b2a6aeed" culture="neutral" />\n'),
    ("ci.sh", 'echo "GITHUB_TOKEN: ${GITHUB_TOKEN:+set}"; : "${API_TOKEN:?API_TOKEN is required}"\n'),  # POSIX sh 2.6.2
    ("sidebar.tsx", "const SIDEBAR_COOKIE_MAX_AGE = 60 * 60 * 24 * 7;\n"),
    ("x.py", "DEFAULT_MAX_OUTPUT_TOKENS_CAP: int = 64000\n"),
])
def test_code_and_descriptions_beside_a_secret_name_keep_their_bytes(path, text):
    assert POLICY.redact_text(text, "/srv/app/" + path) == text
    read = {"schema": 1, "raw": {"hook_event_name": "PostToolUse", "tool_name": "Read",
                                 "tool_input": {"file_path": "/srv/app/" + path},
                                 "tool_response": {"file": {"filePath": "/srv/app/" + path, "content": text}}}}
    assert stored(read) == canonical_json(read)


@pytest.mark.parametrize(("path", "text"), [
    ("x.py", '_pass = "s3cr3t-{w}"\n'),  # a private name is still `pass`
    ("x.py", 'if pwd == "s3cr3t-{w}":\n'),  # compared with `pwd`, as assigned to it
    ("x.py", 'if _pass != "s3cr3t-{w}":\n'),
    ("x.py", 'MAX_TOKENS = 1000\nAPI_TOKEN = "s3cr3t-{w}"\n'),  # the count beside it changes nothing
    ("deploy.yml", "env:\n  - DB_PASSWORD: s3cr3t-{w}\n"),  # a YAML list item's value runs to the line's end
    ("run.sh", 'export API_TOKEN="${{API_TOKEN:-s3cr3t-{w}}}"\n'),  # a default the shell substitutes is a literal
])
def test_literals_the_tenth_round_reads(path, text):
    w = "letmein"
    out = POLICY.redact_text(text.format(w=w), "/srv/app/" + path)
    assert w not in out and "[REDACTED:" in out


def test_a_configuration_text_held_in_source_code_keeps_its_literals():
    # a docker-compose or .env text inside a template literal of a test (continuedev/continue's
    # autocomplete cases hold such texts): its upper-case names hold literals, not variables
    for text in ("const yml = `\nservices:\n  db:\n    environment:\n      POSTGRES_PASSWORD: letmein\n`;\n",
                 "const env = `\nDB_PASSWORD=letmein\n`;\n"):
        assert "letmein" not in POLICY.redact_text(text, "/srv/app/cases.ts")


# -- the eleventh round: `pass`/`pwd` as a pair's name, Go's short variable declarations ----------------
@pytest.mark.parametrize(("path", "text"), [
    ("app.yml", "secrets:\n  - key: PASS\n    value: {w}\n"),  # a name/value list's name
    ("app.json", '{{"key": "pwd", "value": "{w}"}}\n'),
    ("app.xml", "<entry>\n  <key>PASS</key>\n  <value>{w}</value>\n</entry>\n"),
    ("app.xml", "<login>\n  <pwd>{w}</pwd>\n</login>\n"),  # an XML element named so
    ("main.go", 'func f() {{\n\tuser, password := "app", "{w}"\n}}\n'),  # `:=` declares as `var` does
])
def test_pairs_the_eleventh_round_reads(path, text):
    w = "letmein"
    assert w not in POLICY.redact_text(text.format(w=w), "/srv/app/" + path)


@pytest.mark.parametrize(("path", "text"), [
    ("app.yml", "env:\n  - key: PWD\n    value: /home/dev/project\n"),  # the working directory stays
    ("main.go", 'func f() {\n\ta, b := "x", "y"\n\tuser, host := "app", "db.internal"\n}\n'),
])
def test_pairs_the_eleventh_round_keeps(path, text):
    assert POLICY.redact_text(text, "/srv/app/" + path) == text
