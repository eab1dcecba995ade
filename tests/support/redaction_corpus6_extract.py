"""Build the sixth held-out redaction corpus (tests/fixtures/redaction/corpus6.json.gz).

The first five corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets and
checkov (Skyscanner/whispers and Plazmaz/leaky-repo were set aside as the source of the
formats issue #33 describes). This one comes from six other projects, none of them read
by an earlier corpus, each labelled by its upstream:

- SonarSource/sonar-text, the secrets rules' own examples
  (`sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration/*.yaml`):
  each example is a snippet of a real file (env, YAML, code in several languages,
  connection strings, command lines); `containsSecret: true` is a positive whose secret
  is the example's `match`, `containsSecret: false` a negative. The `${common/...}`
  include lines (post-filter lists, not examples) are dropped before parsing.
- securego/gosec, `testutils/g101_samples.go` (rule G101, hard-coded credentials): each
  single-file Go sample with an expected issue count above 0 is a positive, whose secrets
  are its string literals of 8 or more characters without a space (a URL's password, the
  token after `Bearer: `); a sample expecting 0 is a negative, except those that expect 0
  only because a `#nosec` / `gosec:disable` comment switches the rule off.
- PyCQA/bandit, `examples/hardcoded-passwords.py` (B105-B107; its functional test checks
  the counts): each `# Possible hardcoded password: 'X'` comment labels the next code line
  that holds `X` quoted; the file and each labelled line are positives (`''` and `None`
  findings hold no secret and are not read).
- ZupIT/horusec, `internal/services/engines/leaks/samples.go` with `rules_test.go`: each
  vulnerable sample is a positive whose secret is the value in its expected finding's
  `CodeSample`; each safe sample is a negative. The findings of OAuth client ids and a
  Google OAuth client name are not secrets by this project's threat model, as in the
  earlier corpora.
- thoughtworks/talisman, `detector/pattern/pattern_detector_test.go`
  `TestShouldDetectPasswordPatterns`: its generated inputs (seven secret words in eleven
  shapes, written out here from the test's own loop and checked against its source) and
  its literal inputs are positives (the value after the name), its
  `shouldFailDetectionOfSecretPattern` inputs negatives.
- Benign: ordinary files of the same repositories outside their tests and test data
  (build, CI and tool configuration, scripts, Dockerfiles), each whole and each line that
  names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit (command output an agent
  reads). None holds a secret.

A secret is kept only where the scoring can judge it: where masking every occurrence of
it in the text would leave none of it (in the 12-character pieces the earlier corpora use
for secrets of 12 or more, as a whole word for shorter ones) in the text or in the
carrier around it (a `mysql://airflow:airflow@mysql/airflow` password that is also the
user's name is not). Samples are labelled with the format of their text (from the file
name where upstream gives one, else from the text); the scorer
(tests/support/redaction_corpus6.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#rule/example-n`, `#line-n`, `#sample-n`).

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus6_extract.py --sonar-text DIR --gosec DIR --bandit DIR \\
        --horusec DIR --talisman DIR

where each DIR is a git clone or bare mirror (at the commit the fixture names). PyYAML
reads sonar-text's YAML.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, git  # noqa: E402

OUT = HERE / "corpus6.json.gz"
SONAR_DIR = "sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration"
GOSEC_SAMPLES = "testutils/g101_samples.go"
BANDIT_EXAMPLE = "examples/hardcoded-passwords.py"
HORUSEC_SAMPLES = "internal/services/engines/leaks/samples.go"
HORUSEC_TEST = "internal/services/engines/leaks/rules_test.go"
TALISMAN_TEST = "detector/pattern/pattern_detector_test.go"
_NAMES = {"SonarSource/sonar-text": "sonar", "SonarSource/sonar-iac": "sonar-iac", "securego/gosec": "gosec",
          "PyCQA/bandit": "bandit", "ZupIT/horusec": "horusec", "thoughtworks/talisman": "talisman"}
SONAR_IAC_FILES = (
    "iac-extensions/docker/src/test/resources/checks/SecretsHandlingCheck/SecretsHandlingCheck_arg.dockerfile",
    "iac-extensions/docker/src/test/resources/checks/SecretsHandlingCheck/SecretsHandlingCheck_env.dockerfile",
    "iac-extensions/kubernetes/src/test/resources/checks/HardcodedCredentialsCheck/hardcoded_credentials_check.yaml",
    "iac-extensions/kubernetes/src/test/resources/checks/HardcodedSecretsCheck/hardcoded_secrets_check.yaml",
    "iac-extensions/jvm-framework-config/src/test/resources/checks/HardcodedSecretsCheck/spring/"
    "HardcodedSecretsCheck.properties",
    "iac-extensions/jvm-framework-config/src/test/resources/checks/HardcodedSecretsCheck/spring/"
    "HardcodedSecretsCheck.yaml",
    "iac-extensions/arm/src/test/resources/checks/HardCodedCredentialsCheck/HardCodedCredentialsCheck.bicep",
)
# horusec findings that name a public identifier, not a secret (the earlier corpora's threat model).
HORUSEC_NOT_SECRET = {
    "HS-LEAKS-5": "a Facebook app (OAuth client) id is public: it is sent to every browser that logs in",
    "HS-LEAKS-7": "a Twitter OAuth client id is public",
    "HS-LEAKS-9": "a LinkedIn OAuth client id is public",
    "HS-LEAKS-14": "a Google OAuth client name (`*.apps.googleusercontent.com`) is public",
}
# A carrier's own text around a sample (tests/support/redaction_corpus6.py `payload`): a secret found
# there as a word could never be judged masked.
CARRIER_WORDS = ("session_id corpus6 hook_event_name PostToolUse cwd /home/dev/project tool_name Bash "
                 "tool_input command description write the file tool_response stdout stderr interrupted "
                 "cat EOF Read file_path type text file filePath content numLines "
                 "mcp__filesystem__write_file path Successfully wrote to")
_MASK = re.compile(r"\[REDACTED:[^\]\s]*\]")
_PIECES = re.compile(r"[^A-Za-z0-9+/=_~.-]+")


# -- judging a secret --------------------------------------------------------------------------------

def leaked(stored: str, secret: str) -> bool:
    """Is the secret still in the stored text? A piece of 12 characters of a long secret (the
    earlier corpora's rule); a short secret as a whole word, masks set aside."""
    stored = _MASK.sub(" ", stored)
    pieces = [p for p in _PIECES.split(secret) if len(p) >= 12]
    if pieces:
        return any(p[i:i + 12] in stored for p in pieces for i in range(len(p) - 11))
    bare = secret.strip("\"'")
    return bool(bare) and re.search(rf"(?<![A-Za-z0-9_]){re.escape(bare)}(?![A-Za-z0-9_])", stored) is not None


def scorable(text: str, path: str, secret: str, uses: int = 1) -> bool:
    """Can the scoring judge the secret in this text? Masking every occurrence of it must leave
    nothing of it in the text or in the carrier around it; a short secret must stand as a word
    exactly `uses` times (the times upstream labels it: more, and it is a user name or a word too)."""
    bare = secret.strip("\"'")
    if not bare or secret not in text:
        return False
    if not [p for p in _PIECES.split(secret) if len(p) >= 12]:
        words = re.findall(rf"(?<![A-Za-z0-9_]){re.escape(bare)}(?![A-Za-z0-9_])", text)
        if len(words) != uses:
            return False
    return not leaked(text.replace(secret, "\x00") + "\n" + path + "\n" + CARRIER_WORDS, secret)


# -- formats ---------------------------------------------------------------------------------------------

_EXT = {"yml": "yaml", "yaml": "yaml", "json": "json", "toml": "toml", "ini": "ini", "cfg": "ini",
        "properties": "properties", "xml": "xml", "csproj": "xml", "props": "xml", "tf": "hcl", "hcl": "hcl",
        "py": "python", "go": "go", "js": "javascript", "ts": "javascript", "mjs": "javascript",
        "java": "java", "kt": "kotlin", "gradle": "gradle", "kts": "gradle", "cs": "csharp", "php": "php",
        "rb": "ruby", "sh": "shell", "bash": "shell", "ps1": "shell", "env": "env", "md": "markdown",
        "rst": "markdown", "txt": "text", "s3cfg": "ini", "pem": "pem", "key": "pem", "sql": "sql",
        "dockerfile": "dockerfile", "makefile": "makefile", "mk": "makefile", "gitignore": "text",
        "mod": "text", "sum": "text", "bicep": "bicep"}


def format_of(path: str, text: str) -> str:
    """The format a file name names, else the one the text shows (the per-class tables' rows)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name.startswith("dockerfile") or name.endswith(".dockerfile"):
        return "dockerfile"
    if name in ("makefile", "gnumakefile"):
        return "makefile"
    if name.startswith(".env") or name.endswith(".env"):
        return "env"
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if ext in _EXT and not name.startswith("snippet."):
        return _EXT[ext]
    return sniff(text)


_SHELL_START = re.compile(
    r"^(\$ |sudo |curl |wget |mysql\w* |psql |pg_\w+ |docker |kubectl |git |ssh |redis-cli |mongo\w* |echo |export |"
    r"npm |pip |az |aws |gcloud |helm |sqlcmd |migrate |python3? -m |java |if \[|for \w+ in |[A-Z_]+=\S* [a-z])")


def sniff(text: str) -> str:
    """The format a snippet's text shows, comment lines set aside (`#`, `//`)."""
    lines = [ln.strip() for ln in text.strip().splitlines()
             if ln.strip() and not ln.strip().startswith(("#", "//"))] or [text.strip()]
    s = "\n".join(lines)
    first = lines[0] if lines else ""
    if s.startswith("-----BEGIN") or re.match(r"^\S+\s*[:=]\s*['\"]?-----BEGIN", s):
        return "pem"
    if s.startswith("<?php") or re.search(r"\bdefine\(\s*['\"]|^\$\w+\s*(\[[^\]]*\])?\s*=|\barray\(", s, re.M):
        return "php"
    if s.startswith("<") and s.endswith(">"):
        return "xml"
    if s.startswith(("{", "[")) or re.match(r'^"[\w.:-]+"\s*:', first):
        return "json"
    if re.match(r"^machine \S+", first):
        return "netrc"
    if _SHELL_START.match(first) or re.match(r"^[a-z][\w-]* (\S+ )*-{1,2}[A-Za-z]", first):
        return "shell"
    if re.match(r"^(FROM|RUN|ENV|ARG|CMD|ENTRYPOINT)\s", first):
        return "dockerfile"
    if re.search(r"^(resource|variable|provider|backend|module|data)\s+\"", s, re.M) or re.search(
            r"^\w+\s*=\s*\{$", s, re.M):
        return "hcl"
    if re.search(r"\bfunc\b|:=|^package\s+\w+$|\bfmt\.", s, re.M):
        return "go"
    if re.search(r"^(def|class|import|from)\s|\bos\.(environ|getenv)|\bself\.|\bNone\b|\bTrue\b|^\w+ = r?['\"]",
                 s, re.M) and not re.search(r";$", s, re.M):
        return "python"
    if re.search(r"\b(const|let|var)\s+\w+\s*=|=>|\brequire\(|process\.env|\bmodule\.exports\b", s):
        return "javascript"
    if re.search(r"\b(public|private|static|final|String|new|val)\s+\w|;$", s, re.M):
        return "java-like"
    if re.match(r"^[\w.]+\(.*\)$", s, re.S):
        return "code"
    if lines and all(re.match(r"^(export\s+)?[A-Za-z_][A-Za-z0-9_]*=", ln) for ln in lines):
        return "env"
    if re.search(r"^\[[^\]]+\]$", s, re.M):
        return "ini"
    if lines and all(re.match(r"^-?\s*[\w.\"'-]+\s*:(\s|$)|^-\s", ln) for ln in lines):
        return "yaml"
    if re.search(r"(?i)(server|data source|driver|uid|user id)=[^;]*;", s):
        return "connection-string"
    if lines and all(re.match(r"^[\w./:-]+\s*[=:]", ln) for ln in lines):
        return "properties"
    if re.search(r"^[\w.-]+\s*:\s+\S", s, re.M):
        return "yaml"
    if re.match(r"^['\"]?[a-z][a-z0-9+.-]*://", s):
        return "url"
    if len(lines) == 1 and not re.search(r"\s", s):
        return "token"
    return "text"


_PATH = {"env": ".env", "ini": "config.ini", "properties": "application.properties", "yaml": "config.yaml",
         "toml": "config.toml", "json": "config.json", "xml": "config.xml", "hcl": "main.tf",
         "python": "settings.py", "go": "main.go", "javascript": "index.js", "java-like": "Main.java",
         "java": "Main.java", "csharp": "Program.cs", "php": "config.php", "ruby": "config.rb",
         "shell": "run.sh", "dockerfile": "Dockerfile", "markdown": "README.md", "pem": "key.pem",
         "url": "url.txt", "text": "notes.txt", "netrc": ".netrc", "code": "snippet.txt",
         "connection-string": "connection.txt", "token": "token.txt", "sql": "schema.sql", "makefile": "Makefile"}


def path_for(fmt: str, file_name: str | None = None) -> str:
    """The path a snippet is stored under in its carriers: upstream's file name, else one its format names."""
    return file_name or "snippets/" + _PATH[fmt]


# -- sources -------------------------------------------------------------------------------------------------

def _head(repo: str) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def _show(repo: str, rev: str, path: str) -> str:
    return git(repo, "show", f"{rev}:{path}")


def _sample(kind: str, source: str, path: str, text: str, secrets: list[str] | None = None,
            fmt: str | None = None, reason: str | None = None) -> dict:
    fmt = fmt or format_of(path, text)
    s = {"set": kind, "type": _NAMES[source.split("@", 1)[0]] + ":" + fmt, "format": fmt,
         "source": source, "path": path, "text": text}
    if secrets is not None:
        s["secrets"] = secrets
    if reason:
        s["reason"] = reason
    return s


def _positive(source: str, path: str, text: str, secrets: list[str], left_out: Counter,
              fmt: str | None = None, kind: str = "upstream-positive", reason: str | None = None) -> list[dict]:
    kept = sorted({x for x in secrets if scorable(text, path, x, secrets.count(x))})
    left_out["a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)"] += (
        len(set(secrets)) - len(kept))
    if not kept:
        left_out["a positive with no secret left to judge"] += 1
        return []
    return [_sample(kind, source, path, text, kept, fmt, reason)]


def sonar_text(repo: str, left_out: Counter) -> list[dict]:
    import yaml

    head = _head(repo)
    upstream = f"SonarSource/sonar-text@{head[:12]}"
    samples: list[dict] = []
    for path in sorted(git(repo, "ls-tree", "--name-only", head, SONAR_DIR + "/").split()):
        if not path.endswith(".yaml"):
            continue
        raw = "\n".join(ln for ln in _show(repo, head, path).splitlines() if not ln.strip().startswith("${"))
        for rule in yaml.safe_load(raw)["provider"]["rules"]:
            for n, ex in enumerate(rule.get("examples") or [], 1):
                text = ex["text"].rstrip("\n")
                fmt = format_of(ex["fileName"], text) if ex.get("fileName") else sniff(text)
                where = path_for(fmt, ex.get("fileName"))
                source = f"{upstream}:{path}#{rule['id']}/example-{n}"
                if ex["containsSecret"]:
                    samples += _positive(source, where, text, [_pem_body(text, ex["match"].strip())], left_out, fmt)
                else:
                    samples.append(_sample("upstream-negative", source, where, text, fmt=fmt))
    return samples


def _pem_body(text: str, match: str) -> str:
    """A match that is a PEM block's first line stands for the block: its secret is the body."""
    header = match.strip().strip('"')
    if not header.startswith("-----BEGIN") or "-----END" in header:
        return match
    start = text.index(header) + len(header)
    return text[start:text.index("-----END", start)].strip().strip('"').removeprefix("\\n").removesuffix("\\n")


_GO_SAMPLE = re.compile(r"\{\[\]string\{((?:`[^`]*`,?\s*)+)\},\s*(\d+),\s*gosec\.NewConfig\(\)\}")
_GO_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def _go_secrets(code: str) -> list[str]:
    out = []
    for line in code.splitlines():
        if line.strip().startswith(("import", "package", "//")):
            continue
        for lit in _GO_LITERAL.findall(re.sub(r'"[^"]*"\s*:', "", line)):  # a map key names, it holds nothing
            m = re.search(r"://[^:/\s]+:([^@\s]+)@", lit)
            if m:
                out.append(m.group(1))
                continue
            lit = lit.removeprefix("Bearer: ")
            if len(lit) >= 8 and " " not in lit and "%" not in lit:
                out.append(lit)
    return out


def gosec(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"securego/gosec@{head[:12]}"
    samples = []
    src = _show(repo, head, GOSEC_SAMPLES)
    for n, m in enumerate(_GO_SAMPLE.finditer(src), 1):
        files = re.findall(r"`([^`]*)`", m.group(1))
        if len(files) != 1:
            left_out["gosec sample of several files"] += 1
            continue
        code = files[0].strip("\n")
        source = f"{upstream}:{GOSEC_SAMPLES}#sample-{n}"
        if int(m.group(2)) > 0:
            samples += _positive(source, "main.go", code, _go_secrets(code), left_out, "go")
        elif re.search(r"#nosec|gosec:disable", code):
            left_out["gosec negative only because a comment switches the rule off"] += 1
        else:
            samples.append(_sample("upstream-negative", source, "main.go", code, fmt="go"))
    return samples


def bandit(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"PyCQA/bandit@{head[:12]}"
    text = _show(repo, head, BANDIT_EXAMPLE).rstrip("\n")
    lines = text.splitlines()
    labelled: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*# Possible hardcoded password: '(.*)'\s*$", line)
        if not m or not m.group(1):
            continue
        for j in range(i + 1, len(lines)):
            if not lines[j].strip().startswith("#") and re.search(rf"""(['"]){re.escape(m.group(1))}\1""", lines[j]):
                labelled.append((j + 1, m.group(1)))
                break
    source = f"{upstream}:{BANDIT_EXAMPLE}"
    # In the whole file each secret stands twice: in the code and in the comment that labels it.
    samples = _positive(source, BANDIT_EXAMPLE, text, [s for _, s in labelled for _twice in (0, 1)], left_out,
                        "python")
    for number, secret in labelled:
        samples += _positive(f"{source}#line-{number}", BANDIT_EXAMPLE, lines[number - 1], [secret], left_out,
                             "python")
    return samples


_HS_CASE = re.compile(r'Name:\s*"(HS-LEAKS-\d+)",.*?Src:\s*(\w+),(.*?)\n\t\t\},', re.S)
_HS_CONST = re.compile(r"\t(Sample\w+) = `([^`]*)`")


def _value_of(code_sample: str) -> str:
    """The value in a finding's line: after the name's `:` or `=`, unquoted; a define's second argument."""
    m = re.search(r"define\('[^']+',\s*'([^']*)'\)", code_sample)
    if m:
        return m.group(1)
    m = re.search(r"://[^:/\s]+:([^@\s]+)@", code_sample)
    if m:
        return m.group(1)
    m = re.search(r"""[:=]\s*(['"])(.*)\1\s*$""", code_sample)
    if m:
        return m.group(2)
    raise ValueError(code_sample)


def horusec(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"ZupIT/horusec@{head[:12]}"
    consts = dict(_HS_CONST.findall(_show(repo, head, HORUSEC_SAMPLES)))
    test = _show(repo, head, HORUSEC_TEST)
    safe_at = test.index("func TestRulesSafeCode")
    samples = []
    for m in _HS_CASE.finditer(test):
        rule, var, body = m.groups()
        text = consts[var].strip("\n")
        path = f"{rule}.test"
        source = f"{upstream}:{HORUSEC_SAMPLES}#{var}"
        fmt = sniff(text)
        if m.start() > safe_at:
            samples.append(_sample("upstream-negative", source, path, text, fmt=fmt))
            continue
        found = [_unquote_go(c) for c in re.findall(r'CodeSample:\s*("(?:[^"\\]|\\.)*"|`[^`]*`)', body)]
        secrets = [_value_of(c) for c in found]
        if rule == "HS-LEAKS-28":  # WordPress's own placeholder for AUTH_KEY is no secret; DB_PASSWORD is
            secrets = [s for s in secrets if s != "put your unique phrase here"]
            left_out["horusec finding of a placeholder (`put your unique phrase here`)"] += 1
        if rule in HORUSEC_NOT_SECRET:
            samples += _positive(source, path, text, secrets, left_out, fmt, "not-secret", HORUSEC_NOT_SECRET[rule])
        else:
            samples += _positive(source, path, text, secrets, left_out, fmt)
    return samples


def _unquote_go(lit: str) -> str:
    return json.loads(lit) if lit.startswith('"') else lit[1:-1]


# talisman's TestShouldDetectPasswordPatterns, its loop written out: (shape, how the word is written).
TALISMAN_WORDS = ("password", "secret", "key", "pwd", "pass", "pword", "passphrase")
TALISMAN_SHAPES = (
    ("{T}:UnsafeString", "UnsafeString"),
    ("{w}=UnsafeString", "UnsafeString"),
    (".{w}=randomStringGoesHere}}", "randomStringGoesHere"),
    (":{w} randomStringGoesHere", "randomStringGoesHere"),
    ('{w} ,"randomStringGoesHere"', "randomStringGoesHere"),
    ("'{w}' ,\"randomStringGoesHere\"", "randomStringGoesHere"),
    ('"{w}" ,"randomStringGoesHere"', "randomStringGoesHere"),
    ('"SERVER_{U}" : UnsafeString', "UnsafeString"),
    ("{w}2-string : UnsafeString", "UnsafeString"),
    ("<{w} data=123> randomStringGoesHere </{w}>", "randomStringGoesHere"),
    ("<admin {w}> randomStringGoesHere </my{w}>", "randomStringGoesHere"),
)
# The test's own spelling of each shape (checked against its source, so the list above stays its loop).
_TALISMAN_GO = ('strings.ToTitle(values[i])+":UnsafeString"', 'values[i]+"=UnsafeString"',
                '"."+values[i]+"=randomStringGoesHere}"', '":"+values[i]+" randomStringGoesHere"',
                'values[i]+" ,\\"randomStringGoesHere\\""', '"\'"+values[i]+"\' ,\\"randomStringGoesHere\\""',
                '"\\""+values[i]+"\\" ,\\"randomStringGoesHere\\""',
                '"\\"SERVER_"+strings.ToUpper(values[i])+"\\" : UnsafeString"',
                'values[i]+"2-string : UnsafeString"',
                '"<"+values[i]+" data=123> randomStringGoesHere </"+values[i]+">"',
                '"<admin "+values[i]+"> randomStringGoesHere </my"+values[i]+">"')


def talisman(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"thoughtworks/talisman@{head[:12]}"
    src = _show(repo, head, TALISMAN_TEST)
    body = src[src.index("func TestShouldDetectPasswordPatterns"):src.index("func TestShouldIgnorePasswordPatterns")]
    words = re.search(r"values := \[7\]string\{([^}]*)\}", body).group(1)
    assert tuple(re.findall(r'"(\w+)"', words)) == TALISMAN_WORDS, words
    for go in _TALISMAN_GO:
        assert go in body, go
    source = f"{upstream}:{TALISMAN_TEST}#TestShouldDetectPasswordPatterns"
    samples = []
    for w in TALISMAN_WORDS:
        for k, (shape, secret) in enumerate(TALISMAN_SHAPES, 1):
            text = shape.format(w=w, T=w.upper(), U=w.upper())
            samples += _positive(f"{source}/{w}-shape-{k}", "secret.txt", text, [secret], left_out, sniff(text))
    calls = re.findall(r"should(Pass|Fail)DetectionOfSecretPattern\(filename,\s*\[\]byte\(((?:\"(?:[^\"\\]|\\.)*\")|`[^`]*`)\)",
                       body)
    for n, (which, lit) in enumerate(calls, 1):
        text = _unquote_go(lit)
        where = f"{source}/literal-{n}"
        if which == "Fail":
            samples.append(_sample("upstream-negative", where, "secret.txt", text, fmt=sniff(text)))
            continue
        m = re.search(r"-----\n\s*(\S+)\n|>([^<]+)<|[=:]\s*(\S+)$", text)
        if not m:
            left_out["talisman input with no value (`AWS key :`)"] += 1
            continue
        samples += _positive(where, "secret.txt", text, [next(g for g in m.groups() if g).strip()], left_out,
                             sniff(text))
    return samples


_IAC_MARK = re.compile(r"\s*(#|//)\s*Noncompliant(@\+(\d+))?.*$")
_IAC_NOTE = re.compile(r"^\s*(#|//)\s*(\^|Noncompliant|Compliant)")
_IAC_VALUE = re.compile(r"""^\s*(?:-\s+)?(?:(?:ENV|ARG)\s+)?[\w.\[\]"'-]+\s*(?:=|:\s|\s)\s*(?P<v>.*?)\s*$""")


def _iac_lines(text: str) -> tuple[list[str], list[int]]:
    """The file without its test annotations, and the (1-based) lines of it an issue is expected on."""
    out: list[str] = []
    marked: list[int] = []
    pending: dict[int, bool] = {}
    for line in text.splitlines():
        m = _IAC_MARK.search(line)
        if m and not line[:m.start()].strip():  # `# Noncompliant@+N` alone: the N-th code line below
            pending[len(out) + int(m.group(3) or 0)] = True
            continue
        if _IAC_NOTE.match(line):
            continue
        if m:
            line = line[:m.start()]
            marked.append(len(out) + 1)
        out.append(line.rstrip())
        if pending.pop(len(out), False):
            marked.append(len(out))
    return out, marked


def _iac_secret(line: str) -> str:
    """The value an issue line holds: a URL's password, else what follows the name, unquoted."""
    m = re.search(r"://[^:/@\s]+:([^@\s]+)@", line) or re.search(r"[?&]password=([^&\s]+)", line)
    if m:
        return m.group(1)
    m = _IAC_VALUE.match(line)
    return m.group("v").strip("'\"") if m else ""


def _yaml_context(lines: list[str], i: int) -> str:
    """A YAML line with the lines it sits under (each shallower line above it): a snippet that still
    names what the value is."""
    keep = [lines[i]]
    depth = len(lines[i]) - len(lines[i].lstrip(" -")) if lines[i].lstrip().startswith("- ") else (
        len(lines[i]) - len(lines[i].lstrip()))
    for j in range(i - 1, -1, -1):
        ln = lines[j]
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        d = len(ln) - len(ln.lstrip())
        if d < depth:
            keep.append(ln)
            depth = d
        if d == 0:
            break
    return "\n".join(reversed(keep))


def sonar_iac(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"SonarSource/sonar-iac@{head[:12]}"
    samples: list[dict] = []
    for path in SONAR_IAC_FILES:
        lines, marked = _iac_lines(_show(repo, head, path))
        fmt = format_of(path, "")
        name = path.rsplit("/", 1)[-1]
        source = f"{upstream}:{path}"
        secrets: list[str] = []
        for i, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith(("#", "//")):
                continue
            text = _yaml_context(lines, i - 1) if fmt == "yaml" else line.strip()
            if i in marked:
                value = _iac_secret(line)
                if not value or "$" in value:
                    left_out["sonar-iac issue on a name whose value is empty or a reference (no secret)"] += 1
                    continue
                secrets.append(value)
                samples += _positive(f"{source}#line-{i}", name, text, [value], left_out, fmt)
            elif re.search(r"[=:]\s*\S|^(ENV|ARG)\s+\S+\s+\S", line.strip()):
                samples.append(_sample("upstream-negative", f"{source}#line-{i}", name, text, fmt=fmt))
        whole = "\n".join(lines).strip("\n")
        if len(lines) <= _MAX_LINES:
            samples += _positive(source, name, whole, secrets, left_out, fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "sonar": (".github/workflows/build.yml", "build-logic/common/.github/workflows/build.yml",
              "build-logic/common/.github/workflows/shadow-scan.yml", "build.gradle.kts", "gradle.properties",
              "gradle/libs.versions.toml", "gradle/wrapper/gradle-wrapper.properties", "mise.toml",
              "settings.gradle.kts", "sonar-text-plugin/build.gradle.kts", "secretSpecificationInclusionGenerator.sh",
              "build-logic/common/gradle-modules/src/main/kotlin/"
              "org.sonarsource.cloud-native.artifactory-configuration.gradle.kts",
              "build-logic/common/gradle-modules/src/main/kotlin/"
              "org.sonarsource.cloud-native.publishing-configuration.gradle.kts",
              "sonar-text-plugin/sonarpedia-secrets/sonarpedia.json",
              "sonar-text-plugin/src/main/resources/org/sonar/l10n/secrets/rules/secrets/S6290.json",
              "sonar-text-plugin/src/main/resources/org/sonar/l10n/secrets/rules/secrets/S6334.json"),
    "gosec": (".github/workflows/ci.yml", ".github/workflows/release.yml", ".github/workflows/scan.yml",
              ".github/workflows/action-integration.yml", ".golangci.yml", ".goreleaser.yml", "Dockerfile",
              "Makefile", "action.yml", "entrypoint.sh", "install.sh", "perf-diff.sh", "renovate.json",
              ".github/benchmarks/taint_benchmark_baseline.env"),
    "bandit": (".github/workflows/pythonpackage.yml", ".github/workflows/publish-to-pypi.yml",
               ".github/workflows/publish-to-test-pypi.yml", ".github/workflows/build-publish-image.yml",
               ".github/workflows/dependency-review.yml", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml",
               ".readthedocs.yaml", "docker/Dockerfile", "pylintrc", "setup.cfg", "tox.ini", "funding.json"),
    "horusec": (".github/workflows/build.yaml", ".github/workflows/e2e.yml", ".github/workflows/lint.yml",
                ".github/workflows/release-final.yml", ".github/workflows/security.yml", ".github/workflows/test.yml",
                ".golangci.yml", "Makefile", "config/.example-horusec-cli.json", "horusec-config.json",
                "deployments/Dockerfile", "deployments/scripts/install.sh", "goreleaser.yml",
                "internal/services/formatters/leaks/deployments/Dockerfile",
                "internal/services/custom_rules/custom_rules_example.json", "config/config.go",
                "cmd/app/start/start.go"),
    "talisman": (".github/workflows/test-and-coverage.yml", ".github/workflows/release.yaml",
                 ".github/workflows/codeql.yml", ".goreleaser.yaml", ".pre-commit-hooks.yaml", ".talismanrc",
                 "global_install_scripts/install.bash", "global_install_scripts/setup_talisman.bash",
                 "global_install_scripts/talisman_hook_script.bash", "install.sh", "test-install.sh",
                 "third-party/schema-store-talismanrc.json"),
}
_SECRET_WORD = re.compile(r"(?i)pass(word|wd)?|secret|token|credential|\bauth|api[_-]?key|private[_-]?key|\bkey\b")
_MAX_LINES = 200


def benign(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """Ordinary files of each repository (whole, and each line naming a secret word) and its `git log`."""
    samples = []
    for name, repo in repos.items():
        head = _head(repo)
        owner_repo = {"sonar": "SonarSource/sonar-text", "gosec": "securego/gosec", "bandit": "PyCQA/bandit",
                      "horusec": "ZupIT/horusec", "talisman": "thoughtworks/talisman"}[name]
        upstream = f"{owner_repo}@{head[:12]}"
        present = set(git(repo, "ls-tree", "-r", "--name-only", head).split("\n"))
        for path in BENIGN_FILES[name]:
            if path not in present:
                left_out["benign file not at the pinned commit"] += 1
                continue
            text = _show(repo, head, path).rstrip("\n")
            fmt = format_of(path, text)
            source = f"{upstream}:{path}"
            if len(text.splitlines()) <= _MAX_LINES:
                samples.append(_sample("benign", source, path, text, fmt=fmt))
            for i, line in enumerate(text.splitlines(), 1):
                if _SECRET_WORD.search(line) and line.strip() and line.strip() != text.strip():
                    samples.append(_sample("benign", f"{source}#line-{i}", path, line, fmt=fmt))
        log = git(repo, "log", "--format=%H %an %s", "-n", "15", head).rstrip("\n")
        samples.append(_sample("benign", f"{upstream}:(git log --format='%H %an %s' -n 15)", "git-log.txt", log,
                               fmt="command-output"))
    return samples


def _drop_earlier_secrets(samples: list[dict], left_out: Counter) -> list[dict]:
    """A sample of several secrets keeps the ones the earlier corpora do not hold (a sample whose
    every secret is there is left to `write`, which drops it and counts it)."""
    from corpus_extract import _texts

    seen = _texts(5)
    for s in samples:
        fresh = [x for x in s.get("secrets", []) if not (len(x) >= 8 and x in seen)]
        if fresh and len(fresh) < len(s.get("secrets", [])):
            left_out["a secret already in an earlier corpus, dropped from a sample of several"] += (
                len(s["secrets"]) - len(fresh))
            s["secrets"] = fresh
    return samples


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    for name in ("sonar-text", "sonar-iac", "gosec", "bandit", "horusec", "talisman"):
        ap.add_argument("--" + name, required=True)
    args = ap.parse_args(argv)
    left_out: Counter = Counter()
    samples = (sonar_text(args.sonar_text, left_out) + sonar_iac(args.sonar_iac, left_out)
               + gosec(args.gosec, left_out) + bandit(args.bandit, left_out)
               + horusec(args.horusec, left_out) + talisman(args.talisman, left_out))
    samples += benign({"sonar": args.sonar_text, "gosec": args.gosec, "bandit": args.bandit,
                       "horusec": args.horusec, "talisman": args.talisman}, left_out)
    samples = _drop_earlier_secrets(samples, left_out)
    upstream = sorted({s["source"].split(":", 1)[0] for s in samples})
    from corpus_extract import write

    write(OUT, __doc__.split("\n\n")[0], upstream, samples, +left_out, earlier=5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
