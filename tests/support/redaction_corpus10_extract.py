"""Build the tenth held-out redaction corpus (tests/fixtures/redaction/corpus10.json.gz).

The first eight corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, SonarSource sonar-text, sonar-iac, sonar-java, sonar-python
and sonar-php, gosec, bandit, horusec, talisman, awslabs/git-secrets,
eslint-plugin-no-secrets, DevSkim and americanexpress/earlybird (Skyscanner/whispers and
Plazmaz/leaky-repo set aside; Checkmarx/2ms, njsscan, tartufo, find-sec-bugs and Infisical
kept for the ninth). This one comes from five other projects, none of them read by an
earlier corpus, each labelled by its upstream:

- SonarSource/sonar-dotnet (C# and VB.NET, and the JSON and XML configuration files the
  same checks read), SonarSource/sonar-kotlin and SonarSource/SonarJS (JavaScript and
  TypeScript): the test files of their hard-coded credential and secret checks. Sonar's
  check verifier reads a comment on a line (`//`, `'` in VB.NET, `/* */` in JSON,
  `<!-- -->` in XML): `Noncompliant` (the check must raise an issue there;
  `Noncompliant@+N` names the line N below) and `Compliant` / `OK` (it must not). Each
  `Noncompliant` line, its code without the marker comment, is a positive; its secret is
  taken from the line's string literals as in the eighth corpus: the password of a URL's
  user information, else the value after a secret-named `name=` or `name:` inside a
  literal (`User=SA; Password=VALUE`, `AuthToken:VALUE`), else the literal a secret-named
  variable, key, property or argument is given, else the line's one literal that is not a
  name (a literal with a secret word in it, shorter than two characters, naming a hash
  algorithm or an encoding, such as `sha256` or `hex`, or followed by `:` or `=>` as an
  object's key, is a name; the last resort takes no fragment of text, `name=value` pair,
  path or lower-case word); in XML, the text of a secret-named element
  (`<Password>VALUE</Password>`). A line that names no such literal
  (the check followed a variable set elsewhere, or the value is on other lines) is left
  out. Each `Compliant` / `OK` line is a negative, except where upstream's comment says it
  holds a credential all the same (`FN`, another rule's case). Each labelled file of 200
  lines or fewer is also a positive whole, with the secrets found nowhere else in it than
  on its `Noncompliant` lines. SonarJS also tests S2068, S6418 and S6437 with ESLint's
  rule tester: each `valid` case's `code` is a negative, each `invalid` case's `code` a
  positive whose secret is sought line by line as above.
- presidentbeef/brakeman: its tests assert, per test application, the warnings
  `Session secret should not be included in version control` and `Hardcoded value for
  ... in source code` with a file and a line (`assert_warning`), or their absence
  (`assert_no_warning`). The named line of `test/apps/APP/PATH` is a positive (its secret
  the quoted literal on it, or a YAML value), or a negative; the whole file (200 lines or
  fewer) a positive as well.
- Bearer/bearer-rules: the test data of its hard-coded secret and database password rules
  (Go, Java, JavaScript, PHP, Python, Ruby). A comment `bearer:expected RULE` names a
  finding on the next code line: that line is a positive, its secret sought as for Sonar's
  lines, and the file (200 lines or fewer) a positive whole; a test file without one
  expects no finding, and each of its lines that holds a string literal and a secret word
  is a negative.
- Benign: ordinary files of the same repositories outside their tests (CI workflows,
  build and tool configuration, scripts), each whole (up to 200 lines) and each line that
  names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

Upstream's placeholders (`foo`, `foobar`, `oops`, `xxxx`, `test`, `hardcoded`, the user
name `admin`, a bind parameter, a `{Name}` or `${NAME}` reference, a URL path) are not
secrets by this project's threat model and are left out. A secret is kept only where the
scoring can judge it (tests/support/redaction_corpus6_extract.py `scorable`, the sixth
corpus's rule). Samples are labelled with the format of their text;
the scorer (tests/support/redaction_corpus10.py) stores each in the four carriers an agent
produces. Sources read `owner/repo@commit:path` (and `#line-n`, `#valid-n`, `#invalid-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus10_extract.py --sonar-dotnet DIR --sonar-kotlin DIR \\
        --sonarjs DIR --brakeman DIR --bearer DIR

where each DIR is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus8_extract import _HOLDS_ONE_ALL_THE_SAME, _MARK, _TAG, _WORDS  # noqa: E402

OUT = HERE / "corpus10.json.gz"
SESSION = "corpus10"
_NAMES = {"SonarSource/sonar-dotnet": "sonar-dotnet", "SonarSource/sonar-kotlin": "sonar-kotlin",
          "SonarSource/SonarJS": "sonarjs", "presidentbeef/brakeman": "brakeman", "Bearer/bearer-rules": "bearer"}
_OWNER_REPO = {v: k for k, v in _NAMES.items()}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=8)
_DOTNET = "analyzers/tests/SonarAnalyzer.Test/TestCases/"
_DOTNET_CONFIGS = tuple(f"{_DOTNET}{kind}/{rule}/{case}"
                        for kind, case in (("AppSettings", "Valid/AppSettings.json"),
                                           ("AppSettings", "Valid/AppSettings.Custom.json"),
                                           ("AppSettings", "Valid/AppSettings.Development.json"),
                                           ("AppSettings", "Valid/OtherFile.json"),
                                           ("AppSettings", "Corrupt/AppSettings.json"),
                                           ("AppSettings", "UnexpectedContent/AppSettings.json"),
                                           ("LaunchSettings", "Valid/launchSettings.json"),
                                           ("LaunchSettings", "Corrupt/launchSettings.json"),
                                           ("WebConfig", "Valid/Web.config"),
                                           ("WebConfig", "Valid/Web.Release.config"),
                                           ("WebConfig", "Valid/Web.Debug.config"),
                                           ("WebConfig", "Corrupt/Web.config"),
                                           ("WebConfig", "UnexpectedContent/Web.config"))
                        for rule in ("DoNotHardcodeCredentials", "DoNotHardcodeSecrets"))
_JS = "packages/analysis/src/jsts/rules/"
SONAR_FILES = {
    "sonar-dotnet": tuple(_DOTNET + f for f in (
        "DoNotHardcodeCredentials.DefaultValues.cs", "DoNotHardcodeCredentials.DefaultValues.vb",
        "DoNotHardcodeCredentials.DefaultValues.Latest.cs", "DoNotHardcodeCredentials.CustomValues.cs",
        "DoNotHardcodeCredentials.CustomValues.vb", "DoNotHardcodeCredentials.SecureString.cs",
        "DoNotHardcodeCredentials.SecureString.vb", "DoNotHardcodeSecrets.cs", "DoNotHardcodeSecrets.vb",
        "DoNotHardcodeSecrets.Latest.cs")) + _DOTNET_CONFIGS,
    "sonar-kotlin": tuple("kotlin-checks-test-sources/src/main/kotlin/checks/" + f for f in (
        "HardcodedCredentialsCheckSample.kt", "HardcodedSecretsCheckSample.kt",
        "HardcodedCredentialsInTestFileSample.kt", "HardcodedSecretsInTestFileSample.kt")),
    "sonarjs": (_JS + "S6418/cb.fixture.ts", _JS + "S6437/cb.fixture.ts"),
}
RULE_TESTS = tuple(_JS + f"{rule}/unit.test.ts" for rule in ("S2068", "S6418", "S6437"))
# Values upstream writes where a real one would go (the earlier corpora's threat model: not secrets).
PLACEHOLDERS = {"foo", "foobar", "test", "password", "changeme", "passphrase", "secret", "hardcoded", "hardcode", "pass",
                "oops", "admin"}


def placeholder(value: str) -> bool:
    value = value.strip("'\"")
    return (value.lower() in PLACEHOLDERS or value.startswith("/")
            or re.fullmatch(r"(?i)x+|\*+|:\w+|(\$?\{[^}]*\}=?)+|%\w|\?", value) is not None)


# a literal naming a hash algorithm or an encoding is an argument, not a value
_ALGORITHM = re.compile(r"(?i)(sha-?\d*|md5|hmac\w*|hex|base64\w*|utf-?8|ascii|latin1|binary|aes[\w-]*|rsa\w*|[hrep]s\d+)")
_NAME_WORD = re.compile(r"(?i)pass(word|wd|phrase)?|pwd|secret|token|api[_.-]?key|credential|auth|key")
_URL_PASSWORD = re.compile(r"[A-Za-z][\w+.-]*://[^:/@\s\"']*:([^@/\s\"]+)@")
# what the last resort (a line's one literal) does not take: a fragment of text or of a pair (`cn=admin,dc=org`),
# or a lower-case word
_NOT_A_VALUE = re.compile(r"\s|^[^=]*[A-Za-z*#]=[^=]|^[a-z]+$")
_PAIR_IN_LITERAL = re.compile(
    rf"(?i)(?:^|[^A-Za-z0-9])[\w/-]*?{_WORDS}[\w.-]*\s*[=:]\s*(?:(['\"])(.+?)\1|([^&|,;#\s\\'\"]+))")


# -- string literals and comments per language -------------------------------------------------------------------

_C_LIKE = r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'"
_LITERALS = {
    "csharp": re.compile(r"\"\"\"(.*?)\"\"\"|(?:\$@|@\$|@)\"((?:[^\"]|\"\")*)\"|\$?" + _C_LIKE),
    "vbnet": re.compile(r"\$?\"((?:[^\"]|\"\")*)\""),
    "kotlin": re.compile(r"\"\"\"(.*?)\"\"\"|" + _C_LIKE),
    "javascript": re.compile(_C_LIKE + r"|`((?:[^`\\]|\\.)*)`"),
    "json": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\""),
    "xml": re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'"),
}
_COMMENT = {"csharp": ("//", ""), "vbnet": ("'", ""), "kotlin": ("//", ""), "javascript": ("//", ""),
            "json": ("/*", "*/"), "xml": ("<!--", "-->")}


def _lang(path: str) -> str:
    ext = path.rsplit(".", 1)[1]
    return {"cs": "csharp", "vb": "vbnet", "kt": "kotlin", "ts": "javascript", "js": "javascript",
            "json": "json", "config": "xml"}[ext]


def _split(line: str, lang: str) -> tuple[str, str | None, list[tuple[int, int, str]]]:
    """A line's code, its comment (None without one) and the string literals of its code."""
    literals: list[tuple[int, int, str]] = []
    mark, close = _COMMENT[lang]
    pattern = _LITERALS[lang]
    pos = 0
    while pos < len(line):
        at = line.find(mark, pos)
        m = pattern.search(line, pos)
        if m and (at < 0 or m.start() < at):
            value = next((g for g in m.groups() if g is not None), "")
            if lang == "vbnet" or m.group(0).startswith(("@", "$@")):
                value = value.replace('""', '"')
            literals.append((m.start(), m.end(), value))
            pos = m.end()
            continue
        if at < 0:
            break
        comment = line[at + len(mark):]
        if close and close in comment:
            comment = comment[:comment.index(close)]
        return line[:at].rstrip(), comment, literals
    return line.rstrip(), None, literals


def _is_name(value: str) -> bool:
    """A literal that names a setting (a secret word in it), an algorithm or encoding, or is too short."""
    return len(value) < 2 or _NAME_WORD.search(value) is not None or _ALGORITHM.fullmatch(value) is not None


def line_secrets(code: str, literals: list[tuple[int, int, str]]) -> list[str]:
    """The secret of a labelled line (the module docstring says in which order it is sought)."""
    found = []
    for _, _, value in literals:
        if m := _URL_PASSWORD.search(value):
            found.append(m.group(1))
        elif m := _PAIR_IN_LITERAL.search(value):
            found.append(m.group(2) or m.group(3))
    if found:
        return found
    if m := _TAG.search(code):
        return [m.group(2)]
    # a literal followed by `:` or `=>` is an object's key, not a value
    values = [(start, value) for start, end, value in literals
              if not _is_name(value) and not re.match(r"\s*(:|=>)", code[end:])]
    placed = [value for start, value in values
              if re.search(rf"(?i){_WORDS}\w*['\"]?\]?\s*(=>|===?|<=>|=|:|,|\(|\+=)\s*[@$]{{0,2}}$",
                           code[:start].rstrip("'\"`").rstrip())]
    if placed:
        return placed
    return [values[0][1]] if len(values) == 1 and not _NOT_A_VALUE.search(values[0][1]) else []


def _labelled(kind: str, why: str, code: str, literals: list, source: str, path: str, fmt: str,
              left_out: Counter, whole: list[str]) -> list[dict]:
    """The sample of one labelled line (kind: noncompliant / compliant / ok)."""
    snippet = code.strip()
    if not snippet or snippet.startswith(("//", "'", "/*", "<!--")):
        left_out["a labelled line without code"] += 1
        return []
    if kind != "noncompliant":
        if _HOLDS_ONE_ALL_THE_SAME.search(why):
            left_out["an upstream compliant line its comment says holds a credential all the same"] += 1
            return []
        return [CORPUS.sample("upstream-negative", source, path, snippet, fmt=fmt)]
    secrets = line_secrets(code, literals)
    if secrets and all(placeholder(x) for x in secrets):
        left_out["a noncompliant line whose value is a placeholder"] += 1
        return []
    secrets = [x for x in secrets if not placeholder(x)]
    if not secrets:
        left_out["a noncompliant line that holds no literal secret (a variable set elsewhere)"] += 1
        return []
    whole += secrets
    return CORPUS.positive(source, path, snippet, secrets, left_out, fmt=fmt)


def sonar(name: str, repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_OWNER_REPO[name]}@{head}"
    samples = []
    for path in SONAR_FILES[name]:
        lang = _lang(path)
        text = show(repo, head, path).lstrip("\ufeff").rstrip("\n")
        lines = text.split("\n")
        labels: dict[int, tuple[str, str]] = {}
        for n, line in enumerate(lines):
            _, comment, _ = _split(line, lang)
            m = _MARK.match(comment) if comment is not None else None
            if m:
                at = n + int(m.group(2)[1:]) if m.group(2) else n
                labels[at] = (m.group(1).lower(), m.group(3))
        file_name = path.rsplit("/", 1)[1]
        whole: list[str] = []
        for n in sorted(labels):
            if n >= len(lines):
                continue
            kind, why = labels[n]
            code, _, literals = _split(lines[n], lang)
            samples += _labelled(kind, why, code, literals, f"{upstream}:{path}#line-{n + 1}", file_name, lang,
                                 left_out, whole)
        if len(lines) <= _MAX_LINES and whole:
            # only the secrets that occur nowhere else in the file than on its labelled lines
            labelled = "\n".join(lines[n] for n in labels if n < len(lines) and labels[n][0] == "noncompliant")
            own = [x for x in set(whole) if text.count(x) == labelled.count(x)]
            left_out["a secret that also stands on an unlabelled line of the whole file"] += len(set(whole)) - len(own)
            samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, own, left_out, Counter(whole), lang)
    return samples


# -- SonarJS's ESLint rule tests --------------------------------------------------------------------------------

_CASE_CODE = re.compile(r"\bcode:\s*(`(?:[^`\\]|\\.)*`|'(?:[^'\\]|\\.)*')")


def _js_string(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\([`'\\$])", r"\1", body)


def _dedent(code: str) -> str:
    lines = [ln for ln in code.split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[indent:] for ln in lines)


def rule_tests(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"SonarSource/SonarJS@{head}"
    samples = []
    for path in RULE_TESTS:
        src = show(repo, head, path)
        split = src.index("invalid:")
        for kind, body in (("valid", src[:split]), ("invalid", src[split:])):
            for n, m in enumerate(_CASE_CODE.finditer(body), 1):
                code = _dedent(_js_string(m.group(1)))
                source = f"{upstream}:{path}#{kind}-{n}"
                fmt = "javascript"
                if kind == "valid":
                    samples.append(CORPUS.sample("upstream-negative", source, "index.ts", code, fmt=fmt))
                    continue
                secrets: list[str] = []
                for line in code.split("\n"):
                    if re.match(r"\s*import\b", line):
                        continue  # a module's name
                    c, _, literals = _split(line, "javascript")
                    secrets += line_secrets(c, literals)
                secrets = [x for x in secrets if not placeholder(x)]
                if not secrets:
                    left_out["a noncompliant line that holds no literal secret (a variable set elsewhere)"] += 1
                    continue
                samples += CORPUS.positive(source, "index.ts", code, secrets, left_out, fmt=fmt)
    return samples


# -- brakeman -----------------------------------------------------------------------------------------------------

_ASSERT = re.compile(r"(assert_warning|assert_no_warning)\b(.*?)\n\s*end\n", re.S)
_SECRET_WARNING = re.compile(r"Session\\? secret\\? should|Hardcoded\\? value\\? for")
_RUBY_LITERAL = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'")
_YAML_VALUE = re.compile(r"^\s*[\w.-]+:\s+([^\s#'\"][^\s#]*)\s*$")


def brakeman(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"presidentbeef/brakeman@{head}"
    present = set(tree_files(repo, head))
    samples = []
    named: dict[str, dict[int, str]] = {}
    for test in sorted(p for p in present if p.startswith("test/tests/") and p.endswith(".rb")):
        src = show(repo, head, test)
        app = re.search(r"run_scan\s*\(?\s*\"([^\"]+)\"", src)
        for m in _ASSERT.finditer(src):
            block = m.group(2)
            if not _SECRET_WARNING.search(block) or not app:
                continue
            line = re.search(r":line\s*=>\s*(\d+)", block)
            rel = re.search(r":relative_path\s*=>\s*\"([^\"]+)\"", block)
            pattern = re.search(r":file\s*=>\s*/([^/]+)/", block)
            base = f"test/apps/{app.group(1)}/"
            if rel:
                path = base + rel.group(1)
            else:
                found = sorted(p for p in present if p.startswith(base) and pattern
                               and re.search(pattern.group(1), p))
                path = found[0] if len(found) == 1 else ""
            if not line or path not in present:
                left_out["a brakeman assertion whose file cannot be told"] += 1
                continue
            named.setdefault(path, {})[int(line.group(1))] = m.group(1)
    for path in sorted(named):
        text = show(repo, head, path).rstrip("\n")
        lines = text.split("\n")
        file_name = path.rsplit("/", 1)[1]
        fmt = format_of(path, text)
        whole: list[str] = []
        for n, kind in sorted(named[path].items()):
            snippet = lines[n - 1].strip()
            source = f"{upstream}:{path}#line-{n}"
            if kind == "assert_no_warning":
                samples.append(CORPUS.sample("upstream-negative", source, file_name, snippet, fmt=fmt))
                continue
            values = [next(g for g in lit.groups() if g is not None) for lit in _RUBY_LITERAL.finditer(snippet)]
            values = [v for v in values if not _is_name(v)]
            if not values and (y := _YAML_VALUE.match(lines[n - 1])):
                values = [y.group(1)]
            values = [v for v in values if not placeholder(v)]
            if len(values) != 1:
                left_out["a brakeman line without one literal value"] += 1
                continue
            whole += values
            samples += CORPUS.positive(source, file_name, snippet, values, left_out, fmt=fmt)
        if len(lines) <= _MAX_LINES and whole:
            own = [x for x in set(whole) if text.count(x) == 1]
            left_out["a secret that also stands on an unlabelled line of the whole file"] += len(set(whole)) - len(own)
            samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, own, left_out, Counter(whole), fmt)
    return samples


# -- Bearer's rule tests ------------------------------------------------------------------------------------------

BEARER_RULES = ("go/lang/hardcoded_mysql_database_password", "go/lang/hardcoded_pg_database_password",
                "java/lang/hardcoded_database_password", "java/lang/hardcoded_secret",
                "javascript/express/hardcoded_secret", "javascript/lang/hardcoded_secret",
                "javascript/lang/jwt_hardcoded_secret", "javascript/third_parties/passport_hardcoded_secret",
                "php/lang/hardcoded_secret", "python/django/weak_secret_key", "ruby/lang/hardcoded_secret",
                "ruby/rails/insecure_http_password")
_EXPECTED = re.compile(r"^\s*(//|#)\s*bearer:expected\s+\w+")
_COMMENT_LINE = re.compile(r"^\s*(//|#|/\*|\*)")
_BEARER_LITERAL = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`([^`\n]*)`")


def bearer(repo: str, left_out: Counter) -> list[dict]:
    """Bearer's rule tests: the line after `bearer:expected RULE` is a finding; a test file without one expects none."""
    head = head_commit(repo)
    upstream = f"Bearer/bearer-rules@{head}"
    present = tree_files(repo, head)
    samples = []
    for rule in BEARER_RULES:
        for path in sorted(p for p in present if p.startswith(f"tests/{rule}/testdata/")):
            text = show(repo, head, path).rstrip("\n")
            lines = text.split("\n")
            file_name = path.rsplit("/", 1)[1]
            fmt = format_of(path, text)
            expected = [n for n, line in enumerate(lines) if _EXPECTED.match(line)]
            if not expected:  # upstream expects no finding anywhere in the file
                for n, line in enumerate(lines):
                    if not _COMMENT_LINE.match(line) and _BEARER_LITERAL.search(line) and _SECRET_WORD.search(line):
                        samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{n + 1}", file_name,
                                                     line.strip(), fmt=fmt))
                continue
            whole: list[str] = []
            targets = []
            for n in expected:
                at = n + 1
                while at < len(lines) and (not lines[at].strip() or _COMMENT_LINE.match(lines[at])):
                    at += 1
                if at < len(lines):
                    targets.append(at)
            for at in targets:
                code = lines[at]
                literals = [(m.start(), m.end(), next((g for g in m.groups() if g is not None), ""))
                            for m in _BEARER_LITERAL.finditer(code)]
                secrets = line_secrets(code, literals)
                source = f"{upstream}:{path}#line-{at + 1}"
                if secrets and all(placeholder(x) for x in secrets):
                    left_out["a noncompliant line whose value is a placeholder"] += 1
                    continue
                secrets = [x for x in secrets if not placeholder(x)]
                if not secrets:
                    left_out["a noncompliant line that holds no literal secret (a variable set elsewhere)"] += 1
                    continue
                whole += secrets
                samples += CORPUS.positive(source, file_name, code.strip(), secrets, left_out, fmt=fmt)
            if len(lines) <= _MAX_LINES and whole:
                labelled = "\n".join(lines[at] for at in targets)
                own = [x for x in set(whole) if text.count(x) == labelled.count(x)]
                left_out["a secret that also stands on an unlabelled line of the whole file"] += (
                    len(set(whole)) - len(own))
                samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, own, left_out, Counter(whole), fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "sonar-dotnet": (".github/workflows/LabelIssue.yml", ".github/workflows/SlackNotification.yml", ".editorconfig",
                     ".gitattributes", ".globalconfig", ".mcp.json", "global.json", "pom.xml",
                     "scripts/build/build-utils.ps1", "scripts/build/store-azp-variables.ps1", "scripts/set-version.ps1",
                     "scripts/utils.ps1"),
    "sonar-kotlin": (".github/workflows/build.yml", ".github/workflows/release.yml",
                     ".github/workflows/AutomateRelease.yml", ".github/workflows/PullRequestClosed.yml",
                     ".github/workflows/RequestReview.yml", ".github/workflows/SubmitReview.yml",
                     ".github/workflows/ToggleLockBranch.yml", ".github/workflows/dogfood.yml",
                     ".github/workflows/releasability.yaml", ".github/workflows/bump-versions.yaml",
                     ".github/actions/cache-orchestrator/action.yml", ".github/renovate.json5", "gradle.properties",
                     "settings.gradle.kts", "build.gradle.kts", "gradle/wrapper/gradle-wrapper.properties",
                     ".gitmodules", "mise.toml"),
    "sonarjs": (".github/workflows/build.yml", ".github/workflows/release.yml", ".github/workflows/dogfood.yml",
                ".github/workflows/automated-release.yml", ".github/workflows/release_eslint_plugin.yml",
                ".github/workflows/sqaa-release.yml", ".github/workflows/docker-sqaa.yml",
                ".github/workflows/pr-cleanup.yml", ".github/actions/maven-cache/action.yml",
                ".github/actions/ruling_bot/action.yml", ".github/actions/ruling_bot/run.sh", ".github/renovate.json",
                ".npmrc", ".nycrc", ".pmgrc.toml", ".mcp.json", ".gitmodules", "Dockerfile", "knip.json",
                "sonarpedia.json", "tools/merge-cyclonedx-bom.sh"),
    "brakeman": (".circleci/config.yml", ".github/workflows/docker-hub-push.yml", "Dockerfile",
                 "Dockerfile.codeclimate", "Gemfile", "Rakefile", "brakeman.gemspec", "brakeman-lib.gemspec",
                 "brakeman-min.gemspec", "build.rb", "lib/brakeman/report/config/remediation.yml"),
    "bearer": (".envrc.example", ".github/workflows/canary.yml", ".github/workflows/canary_integration_tests.yml",
               ".github/workflows/integration_tests.yml", ".github/workflows/lint.yml", ".github/workflows/lint_pr.yml",
               ".github/workflows/release.yml", "jest.config.js", "package.json", "scripts/invoke.sh",
               "scripts/lint.sh", "scripts/validate.sh", "scripts/.prettierrc"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    samples = [s for name in ("sonar-dotnet", "sonar-kotlin", "sonarjs") for s in sonar(name, repos[name], left_out)]
    samples += rule_tests(repos["sonarjs"], left_out)
    samples += brakeman(repos["brakeman"], left_out)
    return samples + bearer(repos["bearer"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
