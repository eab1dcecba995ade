"""Synthetic secrets for the redaction self-test and the test suite.

Every secret here is fake: made at run time from a fixed seed, shaped like the
real format (prefix, alphabet, length) so the rules must catch it, and never a
credential anyone issued. They are assembled from parts so that this file
holds no literal token a secret scanner would flag. `rule_samples` makes one
for every token and service rule of rules.toml from the rule's own format, so
the self-test covers each rule the file adds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import tomllib
import uuid
from functools import lru_cache
from importlib import resources

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"


def fake(label: str, alphabet: str, n: int) -> str:
    """n characters of `alphabet`, deterministic in `label`, with every class mixed in."""
    out: list[str] = []
    counter = 0
    while len(out) < n:
        block = hashlib.sha256(f"agentwatch-fake:{label}:{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in block)
        counter += 1
    chars = out[:n]
    # Guarantee the classes a real token of this alphabet shows (upper, lower, digit).
    for i, cls in enumerate((UPPER, LOWER, DIGITS)):
        if n > 8 and not any(c in cls for c in chars) and any(c in alphabet for c in cls):
            chars[3 + i] = next(c for c in cls if c in alphabet)
    return "".join(chars)


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def _pem(kind: str, label: str, lines: int = 6, end: bool = True) -> str:
    head = f"-----BEGIN {kind}PRIVATE KEY-----"
    body = [fake(f"{label}{i}", B64, 64) for i in range(lines)]
    tail = [f"-----END {kind}PRIVATE KEY-----"] if end else []
    return "\n".join([head, *body, *tail])


@lru_cache(maxsize=1)
def secrets_corpus() -> tuple[tuple[str, str, str], ...]:
    """(kind, secret, text containing it): the kind is the mask the rules must give."""
    s: list[tuple[str, str, str]] = []

    def add(kind: str, secret: str, *texts: str) -> None:
        for text in texts or (secret,):
            s.append((kind, secret, text.replace("{s}", secret)))

    aws_id = "AK" + "IA" + fake("aws-id", BASE32, 16)
    add("aws_access_key_id", aws_id, "{s}", "aws_access_key_id = {s}", "export AWS_ACCESS_KEY_ID={s}")
    add("aws_access_key_id", "AS" + "IA" + fake("aws-sts", BASE32, 16), "creds: {s} (session)")
    aws_secret = fake("aws-secret", B64, 40)
    add("assignment", aws_secret, "aws_secret_access_key = {s}", "AWS_SECRET_ACCESS_KEY={s}",
        '{"SecretAccessKey": "x", "aws_secret_access_key": "{s}"}')
    add("private_key", _pem("", "gcp"), json.dumps({"type": "service_account", "private_key": "{s}"}),
        "key file:\n{s}\n")
    add("private_key", _pem("RSA ", "rsa"), "{s}")
    add("private_key", _pem("OPENSSH ", "ssh"), "cat id_ed25519\n{s}")
    add("private_key", _pem("EC ", "ec", end=False), "truncated: {s}")
    add("google_api_key", "AI" + "za" + fake("gapi", B64URL, 35), "{s}", "https://maps.example.com/api?key={s}&q=1")
    add("connection_string", fake("azure-acct", B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=devstore;AccountKey={s};EndpointSuffix=core.windows.net")
    add("url_password", fake("azure-sas", ALNUM, 43), "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={s}")
    add("azure_client_secret", fake("az-a", ALNUM, 3) + "8Q" + "~" + fake("az-b", ALNUM + "_-", 34),
        "AZURE_CLIENT_SECRET_VALUE {s}")
    for prefix in ("ghp", "gho", "ghu", "ghs", "ghr"):
        add("github_token", prefix + "_" + fake(prefix, ALNUM, 36), "{s}", "git clone https://x-access:{s}@github.com/o/r")
    add("github_token", "github" + "_pat_" + fake("ghpat1", ALNUM, 22) + "_" + fake("ghpat2", ALNUM, 59),
        "GH_TOKEN is {s}")
    add("gitlab_token", "gl" + "pat-" + fake("glpat", ALNUM + "_-", 20), "curl -H 'PRIVATE-TOKEN: {s}' https://gl")
    add("openai_key", "sk" + "-" + fake("oai", ALNUM, 48), "{s}", "client = OpenAI(api_key='{s}')")
    add("openai_key", "sk" + "-proj-" + fake("oaiproj", B64URL, 120), "OPENAI key {s} end")
    add("anthropic_key", "sk" + "-ant-api03-" + fake("ant", B64URL, 93) + "AA", "{s}", "x-api-key: {s}")
    add("model_provider_key", "sk" + "-or-v1-" + fake("or", HEX, 64), "{s}")
    add("huggingface_token", "hf" + "_" + fake("hf", UPPER + LOWER, 34), "{s}", "huggingface-cli login --token {s}")
    add("model_provider_key", "gs" + "k_" + fake("groq", ALNUM, 52), "{s}")
    add("model_provider_key", "xa" + "i-" + fake("xai", ALNUM, 80), "{s}")
    add("perplexity_key", "pp" + "lx-" + fake("pplx", ALNUM, 48), "{s}")
    add("model_provider_key", "r8" + "_" + fake("r8", ALNUM, 37), "{s}")
    add("slack_token", "xo" + "xb-" + fake("sl1", DIGITS, 12) + "-" + fake("sl2", DIGITS, 13) + "-"
        + fake("sl3", ALNUM, 24), "{s}", "SLACK_BOT={s}")
    add("slack_token", "xo" + "xp-" + fake("slp", DIGITS, 12) + "-" + fake("slp2", ALNUM, 32), "{s}")
    add("stripe_key", "sk" + "_live_" + fake("stripe", ALNUM, 24), "{s}", "Stripe.api_key = '{s}'")
    add("stripe_key", "rk" + "_test_" + fake("stripe-rk", ALNUM, 24), "{s}")
    add("stripe_key", "wh" + "sec_" + fake("whsec", ALNUM, 32), "{s}")
    add("npm_token", "np" + "m_" + fake("npm", ALNUM, 36), "//registry.npmjs.org/:_authToken={s}")
    add("pypi_token", "py" + "pi-AgEIcHlwaS5vcmc" + fake("pypi", B64URL, 60), "{s}")
    add("docker_token", "dc" + "kr_pat_" + fake("dckr", B64URL, 27), "{s}")
    add("sendgrid_key", "SG" + "." + fake("sg1", B64URL, 22) + "." + fake("sg2", B64URL, 43), "{s}")
    add("digitalocean_token", "do" + "p_v1_" + fake("do", HEX, 64), "{s}")
    add("linear_key", "lin" + "_api_" + fake("lin", ALNUM, 40), "{s}")
    header = _b64url({"alg": "HS256", "typ": "JWT"})
    claims = _b64url({"sub": fake("jwt-sub", DIGITS, 10), "name": "Test User", "iat": 1700000000})
    add("jwt", f"{header}.{claims}.{fake('jwt-sig', B64URL, 43)}", "{s}", "id_token {s} end")
    url_pw = fake("urlpw", ALNUM, 14) + "!x"
    add("url_password", url_pw, "postgres://admin:{s}@db.internal:5432/app", "DATABASE_URL is redis://:{s}@cache:6379/0")
    add("assignment", fake("envpw", ALNUM, 18), "PASSWORD={s}", "DB_PASSWORD='{s}'", "SECRET_KEY: {s}",
        'api_key="{s}"', "  password: {s}\n", '{"password":"{s}"}', "token={s}&user=alice",
        "spring.datasource.password={s}")
    add("authorization", fake("bearer", B64URL, 40), "Authorization: Bearer {s}",
        'curl -H "Authorization: token {s}" https://api.example.com')
    add("authorization", base64.b64encode(b"alice:" + fake("basic", ALNUM, 12).encode()).decode(),
        "Authorization: Basic {s}", "header = 'Basic {s}'", "log: sent basic {s}")
    add("aws_secret_access_key", fake("aws-quoted", B64, 39) + "7", 'aws_creds = ("id", "{s}")')
    add("assignment", str(uuid.UUID(hashlib.sha256(b"approle").hexdigest()[:32])),
        "vault write auth/approle/login role_id=app secret_id={s}")
    add("password_hash", "$md5,rounds=5000$" + fake("sunmd5-salt", ALNUM, 8) + "$$" + fake("sunmd5", ALNUM, 22),
        "root:{s}:19000::::::")
    add("cli_flag", fake("flagpw", ALNUM, 16), "mysql --password {s} -h db", "tool --token={s}", "curl -u alice:{s} https://x")
    add("cookie", "session=" + fake("cookie", ALNUM, 32), "Cookie: {s}")
    netrc_pw = fake("netrc", ALNUM, 16)
    add("netrc", netrc_pw, "machine api.example.com login alice password {s}",
        "machine git.example.com\n  login alice\n  password {s}\n")
    add("pgpass", fake("pgpass", ALNUM, 14), "db.internal:5432:app:alice:{s}", "*:*:*:postgres:{s}\n")
    short_pw = fake("short-pw", ALNUM, 10)
    add("cli_flag", short_pw, "mysql -u root -p{s} app", "sshpass -p {s} ssh alice@host",
        "docker login -u alice -p {s} registry.example.com", "curl -u alice:{s} https://api.example.com")
    add("url_password", short_pw, "alice:{s}@db.example.com:5432", "jdbc:postgresql://alice:{s}@db.example.com/app")
    add("assignment", fake("hex-token", HEX, 40), "export GITHUB_TOKEN={s}", 'api_token: "{s}"',
        'variable "db_password" {\n  default = "{s}"\n}')
    add("connection_string", short_pw, "Server=db;Database=app;User Id=sa;Password={s};")
    add("high_entropy", fake("entropy", ALNUM, 40), "the value is {s} in the log")
    add("high_entropy", fake("entropy64", B64, 64), "blob {s}")
    # A placeholder in a format with a distinctive prefix is masked whatever its entropy.
    add("github_token", "gh" + "p_" + "x" * 36, "{s}", "GH_TOKEN={s}")
    add("stripe_key", "sk" + "_live_" + "A" * 24, "{s}")
    # A key-shaped value after a label with no operator.
    add("assignment", fake("label", ALNUM, 32), "acme SECRET {s}", "widgetTOKEN {s} end")
    return tuple(s)


def benign_corpus() -> tuple[str, ...]:
    """Text the rules must leave alone: digests, ids, paths, code, prose."""
    digest = hashlib.sha256(b"agentwatch").hexdigest()
    return (
        "sha256:" + digest,
        "hmac-sha256:" + digest[:32],
        digest[:40],
        str(uuid.UUID(int=0x0190F1C27A3B7C1D9E2F3A4B5C6D7E8F)),
        str(uuid.UUID(int=0x0190F1C27A3B7C1D9E2F3A4B5C6D7E8F)).upper(),
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "/home/alice/src/agentwatch/agentwatch/normalize.py",
        "/Users/Alice/Library/Application Support/Code/User/settings.json",
        "src/agentwatch/adapters/claude_code.py",
        "~/.claude/projects/-home-alice-src-app/0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f.jsonl",
        "/home/alice/.cache/pip/http/d/1/2/3/4f8a9c0b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c",
        "toolu_01" + fake("toolu", ALNUM, 22),
        "call_" + fake("call", ALNUM, 24),
        "sha512-" + base64.b64encode(hashlib.sha512(b"pkg").digest()).decode(),
        "getUserAccountSettings2",
        "AbstractSingletonProxyFactoryBean",
        "def login(password: str, token: Optional[str] = None) -> bool:",
        "password = os.environ['DB_PASSWORD']",
        "client(api_key=api_key, secret=None)",
        "token = get_token()",
        "headers = {'Authorization': f'Bearer {token}'}",
        "PASSWORD=${DB_PASSWORD}",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "max_tokens: 4096, input_tokens=1200",
        "sorted(items, key=len)",
        '{"key": "ArrowUp", "keyCode": 38}',
        "PWD=/home/alice/src OLDPWD=/home/alice",
        "alice@example.com wrote https://alice@example.com/path?q=1",
        "git@github.com:agentwatch/agentwatch.git",
        "https://example.com/a/b?page=2&sort=desc",
        *(f"[REDACTED:{kind}:hmac-sha256:1a2b3c4d5e6f]" for kind in (
            "github_token", "authorization", "cookie", "assignment", "secret_field", "private_key", "cli_flag",
            "url_password", "high_entropy", "custom")),
        "Authorization: [REDACTED:authorization:hmac-sha256:1a2b3c4d5e6f]",
        "password=[REDACTED:assignment:hmac-sha256:1a2b3c4d5e6f]",
        "PostToolUse", "Bash", "git status --short && ls -la src/",
        "if not token:\n    raise ValueError('a token is required')",
        "def get_secret(name: str) -> str:",
        "password = getpass.getpass()",
        "max_tokens = 4096",
        "python:3.11-slim@sha256:" + digest,
        "github.com/spf13/pflag v1.0.6/go.mod h1:" + base64.b64encode(hashlib.sha256(b"go.mod").digest()).decode(),
        "npm:lodash@4.17.21",
        "The quick brown fox jumps over the lazy dog; nothing secret here.",
        "signing key " + digest[:40],  # a commit SHA after a lone key label
        "Token refresh failed after 3 retries",
        "the password reset_instructions_for_users page",
    )


BENIGN = benign_corpus()


# --- one sample per rule of rules.toml, from the rule's own format -----------------------------------

def _generate(pattern: str, rng: random.Random) -> str:
    """A string the pattern matches: each class and repeat drawn at random (lookarounds are skipped)."""
    try:
        import re._parser as sre  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - older Pythons
        import sre_parse as sre  # type: ignore[no-redef]
    import re._constants as c  # type: ignore[import-not-found]

    def chars(items) -> list[str]:
        out: list[str] = []
        for op, av in items:
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.RANGE:
                out.extend(chr(x) for x in range(av[0], av[1] + 1))
            elif op is c.CATEGORY:
                out.extend(ALNUM + "_" if av is c.CATEGORY_WORD else DIGITS if av is c.CATEGORY_DIGIT else " ")
        return out

    def walk(items) -> str:
        text = []
        for op, av in items:
            if op is c.LITERAL:
                text.append(chr(av))
            elif op is c.IN:
                text.append(rng.choice(chars(av)))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                lo, hi, sub = av
                n = rng.randint(lo, min(hi, lo + 8))
                text.extend(walk(sub) for _ in range(n))
            elif op is c.SUBPATTERN:
                text.append(walk(av[-1]))
            elif op is c.BRANCH:
                text.append(walk(rng.choice(av[1])))
            elif op is c.ANY:
                text.append(rng.choice(ALNUM))
        return "".join(text)

    return walk(sre.parse(pattern))


@lru_cache(maxsize=1)
def rule_samples() -> tuple[tuple[str, str, str, str], ...]:
    """(rule id, kind, secret, text) for every token and service rule: the rule must mask it with its kind."""
    data = tomllib.loads(resources.files("agentwatch.record.redact").joinpath("rules.toml").read_text("utf-8"))
    out = []
    for spec in data.get("token", ()):
        rng = random.Random(f"agentwatch-rule:{spec['id']}")
        prefix = spec["prefixes"][0]
        secret = _generate(spec.get("lead", ""), rng) + prefix + _generate(spec["body"], rng)
        context = "secret_key = '{s}'" if spec.get("keywords") == ["secret_key"] else (
            f"{spec['keywords'][0]} {{s}}" if spec.get("keywords") else "found {s} in the output")
        out.append((spec["id"], spec["kind"], secret, context.replace("{s}", secret)))
    for spec in data.get("context", ()):
        rng = random.Random(f"agentwatch-rule:{spec['id']}")
        secret = _generate(spec["value"], rng)
        out.append((spec["id"], spec["kind"], secret, f"{spec['names'][0]}_value = \"{secret}\""))
    return tuple(out)


def format_samples() -> tuple[tuple[str, str, str, str], ...]:
    """(label, path, secret, text): a plain-phrase secret in each format the text layer reads.

    The secret is a phrase with no key's shape (letters only, or words), so only the
    format-aware layer (formats.py) or the flag table (commands.toml) can find it.
    """
    w = "correcthorse" + fake("fmt", LOWER, 8)
    p = fake("shape", UPPER, 2) + "@" + fake("shape", LOWER, 5) + "#" + fake("shape", DIGITS, 3)  # no name beside it
    f = fake("filler", UPPER, 2) + fake("filler", LOWER, 4) + fake("filler", DIGITS, 4)  # beside a filler word
    return (
        ("ini", "/etc/app/settings.ini", w, f"[db]\nhost = db.internal\npassword = {w}\n"),
        ("env", "/srv/app/.env", w, f"DEBUG=1\nmysql_pwd={w}\n"),
        ("properties", "/srv/app/application.properties", w, f"server.port=8080\nspring.datasource.password={w}\n"),
        ("yaml", "/srv/app/config.yml", w, f"db:\n  user: app\n  password: {w}\n"),
        ("yaml-pairs", "/srv/k8s/deploy.yaml", w, f"env:\n  - name: DB_PASSWORD\n    value: {w}\n"),
        ("json-output", "", w, "Parameters:\n" + json.dumps({"Parameter": {"Name": "/prod/db/password", "Value": w}})),
        ("plist", "/x/Info.plist", w, f"<dict>\n<key>password</key>\n<string>{w}</string>\n</dict>"),
        ("php", "/var/www/wp-config.php", w, f"<?php\ndefine('DB_PASSWORD', '{w}');\n"),
        ("python", "/srv/app/settings.py", w, f'import os\nPASSWORD = os.getenv("DB_PASSWORD", "{w}")\n'),
        ("go", "/srv/app/main.go", w, f'package main\nconst user, password string = "app", "{w}"\n'),
        ("htpasswd", "/var/www/.htpasswd", "$apr1$" + fake("ht", ALNUM, 8) + "$" + fake("ht2", ALNUM, 22),
         "admin:$apr1$" + fake("ht", ALNUM, 8) + "$" + fake("ht2", ALNUM, 22) + "\n"),
        ("pgpass", "/home/u/.pgpass", w, f"db.internal:5432:app:app:{w}\n"),
        ("curl", "", w, f"curl --tlspassword {w} https://example.invalid/"),
        ("wget", "", w, f"wget --http-password={w} https://example.invalid/f"),
        ("kubectl", "", w, f"kubectl create secret generic db --from-literal=pwd={w}"),
        ("keytool", "", w, f"keytool -importkeystore -srcstorepass {w} -srckeystore a.p12"),
        ("sqlcmd", "", w, f"sqlcmd -S db -U sa -P {w} -Q 'select 1'"),
        ("redis-cli", "", w, f"redis-cli -h cache -a {w} ping"),
        ("jdbc-call", "/srv/app/Db.java", w, f'c = DriverManager.getConnection("jdbc:postgresql://db/app", "app", "{w}");'),
        ("setter", "/srv/app/Mail.java", w, f'session.setPassword("{w}");'),
        ("pass-pair", "/etc/app/mail.yml", w, f"smtp:\n  user: app\n  pass: {w}\n"),
        ("npmrc", "/home/u/.npmrc", w, f"//npm.example.invalid/:_password={w}\n"),
        ("other-language", "/srv/app/Vault.java", w, f'v.setMotDePasse("{w}");\nv.passwort = "{w}";'),
        ("secret-data-first", "", w, f"apiVersion: v1\ndata:\n  db: {w}\nkind: Secret\n"),
        ("password-shape", "", p, f"Default: {p}\n"),
        ("decoded-key", "/srv/app/Crypto.cs", w, f'string k = "{w}";\nbyte[] key = Convert.FromBase64String(k);'),
        ("filler-beside-secret", "/srv/app/.env", "Example" + f, f"DB_PASSWORD=Example{f}\n"),
        ("query-table", "", w, f" usename |   passwd\n---------+-------------\n app     | {w}\n(1 row)\n"),
        ("box-listing", "", w, f"\u2502 NAME        \u2502 VALUE   \u2502\n\u2502 DB_PASSWORD \u2502 {w} \u2502\n"),
    )


# Benign text in the formats the layer reads: references and placeholders keep their bytes.
FORMAT_BENIGN = (
    "db:\n  user: app\n  password: ${DB_PASSWORD}\n",
    "[db]\nhost = db\npassword = {DB_PASSWORD}\n",
    "MasterUserPassword:\n  Type: String\nPassword: !Ref MasterUserPassword\n",
    'url = "https://api.example.invalid/?apikey=%s" % key',
    "auth: _t.AuthType = None",
    "openssl rsa -in k.pem -passin env:KEY_PASS -out k2.pem",
    "curl -u \"$USER:$PASS\" https://example.invalid/",
    '{\n  "password": "Enter your password",\n  "password_hint": "Use at least 8 characters."\n}\n',
    "SECRET_KEY = os.environ['SECRET_KEY']",
    "CHECKS = {\n    'Slack Token': 'CHECK_A_14',\n}\n",
    '{"dependencies": {"jsonwebtoken": "^9.0.2"}}',
    '{"data": {"viewer": {"id": "MDQ6VXNlcjU4MzIzMQ=="}}}',
    "PWD=/home/dev/project\nOLDPWD=/home/dev\n",
    "see main.py#L42 and Sheet1!A1:B2; thanks @Reviewer2! ~73K-char, **Python3**, sr_RS.UTF-8@latin",
    'price = "$0.014"; pkg = "React@18.2.0"; ref = "Outer$Inner1.class"; to = "Dev1@Example.com"',
    "| Variable | Default | Description |\n| --- | --- | --- |\n| `ROOM_SECRET` | unset | Invite secret. |\n"
    "| `API_TOKEN` | `${API_TOKEN}` | The token for the API. |\n",
)
