"""Build the twenty-fourth held-out redaction corpus (tests/fixtures/redaction/corpus24.json.gz).

The first twenty-three corpora came from the projects tests/support/redaction_corpus23_extract.py
names, eslint-plugin-no-secrets read again and praetorian-inc/titus. This one reads a project
none of them read, a redactor rather than a scanner: npm/redact, the library the npm CLI masks
its logs and errors with.

- npm/redact, `test/fixtures/examples.js`: the strings its test suite (`test/suite.js`) hands
  to every matcher and to `redact`/`redactLog`, each group built the way the file builds it
  (`test6` cut to 10, 36, 42 and 48 characters, npm tokens `npm_`/`npms_`, the two JSON Web
  Tokens, `Basic`/`Bearer` authorization headers around a credential, `http(s)://user:pass@host`
  URLs). An example of a group upstream redacts is a positive whose secret is what the
  redaction replaces: the npm token, the JSON Web Token, the credential after `Basic`/`Bearer`,
  the URL's password. The two URLs without credentials (`http_no_auth`,
  `http_no_auth_no_trailing`) are upstream negatives. Left out: the `UUID` group, which the
  library masks too but which holds identifiers (the second corpus's rule: an id is no
  secret), and the non-string examples of `test/fixtures/complex.js` (numbers, arrays,
  objects, getters, an error: no one text; the sensitive ones hold the strings above).
- Benign: ordinary files of the repository outside its tests and library (the CI workflows and
  actions, the Dependabot, repository-settings, issue-template and TAP-matcher configuration,
  the package, lint, commit-lint and release configuration, the npm configuration, the
  contributing and security guides, the ignore list), each whole (up to 200 lines) and each
  line that names a password, secret, token, key, credential or auth, and
  `git log --format='%H %an %s' -n 15` at the pinned commit. The README and the changelog are
  not: they show what the library masks. Chosen before scoring, by the fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule): a password that is also the URL's user name, or that
stands in the path too, is not. A text or secret any of the first twenty-three corpora holds is
left out (counted). Each example is carried as `example.txt`, labelled with the format its text
shows (`sniff`). The scorer (tests/support/redaction_corpus24.py) stores each sample in the four
carriers an agent produces. Sources read `owner/repo@commit:path#GROUP/key` (the group's
constant in `examples.js` and the example's key there) or a benign `…:path` and `…:path#line-n`.

Usage (not part of the test suite, which reads the built file):

    .venv/bin/python tests/support/redaction_corpus24_extract.py --redact DIR

where DIR is a clone (or bare mirror) of npm/redact at the commit the fixture names.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show  # noqa: E402
from redaction_corpus6_extract import sniff  # noqa: E402

OUT = HERE / "corpus24.json.gz"
SESSION = "corpus24"
_REDACT = "npm/redact"
CORPUS = Corpus({_REDACT: "redact"}, session=SESSION, earlier=23)
EXAMPLES = "test/fixtures/examples.js"


def _examples(src: str) -> dict[str, dict[str, tuple[str, str | None]]]:
    """Each group of `examples.js` by its constant: key -> (text, the secret upstream masks, or None)."""
    test6 = re.search(r"^const test6 = '([^']+)'$", src, re.M).group(1)
    test60 = test6 * 10
    npm = {}
    for test in (test60[:36], test60[:42], test60[:48]):
        npm[f"npm_{len(test)}"] = "npm_" + test
        npm[f"npms_{len(test)}"] = "npms_" + test
    jwt = {f"jwt_{algo}_{len(token)}": token for algo, token in re.findall(r"addJWT\('(\w+)', '([^']+)'\)", src)}

    def auth(test: str, key: str) -> dict[str, tuple[str, str | None]]:
        return {f"basic_auth_header_{key}": (f"Basic {test}", test), f"bearer_auth_header_{key}": (f"Bearer {test}", test),
                f"basic_auth_header_multispace_{key}": (f"Basic      {test}", test),
                f"bearer_auth_header_multispace_{key}": (f"Bearer      {test}", test)}

    def url(test: str, key: str) -> dict[str, tuple[str, str | None]]:
        params = "?param1=value1&param2=value2"
        return {k: (v, test) for k, v in {
            f"https_com_{key}": f"https://username:{test}@example.com/",
            f"https_com_with_params_{key}": f"https://username:{test}@example.com/{params}",
            f"http_com_{key}": f"http://username:{test}@example.com",
            f"http_com_with_params_{key}": f"http://username:{test}@example.com/{params}",
            f"https_io_{key}": f"https://username:{test}@example.io/",
            f"https_io_with_params_{key}": f"https://username:{test}@example.io/{params}",
            f"http_io_{key}": f"http://username:{test}@example.io/",
            f"http_io_with_params_{key}": f"http://username:{test}@example.io/{params}",
            f"http_com_pass_path_{key}": f"http://username:{test}@example.io/{test}",
            f"http_com_up_same_{key}": f"http://{test}:{test}@example.io",
            f"http_localhost_port_{key}": f"http://username:{test}@localhost:3000",
            f"http_tld_port{key}": f"http://username:{test}@example.com:8080"}.items()}

    url_core: dict[str, tuple[str, str | None]] = {"http_no_auth": ("http://example.com/", None),
                                                   "http_no_auth_no_trailing": ("http://example.com", None)}
    url_core |= url(test6, str(len(test6))) | url("pass[word]", "encoded_char")
    groups = {
        "NPM_SECRET": {k: (v, v) for k, v in npm.items()},
        "JSON_WEB_TOKEN": {k: (v, v) for k, v in jwt.items()},
        "AUTH_HEADER_CORE": auth(test60[:10], "10"),
        "AUTH_HEADER_NPM": {k: v for key, value in npm.items() for k, v in auth(value, key).items()},
        "AUTH_HEADER_JWT": {k: v for key, value in jwt.items() for k, v in auth(value, key).items()},
        "HTTP_URL_CORE": url_core,
        "HTTP_URL_NPM": {k: v for key, value in npm.items() for k, v in url(value, key).items()},
    }
    for name in groups:  # every group the file exports, and no other
        assert re.search(rf"^  {name},$", src, re.M), name
    return groups


def redact(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_REDACT}@{head}"
    src = show(repo, head, EXAMPLES)
    samples: list[dict] = []
    for group, examples in _examples(src).items():
        for key, (text, secret) in examples.items():
            source = f"{upstream}:{EXAMPLES}#{group}/{key}"
            if secret is None:
                samples.append(CORPUS.sample("upstream-negative", source, "example.txt", text, fmt=sniff(text)))
            else:
                samples += CORPUS.positive(source, "example.txt", text, [secret], left_out, fmt=sniff(text))
    uuids = re.search(r"^const UUID = \{(.*?)^\}", src, re.M | re.S).group(1)
    left_out["a UUID example: an identifier, no secret"] += len(re.findall(r"^\s+\w+: '", uuids, re.M))
    complex_src = show(repo, head, "test/fixtures/complex.js")
    for name in ("examplesNonString", "examplesNonStringSensitive"):
        entries = re.search(rf"^const {name} = \{{(.*?)^\}}", complex_src, re.M | re.S).group(1)
        left_out["a non-string example (a number, an array, an object, a getter, an error): no one text"] += len(
            re.findall(r"^  \w+[:,]", entries, re.M))
    return samples


BENIGN_FILES = {
    "redact": (
        ".github/workflows/audit.yml", ".github/workflows/ci-release.yml", ".github/workflows/ci.yml",
        ".github/workflows/codeql-analysis.yml", ".github/workflows/post-dependabot.yml",
        ".github/workflows/pull-request.yml", ".github/workflows/release-integration.yml",
        ".github/workflows/release.yml", ".github/actions/create-check/action.yml",
        ".github/actions/install-latest-npm/action.yml", ".github/dependabot.yml", ".github/settings.yml",
        ".github/ISSUE_TEMPLATE/bug.yml", ".github/ISSUE_TEMPLATE/config.yml", ".github/matchers/tap.json",
        ".gitignore", ".npmrc", ".eslintrc.js", ".commitlintrc.js", "package.json", "release-please-config.json",
        "CONTRIBUTING.md", "SECURITY.md"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return redact(repos["redact"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
