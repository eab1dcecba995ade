"""Build the fourteenth held-out redaction corpus (tests/fixtures/redaction/corpus14.json.gz).

The first thirteen corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer and pmd/pmd (Skyscanner/whispers,
Plazmaz/leaky-repo, Checkmarx/kics and github/codeql set aside). This one comes from four
other projects, none of them read by an earlier corpus, each labelled by its upstream:

- astral-sh/ruff: the fixtures of its flake8-bandit rules S105 (a hard-coded password
  assigned or compared), S106 (passed as a keyword argument) and S107 (a parameter's default)
  (`crates/ruff_linter/resources/test/fixtures/flake8_bandit/S10{5,6,7}.py`), labelled by the
  rule's snapshot (`crates/ruff_linter/src/rules/flake8_bandit/snapshots/...S10x_S10x.py.snap`):
  each `S10x.py:LINE:COL` it reports points at a string literal, whose content is the secret
  and whose line is a positive (the file whole too, where the scoring can judge it). Each other
  line of the fixtures that holds a string literal or a password word is an upstream negative
  (the rule passes it), and so are the lines of S105's "should not be flagged" block.
- biomejs/biome: the `noSecrets` rule tests (`crates/biome_js_analyze/tests/specs/security/noSecrets/`):
  each `invalid*.js:LINE:COL` of a `.snap` points at the literal reported (the
  `invalid_entropy_*` files with the entropy threshold their `.options.json` sets), the
  literal's content the secret, its line a positive and the file whole a positive;
  `valid.js` ("should not generate diagnostics") is an upstream negative whole and line by line.
- security-code-scan/security-code-scan: the `HardcodedPasswordAnalyzer` (SCS0015) tests
  (`SecurityCodeScan.Test/Tests/Password/HardcodedPassword{,Field}Test.cs`): each test method's
  C# and VB.NET program (a verbatim `@"..."` string; interpolated `$@"..."` programs, filled
  from `DataRow`s, and methods marked `[Ignore]` are left out) is a positive when the method
  verifies it with an `expected` diagnostic and an upstream negative when with `null`. The
  diagnostic names no location, so a positive's secret is its one string literal (an
  algorithm or encoding name set aside); a program with none (a `byte[]` salt) or several is
  left out.
- stackrox/kube-linter: the `env-var-secret` check's test manifest (`tests/checks/env-var-secret.yml`),
  which `e2etests/bats-tests.sh` expects to give 2 reports: each YAML document whose container
  sets an environment variable named like `(?i).*secret.*` (the check's
  `pkg/builtinchecks/yamls/env-var-secret.yaml`) is a positive, its value the secret; the
  documents whose variable has another name are upstream negatives.
- Benign: ordinary files of the same repositories outside their tests (CI workflows, build
  and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and each line
  that names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

Considered and not used: microsoft/security-utilities (its rules' examples are generated at
run time from random bytes, and the few fixed ones are the JWT of jwt.io that earlier corpora
hold), aws-cloudformation/cfn-lint (its password rule's bad template gives `Default: String`
and `!Ref`s, no value), ansible/ansible-lint (a vault-encrypted value, no clear secret),
MobSF/mobsfscan (a handful of `ruleid:`-annotated literals, most of them placeholders),
godaddy/tartufo, securing/DumpsterDiver, deepfence/SecretScanner,
FloeDesignTechnologies/phpcs-security-audit and tenable/terrascan (no labelled credential
in their tests). A secret is kept only where the scoring can judge it
(tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule), and a
placeholder (tests/support/redaction_corpus10_extract.py `placeholder`) is left out.
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus14.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`, `#test-NAME-LANG`, `#document-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus14_extract.py --ruff D1 --biome D2 --security-code-scan D3 --kube-linter D4

where each D is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, git  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of, scorable  # noqa: E402
from redaction_corpus10_extract import _ALGORITHM, placeholder  # noqa: E402

OUT = HERE / "corpus14.json.gz"
SESSION = "corpus14"
_NAMES = {"astral-sh/ruff": "ruff", "biomejs/biome": "biome",
          "security-code-scan/security-code-scan": "security-code-scan", "stackrox/kube-linter": "kube-linter"}
_OWNER_REPO = {v: k for k, v in _NAMES.items()}


def _head(repo: str) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def _show(repo: str, rev: str, path: str) -> str:
    return git(repo, "show", f"{rev}:{path}")


def _files(repo: str, rev: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).split("\n")


def _sample(kind: str, source: str, path: str, text: str, secrets: list[str] | None = None,
            fmt: str | None = None) -> dict:
    fmt = fmt or format_of(path, text)
    s = {"set": kind, "type": _NAMES[source.split("@", 1)[0]] + ":" + fmt, "format": fmt,
         "source": source, "path": path, "text": text}
    if secrets is not None:
        s["secrets"] = secrets
    return s


def _positive(source: str, path: str, text: str, secrets: list[str], left_out: Counter,
              fmt: str | None = None) -> list[dict]:
    # A short secret must stand as a word in its text as many times as upstream labels it (more, and
    # it is a name or a word too); `corpus14` is the carrier's session id.
    uses = Counter(secrets)
    kept = sorted({x for x in secrets if x != SESSION and scorable(text, path, x, uses[x])})
    left_out["a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)"] += (
        len(set(secrets)) - len(kept))
    if not kept:
        left_out["a positive with no secret left to judge"] += 1
        return []
    return [_sample("upstream-positive", source, path, text, kept, fmt)]


_LITERAL = re.compile(r"(['\"`])((?:\\.|(?!\1).)*)\1")


def _literal_at(line: str, col: int) -> str | None:
    """The content of the string literal a diagnostic at 1-based column `col` reports, as written:
    the literal there, or the first after it (S106 and S107 point at the keyword or parameter whose
    value it is)."""
    m = _LITERAL.search(line, col - 1)
    return m.group(2) if m else None


def _reported(snap: str, name: str) -> list[tuple[int, int]]:
    """(line, column) of each diagnostic a snapshot reports in file `name`."""
    return [(int(a), int(b)) for a, b in re.findall(rf"(?m)(?:-->\s+|^){re.escape(name)}:(\d+):(\d+)\b", snap)]


def _labelled_file(upstream: str, path: str, text: str, found: list[tuple[int, str]], left_out: Counter,
                   label: str) -> list[dict]:
    """Each reported line and the file whole as positives (placeholders left out), the other lines that
    hold a literal or a secret word as upstream negatives."""
    name = path.rsplit("/", 1)[-1]
    fmt = format_of(path, text)
    lines = text.split("\n")
    secrets = [(i, v) for i, v in found if not placeholder(v)]
    left_out[f"a {label} literal that is a placeholder or empty"] += len(found) - len(secrets)
    samples = []
    for i in sorted({i for i, _ in secrets}):
        samples += _positive(f"{upstream}:{path}#line-{i}", name, lines[i - 1].strip(),
                             [v for j, v in secrets if j == i], left_out, fmt=fmt)
    if secrets and len(lines) <= _MAX_LINES:
        samples += _positive(f"{upstream}:{path}", name, text, [v for _, v in secrets], left_out, fmt=fmt)
    reported = {i for i, _ in found}
    for i, line in enumerate(lines, 1):
        code = line.strip()
        if i in reported or not code or code.startswith(("#", "//")):
            continue
        if re.search(r"['\"`]", code) or _SECRET_WORD.search(code):
            samples.append(_sample("upstream-negative", f"{upstream}:{path}#line-{i}", name, code, fmt=fmt))
    return samples


# -- ruff ------------------------------------------------------------------------------------------------------

RUFF_FIXTURES = "crates/ruff_linter/resources/test/fixtures/flake8_bandit"
RUFF_SNAPSHOTS = "crates/ruff_linter/src/rules/flake8_bandit/snapshots"
RUFF_RULES = ("S105", "S106", "S107")


def ruff(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"astral-sh/ruff@{head}"
    samples = []
    for rule in RUFF_RULES:
        path = f"{RUFF_FIXTURES}/{rule}.py"
        text = _show(repo, head, path).rstrip("\n")
        snap = _show(repo, head, f"{RUFF_SNAPSHOTS}/ruff_linter__rules__flake8_bandit__tests__{rule}_{rule}.py.snap")
        lines = text.split("\n")
        reported = _reported(snap, f"{rule}.py")
        if len(reported) != len(re.findall(rf"(?m)^{rule} ", snap)) or not reported:
            raise SystemExit(f"ruff: {len(reported)} locations in the {rule} snapshot")
        found = []
        for i, col in reported:
            value = _literal_at(lines[i - 1], col)
            if value is None:
                raise SystemExit(f"ruff: no literal at {rule}.py:{i}:{col}")
            found.append((i, value))
        samples += _labelled_file(upstream, path, text, found, left_out, "ruff")
    return samples


# -- biome -----------------------------------------------------------------------------------------------------

BIOME_SPECS = "crates/biome_js_analyze/tests/specs/security/noSecrets"
BIOME_INVALID = ("invalid.js", "invalid_entropy_high.js", "invalid_entropy_low.js")
BIOME_VALID = "valid.js"


def biome(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"biomejs/biome@{head}"
    samples = []
    for name in BIOME_INVALID:
        path = f"{BIOME_SPECS}/{name}"
        text = _show(repo, head, path).rstrip("\n")
        lines = text.split("\n")
        found = []
        for i, col in _reported(_show(repo, head, path + ".snap"), name):
            value = _literal_at(lines[i - 1], col)
            if value is None:
                raise SystemExit(f"biome: no literal at {name}:{i}:{col}")
            found.append((i, value))
        if not found:
            raise SystemExit(f"biome: no diagnostic in {name}.snap")
        samples += _labelled_file(upstream, path, text, found, left_out, "biome")
    path = f"{BIOME_SPECS}/{BIOME_VALID}"
    if _reported(_show(repo, head, path + ".snap"), BIOME_VALID):
        raise SystemExit("biome: valid.js is reported")
    text = _show(repo, head, path).rstrip("\n")
    samples.append(_sample("upstream-negative", f"{upstream}:{path}", BIOME_VALID, text))
    samples += _labelled_file(upstream, path, text, [], left_out, "biome")
    return samples


# -- security-code-scan ----------------------------------------------------------------------------------------

SCS_TESTS = ("SecurityCodeScan.Test/Tests/Password/HardcodedPasswordTest.cs",
             "SecurityCodeScan.Test/Tests/Password/HardcodedPasswordFieldTest.cs")
_SCS_METHOD = re.compile(r"public async Task (\w+)\(")
_SCS_PROGRAM = re.compile(r"\b(cSharpTest|visualBasicTest) = (\$?)@\"((?:[^\"]|\"\")*)\"(?!\")")
_SCS_LANG = {"cSharpTest": ("csharp", "HardCodedPassword.cs", "VerifyCSharpDiagnostic"),
             "visualBasicTest": ("visualbasic", "HardCodedPassword.vb", "VerifyVisualBasicDiagnostic")}


def security_code_scan(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"security-code-scan/security-code-scan@{head}"
    samples = []
    for path in SCS_TESTS:
        source_text = _show(repo, head, path)
        starts = [m.start() for m in _SCS_METHOD.finditer(source_text)] + [len(source_text)]
        for n, start in enumerate(starts[:-1]):
            method = _SCS_METHOD.match(source_text, start).group(1)
            attributes = source_text[source_text.rfind("}", 0, start):start]
            body = source_text[start:starts[n + 1]]
            if "[Ignore" in attributes:
                left_out["a security-code-scan test upstream ignores"] += 1
                continue
            for m in _SCS_PROGRAM.finditer(body):
                var, interpolated, code = m.group(1), m.group(2), m.group(3).replace('""', '"').strip("\n")
                fmt, name, verify = _SCS_LANG[var]
                if interpolated:
                    left_out["a security-code-scan program filled from DataRows"] += 1
                    continue
                call = re.search(rf"{verify}\({var}\s*,\s*(\w+)", body[m.end():])
                source = f"{upstream}:{path}#test-{method}-{fmt}"
                if call is None or call.group(1) == "null":
                    samples.append(_sample("upstream-negative", source, name, code, fmt=fmt))
                    continue
                literals = [(code.count("\n", 0, x.start()) + 1, x.group(1))
                            for x in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', code) if not _ALGORITHM.fullmatch(x.group(1))]
                if len({v for _, v in literals}) != 1:
                    left_out["a security-code-scan positive with no string literal or several"] += 1
                    continue
                if placeholder(literals[0][1]):
                    left_out["a security-code-scan literal that is a placeholder or empty"] += 1
                    continue
                lines = code.split("\n")
                for i in sorted({i for i, _ in literals}):
                    samples += _positive(f"{source}-line-{i}", name, lines[i - 1].strip(),
                                         [v for j, v in literals if j == i], left_out, fmt=fmt)
                samples += _positive(source, name, code, [v for _, v in literals], left_out, fmt=fmt)
    return samples


# -- kube-linter -----------------------------------------------------------------------------------------------

KL_TEST = "tests/checks/env-var-secret.yml"
KL_CHECK = "pkg/builtinchecks/yamls/env-var-secret.yaml"


def kube_linter(repo: str, left_out: Counter) -> list[dict]:
    head = _head(repo)
    upstream = f"stackrox/kube-linter@{head}"
    expected = re.search(r'tests/checks/env-var-secret\.yml".*?\[\[ "\$\{count\}" == "(\d+)" \]\]',
                         _show(repo, head, "e2etests/bats-tests.sh"), re.S)
    name_pattern = re.search(r'name: "([^"]+)"', _show(repo, head, KL_CHECK).split("params:", 1)[1]).group(1)
    documents = [d.strip("\n") for d in re.split(r"(?m)^---\s*$", _show(repo, head, KL_TEST)) if d.strip()]
    samples, reports = [], 0
    for n, doc in enumerate(documents, 1):
        source = f"{upstream}:{KL_TEST}#document-{n}"
        pairs = re.findall(r"(?m)^\s*- name: (\S+)\n\s*value: (\S+)$", doc)
        secrets = [v for k, v in pairs if re.fullmatch(name_pattern, k)]
        if not secrets:
            samples.append(_sample("upstream-negative", source, "env-var-secret.yml", doc))
            continue
        reports += 1
        lines = doc.split("\n")
        for i, line in enumerate(lines, 1):
            if any(line.strip() == f"value: {v}" for v in secrets):
                samples += _positive(f"{source}-line-{i}", "env-var-secret.yml", line.strip(), secrets, left_out,
                                     fmt="yaml")
        samples += _positive(source, "env-var-secret.yml", doc, secrets, left_out)
    if not expected or reports != int(expected.group(1)):
        raise SystemExit(f"kube-linter: {reports} documents fire, bats-tests.sh expects {expected}")
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "ruff": (".github/workflows/ci.yaml", ".github/workflows/publish-pypi.yml", ".github/workflows/publish-docs.yml",
             ".github/workflows/build-docker.yml", ".github/workflows/release.yml", ".github/zizmor.yml",
             ".github/renovate.json5", ".pre-commit-config.yaml", ".cargo/config.toml", ".config/nextest.toml",
             ".devcontainer/devcontainer.json", ".devcontainer/post-create.sh", ".claude/settings.json",
             ".claude/hooks/session-start.sh", "Dockerfile", "_typos.toml", ".markdownlint.yaml"),
    "biome": (".github/workflows/main.yml", ".github/workflows/release.yml", ".github/workflows/pull_request.yml",
              ".github/workflows/publish-crates.yml", ".github/workflows/release_js_api.yml",
              ".github/workflows/agent_scan.yml", ".github/labeler.yml", ".github/renovate.json5",
              ".cargo/config.toml", ".cargo/deny.toml", ".changeset/config.json", ".claude/settings.json",
              ".coderabbit.yaml", ".devcontainer/devcontainer.json", ".biome.json", "clippy.toml",
              "e2e-tests/git-ignore-paths/test.sh"),
    "security-code-scan": (".github/workflows/build.yml", ".github/workflows/ci.yml", ".github/workflows/pr.yml",
                           ".github/workflows/publish.yml", ".github/workflows/release.yml", ".github/dependabot.yml",
                           ".lgtm.yml", "Directory.Build.props", "SecurityCodeScan/tools/install.ps1",
                           "SecurityCodeScan.Test/Tests/Config/AuditMode.yml", "SecurityCodeScan.Test/app.config",
                           "website/generate_static_website.py"),
    "kube-linter": (".github/workflows/build.yaml", ".github/workflows/release.yaml", ".github/dependabot.yaml",
                    ".golangci.yml", ".goreleaser.yaml", ".pre-commit-hooks.yaml", "Makefile", "config.yaml.example",
                    "image/Dockerfile", "image/Dockerfile_alpine", "e2etests/bats-tests.sh",
                    "pkg/builtinchecks/yamls/env-var-secret.yaml", "pkg/builtinchecks/yamls/access-to-secrets.yaml",
                    "pkg/builtinchecks/yamls/read-secret-from-env-var.yaml"),
}


def benign(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """Ordinary files of each repository (whole, and each line naming a secret word) and its `git log`."""
    samples = []
    for name, repo in repos.items():
        head = _head(repo)
        upstream = f"{_OWNER_REPO[name]}@{head}"
        present = set(_files(repo, head))
        for path in BENIGN_FILES[name]:
            if path not in present:
                left_out["benign file not at the pinned commit"] += 1
                continue
            text = _show(repo, head, path).lstrip("\ufeff").rstrip("\n")
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
    """A sample of several secrets keeps the ones the earlier corpora do not hold."""
    from corpus_extract import _texts

    seen = _texts(13)
    for s in samples:
        fresh = [x for x in s.get("secrets", []) if not (len(x) >= 8 and x in seen)]
        if fresh and len(fresh) < len(s.get("secrets", [])):
            left_out["a secret already in an earlier corpus, dropped from a sample of several"] += (
                len(s["secrets"]) - len(fresh))
            s["secrets"] = fresh
    return samples


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    for name in _OWNER_REPO:
        ap.add_argument("--" + name, required=True)
    args = ap.parse_args(argv)
    repos = {name: getattr(args, name.replace("-", "_")) for name in _OWNER_REPO}
    left_out: Counter = Counter()
    samples = ruff(repos["ruff"], left_out)
    samples += biome(repos["biome"], left_out)
    samples += security_code_scan(repos["security-code-scan"], left_out)
    samples += kube_linter(repos["kube-linter"], left_out)
    samples += benign(repos, left_out)
    samples = _drop_earlier_secrets(samples, left_out)
    upstream = sorted({s["source"].split(":", 1)[0] for s in samples})
    from corpus_extract import write

    write(OUT, __doc__.split("\n\n")[0], upstream, samples, +left_out, earlier=13)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
