"""Build the seventeenth held-out redaction corpus (tests/fixtures/redaction/corpus17.json.gz).

The first sixteen corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler and dotnet/roslyn-analyzers.
This one comes from two projects none of them read, each labelled by what its own tests expect:

- Checkmarx/kics: the tests of its `passwords_and_secrets` query
  (`assets/queries/common/passwords_and_secrets/test/`). A `positive*` file is labelled by
  `positive_expected_result.json`, whose entries name a file, a line and the kind of secret
  the query reports there (`Passwords And Secrets - Generic Password`, `... - AWS Access Key`,
  ...). The files were read one version at a time, each at its own commit, so a positive
  file is used only where an expected-results version agrees with the version read: every
  entry for the file names a line that holds what its kind says, a name/value pair whose name
  holds the kind's word (`pass`, `secret`, `token`, `api key`, `access key`; a Kubernetes env
  entry's `value:` under a `name:` holding `pass`) or the kind's own shape (a URL's password,
  a Slack or Teams webhook, an AWS key id, a vendor token's prefix, a private key block). The
  value on each such line is a secret (quoted, or bare in YAML, Dockerfile and shell text;
  an HCL, JSON or Bicep value must be a quoted literal), the line a positive and the file
  whole a positive. A `negative*` file (the query must report nothing in it) is an upstream
  negative whole, and so is each of its lines that names a password, secret, token, key,
  credential or auth.
- github/codeql: the query tests of CWE-798 (hard-coded credentials) for JavaScript, Python
  and Go, labelled inline (`// $ Alert`, `# $ Alert`, `$ MISSING: Alert`: an alert the query
  should give, and the older `// NOT OK`), and for Ruby by `HardcodedCredentials.expected`,
  whose `#select` rows name a literal by line and column with its first characters (a row is
  used where the literal at that place in the version read starts with them). A labelled
  line's secret is its last string literal (the value the credential is given); a line whose
  literal spans lines or holds a space is left out. The labelled lines are positives, and so
  is each file whole (200 lines or fewer) or, in the longer JavaScript test, each top-level
  block holding a label; the lines holding a string literal with no label (or marked
  `// OK`), and the JavaScript blocks with none, are upstream negatives. A line that
  differs from one already taken only in its identifiers (the JavaScript test repeats one
  AWS client constructor for 87 services) is taken once.
- Benign: ordinary files of the same repositories outside their tests (kics' Dockerfile,
  Compose file and golangci-lint configuration; codeql's pre-commit configuration, Bazel
  configuration and a GitHub workflow), each whole (up to 200 lines) and each line that names
  a password, secret, token, key, credential or auth. Chosen before scoring, by the
  fourteenth corpus's rule; no `git log` (no clone could be made).

Neither repository can be brought here whole (each snapshot is over the 500 MB a mirror may
have), so each file was read at one stored version through the file index and saved under a
directory laid out `<commit>/<path>`; the extractor reads only that directory (a rerun gives
the same bytes). A secret is kept only where the scoring can judge it
(tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule), and a
placeholder (tests/support/redaction_corpus10_extract.py `placeholder`) is left out.
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus17.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`, `#block-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus17_extract.py --src DIR

where DIR holds the files read, each at `DIR/<commit>/<path>` (docs/redaction.md, the
seventeenth corpus, lists them). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus17.json.gz"
SESSION = "corpus17"
_NAMES = {"Checkmarx/kics": "kics", "github/codeql": "codeql"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=16)


class Source:
    """The directory of files read: `<commit>/<path>`, each path at the one commit it was read at."""

    def __init__(self, root: str):
        self.root = Path(root)
        self.at: dict[str, list[str]] = {}
        for f in sorted(self.root.glob("*/**/*")):
            if f.is_file() and re.fullmatch(r"[0-9a-f]{40}", f.relative_to(self.root).parts[0]):
                commit, path = f.relative_to(self.root).parts[0], "/".join(f.relative_to(self.root).parts[1:])
                self.at.setdefault(path, []).append(commit)

    def read(self, commit: str, path: str) -> str:
        return (self.root / commit / path).read_text(encoding="utf-8")

    def versions(self, path: str) -> list[str]:
        return self.at.get(path, [])

    def under(self, prefix: str) -> list[str]:
        return sorted(p for p in self.at if p.startswith(prefix))


# -- kics ------------------------------------------------------------------------------------------------------

_KICS_TEST = "assets/queries/common/passwords_and_secrets/test/"
_EXPECTED = _KICS_TEST + "positive_expected_result.json"
# a name/value pair on a line: YAML / HCL / JSON / Bicep keys, Dockerfile ARG/ENV, shell export
_PAIR = re.compile(r"""^(?:-\s+)?(?:ARG\s+|ENV\s+|export\s+)?["']?([\w.-]+)["']?\s*[:=]\s*(.*)$""")
_QUOTED = re.compile(r"""^(["'])(.*?)\1""")
_BARE = re.compile(r"""^[^\s#,{}\[\]()<>|&*!'"]+""")
# a kind named by its word: the pair's name must hold it
_KIND_WORD = {"Generic Password": r"(?i)pass", "Generic Secret": r"(?i)secret", "Generic Token": r"(?i)token",
              "Generic API Key": r"(?i)api[_-]?key", "Generic Access Key": r"(?i)access[_-]?key",
              "AWS Secret Key": r"(?i)aws_?secret"}
# a kind named by its shape: the line must hold it (group 1 the secret)
_KIND_SHAPE = {
    "Password in URL": r"[a-z][\w+.-]*://[^/\s:@\"']+:([^/\s@\"']+)@",
    "Slack Webhook": r"(https://hooks\.slack\.com/services/[\w/]+)",
    "MSTeams Webhook": r"(https://[\w.-]+\.webhook\.office\.com/[\w/@.-]+)",
    "AWS Access Key": r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b",
    "Google OAuth": r"([\w-]+\.apps\.googleusercontent\.com)",
    "Slack Token": r"(xox[abprs]-[\w-]+)",
    "Stripe API Key": r"(sk_live_[0-9a-zA-Z]{24,})",
    "Heroku API Key": r"(?i)heroku.*\b([0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12})\b",
    "Square Access Token": r"(sq0atp-[\w-]{22,})",
    "Picatic API Key": r"(sk_live_[0-9a-z]{32})",
    "Amazon MWS Auth Token": r"(amzn\.mws\.[0-9a-f-]{36})",
    "MailChimp API Key": r"([0-9a-f]{32}-us\d{1,2})",
    "SendGrid API Key": r"(SG\.[\w-]{22}\.[\w-]{43})",
    "Mailgun API Key": r"(key-[0-9a-zA-Z]{32})",
    "Twilio API Key": r"(SK[0-9a-fA-F]{32})",
}
_PRIVATE_KEY = ("Asymmetric private key", "Generic Private Key")
_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")


def _pair_value(line: str, fmt: str) -> tuple[str, str] | None:
    """A line's name and literal value: quoted, or bare where the format writes literals bare."""
    m = _PAIR.match(line.strip())
    if not m:
        return None
    name, rest = m.group(1), m.group(2)
    if q := _QUOTED.match(rest):
        return name, q.group(2)
    if fmt in ("hcl", "json", "bicep"):
        return None
    b = _BARE.match(rest)
    return (name, b.group(0)) if b else None


def _kics_secret(lines: list[str], n: int, kind: str, fmt: str) -> str | None:
    """What line n holds that its kind says (its secret), or None where it does not agree."""
    if n > len(lines) or not lines[n - 1].strip() or lines[n - 1].strip().startswith(("#", "//")):
        return None
    line = lines[n - 1]
    if kind in _PRIVATE_KEY:
        if not _BEGIN.search(line):
            return None
        end = next((i for i in range(n, len(lines)) if "-----END" in lines[i]), None)
        return "\n".join(lines[n:end]) if end is not None and end > n else None
    if kind in _KIND_SHAPE:
        m = re.search(_KIND_SHAPE[kind], line)
        return m.group(1) if m else None
    if kind == "K8s Environment Variable Password":
        pair = _pair_value(line, fmt)
        above = _pair_value(lines[n - 2], fmt) if n >= 2 else None
        ok = pair and pair[0] == "value" and above and above[0] == "name" and re.search(r"(?i)pass", above[1])
        return pair[1] if ok and pair else None
    if kind in _KIND_WORD:
        pair = _pair_value(line, fmt)
        return pair[1] if pair and re.search(_KIND_WORD[kind], pair[0]) and pair[1] else None
    return None


def _expected_versions(src: Source) -> list[tuple[str, dict[str, list[tuple[int, str]]]]]:
    """Each expected-results version read: its commit and, per file, its (line, kind) entries."""
    versions = []
    for commit in src.versions(_EXPECTED):
        entries: dict[str, list[tuple[int, str]]] = {}
        for e in json.loads(src.read(commit, _EXPECTED)):
            kind = e["queryName"].removeprefix("Passwords And Secrets - ")
            entries.setdefault(e["fileName"], []).append((e["line"], kind))
        versions.append((commit, entries))
    return versions


def kics(src: Source, left_out: Counter) -> list[dict]:
    samples: list[dict] = []
    expected = _expected_versions(src)
    read = {p.rsplit("/", 1)[-1] for p in src.under(_KICS_TEST)}
    labelled = {f for _, entries in expected for f in entries}
    left_out["a kics positive file named by the expected results and not read here"] += len(labelled - read)
    for path in src.under(_KICS_TEST + "positive"):
        name = path.rsplit("/", 1)[-1]
        if name.startswith("positive_expected_result"):
            continue
        for commit in src.versions(path):
            text = src.read(commit, path)
            lines = text.split("\n")
            fmt = format_of(path, text)
            agreeing = []
            for exp_commit, entries in expected:
                if name not in entries:
                    continue
                found = [(n, _kics_secret(lines, n, kind, fmt)) for n, kind in sorted(entries[name])]
                if all(s is not None for _, s in found):
                    agreeing.append((exp_commit, found))
            if not agreeing or len({tuple(f) for _, f in agreeing}) > 1:
                left_out["a kics positive file whose version read agrees with no expected-results version"] += 1
                continue
            exp_commit, found = agreeing[0]
            samples += _kics_positive(f"Checkmarx/kics@{commit}:{path}", name, lines, found, fmt, left_out)
    for path in src.under(_KICS_TEST + "negative"):
        name = path.rsplit("/", 1)[-1]
        for commit in src.versions(path):
            text = src.read(commit, path).rstrip("\n")
            samples += _whole_and_lines("upstream-negative", f"Checkmarx/kics@{commit}:{path}", name, text)
    return samples


def _kics_positive(source: str, name: str, lines: list[str], found: list[tuple[int, str | None]], fmt: str,
                   left_out: Counter) -> list[dict]:
    samples = []
    kept = []
    for n, secret in found:
        assert secret is not None
        if placeholder(secret):
            left_out["a labelled value that is a placeholder or empty"] += 1
            continue
        kept.append(secret)
        if secret in lines[n - 1]:
            samples += CORPUS.positive(f"{source}#line-{n}", name, lines[n - 1].strip(), [secret], left_out, fmt=fmt)
    text = "\n".join(lines).rstrip("\n")
    if kept and len(text.split("\n")) <= _MAX_LINES:
        samples += CORPUS.positive(source, name, text, kept, left_out, uses=Counter(kept), fmt=fmt)
    return samples


def _whole_and_lines(kind: str, source: str, name: str, text: str) -> list[dict]:
    """A file whole (up to 200 lines) and each line naming a secret word (the benign rule)."""
    fmt = format_of(name, text)
    samples = []
    if len(text.splitlines()) <= _MAX_LINES:
        samples.append(CORPUS.sample(kind, source, name, text, fmt=fmt))
    for i, line in enumerate(text.splitlines(), 1):
        if _SECRET_WORD.search(line) and line.strip() and line.strip() != text.strip():
            samples.append(CORPUS.sample(kind, f"{source}#line-{i}", name, line, fmt=fmt))
    return samples


# -- codeql ------------------------------------------------------------------------------------------------------

CODEQL_INLINE = ("javascript/ql/test/query-tests/Security/CWE-798/HardcodedCredentials.js",
                 "python/ql/test/query-tests/Security/CWE-798-HardcodedCredentials/test.py",
                 "go/ql/test/query-tests/Security/CWE-798/main.go",
                 "go/ql/test/query-tests/Security/CWE-798/HardcodedKeysBad.go")
CODEQL_RUBY = "ruby/ql/test/query-tests/security/cwe-798/HardcodedCredentials"
_ALERT = re.compile(r"\$ (?:MISSING: )?Alert\b|\bNOT OK\b")
_OTHER_MARK = re.compile(r"\$ (?:MISSING: )?\w+")  # another inline annotation (`$ Sink`): part of an alert's flow
_COMMENT_MARK = {"js": "//", "go": "//", "py": "#", "rb": "#"}
_LITERAL = {
    "js": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\\n]|\\.)*)`"),
    "go": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|`([^`\n]*)`"),
    "py": re.compile(r"'''(.*?)'''|\"\"\"(.*?)\"\"\"|\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'"),
    "rb": re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'"),
}
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def _split(line: str, lang: str) -> tuple[str, str, list[tuple[int, int, str]]]:
    """A line's code, its comment ("" without one) and the string literals of its code."""
    literals: list[tuple[int, int, str]] = []
    mark, pattern, pos = _COMMENT_MARK[lang], _LITERAL[lang], 0
    while pos < len(line):
        at = line.find(mark, pos)
        m = pattern.search(line, pos)
        if m and (at < 0 or m.start() < at):
            literals.append((m.start(), m.end(), next((g for g in m.groups() if g is not None), "")))
            pos = m.end()
            continue
        if at < 0:
            break
        return line[:at].rstrip(), line[at + len(mark):], literals
    return line.rstrip(), "", literals


def _shape(code: str, literals: list[tuple[int, int, str]]) -> str:
    """The code with its identifiers outside literals set aside: lines alike but for names share it."""
    out, pos = [], 0
    for start, end, _ in literals:
        out += [_IDENT.sub("_", code[pos:start]), code[start:end]]
        pos = end
    out.append(_IDENT.sub("_", code[pos:]))
    return "".join(out).strip()


def _unclosed(code: str, lang: str) -> bool:
    """Does a literal open on this line and close on another (a backtick block)?"""
    rest = _LITERAL[lang].sub("", code)
    return "`" in rest if lang in ("js", "go") else False


def _label_lines(text: str, lang: str, left_out: Counter) -> tuple[dict[int, list[str]], list[int], set[int]]:
    """Per labelled line its secret; the lines holding a literal with no label (upstream's negatives);
    and the labelled lines that hold no literal (a sink: the credential reaches it from another line)."""
    secrets: dict[int, list[str]] = {}
    negatives = []
    sinks = set()
    lines = text.split("\n")
    for i, line in enumerate(lines, 1):
        code, comment, literals = _split(line, lang)
        # a module a line requires is a name, not a value
        literals = [lit for lit in literals if not code[:lit[0]].rstrip().endswith(("require(", "import"))]
        if _ALERT.search(comment):
            over_lines = _unclosed(code, lang) or (i < len(lines) and lines[i].lstrip().startswith("`"))
            if over_lines:
                left_out["a codeql label on a literal written over several lines"] += 1
                continue
            if not literals:
                left_out["a codeql label on a sink (the credential reaches it from another line)"] += 1
                sinks.add(i)
                continue
            value = literals[-1][2]
            if re.search(r"\s", value):
                left_out["a codeql labelled literal that holds a space (a phrase, not one value)"] += 1
            elif placeholder(value) or not value:
                left_out["a labelled value that is a placeholder or empty"] += 1
            else:
                secrets[i] = [value]
        elif literals and not _OTHER_MARK.search(comment) and not _unclosed(code, lang):
            negatives.append(i)
    return secrets, negatives, sinks


def codeql(src: Source, left_out: Counter) -> list[dict]:
    samples: list[dict] = []
    for path in CODEQL_INLINE:
        for commit in src.versions(path):
            samples += _codeql_file(src.read(commit, path), path.rsplit(".", 1)[-1],
                                    f"github/codeql@{commit}:{path}", path.rsplit("/", 1)[-1], left_out)
    for commit in src.versions(CODEQL_RUBY + ".rb"):
        text = src.read(commit, CODEQL_RUBY + ".rb")
        for exp_commit in src.versions(CODEQL_RUBY + ".expected"):
            samples += _ruby(text, src.read(exp_commit, CODEQL_RUBY + ".expected"),
                             f"github/codeql@{commit}:{CODEQL_RUBY}.rb", left_out)
    return samples


def _codeql_file(text: str, lang: str, source: str, name: str, left_out: Counter) -> list[dict]:
    secrets, negatives, sinks = _label_lines(text, lang, left_out)
    return _labelled_file(text, lang, source, name, secrets, negatives, sinks, left_out)


# a #select row: the literal's place and its first characters
_SELECT = re.compile(r"^\| HardcodedCredentials\.rb:(\d+):(\d+):(\d+):(\d+) \| \"([^\"]*)\" \|", re.M)


def _ruby(text: str, expected: str, source: str, left_out: Counter) -> list[dict]:
    lines = text.split("\n")
    select = expected.split("#select", 1)[1] if "#select" in expected else ""
    secrets: dict[int, list[str]] = {}
    for m in _SELECT.finditer(select):
        n, col, n_end, col_end = (int(m.group(i)) for i in range(1, 5))
        shown = m.group(5)
        literal = lines[n - 1][col - 1:col_end] if n == n_end and n <= len(lines) else ""
        if not (literal.startswith('"') and literal.endswith('"') and literal[1:-1].startswith(shown.removesuffix("..."))):
            left_out["a codeql expected row that does not agree with the version read"] += 1
            continue
        if placeholder(literal[1:-1]):
            left_out["a labelled value that is a placeholder or empty"] += 1
            continue
        if literal[1:-1] not in secrets.setdefault(n, []):
            secrets[n].append(literal[1:-1])
    negatives = [i for i, line in enumerate(lines, 1) if i not in secrets and _split(line, "rb")[2]]
    # a line whose literal upstream labels on another line is not a negative of its own
    negatives = [i for i in negatives if not any(s in lines[i - 1] for v in secrets.values() for s in v)]
    return _labelled_file(text, "rb", source, "HardcodedCredentials.rb", secrets, negatives, set(), left_out)


def _labelled_file(text: str, lang: str, source: str, name: str, secrets: dict[int, list[str]], negatives: list[int],
                   sinks: set[int], left_out: Counter) -> list[dict]:
    """The labelled lines (positives), the unlabelled ones holding a literal (negatives), and the file
    whole, or its top-level blocks where it is longer than 200 lines. In a file or block where upstream
    labels a sink, only the lines it marks `OK` are negatives: the others may hold the credential."""
    lines = text.split("\n")
    fmt = format_of(name, text)
    samples: list[dict] = []
    if len(lines) <= _MAX_LINES:
        blocks = [(1, len(lines))]
        where = ""
    else:
        starts = [i for i, line in enumerate(lines, 1) if line.startswith("(")] + [len(lines) + 1]
        blocks = [(a, b - 1) for a, b in zip(starts, starts[1:], strict=False)]
        where = "block"
    flowing = {i for a, b in blocks if any(a <= s <= b for s in sinks) for i in range(a, b + 1)}
    kept = [i for i in negatives if i not in flowing or re.search(r"(?<!NOT )\bOK\b", _split(lines[i - 1], lang)[1])]
    left_out["an unlabelled line where upstream labels a sink (it may hold the credential)"] += len(negatives) - len(kept)
    negatives = kept
    shapes: set[tuple[str, str]] = set()
    for kind, numbers in (("upstream-positive", sorted(secrets)), ("upstream-negative", negatives)):
        for i in numbers:
            code, _, literals = _split(lines[i - 1], lang)
            shape = _shape(code, literals)
            if (kind, shape) in shapes:
                left_out["a codeql line that differs from one taken only in its identifiers"] += 1
                continue
            shapes.add((kind, shape))
            line = lines[i - 1].strip()
            if kind == "upstream-positive":
                samples += CORPUS.positive(f"{source}#line-{i}", name, line, secrets[i], left_out, fmt=fmt)
            else:
                samples.append(CORPUS.sample(kind, f"{source}#line-{i}", name, line, fmt=fmt))
    for a, b in blocks:
        body = "\n".join(lines[a - 1:b]).strip("\n")
        held = [x for i in range(a, b + 1) for x in secrets.get(i, [])]
        src = f"{source}#{where}-{a}" if where else source
        if held:
            samples += CORPUS.positive(src, name, body, held, left_out, uses=Counter(held), fmt=fmt)
        elif where and not any(_ALERT.search(_split(line, lang)[1]) for line in lines[a - 1:b]):
            # a block with no label at all (a block whose labels were all left out is neither)
            samples.append(CORPUS.sample("upstream-negative", src, name, body, fmt=fmt))
        elif not where:
            left_out["a codeql file with no label left to judge"] += 1
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "Checkmarx/kics": ("Dockerfile", "docker-compose.yml", ".golangci.yml", ".github/workflows/release-dkr-image.yml",
                       ".github/workflows/release-docker-github-actions.yaml"),
    "github/codeql": (".pre-commit-config.yaml", ".bazelrc", ".github/workflows/check-change-note.yml",
                      ".github/workflows/post-pr-comment.yml", ".github/workflows/csv-coverage-pr-comment.yml",
                      ".github/workflows/csv-coverage-update.yml", ".github/workflows/qhelp-pr-preview.yml"),
}


def benign(src: Source, left_out: Counter) -> list[dict]:
    samples = []
    for repo, paths in BENIGN_FILES.items():
        for path in paths:
            if not src.versions(path):
                left_out["benign file not read"] += 1
            for commit in src.versions(path):
                text = src.read(commit, path).lstrip("\ufeff").rstrip("\n")
                samples += _whole_and_lines("benign", f"{repo}@{commit}:{path}", path, text)
    return samples


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True, metavar="DIR", help="the files read, each at DIR/<commit>/<path>")
    src = Source(ap.parse_args(argv).src)
    left_out: Counter = Counter()
    samples = kics(src, left_out) + codeql(src, left_out) + benign(src, left_out)
    samples = CORPUS.drop_earlier_secrets(samples, left_out)
    CORPUS.write(OUT, __doc__ or "", samples, left_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
