"""Build the eleventh held-out redaction corpus (tests/fixtures/redaction/corpus11.json.gz).

The first ten corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec,
talisman, awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman and Bearer/bearer-rules
(Skyscanner/whispers and Plazmaz/leaky-repo set aside). This one comes from five other
projects, none of them read by an earlier corpus, each labelled by its upstream:

- find-sec-bugs/find-sec-bugs: its detector tests
  (`findsecbugs-plugin/src/test/java/com/h3xstream/findsecbugs/password/*DetectorTest.java`
  and the Kotlin ones) name, per sample class, the lines where `HARD_CODE_PASSWORD` or
  `HARD_CODE_KEY` must be reported (`inClass("X").atLine(N)`, the lines listed with
  `Arrays.asList(...)` before it). The named line of the class's source
  (`findsecbugs-samples-java/...` or `findsecbugs-samples-kotlin/...`) is a positive; its
  secret is taken from the line's string literals as in the tenth corpus (the password of
  a URL's user information, else a secret-named `name=value` inside a literal, else the
  literal a secret-named variable, key or argument is given, else the line's one literal
  that is not a name). A named line that holds no literal (the bytecode line of a use of a
  constant or a variable set elsewhere) is left out. The source file (200 lines or fewer)
  is a positive whole, with the secrets that stand nowhere else in it than on its named lines.
- auth0/repo-supervisor: its CLI test (`test/integration/src/cli.js`, "should detect
  secrets in supported files") lists, per file of `test/fixtures/integration/dir.with.secrets/`,
  the strings it must report. Each such file is a positive whole and each of its lines that
  holds a reported string a positive; the secret is the reported string (the value of a
  reported `NAME=VALUE`); `USER_ID=...` is an identifier, not a secret by this project's
  threat model, and is left out. The other lines of those files that give a value are
  negatives. `test/fixtures/fixtures.json` `randomSecrets` (the strings every entropy
  pre-filter test must let through as secrets) are positives, each alone; the strings its
  pre-filter tests must drop (`validEmailAddresses`, `validLocalPaths`,
  `validCSSSelectors`, `urlsWithoutAuthParams`, `urlsWithEmptyAuthParams`, `multipleWords`,
  `objectKeys`, `shouldMatchPrefixes`, `whitelist`) are negatives, each alone.
- pre-commit/pre-commit-hooks: `tests/detect_aws_credentials_test.py` names the AWS
  secret keys `get_aws_secrets_from_file` must return from each file of
  `testing/resources/aws_config_*.ini`: a file with one is a positive (its secret the key
  named; the session token `foo` is a placeholder), a file with none a negative; the
  credentials file the test writes itself (`src.ini`) is a positive as well.
  `tests/detect_private_key_test.py` lists texts and the hook's verdict: those it passes
  (`0`) are negatives; those it flags are armor headers without key material, not secrets
  to judge, and are left out.
- SAP/credential-digger: `tests/integration_tests/test_file_scanner.py` names the lines of
  `tests/file_scanner_tests_folder/file_a.py` its password rule reports; the file's own
  text says which are keywords in prose and which a password: the line assigning a literal
  to `password` is a positive (its secret the literal), the prose lines negatives.
  `subdir_A/file_Aa.yml` ("credentials in a yml file should be detected") is a positive
  whose secrets are its `api_keys` list items; `subdir_A/subdir_AB/file_ABa.txt` (no
  discoveries expected) is a negative.
- newrelic/rusty-hog: the unit tests of `crates/rusty-hog-scanner/src/lib.rs`.
  `generic_secret_regex_test` expects 3 findings in 4 lines: each line giving a value to a
  `secret` name is a positive (its secret the value), the other line a negative (the
  extractor checks that the count matches); `test_check_entropy` expects
  `secret: ABCD...` to pass the entropy check (a positive) and `secret: AAAA...` not to (a
  negative).
- Benign: ordinary files of the same repositories outside their tests (CI workflows, build
  and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and each line
  that names a password, secret, token, key, credential or auth, and the output of
  `git log --format='%H %an %s' -n 15` at each pinned commit.

Upstream's placeholders (`foo`, `test`, `secret`, `hardcoded`, a `${NAME}` reference) are
not secrets by this project's threat model and are left out. A secret is kept only where
the scoring can judge it (tests/support/redaction_corpus6_extract.py `scorable`, the
sixth corpus's rule). Samples are labelled with the format of their text; the scorer
(tests/support/redaction_corpus11.py) stores each in the four carriers an agent produces.
Sources read `owner/repo@commit:path` (and `#line-n`, `#KEY-n`, `#TESTS-n`).

Usage (not part of the test suite, which reads the built file):

    python3 tests/support/redaction_corpus11_extract.py --find-sec-bugs DIR --repo-supervisor DIR \\
        --pre-commit-hooks DIR --credential-digger DIR --rusty-hog DIR

where each DIR is a git clone or bare mirror (its HEAD is the commit the fixture names).
Standard library only.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _MAX_LINES, format_of, path_for, sniff  # noqa: E402
from redaction_corpus10_extract import _split, line_secrets, placeholder  # noqa: E402

OUT = HERE / "corpus11.json.gz"
SESSION = "corpus11"
_NAMES = {"find-sec-bugs/find-sec-bugs": "find-sec-bugs", "auth0/repo-supervisor": "repo-supervisor",
          "pre-commit/pre-commit-hooks": "pre-commit-hooks", "SAP/credential-digger": "credential-digger",
          "newrelic/rusty-hog": "rusty-hog"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=10)


# -- find-sec-bugs ----------------------------------------------------------------------------------------------

FSB_TESTS = tuple("findsecbugs-plugin/src/test/java/com/h3xstream/findsecbugs/" + f for f in (
    "password/ConstantPasswordDetectorTest.java", "password/HardcodePasswordInMapDetectorTest.java",
    "password/HardcodedPasswordEqualsDetectorTest.java", "password/IntuitiveHardcodePasswordDetectorTest.java",
    "password/GoogleApiKeyDetectorTest.java", "password/JschPasswordDetectorTest.java",
    "kotlin/KotlinHardcodePasswordInMapDetectorTest.java", "kotlin/KotlinHardcodedPasswordEqualsDetectorTest.java"))
_FSB_BUG = re.compile(r"HARD_CODE_(PASSWORD|KEY)")
_CLASS_PATH = re.compile(r"getClassFilePath\(\"([^\"]+)\"\)")
_AS_LIST = re.compile(r"Arrays\.asList\(([\d,\s]+)\)")
_IN_CLASS = re.compile(r"inClass\(\"(\w+)\"\)(?:\.atLine\((\d+)\))?")


def _fsb_source(present: set[str], class_paths: list[str], name: str) -> str:
    """The source file of a sample class a test names (`XKt` is Kotlin's class of file `X.kt`)."""
    for cp in class_paths:
        if cp.rsplit("/", 1)[-1] != name:
            continue
        stem = cp[:-2] if cp.endswith("Kt") else cp
        for path in (f"findsecbugs-samples-java/src/test/java/{cp}.java",
                     f"findsecbugs-samples-kotlin/src/test/kotlin/{stem}.kt"):
            if path in present:
                return path
    return ""


def find_sec_bugs(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"find-sec-bugs/find-sec-bugs@{head}"
    present = set(tree_files(repo, head))
    named: dict[str, set[int]] = {}
    for test in FSB_TESTS:
        src = show(repo, head, test)
        class_paths = _CLASS_PATH.findall(src)
        # the lines a list names belong to the class the next `inClass` names
        for m in _AS_LIST.finditer(src):
            after = _IN_CLASS.search(src, m.end())
            if not after or not _FSB_BUG.search(src[m.end():after.end()]):
                continue
            path = _fsb_source(present, class_paths, after.group(1))
            if not path:
                left_out["a find-sec-bugs class whose source file cannot be told"] += 1
                continue
            named.setdefault(path, set()).update(int(n) for n in re.findall(r"\d+", m.group(1)))
        for m in _IN_CLASS.finditer(src):
            if m.group(2) and _FSB_BUG.search(src[max(0, m.start() - 200):m.start()]):
                path = _fsb_source(present, class_paths, m.group(1))
                if not path:
                    left_out["a find-sec-bugs class whose source file cannot be told"] += 1
                    continue
                named.setdefault(path, set()).add(int(m.group(2)))
    samples = []
    for path in sorted(named):
        text = show(repo, head, path).rstrip("\n")
        lines = text.split("\n")
        file_name = path.rsplit("/", 1)[1]
        lang = "java" if path.endswith(".java") else "kotlin"
        whole: list[str] = []
        taken: list[int] = []
        for n in sorted(named[path]):
            code, _, literals = _split(lines[n - 1], "kotlin")  # Java's and Kotlin's literals and comments alike
            secrets = [x for x in line_secrets(code, literals) if not placeholder(x)]
            short = [x for x in secrets if len(x) < 5]
            if short:  # a keystore type (`JKS`), an algorithm (`alg`), a user (`user`), `oups`
                left_out["a find-sec-bugs literal of fewer than 5 characters (a type, an algorithm, a user)"] += 1
                secrets = [x for x in secrets if len(x) >= 5]
            if not secrets:
                left_out["a reported line that holds no literal secret (a constant or variable set elsewhere)"] += 1
                continue
            whole += secrets
            taken.append(n)
            samples += CORPUS.positive(f"{upstream}:{path}#line-{n}", file_name, code.strip(), secrets, left_out,
                                       fmt=lang)
        if len(lines) <= _MAX_LINES and whole:
            labelled = "\n".join(lines[n - 1] for n in taken)
            own = [x for x in set(whole) if text.count(x) == labelled.count(x)]
            left_out["a secret that also stands on an unlabelled line of the whole file"] += len(set(whole)) - len(own)
            samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, own, left_out, Counter(whole), lang)
    return samples


# -- repo-supervisor --------------------------------------------------------------------------------------------

RS_CLI_TEST = "test/integration/src/cli.js"
RS_FIXTURES = "test/fixtures/fixtures.json"
RS_FILTERS = "test/fixtures/unit/src/filters/entropy.meter/pre.filters/"
# the fixture lists each pre-filter test must drop as no secret (`to.be.equal(false)`, `to.be.false`)
RS_DROPPED = {"authentication.urls.json": ("urlsWithoutAuthParams", "urlsWithEmptyAuthParams"),
              "css.selectors.json": ("validCSSSelectors",), "email.addresses.json": ("validEmailAddresses",),
              "local.paths.json": ("validLocalPaths",), "multiple.words.json": ("multipleWords",),
              "object.keys.identifiers.json": ("objectKeys",), "skip.prefixes.json": ("shouldMatchPrefixes",),
              "whitelist.json": ("whitelist",)}
_RS_BLOCK = re.compile(r"\[\./(test/fixtures/integration/[^\]]+)\]\n((?:>> .*\n?)+)")
_VALUE_LINE = re.compile(r"[:=]\s*\S")


def repo_supervisor(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"auth0/repo-supervisor@{head}"
    samples = []
    cli = show(repo, head, RS_CLI_TEST)
    at = cli.index("it('should detect secrets in supported files'")
    block = cli[at:cli.index("`;", at)]
    for m in _RS_BLOCK.finditer(block):
        path = m.group(1)
        text = show(repo, head, path).rstrip("\n")
        file_name = path.rsplit("/", 1)[1]
        fmt = format_of(path, text)
        reported = [ln[3:].strip() for ln in m.group(2).strip().split("\n")]
        secrets = []
        for r in reported:
            name, _, value = r.rpartition("=") if re.match(r"^[A-Z_]+=", r) else ("", "", r)
            if re.search(r"(?i)(^|_)(user_?)?id$", name):
                left_out["a reported identifier (a user id), not a secret"] += 1
                continue
            secrets.append(value)
        lines = text.split("\n")
        for i, line in enumerate(lines, 1):
            own = [x for x in secrets if x in line]
            source = f"{upstream}:{path}#line-{i}"
            if own:
                samples += CORPUS.positive(source, file_name, line.strip(), own, left_out, fmt=fmt)
            elif _VALUE_LINE.search(line) and not any(r in line for r in reported):
                samples.append(CORPUS.sample("upstream-negative", source, file_name, line.strip(), fmt=fmt))
        samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, secrets, left_out, fmt=fmt)
    for n, secret in enumerate(json.loads(show(repo, head, RS_FIXTURES))["randomSecrets"], 1):
        samples += CORPUS.positive(f"{upstream}:{RS_FIXTURES}#randomSecrets-{n}", path_for("token"), secret, [secret],
                                   left_out, fmt="token")
    for name, keys in RS_DROPPED.items():
        doc = json.loads(show(repo, head, RS_FILTERS + name))
        for key in keys:
            for n, value in enumerate(doc[key], 1):
                fmt = sniff(value)
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{RS_FILTERS}{name}#{key}-{n}",
                                             path_for(fmt), value, fmt=fmt))
    return samples


# -- pre-commit-hooks -------------------------------------------------------------------------------------------

PCH_AWS_TEST = "tests/detect_aws_credentials_test.py"
PCH_KEY_TEST = "tests/detect_private_key_test.py"


def _decorated_cases(src: str, test: str) -> list:
    """The cases of the `pytest.mark.parametrize` that decorates `def test(...)`, as Python values."""
    tree = ast.parse(src)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == test:
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and len(dec.args) == 2:
                    cases = dec.args[1]
                    if isinstance(cases, ast.Name):  # a module-level tuple, `TESTS = (...)`
                        cases = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                     and any(isinstance(t, ast.Name) and t.id == cases.id for t in n.targets))
                    return ast.literal_eval(cases)
    raise ValueError(test)


def pre_commit_hooks(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"pre-commit/pre-commit-hooks@{head}"
    present = set(tree_files(repo, head))
    samples = []
    src = show(repo, head, PCH_AWS_TEST)
    for file_name, expected in _decorated_cases(src, "test_get_aws_secrets_from_file"):
        path = f"testing/resources/{file_name}"
        if path not in present or not file_name.startswith("aws_"):
            continue  # not a credentials file (`nonsense.txt`, `ok_json.json`)
        text = show(repo, head, path).rstrip("\n")
        secrets = [x for x in expected if not placeholder(x)]
        left_out["an expected secret that is a placeholder"] += len(expected) - len(secrets)
        if not expected:
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}", file_name, text, fmt="ini"))
            continue
        samples += CORPUS.positive(f"{upstream}:{path}", file_name, text, secrets, left_out, fmt="ini")
    # the credentials file the test writes itself: its secret is what `get_aws_secrets_from_file` reads from it
    m = re.search(r"src_ini\.write\(\n((?:\s+'[^']*',?\n)+)\s+\)", src)
    if m:
        text = "".join(ast.literal_eval(s.strip().rstrip(",")) for s in m.group(1).strip().split("\n")).rstrip("\n")
        secret = re.search(r"(?im)^aws_secret_access_key\s*=\s*(\S+)$", text)
        if secret:
            samples += CORPUS.positive(f"{upstream}:{PCH_AWS_TEST}#test_allows_arbitrarily_encoded_files", "src.ini",
                                       text, [secret.group(1)], left_out, fmt="ini")
    for n, (data, verdict) in enumerate(_decorated_cases(show(repo, head, PCH_KEY_TEST), "test_main"), 1):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            left_out["a detect-private-key case that is not text"] += 1
            continue
        if verdict:
            left_out["a detect-private-key header without key material (no secret to judge)"] += 1
            continue
        samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{PCH_KEY_TEST}#TESTS-{n}", "file.txt", text,
                                     fmt=sniff(text)))
    return samples


# -- credential-digger ------------------------------------------------------------------------------------------

CD_DIR = "tests/file_scanner_tests_folder/"
CD_TEST = "tests/integration_tests/test_file_scanner.py"


def credential_digger(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"SAP/credential-digger@{head}"
    samples = []
    test = show(repo, head, CD_TEST)
    reported = json.loads(re.search(r"param\(file_path='file_a\.py', expected_discoveries=(\[[\d, ]+\])\)",
                                    test).group(1))
    path = CD_DIR + "file_a.py"
    lines = show(repo, head, path).rstrip("\n").split("\n")
    for n in reported:
        line = lines[n - 1]
        source = f"{upstream}:{path}#line-{n}"
        assigned = re.match(r"\s*password\s*=\s*\"([^\"]+)\"\s*$", line)
        if assigned:
            samples += CORPUS.positive(source, "file_a.py", line.strip(), [assigned.group(1)], left_out, fmt="python")
        else:  # the keyword in prose, which the file's text calls a false positive
            samples.append(CORPUS.sample("upstream-negative", source, "file_a.py", line.strip(), fmt="python"))
    path = CD_DIR + "subdir_A/file_Aa.yml"
    text = show(repo, head, path).rstrip("\n")
    items = re.search(r"(?m)^api_keys:\n((?:\s+- .*\n?)+)", text + "\n")
    secrets = [ln.strip()[2:].strip() for ln in items.group(1).strip("\n").split("\n")]
    samples += CORPUS.positive(f"{upstream}:{path}", "file_Aa.yml", text, secrets, left_out, fmt="yaml")
    path = CD_DIR + "subdir_A/subdir_AB/file_ABa.txt"
    samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{path}", "file_ABa.txt",
                                 show(repo, head, path).rstrip("\n"), fmt="text"))
    return samples


# -- rusty-hog --------------------------------------------------------------------------------------------------

RH_LIB = "crates/rusty-hog-scanner/src/lib.rs"
_RH_VALUE = re.compile(r"^\w*secret\s*[:=]\s*\"?([^\"\s]+)\"?$")


def rusty_hog(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"newrelic/rusty-hog@{head}"
    src = show(repo, head, RH_LIB)
    samples = []
    body = src[src.index("fn generic_secret_regex_test()"):]
    body = body[:body.index("#[test]")]
    raw = re.search(r"r#\"(.*?)\"#", body, re.S).group(1)
    expected = int(re.search(r"assert_eq!\(findings\.len\(\), (\d+)\)", body).group(1))
    lines = [ln.strip() for ln in raw.split("\n") if ln.strip()]
    values = [_RH_VALUE.match(ln) for ln in lines]
    if sum(v is not None for v in values) != expected:
        raise SystemExit(f"rusty-hog: {expected} findings expected, {sum(v is not None for v in values)} read")
    for n, (line, v) in enumerate(zip(lines, values), 1):
        source = f"{upstream}:{RH_LIB}#generic_secret_regex_test-{n}"
        fmt = sniff(line)
        if v:
            samples += CORPUS.positive(source, path_for(fmt), line, [v.group(1)], left_out, fmt=fmt)
        else:
            samples.append(CORPUS.sample("upstream-negative", source, path_for(fmt), line, fmt=fmt))
    body = src[src.index("fn test_check_entropy()"):]
    body = body[:body.index("#[test]")]
    for n, (line, verdict) in enumerate(re.findall(r"\"([^\"]+)\"\.as_bytes\(\),\s*\);\s*assert!\((!?)output", body,
                                                   re.S), 1):
        source = f"{upstream}:{RH_LIB}#test_check_entropy-{n}"
        fmt = sniff(line)
        if verdict:
            samples.append(CORPUS.sample("upstream-negative", source, path_for(fmt), line, fmt=fmt))
        else:
            samples += CORPUS.positive(source, path_for(fmt), line, [_RH_VALUE.match(line).group(1)], left_out, fmt=fmt)
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "find-sec-bugs": (".github/workflows/codeql-analysis.yml", ".github/workflows/spotbugs.yml",
                      ".github/codeql/codeql-config.yml", ".travis.yml", "cli/build.gradle", "cli/findsecbugs.sh",
                      "findsecbugs-samples-kotlin/pom.xml", "findsecbugs-samples-jsp/pom.xml"),
    "repo-supervisor": (".circleci/config.yml", ".editorconfig", ".eslintrc", "Dockerfile", "bin/get.wt.deps.sh",
                        "config/filters.json", "config/filters/entropy.meter.json", "config/main.json",
                        "opslevel.yml", "package.json"),
    "pre-commit-hooks": (".github/workflows/main.yml", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml",
                         "requirements-dev.txt", "setup.cfg", "setup.py", "tox.ini"),
    "credential-digger": (".env.sample", ".github/dependabot.yml", ".github/workflows/publish.yml",
                          ".github/workflows/test.yml", ".pep8speaks.yml", ".pre-commit-hooks.yaml",
                          "docker-compose.yml", "docker-compose.postgres.yml", "pyproject.toml", "ui/Dockerfile",
                          "ui/run.sh"),
    "rusty-hog": (".github/workflows/release.yml", ".github/workflows/testing.yml", "Cargo.toml",
                  "Dockerfile.build", "Dockerfile.hog", "Dockerfile.lambda", "Makefile", "build_lambda.sh",
                  "crates/rusty-hog-scanner/Cargo.toml", "scripts/ghe_secret_monitor.service",
                  "scripts/ghe_secret_monitor.timer"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    samples = find_sec_bugs(repos["find-sec-bugs"], left_out)
    samples += repo_supervisor(repos["repo-supervisor"], left_out)
    samples += pre_commit_hooks(repos["pre-commit-hooks"], left_out)
    samples += credential_digger(repos["credential-digger"], left_out)
    return samples + rusty_hog(repos["rusty-hog"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
