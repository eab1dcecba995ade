"""Build the eighth held-out redaction corpus (tests/fixtures/redaction/corpus8.json.gz).

The first seven corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, SonarSource sonar-text and sonar-iac, gosec, bandit,
horusec, talisman, awslabs/git-secrets, eslint-plugin-no-secrets and DevSkim
(Skyscanner/whispers and Plazmaz/leaky-repo set aside). This one comes from four other
projects, none of them read by an earlier corpus, each labelled by its upstream:

- SonarSource/sonar-java, sonar-python and sonar-php: the test files of their hard-coded
  password, secret and credential checks. Sonar's check verifier reads a comment on a
  line: `Noncompliant` (the check must raise an issue there; `Noncompliant@+N` on a
  comment line names the line N below) and `Compliant` / `OK` (it must not). Each
  `Noncompliant` line, its code without the marker comment, is a positive; its secret
  is taken from the line's string literals: the password of a URL's user information
  (`scheme://user:PASS@host`), else the value after a secret-named `name=` inside a
  literal (`login=a&password=VALUE`), else the literal that a secret-named variable, key,
  keyword argument or first argument is given (`password = "..."`, `'secret': "..."`,
  `password="..."`, `setProperty("token", "...")`), else the one literal on the line that
  is not a name (no secret word in it, two characters or more). A line that names no
  such literal (the check followed a variable defined elsewhere) is left out. Each
  `Compliant` / `OK` line is a negative, except where upstream's own comment says the
  line holds a credential all the same (a false negative, `FN`, or another rule's
  case), which is left out. Each test file of 200 lines or fewer is also a positive as a
  whole, with the secrets that occur nowhere else in it than on its `Noncompliant` lines.
- americanexpress/earlybird: `pkg/scan/falsePositives_test.go` `Test_findFalsePositive`,
  whose cases give a hit's text (`MatchValue` / `LineValue`), its file name and
  `wantIsFP`: `false` (a real finding) is a positive, `true` (a false positive to skip)
  a negative; and the `Example` of each rule in `config/rules/password-secret.yaml` and
  of each `key` rule in `config/rules/content.yaml`, a positive. The secret of such a
  text is the value of its secret-named pair (`name = 'VALUE'`, `name: VALUE`,
  `<name>VALUE</name>`), the password of a URL, the credentials after
  `Authorization: Basic`, or the text itself where it is a bare value. Upstream's
  placeholders (`foobar`, `xxxx`, `test`, ...) are not secrets by this project's threat
  model and are left out, as are the findings `EARLYBIRD_NOT_SECRET` names.
- Benign: ordinary files of the same repositories outside their tests (CI workflows,
  build and tool configuration, scripts), each whole (up to 200 lines) and each line that
  names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). Samples are labelled with the format of their text.
The scorer (tests/support/redaction_corpus8.py) stores each in the four carriers an agent
produces. Sources read `owner/repo@commit:path` (and `#line-n`, `#case-n`, `#rule-n/Code-CODE`).

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus8_extract.py --sonar-java DIR --sonar-python DIR \\
        --sonar-php DIR --earlybird DIR

where each DIR is a git clone or bare mirror (at the commit the fixture names). PyYAML
reads earlybird's rules.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, path_for, sniff  # noqa: E402

OUT = HERE / "corpus8.json.gz"
_NAMES = {"SonarSource/sonar-java": "sonar-java", "SonarSource/sonar-python": "sonar-python",
          "SonarSource/sonar-php": "sonar-php", "americanexpress/earlybird": "earlybird"}
_OWNER_REPO = {v: k for k, v in _NAMES.items()}
CORPUS = Corpus(_NAMES, session="corpus8", earlier=7)
SONAR_FILES = {
    "sonar-java": ("java-checks-test-sources/default/src/main/java/checks/HardCodedPasswordCheckSample.java",
                   "java-checks-test-sources/default/src/main/java/checks/HardCodedSecretCheckSample.java"),
    "sonar-python": ("python-checks/src/test/resources/checks/hardCodedCredentials.py",
                     "python-checks/src/test/resources/checks/hardcodedCredentialsCall.py",
                     "python-checks/src/test/resources/checks/hotspots/hardcodedCredentialsEntropy.py",
                     "python-checks/src/test/resources/checks/flaskHardCodedSecretKey.py",
                     "python-checks/src/test/resources/checks/flaskHardCodedJWTSecretKey.py"),
    "sonar-php": ("php-checks/src/test/resources/checks/HardCodedCredentialsInFunctionCallsCheck.php",
                  "php-checks/src/test/resources/checks/HardCodedCredentialsInVariablesAndUrisCheck.php",
                  "php-checks/src/test/resources/checks/HardCodedSecretCheckSecrets.php",
                  "php-checks/src/test/resources/checks/HardCodedSecretCheckAST.php"),
}
EARLYBIRD_TEST = "pkg/scan/falsePositives_test.go"
EARLYBIRD_RULES = ("config/rules/password-secret.yaml", "config/rules/content.yaml")
# earlybird's real findings (`wantIsFP: false`) whose text holds no secret by this project's threat model.
EARLYBIRD_NOT_SECRET = {
    "Skip the github Url": "a repository URL in minified JavaScript, no credential",
    "Do not skip password in logger": "a log call that names a password and holds none",
    "Don't Skip real private Key": "a PEM header line without the key's body",
}
# Values upstream writes where a real one would go (the earlier corpora's threat model: not secrets):
# these words, a run of `x` or `*`, and a bind parameter (`:param`).
PLACEHOLDERS = {"foobar", "test", "password", "changeme", "passphrase", "secret"}


def placeholder(value: str) -> bool:
    value = value.strip("'\"")
    return value.lower() in PLACEHOLDERS or re.fullmatch(r"(?i)x+|\*+|:\w+", value) is not None
# The words Sonar's checks look for in a name (their defaults), and earlybird's.
_WORDS = r"(?:pass(?:word|wd|phrase|wrd)?|pwd|pw|pword|secret|token|api[_.-]?key|credential|auth|key)"
_NAME_WORD = re.compile(r"(?i)pass(word|wd|phrase)?|pwd|secret|token|api[_.-]?key|credential|auth")
_URL_PASSWORD = re.compile(r"[A-Za-z][\w+.-]*://[^:/@\s\"']*:([^@/\s\"']+)@")
_PAIR_IN_LITERAL = re.compile(rf"(?i)(?:^|[&;,|#?\s]){_WORDS}[\w.-]*\s*=\s*([^&|,;#\s\\'\"]+)")


# -- Sonar: `Noncompliant` / `Compliant` comments --------------------------------------------------------------

_LITERALS = {
    "python": re.compile(r"[rRbBuUfF]{0,2}(?:'''(.*?)'''|\"\"\"(.*?)\"\"\"|'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\")"),
    "java": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'"),
    "php": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'"),
}
_COMMENT = {"python": "#", "java": "//", "php": "//"}
_MARK = re.compile(r"^\s*(Noncompliant|Compliant|compliant|OK|ok)\b(@[+-]\d+)?(.*)$")
_HOLDS_ONE_ALL_THE_SAME = re.compile(r"(?i)\bFN\b|false.negative|handled by")


def _split(line: str, lang: str) -> tuple[str, str | None, list[tuple[int, int, str]]]:
    """A line's code, its comment (None without one) and the string literals of its code."""
    literals: list[tuple[int, int, str]] = []
    mark = _COMMENT[lang]
    pos = 0
    pattern = _LITERALS[lang]
    while pos < len(line):
        at = line.find(mark, pos)
        m = pattern.search(line, pos)
        if m and (at < 0 or m.start() < at):
            literals.append((m.start(), m.end(), next(g for g in m.groups() if g is not None)))
            pos = m.end()
            continue
        if at < 0:
            break
        return line[:at].rstrip(), line[at + len(mark):], literals
    return line.rstrip(), None, literals


def _is_name(value: str) -> bool:
    """A literal that names a setting (a secret word in it) or is too short to be a value."""
    return len(value) < 2 or _NAME_WORD.search(value) is not None


def line_secrets(code: str, literals: list[tuple[int, int, str]]) -> list[str]:
    """The secret of a labelled line (the module docstring says in which order it is sought)."""
    found = []
    for _, _, value in literals:
        if m := _URL_PASSWORD.search(value):
            found.append(m.group(1))
        elif m := _PAIR_IN_LITERAL.search(value):
            found.append(m.group(1))
    if found:
        return found
    values = [(start, value) for start, _, value in literals if not _is_name(value)]
    placed = [value for start, value in values
              if re.search(rf"(?i){_WORDS}\w*['\"]?\]?\s*(=>|===?|<=>|=|:|,|\()\s*[rRbBuUfF]{{0,2}}$",
                           code[:start].rstrip("'\"").rstrip())]
    if placed:
        return placed
    return [values[0][1]] if len(values) == 1 else []


def sonar(name: str, repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_OWNER_REPO[name]}@{head}"
    samples = []
    for path in SONAR_FILES[name]:
        lang = {"py": "python", "java": "java", "php": "php"}[path.rsplit(".", 1)[1]]
        text = show(repo, head, path).rstrip("\n")
        lines = text.split("\n")
        labels: dict[int, tuple[str, str]] = {}
        for n, line in enumerate(lines):
            _, comment, _ = _split(line, lang)
            m = _MARK.match(comment) if comment is not None else None
            if m:
                at = n + int(m.group(2)[1:]) if m.group(2) else n
                labels[at] = (m.group(1).lower(), m.group(3))
        file_name = path.rsplit("/", 1)[1]
        whole_secrets: list[str] = []
        for n in sorted(labels):
            kind, why = labels[n]
            code, _, literals = _split(lines[n], lang)
            snippet = code.strip()
            source = f"{upstream}:{path}#line-{n + 1}"
            if not snippet or snippet.startswith(("#", "//")):
                left_out["a labelled line without code"] += 1
                continue
            if kind != "noncompliant":
                if _HOLDS_ONE_ALL_THE_SAME.search(why):
                    left_out["an upstream compliant line its comment says holds a credential all the same"] += 1
                else:
                    samples.append(CORPUS.sample("upstream-negative", source, file_name, snippet, fmt=lang))
                continue
            if "<<<" in code:
                left_out["a noncompliant heredoc line (its value is on the lines below)"] += 1
                continue
            secrets = line_secrets(code, literals)
            if secrets and all(placeholder(x) for x in secrets):
                left_out["a noncompliant line whose value is a placeholder"] += 1
                continue
            secrets = [x for x in secrets if not placeholder(x)]
            if not secrets:
                left_out["a noncompliant line that holds no literal secret (a variable set elsewhere)"] += 1
                continue
            whole_secrets += secrets
            samples += CORPUS.positive(source, file_name, snippet, secrets, left_out, fmt=lang)
        if len(lines) <= _MAX_LINES and whole_secrets:
            # only the secrets that occur nowhere else in the file than on its labelled lines
            labelled = "\n".join(lines[n] for n in labels if labels[n][0] == "noncompliant")
            own = [x for x in set(whole_secrets) if text.count(x) == labelled.count(x)]
            left_out["a secret that also stands on an unlabelled line of the whole file"] += (
                len(set(whole_secrets)) - len(own))
            uses = Counter(whole_secrets)
            samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, own, left_out, uses, lang)
    return samples


# -- earlybird ------------------------------------------------------------------------------------------------

_GO_CASE = re.compile(r"\{\s*name:\s*\"([^\"]*)\",\s*hit: Hit\{(.*?)\},\s*wantIsFP:\s*(true|false),\s*\}", re.S)
_GO_FIELD = re.compile(r"(\w+):\s*(`[^`]*`|\"(?:[^\"\\]|\\.)*\"|\d+),")
_TAG = re.compile(rf"(?i)<(\w*{_WORDS}\w*)>([^<]+)</\1>")
# a secret-named pair: a quoted value (after an optional type annotation, `password: String! = "..."`), else a bare one
_PAIR_QUOTED = re.compile(rf"(?i)[\w.\-\"']*{_WORDS}[\w.\-]*[\"']?\s*(?::\s*[\w!?<>\[\]]+\s*)?(?:=>|=|:)\s*(['\"])(.+?)\1")
_PAIR = re.compile(rf"(?i)[\w.\-\"']*{_WORDS}[\w.\-]*[\"']?\s*(?:=>|=|:)\s*([^'\"\s,;]+)")
_BASIC = re.compile(r"(?i)Authorization:\s*Basic\s+(\S+)")


def text_secret(text: str) -> str | None:
    """The secret of an earlybird hit or example (the module docstring says how)."""
    for pattern, group in ((_TAG, 2), (_URL_PASSWORD, 1), (_BASIC, 1), (_PAIR_QUOTED, 2), (_PAIR, 1)):
        if m := pattern.search(text):
            return m.group(group)
    bare = text.strip().strip("'\"")
    return bare if bare and not re.search(r"\s", bare) else None


def _go_string(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return literal[1:-1].encode().decode("unicode_escape")


def earlybird(repo: str, left_out: Counter) -> list[dict]:
    import yaml

    head = head_commit(repo)
    upstream = f"americanexpress/earlybird@{head}"
    samples = []
    src = show(repo, head, EARLYBIRD_TEST)
    body = src[src.index("func Test_findFalsePositive"):src.index("func Test_falsePositiveInclusivity")]
    for n, (name, hit, want_fp) in enumerate(_GO_CASE.findall(body), 1):
        fields = {k: (_go_string(v) if not v.isdigit() else v) for k, v in _GO_FIELD.findall(hit + ",")}
        text = (fields.get("LineValue") or fields.get("MatchValue") or "").strip()
        path = fields.get("Filename", "source.txt")
        source = f"{upstream}:{EARLYBIRD_TEST}#case-{n}"
        if not text:
            left_out["an earlybird case without text"] += 1
        elif want_fp == "true":
            samples.append(CORPUS.sample("upstream-negative", source, path, text))
        elif name in EARLYBIRD_NOT_SECRET:
            left_out["an earlybird finding that holds no secret by this project's threat model"] += 1
        else:
            secret = text_secret(text)
            if secret is None or placeholder(secret):
                left_out["an earlybird text whose value is a placeholder or missing"] += 1
                continue
            samples += CORPUS.positive(source, path, text, [secret], left_out)
    for rules in EARLYBIRD_RULES:
        for i, rule in enumerate(yaml.safe_load(show(repo, head, rules))["rules"], 1):
            example = rule.get("Example")
            if not example or rule.get("Category") not in ("password-secret", "key"):
                continue
            source = f"{upstream}:{rules}#rule-{i}/Code-{rule['Code']}"  # two rules may share a Code
            secret = text_secret(example)
            if secret is None or placeholder(secret):
                left_out["an earlybird example whose value is a placeholder or missing"] += 1
                continue
            fmt = sniff(example)
            samples += CORPUS.positive(source, path_for(fmt), example, [secret], left_out, fmt=fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "sonar-java": (".github/workflows/build.yml", ".github/workflows/dogfood.yml",
                   ".github/workflows/automated-release.yml", ".github/workflows/release.yml",
                   ".github/workflows/releasability.yaml", ".github/actions/orchestrator-cache/action.yml",
                   ".github/actions/upload-actual/action.yml", ".github/renovate.json", ".editorconfig",
                   "check-list/pom.xml", "java-checks-common/pom.xml", ".github/workflows/PullRequestClosed.yml",
                   ".github/workflows/RequestReview.yml", ".github/workflows/ToggleLockBranch.yml",
                   ".github/workflows/UpdateRuleMetadata.yml", ".github/workflows/mark-prs-stale.yml",
                   ".github/workflows/cleanup-cache.yml", ".github/workflows/ruling-diff-comment.yml",
                   ".github/workflows/unified-dogfooding.yml"),
    "sonar-python": (".github/workflows/build.yml", ".github/workflows/SlackNotify.yml",
                     ".github/actions/build-sonar-python/action.yml", ".github/actions/config-sonar-python/action.yml",
                     ".github/actions/setup-orchestrator-cache/action.yml", ".github/renovate.json", ".mcp.json",
                     ".github/actions/ruling-diff-comment/pyproject.toml", ".gitmodules",
                     ".github-commons/actions/analyze/action.yml", ".github/actions/ruling-diff-comment/action.yml",
                     ".github/scripts/verify-fix-versions.sh"),
    "sonar-php": (".github/workflows/build.yml", ".github/workflows/shadow_scan.yml",
                  ".github/workflows/AutomateRelease.yml", ".github/workflows/release.yml", ".pre-commit-config.yaml",
                  "build.gradle.kts", "gradle.properties", "gradle/libs.versions.toml",
                  "gradle/wrapper/gradle-wrapper.properties", "php-checks/build.gradle.kts", "mise.toml",
                  ".github/workflows/bump-versions.yaml", ".github/workflows/update-rule-metadata.yml",
                  ".github/workflows/releasability-status.yaml", ".github/workflows/mark-stale-pull-requests.yml"),
    "earlybird": (".github/dependabot.yml", ".github/workflows/changelog-pr.yml", ".github/workflows/release.yml",
                  ".github/workflows/test-and-build.yml", ".releaserc.json", "build.sh", "install.sh",
                  "pre-commit.sample", "go.mod", ".ge_ignore", "build.bat", "install.bat"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    samples = [s for name in ("sonar-java", "sonar-python", "sonar-php") for s in sonar(name, repos[name], left_out)]
    return samples + earlybird(repos["earlybird"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
