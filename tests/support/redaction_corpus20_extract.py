"""Build the twentieth held-out redaction corpus (tests/fixtures/redaction/corpus20.json.gz).

The first nineteen corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets, DevSkim, americanexpress/earlybird,
Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman, Bearer/bearer-rules,
find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks, SAP/credential-digger,
newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle, OWASP/wrongsecrets,
trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd, astral-sh/ruff,
biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler, dotnet/roslyn-analyzers,
Checkmarx/kics, github/codeql, anchore/syft, IBM/detect-secrets and
advanced-security/secret-scanning-custom-patterns. This one comes from one project none of them
read, labelled by what its own tests expect:

- octarinesec/secret-detector: a Go library of secret detectors. Each detector's unit test
  (`pkg/detectors/*/*_test.go`) lists `tests.TestCase`s, a name, an input and whether a
  detection is expected, and runs them through the shared helpers of
  `pkg/detectors/tests/helpers.go`: `TestScan` asserts exactly one detection of the detector's
  type in an input that expects one and none in the others. An input that expects a detection
  is a positive, one that expects none an upstream negative (the empty input left out). A
  positive's secret is the credential in the value the detector reports: the input itself for
  a bare token (an access key id, a GitHub, Slack, Stripe, Square, SendGrid, Mailchimp, npm,
  Twilio or Artifactory token, a JWT, a high-entropy string), and else the part of it that is
  the credential, not the key, scheme or quotes its detector's pattern matches around it: the
  parameter of a `Basic` or `Bearer` scheme, the quoted 40 characters of an AWS secret key, the
  value of `AccountKey=`, the password of a URL, the value of `_authToken=`, the path after a
  Slack webhook's `/services/`, the body of a PEM block or of a PuTTY key's private lines, and
  for the keyword detector the value its test's own `extractKeyValue` splits off (the first of
  `:=`, `:` or `=`). Where a test calls `TestScanWithMultipleMatches`, the text its keyed half
  scans (`keyN: input` for every case, in order) is a positive whole: the helper asserts a
  detection for each key whose case expects one and no other, so its secrets are its positive
  cases'. Left out: an input built at run time (a random UUID) and the text of its test;
  `helpers/key_value_regex_test.go` (the key-value pattern's own test, its values `value_101`
  and the like, no detector); the keyword test's multi-match text (unkeyed: the helper counts
  detections, it does not say which line).
- Benign: ordinary files of the same repository outside its tests (README, `go.mod`, `go.sum`,
  the command line, the scanner, its configuration and secret types, the data formats, a
  transformer and a few detectors' sources), each whole (up to 200 lines) and each line that
  names a password, secret, token, key, credential or auth, and
  `git log --format='%H %an %s' -n 15` at the pinned commit. Chosen before scoring, by the
  fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule), and a placeholder
(tests/support/redaction_corpus10_extract.py `placeholder`) is left out. A test case's text has
no file of its own: it is carried as `secret.txt`, labelled with the format its text shows
(`sniff`), as the sixth corpus carried talisman's inputs. The scorer
(tests/support/redaction_corpus20.py) stores each sample in the four carriers an agent
produces. Sources read `owner/repo@commit:path#line-n` (a test case, by its line) or
`…:path#VAR (TestScanWithMultipleMatches)` (a test's keyed multi-match text).

Usage (not part of the test suite, which reads the built file; standard library only):

    .venv/bin/python tests/support/redaction_corpus20_extract.py --secret-detector DIR

where DIR is a clone or bare mirror (its HEAD is the commit the fixture names).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import _unquote_go, sniff  # noqa: E402
from redaction_corpus10_extract import placeholder  # noqa: E402

OUT = HERE / "corpus20.json.gz"
SESSION = "corpus20"
_UPSTREAM = "octarinesec/secret-detector"
_NAMES = {_UPSTREAM: "secret-detector"}
CORPUS = Corpus(_NAMES, session=SESSION, earlier=19)
PATH = "secret.txt"

_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'
_VAR = re.compile(r"^var (\w+) = \[\]tests\.TestCase\{\n(.*?)^\}", re.M | re.S)
_CASE = re.compile(rf"^\s*\{{({_GO_STRING}),\s*({_GO_STRING}),\s*(true|false)\}},?\s*(?://.*)?$")
_MULTI = re.compile(r"tests\.TestScanWithMultipleMatches\(t,\s*\w+,\s*(\w+)\)")
_NOT_DETECTORS = ("pkg/detectors/helpers/",)


# -- the credential in what a detector reports ----------------------------------------------------------------

def _after(marker: str) -> Callable[[str], str]:
    return lambda text: text.split(marker, 1)[1] if marker in text else text


def _scheme_parameter(text: str) -> str:
    """The parameter of a `Basic` or `Bearer` scheme: the input's last word, quotes set aside."""
    return text.split()[-1].strip("\"'")


def _aws_secret(text: str) -> str:
    m = re.search(r"['\"]([0-9a-zA-Z/+]{40})['\"]", text)
    return m.group(1) if m else text


def _url_password(text: str) -> str:
    m = re.match(r"^[a-z]+://(.*):([^:@/\s]+)@[^@]*$", text)
    return m.group(2) if m else text


def _key_body(text: str) -> str:
    """A PEM block's body, or a PuTTY key's private lines."""
    lines = text.splitlines()
    if lines[0].startswith("-----BEGIN"):
        return "\n".join(ln for ln in lines[1:] if not ln.startswith("-----END"))
    i = next(n for n, ln in enumerate(lines) if ln.startswith("Private-Lines:"))
    return "\n".join(lines[i + 1:i + 1 + int(lines[i].split(":")[1])])


def _keyword_value(text: str) -> str:
    """The value the keyword test's `extractKeyValue` splits off (the first of `:=`, `:`, `=`)."""
    for sep in (":=", ":", "="):
        if sep in text:
            return text.split(sep, 1)[1].strip().strip("\"'")
    return text


CREDENTIAL = {
    "pkg/detectors/basicauth/basic_auth_detector_test.go": _scheme_parameter,
    "pkg/detectors/bearerauth/bearer_auth_detector_test.go": _scheme_parameter,
    "pkg/detectors/aws/aws_secret_key_detector_test.go": _aws_secret,
    "pkg/detectors/azure/storage_key_detector_test.go": _after("AccountKey="),
    "pkg/detectors/generic/url_password_detector_test.go": _url_password,
    "pkg/detectors/npm/npm_token_detector_test.go": _after("_authToken="),
    "pkg/detectors/privatekey/private_key_detector_test.go": _key_body,
    "pkg/detectors/keyword/keyword_detector_test.go": _keyword_value,
}


def credential(path: str, text: str) -> str:
    """The secret of a positive input: the credential in the value its detector reports."""
    if path == "pkg/detectors/slack/slack_detector_test.go" and "/services/" in text:
        return text.split("/services/", 1)[1]
    return CREDENTIAL.get(path, lambda t: t)(text)


# -- the detectors' tests ----------------------------------------------------------------------------------------

def detectors(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    samples: list[dict] = []
    tests = sorted(f for f in tree_files(repo, head)
                   if f.startswith("pkg/detectors/") and f.endswith("_test.go") and not f.startswith(_NOT_DETECTORS))
    for path in tests:
        src = show(repo, head, path)
        multi = set(_MULTI.findall(src))
        for var in _VAR.finditer(src):
            first_line = src[:var.start(2)].count("\n") + 1
            cases: list[tuple[int, str, bool]] = []  # (line, input, expects a detection)
            built_at_run_time = False
            for n, line in enumerate(var.group(2).split("\n"), first_line):
                if not line.strip().startswith("{"):
                    continue
                m = _CASE.match(line)
                if not m:
                    left_out["a test case whose input is built at run time"] += 1
                    built_at_run_time = True
                    continue
                cases.append((n, _unquote_go(m.group(2)), m.group(3) == "true"))
            source = f"{_UPSTREAM}@{head}:{path}"
            secrets_of_doc: list[str] = []
            for n, text, expects in cases:
                if not text:
                    left_out["an empty input"] += 1
                    continue
                where = f"{source}#line-{n}"
                if not expects:
                    samples.append(CORPUS.sample("upstream-negative", where, PATH, text, fmt=sniff(text)))
                    continue
                secret = credential(path, text)
                if placeholder(secret) or not secret.strip():
                    left_out["a labelled value that is a placeholder or empty"] += 1
                    continue
                secrets_of_doc.append(secret)
                samples += CORPUS.positive(where, PATH, text, [secret], left_out, fmt=sniff(text))
            if var.group(1) not in multi:
                if "WithMultipleMatchesWithoutKey" in src:
                    left_out["a multi-match text without keys (the helper counts detections only)"] += 1
                continue
            if built_at_run_time:
                left_out["a multi-match text holding an input built at run time"] += 1
                continue
            doc = "".join(f"key{i}: {text}\n" for i, (_, text, _) in enumerate(cases)).rstrip("\n")
            if secrets_of_doc:
                samples += CORPUS.positive(f"{source}#{var.group(1)} (TestScanWithMultipleMatches)", PATH, doc,
                                           secrets_of_doc, left_out, uses=Counter(secrets_of_doc), fmt=sniff(doc))
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "secret-detector": (
        "README.md", "go.mod", "go.sum", "main.go", "pkg/dataformat/data_format.go", "pkg/scanner/config.go",
        "pkg/scanner/scanner.go", "pkg/scanner/is_text_file.go", "pkg/secrets/types.go", "pkg/secrets/factory.go",
        "pkg/secrets/errors.go", "pkg/transformers/command/command_transformer.go",
        "pkg/detectors/helpers/regex_detector_builder.go", "pkg/detectors/keyword/keyword_detector.go",
        "pkg/detectors/basicauth/basic_auth_detector.go", "pkg/detectors/aws/aws_secret_key_detector.go"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return detectors(repos["secret-detector"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
