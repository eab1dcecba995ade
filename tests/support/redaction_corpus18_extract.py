"""Build the eighteenth held-out redaction corpus (tests/fixtures/redaction/corpus18.json.gz).

The first seventeen corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler, dotnet/roslyn-analyzers,
Checkmarx/kics and github/codeql. This one comes from two projects none of them read, each
labelled by what its own tests expect:

- anchore/syft: its secrets cataloger (`syft/file/cataloger/secrets/`, at the last commit that
  has it) and the Go tests that state what it must find in each test fixture
  (`cataloger_test.go`): `TestSecretsCataloger_DefaultSecrets` names, per fixture, each
  finding's line and value under the default patterns, or `expected: nil`;
  `TestSecretsCataloger` does the same for a pattern given in the test, and is used where that
  pattern has a `value` capture group (the value alone, not the name before it). A fixture with
  findings is a positive whole (its secrets the values) and each single-line value's line a
  positive; a fixture the test expects nothing in is an upstream negative whole, and so is each
  of its lines that names a password, secret, token, key, credential or auth.
- IBM/detect-secrets: the tests of the plugins this fork adds and Yelp/detect-secrets (read by
  the first corpus) does not have: Box, DB2 and GitHub Enterprise
  (`tests/plugins/{box,db2,gh_enterprise}_test.py`). Each `test_analyze_line*` is parametrized
  by a payload and `should_flag`; a flagged payload is a positive, its secret the `token`
  column where the test has one (DB2), else the longest run of token characters in the payload
  (each payload holds one value beside its name, a URL or a header word); an unflagged payload
  is an upstream negative. The module's string constants are evaluated where a case names them.
- Benign: ordinary files of the same repositories outside their tests (syft's Dockerfiles,
  GoReleaser, golangci-lint, Make, Task and binny configuration, its GitHub workflows and
  action, its install script; detect-secrets' Dockerfiles, Travis, tox, pre-commit, setup.cfg
  and trivy configuration, Makefiles, its CodeQL workflow and scripts), each whole (up to 200
  lines) and each line that names a password, secret, token, key, credential or auth, and
  `git log --format='%H %an %s' -n 15` at each pinned commit. Chosen before scoring, by the
  fourteenth corpus's rule.

Considered and not used: aws-cloudformation/cfn-lint (its password rules' bad templates hold
`Default: String`, `!Ref`s and dynamic references, no value); github/codeql's Java and C#
CWE-798 tests (the same repository as the seventeenth corpus, and their values are mostly
`"password"`, `"Username"` and other placeholders). A secret is kept only where the scoring
can judge it (tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule),
and a placeholder (tests/support/redaction_corpus10_extract.py `placeholder`) is left out.
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus18.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`, `#<test>-<case>`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus18_extract.py --syft DIR --ibm-detect-secrets DIR

where each DIR is a clone or bare mirror (syft's at any commit after 3f13d20, which it reads
the cataloger at; detect-secrets' at 076672a). Standard library only.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus18.json.gz"
SESSION = "corpus18"
_NAMES = {"anchore/syft": "syft", "IBM/detect-secrets": "ibm-detect-secrets"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=17)


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


# -- syft ------------------------------------------------------------------------------------------------------

SYFT_COMMIT = "3f13d209a5a3fddb2e616b190576d8ae1d9f1133"  # the last commit with the secrets cataloger
_SYFT_DIR = "syft/file/cataloger/secrets/"
_CASE = re.compile(r"fixture:\s*\"([^\"]+)\"")
_FINDING = re.compile(r"LineNumber:\s*(\d+),.*?Value:\s*(\"(?:[^\"\\]|\\.)*\"|`[^`]*`)", re.S)


def _go_string(literal: str) -> str:
    return literal[1:-1] if literal.startswith("`") else json.loads(literal)


def syft(repo: str, left_out: Counter) -> list[dict]:
    test = show(repo, SYFT_COMMIT, _SYFT_DIR + "cataloger_test.go")
    default_at = test.index("func TestSecretsCataloger_DefaultSecrets")
    cases = list(_CASE.finditer(test))
    samples: list[dict] = []
    for k, m in enumerate(cases):
        body = test[m.end():cases[k + 1].start() if k + 1 < len(cases) else len(test)]
        if m.start() < default_at <= m.end() + len(body):
            body = body[:default_at - m.end()]
        path = _SYFT_DIR + m.group(1)
        source = f"anchore/syft@{SYFT_COMMIT}:{path}"
        name = path.rsplit("/", 1)[-1]
        text = show(repo, SYFT_COMMIT, path).rstrip("\n")
        if m.start() < default_at:
            # a pattern of the test's own: its value, where a capture group names it and the test reveals it
            if "(?P<value>" not in body or "reveal:  true" not in body and "reveal: true" not in body:
                left_out["a syft case whose pattern takes the name with the value (or hides the value)"] += 1
                continue
        elif re.search(r"expected:\s*nil", body):
            samples += _whole_and_lines("upstream-negative", source, name, text)
            continue
        found = [(int(n), _go_string(v).strip("\n")) for n, v in _FINDING.findall(body)]
        samples += _positive(source, name, text, found, left_out)
    return samples


def _positive(source: str, name: str, text: str, found: list[tuple[int, str]], left_out: Counter) -> list[dict]:
    lines = text.split("\n")
    fmt = format_of(name, text)
    kept, samples = [], []
    for n, secret in found:
        if placeholder(secret) or not secret:
            left_out["a labelled value that is a placeholder or empty"] += 1
            continue
        kept.append(secret)
        if "\n" not in secret and n <= len(lines) and secret in lines[n - 1]:
            samples += CORPUS.positive(f"{source}#line-{n}", name, lines[n - 1].strip(), [secret], left_out, fmt=fmt)
    if kept and len(lines) <= _MAX_LINES:
        samples += CORPUS.positive(source, name, text, kept, left_out, uses=Counter(kept), fmt=fmt)
    return samples


# -- IBM/detect-secrets ----------------------------------------------------------------------------------------

IBM_TESTS = ("tests/plugins/box_test.py", "tests/plugins/db2_test.py", "tests/plugins/gh_enterprise_test.py")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+_.~-][A-Za-z0-9+/_.~-]*=*")


class _Unknown(Exception):
    pass


def _value(node: ast.AST, names: dict[str, object]) -> object:
    """A case's value: literals, tuples and `+` of them, and the module constants it names."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, names) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _value(node.left, names), _value(node.right, names)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
    raise _Unknown(ast.dump(node))


def _cases(text: str, left_out: Counter) -> list[tuple[str, int, dict]]:
    """(test function, case number, {argument: value}) for each `should_flag` case."""
    tree = ast.parse(text)
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = _value(node.value, names)
            except _Unknown:
                pass
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for dec in fn.decorator_list:
            if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize"):
                continue
            first, second = dec.args[0], dec.args[1]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and isinstance(second, ast.List)):
                continue  # not a table of cases
            argnames = [a.strip() for a in first.value.split(",")]
            if "payload" not in argnames or "should_flag" not in argnames:
                continue
            for i, elt in enumerate(second.elts, 1):
                try:
                    row = _value(elt, names)
                except _Unknown:
                    left_out["a detect-secrets case naming what the test computes"] += 1
                    continue
                assert isinstance(row, tuple)
                out.append((fn.name, i, dict(zip(argnames, row, strict=True))))
    return out


def _secret_of(case: dict) -> str:
    if case.get("token"):
        return str(case["token"])
    return max(_TOKEN_RUN.findall(case["payload"]), key=len, default="")


def ibm(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    samples: list[dict] = []
    for path in IBM_TESTS:
        for fn, i, case in _cases(show(repo, head, path), left_out):
            source = f"IBM/detect-secrets@{head}:{path}#{fn}-{i}"
            payload = str(case["payload"])
            if not payload.strip():
                left_out["an empty detect-secrets payload"] += 1
                continue
            if not case["should_flag"]:
                samples.append(CORPUS.sample("upstream-negative", source, "mock_filename", payload))
                continue
            secret = _secret_of(case)
            if placeholder(secret) or not secret:
                left_out["a labelled value that is a placeholder or empty"] += 1
                continue
            samples += CORPUS.positive(source, "mock_filename", payload, [secret], left_out)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "syft": ("Dockerfile", "Dockerfile.nonroot", ".goreleaser.yaml", ".golangci.yaml", "Makefile", "Taskfile.yaml",
             ".binny.yaml", ".github/workflows/release.yaml", ".github/workflows/validations.yaml",
             ".github/actions/bootstrap/action.yaml", "install.sh"),
    "ibm-detect-secrets": (".travis.yml", "tox.ini", ".pre-commit-config.yaml", "setup.cfg", "trivy-secret.yaml",
                           "Makefile", "Makefile.ibm", "prepare-upstream-contribution.sh",
                           ".github/workflows/codeql-analysis.yml",
                           "Dockerfiles/base/00.python.Dockerfile", "Dockerfiles/base/01.cli.Dockerfile",
                           "Dockerfiles/detect-secrets/02.detect-secrets.Dockerfile",
                           "Dockerfiles/hook/02.detect-secrets-hook.Dockerfile",
                           "scripts/gen-pipfile.sh", "scripts/run-in-pipeline.sh"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return syft(repos["syft"], left_out) + ibm(repos["ibm-detect-secrets"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
