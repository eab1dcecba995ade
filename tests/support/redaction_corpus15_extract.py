"""Build the fifteenth held-out redaction corpus (tests/fixtures/redaction/corpus15.json.gz).

The first fourteen corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan and stackrox/kube-linter. This one
comes from the two projects every earlier corpus set aside, Skyscanner/whispers and
Plazmaz/leaky-repo, because issue #33's description of misses came from scanners' runs on
data like theirs. No earlier corpus read them, but the rules were tuned on misses of that
kind, so this corpus is less held out than the others: a high figure here says less. Each
sample is labelled by its upstream:

- Skyscanner/whispers: the fixtures `tests/fixtures/*` its `tests/unit/test_secrets.py`
  `test_detection_by_value` runs, with the count of findings it expects per fixture and its
  assertion that every value found contains `hardcoded` (or is a number, or base64 of such a
  value). In a fixture that test expects findings from, a value holding `hardcoded`, or
  base64 that decodes to it, is a secret (and so is a number of 12 digits or more, which
  the test lets pass: card numbers, a numeric key), where the fixture's `Compliant` / `Noncompliant` markers (comments,
  keys, tags, rulers) put it in the noncompliant part (or the fixture has no markers); each
  line holding one is a positive, the fixture whole a positive. Each other line holding a
  quote or a secret word, and the compliant part's lines, are upstream negatives (comments
  set aside); a fixture the test expects 0 findings from is an upstream negative whole and
  line by line.
- Plazmaz/leaky-repo: a repository of planted secrets whose `.leaky-meta/secrets.csv`
  counts, per file, the lines that are a risk (a secret) and the lines that are only
  informative (a host, a user name), and whose README names what each file is. A file with
  risk lines is read with the name upstream's own markers give its secret (`# Risk`
  comments, the csv's comments, the README: a password, a key, a token, a hash, a private
  key block); the value is the secret, its line a positive and the file whole a positive.
  The count found must not exceed the csv's; where it is lower (a risk line that holds no
  value of its own) the difference is counted as left out. Files with informative lines only
  (a public key, the high-entropy strings upstream calls informative) and the binary
  Firefox databases are not read.
- Benign: ordinary files of the same repositories outside their tests and planted files
  (CI workflows, build and tool configuration, Dockerfile, the benchmark scripts), each whole
  (up to 200 lines) and each line that names a password, secret, token, key, credential or
  auth, and the output of `git log --format='%H %an %s' -n 15` at each pinned commit.

Considered and not used: whispers' `test_detection_by_key` fixtures (`privatekeys.*`,
`aws.*`, `jenkins.xml`, `cloudformation.*`), labelled by key name rather than value, and its
rule files' own examples. A secret is kept only where the scoring can judge it
(tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule), and a
placeholder (tests/support/redaction_corpus10_extract.py `placeholder`, which counts a bare
`hardcoded` as one) is left out.
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus15.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus15_extract.py --whispers D1 --leaky-repo D2

where each D is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus15.json.gz"
SESSION = "corpus15"
_NAMES = {"Skyscanner/whispers": "whispers", "Plazmaz/leaky-repo": "leaky-repo"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=14)


def _file_samples(upstream: str, path: str, text: str, found: list[tuple[int, str]], left_out: Counter,
                  fmt: str | None = None) -> list[dict]:
    """Each line holding a labelled secret, and the file whole (up to 200 lines), as positives."""
    name = path.rsplit("/", 1)[-1]
    fmt = fmt or format_of(path, text)
    lines = text.split("\n")
    secrets = [(i, v) for i, v in found if not placeholder(v)]
    left_out["a labelled value that is a placeholder or empty"] += len(found) - len(secrets)
    uses = Counter(v for _, v in secrets)
    samples = []
    for i in sorted({i for i, _ in secrets}):
        line = lines[i - 1].strip()
        on_line = [v for j, v in secrets if j == i]
        samples += CORPUS.positive(f"{upstream}:{path}#line-{i}", name, line, on_line, left_out,
                                   uses=Counter(on_line), fmt=fmt)
    if secrets and len(lines) <= _MAX_LINES:
        samples += CORPUS.positive(f"{upstream}:{path}", name, text, [v for _, v in secrets], left_out,
                                   uses=uses, fmt=fmt)
    return samples


# -- whispers --------------------------------------------------------------------------------------------------

WHISPERS_TEST = "tests/unit/test_secrets.py"
WHISPERS_FIXTURES = "tests/fixtures"
_MARKER = re.compile(r"(?i)(</)?(?<![a-z])(?<!=)(?<!= )(non-?)?compliant\d*(?![a-z])")
_HARDCODED = re.compile(r"(?i)(?:[^\s\"'<>=:,;&@()\[\]{}`]|://)*hardcoded(?:[^\s\"'<>=:,;&@()\[\]{}`]|://)*")
# a name, not a value: a tag's, or one that starts its line and that a `:` or `=` follows
_NAME_AFTER = re.compile(r"[\"']?\s*(?::(?:\s|$|\[|\{)|=(?!=))")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")
_COMMENT = ("#", "<!--", "/*", "*")
_SLASH_COMMENT = ("go", "javascript", "java", "php")
# whispers findings that are not credentials: its `comments` rule's HTML comments, and an AWS access key id
# (an identifier, as in the thirteenth corpus)
WHISPERS_NOT_CREDENTIALS = {"language.html": "a whispers fixture whose findings are HTML comments"}
_AWS_KEY_ID = re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")


def _expected_counts(test: str) -> dict[str, int]:
    """test_detection_by_value's (fixture, expected findings) pairs."""
    block = test.split("def test_detection_by_value", 1)[0].rsplit("@pytest.mark.parametrize", 1)[1]
    return {name: int(n) for name, n in re.findall(r'\("([^"]+)",\s*(\d+)\)', block)}


def _sections(lines: list[str]) -> list[str | None]:
    """Per line, the part its fixture's markers (a comment, key, tag or attribute naming `compliant` or
    `noncompliant`, a closing tag ending it) put it in: "compliant", "noncompliant" or None."""
    state: str | None = None
    parts: list[str | None] = []
    for line in lines:
        m = _MARKER.search(line)
        if m and _HARDCODED.search(line):  # a line naming its own part (`.htpasswd`'s user names)
            parts.append("noncompliant" if m.group(2) else "compliant")
            continue
        if m:
            state = None if m.group(1) else ("noncompliant" if m.group(2) else "compliant")
            parts.append(None)
            continue
        parts.append(state)
    return parts


def _b64_hardcoded(token: str) -> bool:
    try:
        return b"hardcoded" in base64.b64decode(token + "=" * (-len(token) % 4)).lower()
    except (binascii.Error, ValueError):
        return False


def _values(line: str) -> list[str]:
    """The values on a fixture's line that test_detection_by_value's assertion says whispers finds."""
    found = [m.group(0) for m in _HARDCODED.finditer(line)
             if not line[:m.start()].endswith(("<", "</"))
             and not (re.fullmatch(r"[\s-]*[\"']?", line[:m.start()]) and _NAME_AFTER.match(line, m.end()))]
    found += [m.group(0) for m in _BASE64.finditer(line)
              if _b64_hardcoded(m.group(0)) and not any(m.group(0) in f for f in found)]
    # a number whispers reports (the test lets a numeric value pass): a card number, a numeric key
    return found + [a or b for a, b in re.findall(r"[:=]\s*\"?(\d{12,})\"?,?\s*$|>(\d{12,})<", line)]


def _comment(code: str, fmt: str) -> bool:
    return code.startswith(_COMMENT) or (fmt in _SLASH_COMMENT and code.startswith("//"))


def whispers(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"Skyscanner/whispers@{head}"
    expected = _expected_counts(show(repo, head, WHISPERS_TEST))
    samples = []
    for name, count in expected.items():
        path = f"{WHISPERS_FIXTURES}/{name}"
        text = show(repo, head, path).rstrip("\n")
        lines = text.split("\n")
        fmt = format_of(name, text)
        if name in WHISPERS_NOT_CREDENTIALS:
            left_out[WHISPERS_NOT_CREDENTIALS[name]] += 1
            continue
        if count == 0:
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}", name, text, fmt=fmt))
            samples += _negative_lines(upstream, path, name, lines, set(), fmt)
            continue
        parts = _sections(lines)
        sectioned = any(p is not None for p in parts)
        found: list[tuple[int, str]] = []
        negative: set[int] = set()
        for i, (line, part) in enumerate(zip(lines, parts, strict=True), 1):
            code = line.strip()
            # whispers reads a shell script's comments as commands (its shell plugin)
            if not code or (_comment(code, fmt) and not (fmt == "shell" and code.startswith("# "))):
                continue
            values = _values(line)
            ids = [v for v in values if _AWS_KEY_ID.fullmatch(v)]
            left_out["an AWS access key id whispers finds (an identifier, as in the thirteenth corpus)"] += len(ids)
            values = [v for v in values if v not in ids]
            if values and (part == "noncompliant" or not sectioned):
                found += [(i, v) for v in values]
            elif part == "compliant":
                negative.add(i)
        if not found:
            raise SystemExit(f"whispers: no value found in {name}, which the test expects {count} from")
        samples += _file_samples(upstream, path, text, found, left_out, fmt=fmt)
        # a noncompliant line holding `hardcoded` is not one whispers passes, even where no secret is left on it
        held = {i for i, (line, part) in enumerate(zip(lines, parts, strict=True), 1)
                if part != "compliant" and _HARDCODED.search(line)}
        samples += _negative_lines(upstream, path, name, lines, {i for i, _ in found} | held, fmt, negative)
    return samples


def _negative_lines(upstream: str, path: str, name: str, lines: list[str], positive: set[int], fmt: str,
                    always: set[int] | None = None) -> list[dict]:
    """The lines of a fixture whispers passes: those of its compliant part, and each other one holding a quote
    or a secret word (comments, markers and the lines of its findings set aside)."""
    samples = []
    for i, line in enumerate(lines, 1):
        code = line.strip()
        if i in positive or not code or _comment(code, fmt) or (_MARKER.search(line) and not _HARDCODED.search(line)):
            continue
        if i in (always or set()) or re.search(r"['\"`]", code) or _SECRET_WORD.search(code):
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{i}", name, code, fmt=fmt))
    return samples


# -- leaky-repo ------------------------------------------------------------------------------------------------

LEAKY_CSV = ".leaky-meta/secrets.csv"
_BLOCK = r"(-----BEGIN [A-Z ]*PRIVATE KEY-----\n.*?\n-----END [A-Z ]*PRIVATE KEY-----)"
# Per file the csv counts risk lines for: where its secret stands (the last group), from upstream's markers.
LEAKY_RISK = {
    ".bash_profile": r"(?m)^export (?:AWS_SECRET_ACCESS_KEY|RDS_PASSWORD|HEROKU_API_KEY|HOMEBREW_GITHUB_API_TOKEN|"
                     r"SLACK_API_TOKEN|MLAB_PASS)='?([^'\s]+)",
    ".bashrc": r"(?m)^export (?:GMAIL_PASSWORD|MAILCHIMP_API_KEY|JEKYLL_GITHUB_TOKEN)=\"([^\"]+)\"",
    ".docker/.dockercfg": r"\"auth\": \"([^\"]+)\"",
    ".docker/config.json": r"\"auth\": \"([^\"]+)\"",
    ".mozilla/firefox/logins.json": r"\"encrypted(?:Username|Password)\": \"([^\"]+)\"",
    ".ssh/id_rsa": r"(?s)" + _BLOCK,
    "cloud/.credentials": r"aws_secret_access_key = (\S+)",
    "cloud/.s3cfg": r"(?m)^secret_key = (\S+)",
    "cloud/.tugboat": r"api_key: (\S+)",
    "cloud/heroku.json": r"\"HEROKU_API_KEY\": \"([^\"]+)\"",
    "db/dump.sql": r"'(\$2y\$[^']+)'",
    "db/mongoid.yml": r"mongodb://[^:/]+:([^@]+)@",
    "etc/shadow": r"(?m)^[\w-]+:(\$\d\$[^:]+):",
    "filezilla/recentservers.xml": r"<Pass[^>]*>([^<]+)</Pass>",
    "filezilla/filezilla.xml": r"<Pass[^>]*>([^<]+)</Pass>",
    "misc-keys/cert-key.pem": r"(?s)" + _BLOCK,
    "misc-keys/putty-example.ppk": r"(?s)Private-Lines: \d+\n(.*?)\nPrivate-MAC:",
    "proftpdpasswd": r"(?m)^[\w-]+:(\$\d\$[^:]+):",
    "web/ruby/config/master.key": r"^([0-9a-f]{32})$",
    "web/ruby/secrets.yml": r"secret_key_base: (\S+)",
    "web/var/www/.env": r"(?m)^(?:APP_KEY|DB_PASSWORD|REDIS_PASSWORD|MAIL_PASSWORD)=(\S+)",
    ".npmrc": r"(?m)^(?:_auth = |//\S+:_authToken=)(\S+)",
    "web/var/www/public_html/wp-config.php": r"define\(\s*'(?:DB_PASSWORD|(?:AUTH|SECURE_AUTH|LOGGED_IN|NONCE)_"
                                              r"(?:KEY|SALT))',\s*'([^']*)'",
    "web/var/www/public_html/.htpasswd": r"(?m)^[\w-]+:(\S+)$",
    ".git-credentials": r":([^:/\s]+)@github\.com",
    "db/robomongo.json": r"\"(?:userPassword|sshPassphrase|sshUserPassword)\" : \"([^\"]+)\"",
    "web/js/salesforce.js": r"\.login\('[^']*', '([^']+)'",
    ".netrc": r"password (\S+)",
    "hub": r"oauth_token: \"([^\"]+)\"",
    "config": r"(?m)^IRC_PASS=(\S+)",
    "db/.pgpass": r"(?m)^[^#:\n][^:\n]*:\d+:[^:\n]*:[^:\n]*:(.+)$",
    "ventrilo_srv.ini": r"(?m)^(?:Admin)?Password=(\S+)",
    "web/var/www/public_html/config.php": r"\$dbpasswd = '([^']+)'",
    "db/dbeaver-data-sources.xml": r"(?<![\w-])password=\"([^\"]+)\"",
    ".esmtprc": r"(?m)^password \"([^\"]+)\"",
    "web/django/settings.py": r"(?m)^SECRET_KEY = '([^']+)'",
    "deployment-config.json": r"\"password\": \"([^\"]+)\"",
    ".ftpconfig": r"\"(?:pass|passphrase)\": \"([^\"]+)\"",
    ".remote-sync.json": r"\"password\": \"([^\"]+)\"",
    ".vscode/sftp.json": r"\"password\": \"([^\"]+)\"",
    "sftp-config.json": r"\"password\": \"([^\"]+)\"",
    ".idea/WebServers.xml": r"password=\"([^\"]+)\"",
}


def _risk_counts(csv: str) -> dict[str, tuple[int, int]]:
    rows = [ln.split(",") for ln in csv.splitlines() if ln.strip() and not ln.startswith("#")]
    return {r[0]: (int(r[1]), int(r[2])) for r in rows}


def leaky_repo(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"Plazmaz/leaky-repo@{head}"
    counts = _risk_counts(show(repo, head, LEAKY_CSV))
    if set(counts) - set(LEAKY_RISK) != {".ssh/id_rsa.pub", "high-entropy-misc.txt"}:
        raise SystemExit(f"leaky-repo: files with risk lines not read: {set(counts) - set(LEAKY_RISK)}")
    left_out["a leaky-repo file with informative lines only"] += 2
    samples = []
    for path, pattern in LEAKY_RISK.items():
        risk, _ = counts[path]
        text = show(repo, head, path).rstrip("\n")
        found = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in re.finditer(pattern, text)]
        lines = len({i for i, _ in found})
        if not found or lines > risk:
            raise SystemExit(f"leaky-repo: {lines} risk lines in {path}, the csv counts {risk}")
        left_out["a risk line leaky-repo counts that holds no value of its own"] += risk - lines
        samples += _file_samples(upstream, path, text, found, left_out)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "whispers": (".github/workflows/build.yml", ".github/workflows/publish.yml", ".github/dependabot.yml",
                 ".dockerignore", "Dockerfile", "Makefile", "setup.cfg", "setup.py", "pyproject.toml",
                 "requirements.txt", "MANIFEST.in", "whispers/config.yml"),
    "leaky-repo": (".gitattributes", ".leaky-meta/benchmark.py", ".leaky-meta/benchmark.sh",
                   ".leaky-meta/install-test-tools.sh", ".leaky-meta/trufflehog_exclude_paths.txt",
                   ".leaky-meta/,gitignore"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    return whispers(repos["whispers"], left_out) + leaky_repo(repos["leaky-repo"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
