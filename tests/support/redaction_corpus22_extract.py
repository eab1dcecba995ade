"""Build the twenty-second held-out redaction corpus (tests/fixtures/redaction/corpus22.json.gz).

The first twenty-one corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
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
advanced-security/secret-scanning-custom-patterns, octarinesec/secret-detector and leaktk.
This one comes from one project none of them read, labelled by what its own tests expect:

- Samsung/CredSweeper: `tests/samples/` is a tree of sample files, and its tests scan it and
  require exactly the findings recorded under `tests/data/`: `output.json` for the default scan
  (the rules, then the filters, then the machine-learning validation), `no_ml.json` without the
  validation, `no_filters_no_ml.json` with the rules alone, `depth_3_pedantic.json` for the deep
  scan (archives and encoded data opened) and `doc.json` for the documentation mode. Each
  finding names a file, a line and the value. A sample file the default scan's findings name is
  a positive, whole where it has up to 200 lines; in a longer one, each run of lines between
  blank lines that holds a labelled value, cut to five lines either side of the values' lines
  where the run is longer than 40 lines (the twenty-first corpus's windows). A positive's
  secrets are the default scan's values of its file that stand in its text; a value not
  written out there is left out, as is a placeholder. Upstream negatives are what the tests
  label false: a sample file none of the default, deep or documentation findings names, whole
  (whether or not the rules alone report it: the filters or the validation set such reports
  aside), and each line of a positive file that the rules alone report and none of the
  default, deep or documentation findings names, the line alone (where the reported value
  stands in the line of that number). Left out: a file only the
  deep scan's or the documentation mode's findings name (its secret is encoded, archived or
  judged another way), a reported line holding a labelled value or not found at its number,
  and a file that is not UTF-8 text.
- Benign: ordinary files of the repository outside its tests and samples (the security
  policy, the action, the pre-commit hooks, the CI workflows, the tool configuration, the
  requirements, the contributing guide, the scanner's own pre-processing configuration), each
  whole (up to 200 lines) and each line that names a password, secret, token, key, credential
  or auth, and `git log --format='%H %an %s' -n 15` at the pinned commit. The README is not
  one: it shows a sample's finding. Chosen before scoring, by the fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). A sample is carried under its upstream path, labelled with
the format its name or text shows (`format_of`). The scorer (tests/support/redaction_corpus22.py)
stores each sample in the four carriers an agent produces. Sources read
`Samsung/CredSweeper@commit:path` (a whole file), `…:path#lines-a-b` (a run of a longer file)
or `…:path#line-n` (a reported line).

Usage (not part of the test suite, which reads the built file; standard library only):

    .venv/bin/python tests/support/redaction_corpus22_extract.py --credsweeper DIR

where DIR is a clone (or bare mirror) of Samsung/CredSweeper at the commit the fixture names.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402
from redaction_corpus21_extract import _utf8, _windows  # noqa: E402

OUT = HERE / "corpus22.json.gz"
SESSION = "corpus22"
_CREDSWEEPER = "Samsung/CredSweeper"
CORPUS = Corpus({_CREDSWEEPER: "credsweeper"}, session=SESSION, earlier=21)
SAMPLES = "tests/samples/"
DEFAULT = "tests/data/output.json"  # the rules, the filters and the validation
RULES_ALONE = "tests/data/no_filters_no_ml.json"
DEEP = "tests/data/depth_3_pedantic.json"
DOC = "tests/data/doc.json"


def _findings(repo: str, rev: str, results: str) -> list[tuple[str, int, str]]:
    """Each finding's (file, line number, value); a finding inside an archive or a decoded text
    names a path that is no file of the tree."""
    found = []
    for cred in json.loads(show(repo, rev, results)):
        for line in cred["line_data_list"]:
            found.append((line["path"].removeprefix("./"), int(line["line_num"]), str(line["value"])))
    return found


def samples_of(repos: dict[str, str], left_out: Counter) -> list[dict]:
    repo = repos["credsweeper"]
    head = head_commit(repo)
    default = _findings(repo, head, DEFAULT)
    labelled: dict[str, list[str]] = {}
    for path, _, value in default:
        labelled.setdefault(path, []).append(value)
    judged_true = {(p, n) for results in (DEFAULT, DEEP, DOC) for p, n, _ in _findings(repo, head, results)}
    named_true = {p for p, _ in judged_true}
    reported: dict[tuple[str, int], list[str]] = {}
    for p, n, value in _findings(repo, head, RULES_ALONE):
        if (p, n) not in judged_true:
            reported.setdefault((p, n), []).append(value)
    samples: list[dict] = []
    for path in [f for f in tree_files(repo, head) if f.startswith(SAMPLES)]:
        source = f"{_CREDSWEEPER}@{head}:{path}"
        text = _utf8(repo, head, path)
        if text is None:
            left_out["a file that is not UTF-8 text"] += 1
            continue
        text = text.rstrip("\n")
        if path not in labelled:
            if path in named_true:
                left_out["a file only the deep scan's or the documentation mode's findings name"] += 1
            elif len(text.splitlines()) > _MAX_LINES:
                left_out["an upstream negative of more than 200 lines"] += 1
            elif not text.strip():
                left_out["an empty file"] += 1
            else:
                samples.append(CORPUS.sample("upstream-negative", source, path, text))
            continue
        secrets: list[str] = []
        for secret in dict.fromkeys(labelled[path]):
            if secret not in text:
                left_out["a labelled value not written out in its file"] += 1
            elif placeholder(secret) or not secret.strip():
                left_out["a labelled value that is a placeholder or empty"] += 1
            else:
                secrets.append(secret)
        samples += _false_lines(source, path, text, labelled[path], reported, left_out)
        if not secrets:
            left_out["a labelled file with no value written out in it"] += 1
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


def _false_lines(source: str, path: str, text: str, values: list[str],
                 reported: dict[tuple[str, int], list[str]], left_out: Counter) -> list[dict]:
    """The lines of a positive file that the rules alone report and no judged finding names, each alone."""
    lines = text.split("\n")
    out = []
    for (p, n), found in sorted(reported.items()):
        if p != path:
            continue
        line = lines[n - 1] if 0 < n <= len(lines) else ""
        if not line.strip() or not all(v in line for v in found):
            left_out["a reported line not found at its number"] += 1
        elif any(v and v in line for v in values):
            left_out["a reported line holding a labelled value"] += 1
        else:
            out.append(CORPUS.sample("upstream-negative", f"{source}#line-{n}", path, line,
                                     fmt=format_of(path, line)))
    return out


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "credsweeper": (
        "SECURITY.md", "action.yml", ".pre-commit-hooks.yaml", ".pre-commit-config.yaml", ".coveragerc", ".flake8",
        ".mypy.ini", ".pylintrc", ".readthedocs.yml", "pyproject.toml", "pytest.ini", "requirements.txt",
        ".github/workflows/test.yml", ".github/workflows/pypi.yml", ".github/workflows/action.yml",
        ".github/workflows/rottenness.yml", ".github/workflows/fuzz.yml", "docs/README.md",
        "docs/howto/how-to-contribute.md", "credsweeper/secret/config.json", "credsweeper/secret/log.yaml"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return samples_of(repos, left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
