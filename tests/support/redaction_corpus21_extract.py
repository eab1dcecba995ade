"""Build the twenty-first held-out redaction corpus (tests/fixtures/redaction/corpus21.json.gz).

The first twenty corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler, dotnet/roslyn-analyzers,
Checkmarx/kics, github/codeql, anchore/syft, IBM/detect-secrets,
advanced-security/secret-scanning-custom-patterns and octarinesec/secret-detector. This one
comes from one project none of them read, labelled by what its own tests expect:

- leaktk (the Leak Toolkit): leaktk/fake-leaks is a tree of fake leaks, most of them in a
  folder per kind of secret with a `valid/` and an `invalid/` side; leaktk/patterns holds the
  toolkit's gitleaks rules and, as a submodule at `testdata/fake-leaks`, that tree. Its test
  `tests/test_leaktk_scanner.py` scans the tree with the rules and requires exactly the
  findings of `testdata/leaktk-scanner-results.yaml`, each a file, a rule, the match and the
  secret. The labels are read at the newest patterns commit whose submodule is the fake-leaks
  commit read. A file the results name is a positive, whole where it has up to 200 lines;
  in a longer one, each run of lines between blank lines that holds a labelled secret, cut to
  five lines either side of the secrets' lines where the run is longer than 40 lines (windows
  that meet are one sample). A positive's secrets are the labelled secrets of its file that
  stand in its text; a labelled secret not written out in its file (the scanner decodes or
  joins it) is left out, as is a placeholder. A file under an `invalid/` or `benign/` folder
  that the results do not name is an upstream negative, whole. Left out: the other files no
  result names (files the rules set aside by path or by an allow comment, and fake leaks no
  rule of this version reports), whether or not they hold a secret, and a file that is not
  UTF-8 text.
- Benign: ordinary files of the two repositories outside their tests and test data (READMEs,
  the contributing guide, Makefile, CI workflow, scripts, the base rule configuration, the
  policy, the Containerfile), each whole (up to 200 lines) and each line that names a
  password, secret, token, key, credential or auth, and `git log --format='%H %an %s' -n 15`
  at each pinned commit. Chosen before scoring, by the fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). A sample is carried under its upstream path, labelled with
the format its name or text shows (`format_of`). The scorer (tests/support/redaction_corpus21.py)
stores each sample in the four carriers an agent produces. Sources read
`leaktk/fake-leaks@commit:path` (a whole file) or `…:path#lines-a-b` (a run of a longer file).

Usage (not part of the test suite, which reads the built file; PyYAML, the `corpus` extra, reads
the expected results):

    .venv/bin/python tests/support/redaction_corpus21_extract.py --fake-leaks DIR --patterns DIR

where each DIR is a clone at the commit the fixture names: fake-leaks at its HEAD, patterns
checked out at the newest commit whose `testdata/fake-leaks` is that commit.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, git, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus21.json.gz"
SESSION = "corpus21"
_FAKE_LEAKS = "leaktk/fake-leaks"
_PATTERNS = "leaktk/patterns"
_NAMES = {_FAKE_LEAKS: "fake-leaks", _PATTERNS: "patterns"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=20)
RESULTS = "testdata/leaktk-scanner-results.yaml"
SUBMODULE = "testdata/fake-leaks"
_RUN_MAX = 40  # a longer run of lines is cut around its secrets
_AROUND = 5  # lines kept either side of a secret's lines in a cut run


def _utf8(repo: str, rev: str, path: str) -> str | None:
    """A file's text at the commit, or None where it is not UTF-8."""
    data = subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True, capture_output=True).stdout
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _runs(lines: list[str]) -> list[tuple[int, int]]:
    """The runs of lines between blank lines, as (first, last) indexes."""
    runs, start = [], None
    for i, line in enumerate(lines):
        if line.strip():
            start = i if start is None else start
        elif start is not None:
            runs.append((start, i - 1))
            start = None
    if start is not None:
        runs.append((start, len(lines) - 1))
    return runs


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """The (first, last) line indexes of each occurrence of the secret in the text."""
    spans, at = [], text.find(secret)
    while at >= 0:
        first = text.count("\n", 0, at)
        spans.append((first, first + secret.count("\n")))
        at = text.find(secret, at + 1)
    return spans


def _windows(text: str, secrets: list[str]) -> list[tuple[int, int]]:
    """The pieces of a long file its samples are: each run holding a secret, cut around them when long."""
    lines = text.split("\n")
    spans = sorted(sp for x in secrets for sp in _spans(text, x))
    pieces: list[tuple[int, int]] = []
    for first, last in _runs(lines):
        inside = [(a, b) for a, b in spans if first <= a <= last]
        if not inside:
            continue
        if last - first + 1 <= _RUN_MAX:
            pieces.append((first, max(last, max(b for _, b in inside))))
            continue
        cut: list[tuple[int, int]] = []
        for a, b in inside:
            lo, hi = max(first, a - _AROUND), min(max(last, b), b + _AROUND)
            if cut and lo <= cut[-1][1] + 1:
                cut[-1] = (cut[-1][0], max(cut[-1][1], hi))
            else:
                cut.append((lo, hi))
        pieces += cut
    return pieces


def leaks(repos: dict[str, str], left_out: Counter) -> list[dict]:
    import yaml

    fake, patterns = repos["fake-leaks"], repos["patterns"]
    head, labels_at = head_commit(fake), head_commit(patterns)
    pinned = git(patterns, "ls-tree", labels_at, SUBMODULE).split()[2]
    if pinned != head:
        raise SystemExit(f"patterns@{labels_at} pins fake-leaks@{pinned}, not the fake-leaks HEAD {head}")
    results = yaml.safe_load(show(patterns, labels_at, RESULTS))
    labelled: dict[str, list[str]] = {}
    for r in results:
        labelled.setdefault(r["location.path"], []).append(str(r["secret"]))
    files = [f for f in tree_files(fake, head) if f]
    samples: list[dict] = []
    for path in files:
        source = f"{_FAKE_LEAKS}@{head}:{path}"
        text = _utf8(fake, head, path)
        if path not in labelled:
            parts = path.split("/")
            if "invalid" not in parts[:-1] and "benign" not in parts[:-1]:
                left_out["a file no result names, outside the invalid and benign folders"] += 1
            elif text is None:
                left_out["a file that is not UTF-8 text"] += 1
            elif len(text.splitlines()) > _MAX_LINES:
                left_out["an upstream negative of more than 200 lines"] += 1
            elif not text.strip():
                left_out["an empty file"] += 1
            else:
                samples.append(CORPUS.sample("upstream-negative", source, path, text.rstrip("\n")))
            continue
        if text is None:
            left_out["a file that is not UTF-8 text"] += 1
            continue
        text = text.rstrip("\n")
        secrets: list[str] = []
        for secret in dict.fromkeys(labelled[path]):
            if secret not in text:
                left_out["a labelled secret not written out in its file (decoded or joined by the scanner)"] += 1
            elif placeholder(secret) or not secret.strip():
                left_out["a labelled value that is a placeholder or empty"] += 1
            else:
                secrets.append(secret)
        if not secrets:
            left_out["a labelled file with no secret written out in it"] += 1
            continue
        lines = text.split("\n")
        if len(lines) <= _MAX_LINES:
            samples += CORPUS.positive(source, path, text, secrets, left_out, fmt=format_of(path, text))
            continue
        for first, last in _windows(text, secrets):
            piece = "\n".join(lines[first:last + 1])
            inside = [x for x in secrets if x in piece]
            samples += CORPUS.positive(f"{source}#lines-{first + 1}-{last + 1}", path, piece, inside, left_out,
                                       fmt=format_of(path, piece))
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "fake-leaks": ("README.md", "Containerfile", "hack/publish-container.sh"),
    "patterns": (
        "README.md", "CONTRIBUTING.md", "Makefile", ".github/workflows/test.yml", ".gitmodules", ".gitignore",
        "scripts/check-dup-ids", "scripts/check-not-tested", "scripts/compile", "scripts/leaktk",
        "scripts/only-keys", "scripts/sort-and-group-in-place", "scripts/sort-results", "scripts/test",
        "scripts/versions", "patterns/gitleaks/8.27.0/00-base-config.toml", "patterns/leaktk/1/opa_policy.rego"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return leaks(repos, left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
