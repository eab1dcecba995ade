"""Build the nineteenth held-out redaction corpus (tests/fixtures/redaction/corpus19.json.gz).

The first eighteen corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler, dotnet/roslyn-analyzers,
Checkmarx/kics, github/codeql, anchore/syft and IBM/detect-secrets. This one comes from one
project none of them read, labelled by what its own tests expect:

- advanced-security/secret-scanning-custom-patterns: GitHub's custom secret-scanning patterns,
  one `patterns.yml` per directory beside the files its unit test (`testing/test.py`, run by
  its `unit-tests.yml` workflow) scans. A pattern's `expected` list names each file of its
  directory and the byte offsets of each match the test requires, and the test fails on any
  match of that pattern not listed. A file some pattern expects a match in is a positive whole
  (its secrets the spans every pattern expects there, where it has 200 lines or fewer), and each
  expected span's line a positive. A file of a directory with patterns that
  expect matches, in which none of them expects one, is an upstream negative whole, and so is
  each of its lines that names a password, secret, token, key, credential or auth. Patterns
  whose matches are not secrets are set aside, with their spans: the `pii/` directory (card
  numbers, IBANs), and `uuids`, `github_actions_sha_checker`, `azure_sql_connection_string`
  (a host name), `hardcoded_internal_emails`, `hardcoded_internal_urls`,
  `any_ipv4_addresses`, `ghcr_typos` and `ssh_public_key`, and `common_passwords_shortlist`
  (its file is a word list of common passwords, each line a bare word that nothing names a
  credential); a file where only those expect a match is neither positive nor negative.
  The test asserts a file clean only under the patterns that have an `expected` list: a negative
  here is clean under those, not under a pattern of its directory without one (docs/redaction.md,
  the nineteenth corpus's caveat). The
  patterns' own `test` blocks (a string and the match in it) are not read: the unit test does
  not check them, and some of their offsets do not fall on the value.
- Benign: ordinary files of the same repository outside its pattern directories (its GitHub
  workflows and secret-scanning configuration, dev container and VS Code settings, the test
  runner's Makefile and requirements, a script), each whole (up to 200 lines) and each line that
  names a password, secret, token, key, credential or auth, and
  `git log --format='%H %an %s' -n 15` at the pinned commit. Chosen before scoring, by the
  fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule), and a placeholder
(tests/support/redaction_corpus10_extract.py `placeholder`) is left out. Samples are labelled
with the format of their text; the scorer (tests/support/redaction_corpus19.py) stores each in
the four carriers an agent produces. Sources read `owner/repo@commit:path` (and `#line-n`).

Usage (not part of the test suite, which reads the built file; the patterns are YAML, so it needs
PyYAML: `.venv/bin/pip install -e '.[corpus]'`):

    .venv/bin/python tests/support/redaction_corpus19_extract.py --secret-scanning-custom-patterns DIR

where DIR is a clone or bare mirror (its HEAD is the commit the fixture names).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus19.json.gz"
SESSION = "corpus19"
_UPSTREAM = "advanced-security/secret-scanning-custom-patterns"
_NAMES = {_UPSTREAM: "secret-scanning-custom-patterns"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=18)

# patterns whose matches are not secrets (host names, addresses, digests, public keys, a word list)
NOT_SECRETS = {"uuids", "github_actions_sha_checker", "azure_sql_connection_string", "hardcoded_internal_emails",
               "hardcoded_internal_urls", "any_ipv4_addresses", "ghcr_typos", "ssh_public_key",
               "common_passwords_shortlist"}
_SKIP_DIRS = ("pii/", "testing/", "java-keystores/", ".github/", ".vscode/", ".devcontainer/")
_NOT_SCANNED = ("patterns.yml", "README.md")


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


def _text(repo: str, head: str, path: str) -> bytes | None:
    """A file's bytes, or None where it is not UTF-8 text."""
    raw = subprocess.run(["git", "-C", repo, "show", f"{head}:{path}"], check=True, capture_output=True).stdout
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return raw if b"\x00" not in raw else None


def patterns(repo: str, left_out: Counter) -> list[dict]:
    import yaml

    head = head_commit(repo)
    files = tree_files(repo, head)
    samples: list[dict] = []
    for pfile in sorted(f for f in files if f.endswith("/patterns.yml") and not f.startswith(_SKIP_DIRS)):
        folder = pfile.rsplit("/", 1)[0] + "/"
        spans: dict[str, list[tuple[int, int]]] = defaultdict(list)  # file -> the secret spans expected in it
        expecting = set()  # files some pattern (secret or not) expects a match in
        any_expected = False
        for pat in yaml.safe_load(show(repo, head, pfile))["patterns"]:
            kind = pat.get("type", "")
            secret_kind = kind not in NOT_SECRETS
            for exp in pat.get("expected") or []:
                any_expected = True
                expecting.add(exp["name"])
                if secret_kind:
                    spans[exp["name"]].append((int(exp["start_offset"]), int(exp["end_offset"])))
        if not any_expected:
            continue
        for path in sorted(f for f in files if f.startswith(folder) and "/__snapshots__/" not in f
                           and "/" not in f[len(folder):] and f[len(folder):] not in _NOT_SCANNED):
            name = path[len(folder):]
            raw = _text(repo, head, path)
            if raw is None:
                left_out["a binary file"] += 1
                continue
            source = f"{_UPSTREAM}@{head}:{path}"
            text = raw.decode("utf-8")
            if name not in expecting:
                samples += _whole_and_lines("upstream-negative", source, name, text.rstrip("\n"))
            elif name in spans:
                samples += _positive(source, name, raw, spans[name], left_out)
            else:
                left_out["a file only patterns set aside (not secrets) expect a match in"] += 1
    return samples


def _positive(source: str, name: str, raw: bytes, spans: list[tuple[int, int]], left_out: Counter) -> list[dict]:
    text = raw.decode("utf-8").rstrip("\n")
    fmt = format_of(name, text)
    kept: list[str] = []
    samples: list[dict] = []
    lines_done: set[int] = set()
    for start, end in sorted(set(spans)):
        secret = raw[start:end].decode("utf-8")
        if placeholder(secret) or not secret.strip():
            left_out["a labelled value that is a placeholder or empty"] += 1
            continue
        kept.append(secret)
        if "\n" in secret:
            continue
        n = raw[:start].count(b"\n") + 1
        line = text.split("\n")[n - 1]
        if n not in lines_done and line.strip() != text.strip():
            lines_done.add(n)
            line_secrets = [raw[s:e].decode("utf-8") for s, e in sorted(set(spans))
                            if raw[:s].count(b"\n") + 1 == n and b"\n" not in raw[s:e]
                            and not placeholder(raw[s:e].decode("utf-8"))]
            samples += CORPUS.positive(f"{source}#line-{n}", name, line.strip(), line_secrets, left_out, fmt=fmt)
    if kept and len(text.splitlines()) <= _MAX_LINES:
        samples += CORPUS.positive(source, name, text, kept, left_out, uses=Counter(kept), fmt=fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "secret-scanning-custom-patterns": (
        ".devcontainer/devcontainer.json", ".github/secret_scanning.yml", ".github/workflows/pr-markdown.yml",
        ".github/workflows/unit-tests.yml", ".github/workflows/validate.yml", ".vscode/settings.json",
        ".vscode/tasks.json", ".gitignore", "testing/Makefile", "testing/requirements.txt",
        "testing/dev-requirements.txt", "update_markdown.sh"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return patterns(repos["secret-scanning-custom-patterns"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
