"""Build the sixteenth held-out redaction corpus (tests/fixtures/redaction/corpus16.json.gz).

The first fifteen corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers and Plazmaz/leaky-repo. This one comes from two projects none of them
read, each labelled by what its own tests expect:

- prowler-cloud/prowler: the tests of its checks that look for secrets in a cloud
  resource's text (`tests/providers/**/*secret*_test.py`: Lambda, ECS and Batch environment
  variables, EC2 and launch-template user data, SSM documents, CloudWatch log events,
  CloudFormation outputs, API Gateway stage variables, CodeBuild variables, Vercel
  environment variables). A test asserting `status == "FAIL"` (and no other status) whose
  expected `status_extended` names where the secret is labels it: `in variable NAME`,
  `on the environment variable NAME` or `plain text: NAME.` names the value paired with
  NAME in that test's dict literals (`{NAME: value}`, `{"name": NAME, "value": value}`, a
  module constant resolved to its string); `on line N` names line N of the text the test
  hands the check (a string, a module constant, or its `fixtures/fixture` file) and the
  value after that line's `=` or `:`. Each labelled value's source line (the dict entry or
  the module constant's assignment), the dict literal whole where it holds the value, and
  the content's line and the content whole are positives. In a test asserting only
  `status == "PASS"`, each dict literal whole, each of its entries holding a string, and
  each text handed to the check are upstream negatives, except where the test passes by its
  configuration (an ignore pattern, an excluded variable), not by its text.
- dotnet/roslyn-analyzers: the tests of CA5390 (`DoNotHardCodeEncryptionKeyTests.cs`) and
  CA5403 (`DoNotHardCodeCertificateTests.cs`), each C# source a test hands
  `VerifyCS.VerifyAnalyzerAsync`. A source whose test expects a diagnostic and that holds a
  string literal (the key or certificate the analyzer flags flows from it) is a positive
  whose secrets are its string literals of 8 or more characters; one with no literal (a
  byte array) holds no text to judge and is counted as left out. A source whose test expects
  no diagnostic is an upstream negative.
- Benign: ordinary files of the same repositories outside their tests (CI and build
  configuration, tool configuration, Dockerfile, Makefile, scripts), each whole (up to 200
  lines) and each line that names a password, secret, token, key, credential or auth, and
  the output of `git log --format='%H %an %s' -n 15` at each pinned commit.

Considered and not used: kubescape/regolibrary (`rule-credentials-in-env-var` and
`rule-credentials-configmap` tests: the values flagged are placeholders such as `XXXX` and
`hi`, or the AWS documentation's example key id), Azure/arm-ttk (two `Fail` templates hold a
literal password), Checkmarx/kics and github/codeql (snapshots over the 500 MB a mirror can
be brought here). A secret is kept only where the scoring can judge it
(tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule), and a
placeholder (tests/support/redaction_corpus10_extract.py `placeholder`) is left out.
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus16.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#test#line-n`, `#test#dict-n`, `#source-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus16_extract.py --prowler D1 --roslyn-analyzers D2

where each D is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, sniff  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus16.json.gz"
SESSION = "corpus16"
_NAMES = {"prowler-cloud/prowler": "prowler", "dotnet/roslyn-analyzers": "roslyn-analyzers"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=15)


# -- prowler ---------------------------------------------------------------------------------------------------

# the checks' tests that look for secrets in a resource's text (not those about secret stores' settings)
_PROWLER_TEST = re.compile(r"^tests/providers/.*secret[^/]*_test\.py$")
_PROWLER_NOT_TEXT = ("secretsmanager", "secretmanager", "keyvault", "secret_scanning", "unused", "rotat",
                     "expiration", "kms_cmk", "tier0")
_NAMED = re.compile(r"(?:in variable|on the environment variable) ([A-Za-z_][\w.-]*)|plain text: ([\w.-]+)\.")
_LINE = re.compile(r"on line (\d+)")
# the value after a line's `=` or `:` (quotes stripped)
_LINE_VALUE = re.compile(r"""[=:]\s*["']?([^"'\s,]+)["']?\s*,?\s*$""")


def _statuses(fn: ast.FunctionDef) -> set[str]:
    return {c.comparators[0].value for c in ast.walk(fn)
            if isinstance(c, ast.Compare) and isinstance(c.left, ast.Attribute) and c.left.attr == "status"
            and isinstance(c.comparators[0], ast.Constant) and isinstance(c.comparators[0].value, str)}




class _Module:
    def __init__(self, src: str):
        self.src = src
        self.lines = src.split("\n")
        self.tree = ast.parse(src)
        self.consts: dict[str, ast.Constant] = {}
        for node in self.tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                self.consts[node.targets[0].id] = node.value

    def const(self, node: ast.AST | None) -> ast.Constant | None:
        """The string constant a node is, or the module constant it names."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        return None

    def line(self, node: ast.AST) -> tuple[int, str]:
        return node.lineno, self.lines[node.lineno - 1].strip()


def _messages(mod: _Module, fn: ast.FunctionDef) -> str:
    """Every string the test writes (its expected status_extended among them), an f-string's module
    constants put in, joined."""
    parts = [n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    for n in ast.walk(fn):
        if isinstance(n, ast.JoinedStr):
            pieces = []
            for v in n.values:
                c = mod.const(v.value if isinstance(v, ast.FormattedValue) else v)
                pieces.append(c.value if c is not None else "\x00")
            parts.append("".join(pieces))
    return "\n".join(parts)


def _pairs(mod: _Module, d: ast.Dict) -> list[tuple[str, ast.Constant]]:
    """A dict literal's (name, value) pairs: its own string keys, or `name`/`value` entries."""
    keys = {}
    pairs = []
    for k, v in zip(d.keys, d.values, strict=True):
        kc, vc = mod.const(k), mod.const(v)
        if kc is not None:
            keys[kc.value.lower()] = v
            if vc is not None:
                pairs.append((kc.value, vc))
    name, value = mod.const(keys.get("name")), mod.const(keys.get("value"))
    if name is not None and value is not None:
        pairs.append((name.value, value))
    return pairs


def _contents(mod: _Module, fn: ast.FunctionDef, repo: str, head: str, test_path: str) -> list[tuple[str, str]]:
    """The texts a test hands its check: strings passed as a keyword (UserData=, content=, message=, ...) or
    module constants it names holding a newline, and a `fixtures/fixture` file it opens; (where, text)."""
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.keyword) and node.arg and node.arg.lower() in (
                "userdata", "content", "message", "definition", "code", "data"):
            c = mod.const(node.value)
            if c is not None:
                found.append((f"line-{c.lineno}", c.value))
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                kc, vc = mod.const(k), mod.const(v)
                if kc is not None and vc is not None and kc.value.lower() in ("message", "userdata", "content"):
                    found.append((f"line-{vc.lineno}", vc.value))
        if isinstance(node, ast.Name) and node.id in mod.consts and "\n" in mod.consts[node.id].value:
            found.append((f"line-{mod.consts[node.id].lineno}", mod.consts[node.id].value))
    if "fixture" in ast.get_source_segment(mod.src, fn) and "fixture.gz" not in ast.get_source_segment(mod.src, fn):
        path = test_path.rsplit("/", 1)[0] + "/fixtures/fixture"
        found.append(("fixture", show(repo, head, path)))
    unique: dict[str, str] = {}
    for where, text in found:
        unique.setdefault(text, where)
    return [(w, t) for t, w in unique.items()]


def _fixture_path(test_path: str, where: str) -> str | None:
    return test_path.rsplit("/", 1)[0] + "/fixtures/fixture" if where == "fixture" else None


def prowler(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"prowler-cloud/prowler@{head}"
    samples: list[dict] = []
    paths = sorted(p for p in tree_files(repo, head) if _PROWLER_TEST.match(p)
                   and not any(w in p for w in _PROWLER_NOT_TEXT))
    for path in paths:
        mod = _Module(show(repo, head, path))
        name = path.rsplit("/", 1)[-1]
        for fn in [n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]:
            status = _statuses(fn)
            if status == {"FAIL"}:
                samples += _prowler_fail(mod, fn, repo, head, upstream, path, name, left_out)
            elif status == {"PASS"} and _silenced(mod, fn):
                left_out["a prowler PASS test that passes because it ignores or excludes what it finds"] += 1
            elif status == {"PASS"}:
                samples += _prowler_pass(mod, fn, repo, head, upstream, path, name)
    return samples


def _silenced(mod: _Module, fn: ast.FunctionDef) -> bool:
    """A test that passes by configuration (an ignore pattern, an excluded variable), not by its text."""
    segment = ast.get_source_segment(mod.src, fn) or ""
    return bool(re.search(r"(?i)ignor|exclu", fn.name)
                or re.search(r"secrets_ignore_patterns\"?\s*[:=]\s*\[\s*[^\]\s]", segment)
                or re.search(r"excluded_sensitive_environment_variables\"?\s*[:=]\s*\[\s*[^\]\s]", segment))


def _prowler_fail(mod: _Module, fn: ast.FunctionDef, repo: str, head: str, upstream: str, path: str, name: str,
                  left_out: Counter) -> list[dict]:
    msgs = _messages(mod, fn)
    named = {a or b for a, b in _NAMED.findall(msgs)}
    lines = sorted({int(n) for n in _LINE.findall(msgs)})
    if not named and not lines:
        left_out["a prowler FAIL test whose expected message names no variable or line"] += 1
        return []
    samples = []
    source = f"{upstream}:{path}#{fn.name}"
    found_named = False
    for d in [n for n in ast.walk(fn) if isinstance(n, ast.Dict)]:
        secrets = [v for k, v in _pairs(mod, d) if k in named]
        if not secrets:
            continue
        found_named = True
        for v in secrets:
            if placeholder(v.value):
                left_out["a labelled value that is a placeholder or empty"] += 1
                continue
            i, line = mod.line(v)
            samples += CORPUS.positive(f"{upstream}:{path}#line-{i}", name, line, [v.value], left_out, fmt="python")
        segment = ast.get_source_segment(mod.src, d) or ""
        held = [v.value for v in secrets if v.value in segment and not placeholder(v.value)]
        if held:
            samples += CORPUS.positive(f"{source}#dict-{d.lineno}", name, segment, held, left_out, fmt="python")
    if named and not found_named:
        left_out["a prowler variable named by a FAIL test with no literal value in the test"] += 1
    for where, text in (_contents(mod, fn, repo, head, path) if lines else []):
        text_lines = text.split("\n")
        values = []
        for n in lines:
            if n > len(text_lines):
                continue
            m = _LINE_VALUE.search(text_lines[n - 1])
            if m and not placeholder(m.group(1)):
                values.append((n, m.group(1)))
        if not values:
            continue
        fixture = _fixture_path(path, where)
        src = f"{upstream}:{fixture}" if fixture else f"{source}#{where}"
        fname = "user-data.txt" if fixture else name
        fmt = sniff(text.strip())
        for n, value in values:
            samples += CORPUS.positive(f"{src}#content-line-{n}", fname, text_lines[n - 1].strip(), [value],
                                       left_out, fmt=fmt)
        if len(text_lines) <= _MAX_LINES and len(values) < len([t for t in text_lines if t.strip()]) + 1:
            samples += CORPUS.positive(src, fname, text.strip("\n"), [v for _, v in values], left_out,
                                       uses=Counter(v for _, v in values), fmt=fmt)
    return samples


def _prowler_pass(mod: _Module, fn: ast.FunctionDef, repo: str, head: str, upstream: str, path: str,
                  name: str) -> list[dict]:
    samples = []
    source = f"{upstream}:{path}#{fn.name}"
    for d in [n for n in ast.walk(fn) if isinstance(n, ast.Dict)]:
        pairs = [(k, v) for k, v in _pairs(mod, d)]
        if not pairs:
            continue
        samples.append(CORPUS.sample("upstream-negative", f"{source}#dict-{d.lineno}", name,
                                     ast.get_source_segment(mod.src, d) or "", fmt="python"))
        for _, v in pairs:
            i, line = mod.line(v)
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{i}", name, line,
                                         fmt="python"))
    for where, text in _contents(mod, fn, repo, head, path):
        if text.strip():
            fixture = _fixture_path(path, where)
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{fixture}" if fixture else
                                         f"{source}#{where}", "user-data.txt" if fixture else name,
                                         text.strip("\n"), fmt=sniff(text.strip())))
    return samples


# -- roslyn-analyzers ------------------------------------------------------------------------------------------

ROSLYN_TESTS = ("src/NetAnalyzers/UnitTests/Microsoft.NetCore.Analyzers/Security/DoNotHardCodeEncryptionKeyTests.cs",
                "src/NetAnalyzers/UnitTests/Microsoft.NetCore.Analyzers/Security/DoNotHardCodeCertificateTests.cs")
# a verbatim string handed to the verifier, and what follows it up to the call's end
_VERIFY = re.compile(r'VerifyCS\.VerifyAnalyzerAsync\(@"((?:[^"]|"")*)"(.*?)\);', re.S)
_CS_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.){8,})"')


def roslyn(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"dotnet/roslyn-analyzers@{head}"
    samples = []
    for path in ROSLYN_TESTS:
        text = show(repo, head, path)
        for n, m in enumerate(_VERIFY.finditer(text), 1):
            code = m.group(1).replace('""', '"').strip("\r\n")
            expects = "ResultAt(" in m.group(2)
            source = f"{upstream}:{path}#source-{n}"
            if not expects:
                samples.append(CORPUS.sample("upstream-negative", source, "Program.cs", code, fmt="csharp"))
                continue
            literals = [x for x in _CS_LITERAL.findall(code) if " " not in x and not placeholder(x)]
            if not literals:
                left_out["a roslyn-analyzers source expecting a diagnostic with no string literal (a byte array)"] += 1
                continue
            samples += CORPUS.positive(source, "Program.cs", code, literals, left_out, fmt="csharp")
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "prowler": (".backportrc.json", ".markdownlint.json", ".readthedocs.yaml", "codecov.yml", "osv-scanner.toml",
                ".grype.yaml", ".trivyignore.yaml", "Makefile", "Dockerfile", ".pre-commit-config.yaml",
                "pyproject.toml", "action.yml"),
    "roslyn-analyzers": ("global.json", "NuGet.config", "build.sh", "Build.cmd", "Restore.cmd", "Test.cmd",
                         "restore.sh", "test.sh", "codecov.yml", "azure-pipelines.yml", "Directory.Build.props",
                         ".markdownlint.json"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    return prowler(repos["prowler"], left_out) + roslyn(repos["roslyn-analyzers"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
