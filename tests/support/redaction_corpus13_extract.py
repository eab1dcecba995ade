"""Build the thirteenth held-out redaction corpus (tests/fixtures/redaction/corpus13.json.gz).

The first twelve corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag and goodwithtech/dockle (Skyscanner/whispers,
Plazmaz/leaky-repo and Checkmarx/kics set aside). This one comes from four other projects,
none of them read by an earlier corpus, each labelled by its upstream:

- OWASP/wrongsecrets, a deliberately insecure application whose challenges each hide one
  secret: a challenge class (`src/main/java/org/owasp/wrongsecrets/challenges/...`) reads its
  answer through a named setting (`@Value("${NAME}")`) or a constant, and the repository plants
  the value of that setting in a Dockerfile, a build script, `application.properties`, a
  Kubernetes ConfigMap, Secret or Vault agent template, or a Java constant. `WRONGSECRETS`
  names, per file, the pattern of each planted value and the challenge that reads it; the
  value (quotes taken off) is the secret, its line a positive and the file (up to 200 lines)
  a positive whole. Values upstream writes to say "this is not the answer here"
  (`if_you_see_this_please_use_k8s`, `ACTUAL_ANSWER_CHALLENGE5`, `not_set`, the Dockerfile's
  `default`) are upstream negatives: each line that gives a challenge's setting such a value.
  Encrypted answers (`challenge15ciphertext`, ...) are not the secret and are not read.
- trufflesecurity/test_keys: real test keys that trufflehog's own tests detect, labelled by
  file: `new_key` is an AWS credentials file (its secret the `aws_secret_access_key` value; the
  access key id is an id), `keys` holds an OpenSSH private key (its secret the key block, from
  `-----BEGIN` to `-----END ...-----`) and a basic-auth URL whose `admin:admin` is a placeholder
  (left out).
- PowerShell/PSScriptAnalyzer: the rule test scripts of `AvoidUsingConvertToSecureStringWithPlainText`
  (`Tests/Rules/AvoidConvertToSecureStringWithPlainText.ps1`, which its `.tests.ps1` expects to
  give 3 violations: each is a literal handed to `ConvertTo-SecureString ... -AsPlainText`, the
  literal the secret); the rule's and the plain-text-password rules' `...NoViolations.ps1`
  scripts are upstream negatives, whole and line by line. `AvoidUsingPlainTextForPassword.ps1`
  and `AvoidUserNameAndPasswordParams.ps1` fail on parameter names and types, with no value, and
  are left out.
- pmd/pmd: the rule tests of `HardCodedCryptoKey` (`pmd-java/.../security/xml/HardCodedCryptoKey.xml`):
  a `<test-code>` with `expected-problems` above 0 is a positive whole, its secrets the string
  literals on the lines `expected-linenumbers` names (an algorithm or encoding name such as
  `"AES"` or `"UTF-8"` set aside), each such line a positive too; a test with no line numbers or
  no literal on them (a `byte[]` of zeros, a constant of another file) is left out; a test
  expecting 0 problems is an upstream negative.
- Benign: ordinary files of the same repositories outside their tests (CI workflows, build
  and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and each line
  that names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

The sources give few positives (wrongsecrets plants each value in a handful of files and
copies them; test_keys holds two keys; the PowerShell and PMD rule tests a few literals), so
the corpus is small: 51 positives, not the few hundred of earlier corpora. Considered and not
used: github/codeql (its CWE-798 query tests; the snapshot is over the size that can be
fetched, and reading every file through the index at one pinned commit was not attempted),
PMD's Apex rules (`ApexSuggestUsingNamedCred` gives `'SomeValue'`, `ApexBadCrypto` a key of
zeros: placeholders), PSScriptAnalyzer's other password rules (parameter names, no values),
wrongsecrets' encrypted or computed answers (ciphertexts; `js/index.js` builds its value by
concatenation) and its Java tests (their answers are `"test"` and other placeholders);
aws-cloudformation/cfn-lint, hadolint, ansible-lint and the other linters named in #33 were
not read. A secret is kept only where the scoring can
judge it (tests/support/redaction_corpus6_extract.py `scorable`, the sixth corpus's rule).
Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus13.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus13_extract.py --wrongsecrets D1 --test-keys D2 --psscriptanalyzer D3 --pmd D4

where each D is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, git, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of  # noqa: E402
from redaction_corpus10_extract import _ALGORITHM, placeholder  # noqa: E402

OUT = HERE / "corpus13.json.gz"
SESSION = "corpus13"
_NAMES = {"OWASP/wrongsecrets": "wrongsecrets", "trufflesecurity/test_keys": "test-keys",
          "PowerShell/PSScriptAnalyzer": "psscriptanalyzer", "pmd/pmd": "pmd"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=12)


def _file_samples(upstream: str, path: str, text: str, found: list[tuple[int, str]], left_out: Counter,
                  fmt: str | None = None) -> list[dict]:
    """Each line holding a labelled secret, and the file whole (up to 200 lines), as positives."""
    name = path.rsplit("/", 1)[-1]
    fmt = fmt or format_of(path.removesuffix(".tpl"), text)
    lines = text.split("\n")
    samples = []
    for i in sorted({i for i, _ in found}):
        samples += CORPUS.positive(f"{upstream}:{path}#line-{i}", name, lines[i - 1].strip(),
                                   [v for j, v in found if j == i], left_out, fmt=fmt)
    if len(lines) <= _MAX_LINES:
        samples += CORPUS.positive(f"{upstream}:{path}", name, text, [v for _, v in found], left_out, fmt=fmt)
    return samples


# -- wrongsecrets ----------------------------------------------------------------------------------------------

# per file, (a pattern whose group 1 is a planted value, the challenge that reads it as its answer)
WRONGSECRETS = {
    "Dockerfile": [(r'^ENV DOCKER_ENV_PASSWORD="([^"]+)"', "Challenge4 (DOCKER_ENV_PASSWORD)"),
                   (r'^ARG challenge59_webhook_url="([^"]+)"', "Challenge59 (CHALLENGE59_SLACK_WEBHOOK_URL)"),
                   (r"^ENV WRONGSECRETS_MCP_SECRET=(\S+)", "Challenge60 (WRONGSECRETS_MCP_SECRET)")],
    "Dockerfile.web": [(r'^ARG challenge59_webhook_url="([^"]+)"', "Challenge59 (CHALLENGE59_SLACK_WEBHOOK_URL)"),
                       (r"^ARG CTF_KEY=(\S+)", "the CTF key (ctf_key)")],
    ".github/scripts/docker-create.sh": [(r"argBasedPassword='([^']+)'", "Challenge3 (ARG_BASED_PASSWORD)")],
    "src/main/resources/application.properties": [
        (r"^password=(\S+)", "Challenge2 (password)"),
        (r"^ctf_key=(\S+)", "the CTF key (ctf_key)"),
        (r"^keepasxpassword=(\S+)", "Challenge14 (keepasxpassword)"),
        (r"^challenge41password=(\S+)", "Challenge41 (challenge41password)"),
        (r"^challenge49pin=(\S+)", "Challenge49 (challenge49pin)"),
        (r"^CHALLENGE59_SLACK_WEBHOOK_URL=(\S+)", "Challenge59 (CHALLENGE59_SLACK_WEBHOOK_URL)"),
        (r"^DOCKER_SECRET_CHALLENGE51=(.+)$", "Challenge51 (DOCKER_SECRET_CHALLENGE51)")],
    "k8s/secrets-config.yml": [(r'^\s*funny\.entry: "([^"]+)"', "Challenge5 (SPECIAL_K8S_SECRET)")],
    "k8s/secrets-secret.yml": [(r"^\s*funnier: (\S+)", "Challenge6 (SPECIAL_SPECIAL_K8S_SECRET)")],
    "okteto/k8s/secrets-config.yml": [(r'^\s*funny\.entry: "([^"]+)"', "Challenge5 (SPECIAL_K8S_SECRET)")],
    "okteto/k8s/secrets-secret.yml": [(r"^\s*funnier: (\S+)", "Challenge6 (SPECIAL_SPECIAL_K8S_SECRET)")],
    "k8s/secret-challenge-vault-deployment.yml": [
        (r'export challenge47secret="([^"]+)"', "Challenge47 (challenge47secret)")],
    "aws/k8s/secret-challenge-vault-deployment.yml": [
        (r'export challenge47secret="([^"]+)"', "Challenge47 (challenge47secret)")],
    "azure/k8s/secret-challenge-vault-deployment.yml.tpl": [
        (r'export challenge47secret="([^"]+)"', "Challenge47 (challenge47secret)")],
    "gcp/k8s/secret-challenge-vault-deployment.yml.tpl": [
        (r'export challenge47secret="([^"]+)"', "Challenge47 (challenge47secret)")],
    "src/main/java/org/owasp/wrongsecrets/challenges/docker/WrongSecretsConstants.java": [
        (r'String password = "([^"]+)"', "Challenge1 (WrongSecretsConstants.password)")],
    ".ssh/wrongsecrets.keys": [(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)", "Challenge55 (BASTIONHOSTPATH)")],
    "src/main/java/org/owasp/wrongsecrets/challenges/docker/Challenge58.java": [
        (r"password=([^&\"]+)&", "Challenge58 (a connection string's password)"),
        (r'EXPECTED_SECRET = "([^"]+)"', "Challenge58 (EXPECTED_SECRET)")],
    "src/main/java/org/owasp/wrongsecrets/challenges/docker/Challenge63.java": [
        (r'HARDCODED_KEY = "([^"]+)"', "Challenge63 (HARDCODED_KEY)")],
    "src/main/resources/challenges/challenge-51/secretfiles/db_password.txt": [
        (r"^(.+)$", "Challenge51 (the db_password Docker secret)")],
    "src/main/resources/challenges/challenge-57/challenge-57.snippet": [
        (r"The secret code for challenge 57 is: (\S+)", "Challenge57 (a system prompt's secret)")],
}
# a value upstream writes where a challenge's setting is not given its answer
_WS_NOT_ANSWER = re.compile(r"if_you_see_this\w*|ACTUAL_ANSWER_\w+|not_set|default")
_WS_SETTING_FILES = ("src/main/resources/application.properties", "Dockerfile", "Dockerfile.web")
_WS_VALUE = re.compile(r"^(?:ARG |ENV )?(\w[\w.-]*)=\"?([^\"\s]*)\"?\s*$")


def _pem_block(text: str, start: int) -> str:
    end = text.index("-----", text.index("-----END", start) + 8) + 5
    return text[start:end]


def wrongsecrets(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"OWASP/wrongsecrets@{head}"
    present = set(tree_files(repo, head))
    read = set(re.findall(r'@Value\("\$\{([\w.-]+)', git(repo, "grep", "-h", "@Value", head, "--",
                                                         "src/main/java/org/owasp/wrongsecrets/challenges")))
    samples = []
    for path, plants in sorted(WRONGSECRETS.items()):
        if path not in present:
            raise SystemExit(f"wrongsecrets: {path} is not at {head}")
        text = show(repo, head, path).rstrip("\n")
        found = []
        for pattern, _challenge in plants:
            for m in re.finditer(pattern, text, re.M):
                line = text.count("\n", 0, m.start(1)) + 1
                value = _pem_block(text, m.start(1)) if m.group(1).startswith("-----BEGIN") else m.group(1)
                if placeholder(value) or _WS_NOT_ANSWER.fullmatch(value):
                    left_out["a wrongsecrets value that is a placeholder"] += 1
                    continue
                found.append((line, value))
            if not re.search(pattern, text, re.M):
                raise SystemExit(f"wrongsecrets: no value for {pattern} in {path}")
        samples += _file_samples(upstream, path, text, found, left_out)
    for path in _WS_SETTING_FILES:
        text = show(repo, head, path).rstrip("\n")
        for i, line in enumerate(text.split("\n"), 1):
            m = _WS_VALUE.match(line.strip())
            if m and _WS_NOT_ANSWER.fullmatch(m.group(2)) and (
                    m.group(1) in read or re.search(r"(?i)password|secret|key|challenge_\d+_value", m.group(1))):
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{i}",
                                             path.rsplit("/", 1)[-1], line.strip(), fmt=format_of(path, text)))
    return samples


# -- test_keys -------------------------------------------------------------------------------------------------

def test_keys(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"trufflesecurity/test_keys@{head}"
    samples = []
    text = show(repo, head, "new_key").rstrip("\n")
    found = [(text.count("\n", 0, m.start(1)) + 1, m.group(1))
             for m in re.finditer(r"^aws_secret_access_key = (\S+)", text, re.M)]
    samples += _file_samples(upstream, "new_key", text, found, left_out, fmt="ini")  # an AWS credentials file
    text = show(repo, head, "keys").rstrip("\n")
    found = [(text.count("\n", 0, m.start()) + 1, _pem_block(text, m.start()))
             for m in re.finditer(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", text)]
    left_out["a test_keys basic-auth URL whose password is a placeholder"] += len(
        [m for m in re.finditer(r"://(\w+):(\w+)@", text) if placeholder(m.group(2)) or m.group(2) == m.group(1)])
    # the key block is judged in the file whole; its first line alone holds none of it
    samples.append(CORPUS.positive(f"{upstream}:keys", "keys", text, [v for _, v in found], left_out, fmt="pem")[0])
    return samples


# -- PSScriptAnalyzer ------------------------------------------------------------------------------------------

PSSA_FAIL = "Tests/Rules/AvoidConvertToSecureStringWithPlainText.ps1"
PSSA_PASS = ("Tests/Rules/AvoidConvertToSecureStringWithPlainTextNoViolations.ps1",
             "Tests/Rules/AvoidUsingPlainTextForPasswordNoViolations.ps1",
             "Tests/Rules/AvoidUserNameAndPasswordParamsNoViolations.ps1")
PSSA_NO_VALUE = ("Tests/Rules/AvoidUsingPlainTextForPassword.ps1", "Tests/Rules/AvoidUserNameAndPasswordParams.ps1")
_PSSA_LITERAL = re.compile(r"(?i)(?:convertto-securestring|ctss)\s+(?:-string\s+)?\"([^\"]+)\"\s+-asplaintext")


def psscriptanalyzer(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"PowerShell/PSScriptAnalyzer@{head}"
    expected = re.search(r"violations\.Count \| Should -Be (\d+)",
                         show(repo, head, "Tests/Rules/AvoidConvertToSecureStringWithPlainText.tests.ps1"))
    text = show(repo, head, PSSA_FAIL).lstrip("\ufeff").rstrip("\n")
    found = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _PSSA_LITERAL.finditer(text)]
    if not expected or len(found) != int(expected.group(1)):
        raise SystemExit(f"psscriptanalyzer: {len(found)} literals in {PSSA_FAIL}, upstream expects {expected}")
    samples = _file_samples(upstream, PSSA_FAIL, text, found, left_out)
    left_out["a PSScriptAnalyzer failing script with no value (a parameter name or type)"] += len(PSSA_NO_VALUE)
    for path in PSSA_PASS:
        text = show(repo, head, path).lstrip("\ufeff").rstrip("\n")
        name = path.rsplit("/", 1)[-1]
        samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}", name, text))
        for i, line in enumerate(text.split("\n"), 1):
            if _SECRET_WORD.search(line) and line.strip() and line.strip() != text.strip():
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}#line-{i}", name, line.strip(),
                                             fmt=format_of(path, text)))
    return samples


# -- PMD -----------------------------------------------------------------------------------------------------

PMD_TESTS = "pmd-java/src/test/resources/net/sourceforge/pmd/lang/java/rule/security/xml/HardCodedCryptoKey.xml"
_PMD_NS = "{http://pmd.sourceforge.net/rule-tests}"


def _dedent(code: str) -> str:
    lines = [ln.rstrip() for ln in code.strip("\n").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    indent = min((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[indent:] for ln in lines)


def pmd(repo: str, left_out: Counter) -> list[dict]:
    import xml.etree.ElementTree as ET

    head = head_commit(repo)
    upstream = f"pmd/pmd@{head}"
    samples = []
    for n, test in enumerate(ET.fromstring(show(repo, head, PMD_TESTS)).iter(_PMD_NS + "test-code"), 1):
        code = _dedent(test.findtext(_PMD_NS + "code") or "")
        source = f"{upstream}:{PMD_TESTS}#test-{n}"
        if test.findtext(_PMD_NS + "expected-problems", "").strip() == "0":
            samples.append(CORPUS.sample("upstream-negative", source, "Foo.java", code, fmt="java"))
            continue
        numbers = (test.findtext(_PMD_NS + "expected-linenumbers") or "").replace(" ", "")
        lines = code.split("\n")
        # a literal naming an algorithm or an encoding (`"AES"`, `"UTF-8"`) is an argument, not the key
        found = [(int(i), v) for i in numbers.split(",") if i for v in re.findall(r'"([^"]+)"', lines[int(i) - 1])
                 if not _ALGORITHM.fullmatch(v)]
        secrets = [v for _, v in found if not placeholder(v)]
        left_out["a PMD literal that is a placeholder"] += len(found) - len(secrets)
        if not secrets:
            left_out["a failing PMD test with no literal key on its reported lines"] += 1
            continue
        for i in sorted({i for i, v in found if v in secrets}):
            samples += CORPUS.positive(f"{source}-line-{i}", "Foo.java", lines[i - 1].strip(),
                                       [v for j, v in found if j == i and v in secrets], left_out, fmt="java")
        samples += CORPUS.positive(source, "Foo.java", code, secrets, left_out, fmt="java")
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "wrongsecrets": (".github/workflows/codeql-analysis.yml", ".github/workflows/container_test.yml",
                     ".github/workflows/main.yml", ".github/workflows/pre-commit.yml",
                     ".github/workflows/minikube-k8s-test.yml", ".github/workflows/terraform.yml",
                     ".github/scripts/clean_terraform.sh", ".github/scripts/setup-precommit.sh",
                     ".pre-commit-config.yaml", ".mvn/wrapper/maven-wrapper.properties", "Procfile", "app.json",
                     "fly.toml", "heroku.yml", "commitlint.config.js", "aws/variables.tf", "aws/versions.tf",
                     "aws/outputs.tf", "gcp/variables.tf", "k8s/workspace-psa.yml"),
    "test-keys": ("package.json",),
    "pmd": (".github/workflows/build.yml", ".github/workflows/publish-release.yml", ".github/dependabot.yml",
            ".ci/files/project-list.xml", ".github/workflows/build-pr.yml", ".github/workflows/git-repo-sync.yml",
            ".github/workflows/build-snapshot.yml", ".mvn/wrapper/maven-wrapper.properties", ".gitattributes"),
    "psscriptanalyzer": (".devcontainer/Dockerfile", ".devcontainer/devcontainer.json", ".github/dependabot.yml",
                         ".github/workflows/ci-test.yml", ".pipelines/PSScriptAnalyzer-Official.yml",
                         ".vscode/launch.json", ".vscode/settings.json", "Directory.Build.props", "NuGet.Config",
                         ".config/tsaoptions.json", "New-StronglyTypedCsFileForResx.ps1"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    samples = wrongsecrets(repos["wrongsecrets"], left_out)
    samples += test_keys(repos["test-keys"], left_out)
    samples += psscriptanalyzer(repos["psscriptanalyzer"], left_out)
    return samples + pmd(repos["pmd"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
