"""Build the twenty-third held-out redaction corpus (tests/fixtures/redaction/corpus23.json.gz).

The first twenty-two corpora came from gitleaks, Yelp/detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, tfsec, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, every SonarSource analyzer, gosec, bandit, horusec, talisman,
awslabs/git-secrets, eslint-plugin-no-secrets (its `no-secrets` rule tests and staging files),
DevSkim, americanexpress/earlybird, Checkmarx/2ms, ajinabraham/njsscan, presidentbeef/brakeman,
Bearer/bearer-rules, find-sec-bugs, auth0/repo-supervisor, pre-commit/pre-commit-hooks,
SAP/credential-digger, newrelic/rusty-hog, stelligent/cfn_nag, goodwithtech/dockle,
OWASP/wrongsecrets, trufflesecurity/test_keys, PowerShell/PSScriptAnalyzer, pmd/pmd,
astral-sh/ruff, biomejs/biome, security-code-scan/security-code-scan, stackrox/kube-linter,
Skyscanner/whispers, Plazmaz/leaky-repo, prowler-cloud/prowler, dotnet/roslyn-analyzers,
Checkmarx/kics, github/codeql, anchore/syft, IBM/detect-secrets,
advanced-security/secret-scanning-custom-patterns, octarinesec/secret-detector, leaktk and
Samsung/CredSweeper. This one reads eslint-plugin-no-secrets's rule tests again at a later
commit, and, because what they hold that no earlier corpus holds is too little to score on
its own, a second project none of them read:

- nickdeis/eslint-plugin-no-secrets, `tests/lib/rules/no-secrets.ts` and
  `tests/lib/rules/no-pattern-match.ts`: the RuleTester cases. The code of an `invalid` case
  is a positive whose secret is the string literal the rule reports (for the Basic
  authorization header, the credential after `Basic`, as the seventh corpus read it); the
  code of a `valid` case is an upstream negative (a `REGEX_TESTS` case's code written out
  from `src/regexes.ts`). Left out: a valid case that is valid only because an option
  switches the rule off for it (`ignoreContent`, `ignoreIdentifiers`, `ignoreModules`,
  `additionalDelimiters`, `ignoreCase`), an empty case, an invalid case whose reported
  literal is a detector's own pattern source (`PATTERN_MATCH_TESTS`: no credential in it),
  and `no-pattern-match`'s invalid case, whose errors name five pattern matches across the
  text and no one literal.
- praetorian-inc/titus (noseyparker's rules carried on, with rules of its own), every rule
  file's `examples` (positives) and `negative_examples` (upstream negatives) under
  `pkg/rule/rules/`. The secret of a positive is the rule's `secret` group where its pattern
  names one, else what the second corpus read in noseyparker's rules
  (tests/support/redaction_corpus2_extract.py `_secrets`: the groups holding the secret), found
  with Python's `re`. Left out: an example of a rule the second corpus judged no secret (an
  id, a public key, an address), an example of a rule with several groups and no named
  secret group that the second corpus did not read (no one literal), one its own pattern
  does not match under Python's `re`, and a rule whose pattern Python's `re` does not compile.
- Benign: ordinary files of both repositories outside their tests and rules (the CI
  workflows, the package and tool configuration, the staging lint configurations, the
  contributing guide, the build files, the Go module file, the ignore lists), each whole (up
  to 200 lines) and each line that names a password, secret, token, key, credential or auth,
  and `git log --format='%H %an %s' -n 15` at each pinned commit. The READMEs are not: they
  show findings. Chosen before scoring, by the fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule); a text or secret any of the first twenty-two corpora holds
is left out (counted). A no-secrets case is carried as `index.js`, a titus example as
`example.txt` labelled with the format its text shows (`sniff`). The scorer
(tests/support/redaction_corpus23.py) stores each sample in the four carriers an agent
produces. Sources read `owner/repo@commit:path#CASE` (a RuleTester case, named by its
constant or its place), `…:path#RULE-ID/example-n`, `…:path#RULE-ID/negative-n`, or a benign
`…:path` and `…:path#line-n`.

Usage (not part of the test suite, which reads the built file; needs PyYAML):

    .venv/bin/python tests/support/redaction_corpus23_extract.py --no-secrets DIR --titus DIR

where each DIR is a clone (or bare mirror) of its repository at the commit the fixture names.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, compile_upstream, head_commit, show, tree_files  # noqa: E402
from redaction_corpus2_extract import NOT_SECRET, SECRET_GROUPS, SECRET_WITHIN, _secrets  # noqa: E402
from redaction_corpus6_extract import sniff  # noqa: E402

OUT = HERE / "corpus23.json.gz"
SESSION = "corpus23"
_NO_SECRETS = "nickdeis/eslint-plugin-no-secrets"
_TITUS = "praetorian-inc/titus"
CORPUS = Corpus({_NO_SECRETS: "no-secrets", _TITUS: "titus"}, session=SESSION, earlier=22)
NO_SECRETS_TEST = "tests/lib/rules/no-secrets.ts"
NO_PATTERN_MATCH_TEST = "tests/lib/rules/no-pattern-match.ts"
REGEXES = "src/regexes.ts"
TITUS_RULES = "pkg/rule/rules/"

# -- eslint-plugin-no-secrets ---------------------------------------------------------------------------------

_TS_CONST = re.compile(r"^const (\w+) =\s*\n?\s*(`[^`]*`|\"(?:[^\"\\]|\\.)*\");", re.M)
_TS_CASE = re.compile(r"\{\s*(?://\w+\s*)?code: (\w+|`[^`]*`),(.*?)\n      \}", re.S)
_LITERAL = re.compile(r"\"([^\"\s]{16,})\"")
_OPTION_OFF = re.compile(r"ignoreContent|ignoreIdentifiers|ignoreModules|additionalDelimiters|ignoreCase")
_REGEX_ENTRY = re.compile(r"^\s*(\"[^\"]+\"|\w+):\s*\n?\s*/(.*)/,$", re.M)


def _regex_sources(repo: str, rev: str) -> dict[str, str]:
    """Each detector of `src/regexes.ts` by name: its pattern's source, as a RegExp's `.source` reads."""
    return {json.loads(name) if name.startswith('"') else name: src
            for name, src in _REGEX_ENTRY.findall(show(repo, rev, REGEXES))}


def _cases(src: str) -> tuple[dict[str, str], str, int]:
    consts = {name: (json.loads(v) if v.startswith('"') else v[1:-1]) for name, v in _TS_CONST.findall(src)}
    body = src[src.index("function createTests"):]
    return consts, body, body.index("invalid: [")


def no_secrets(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_NO_SECRETS}@{head}"
    src = show(repo, head, NO_SECRETS_TEST)
    consts, body, invalid_at = _cases(src)
    samples: list[dict] = []
    seen: set[str] = set()
    for n, m in enumerate(_TS_CASE.finditer(body), 1):
        ref, options = m.groups()
        name = ref if not ref.startswith("`") else f"case-{n}"
        text = (consts[ref] if not ref.startswith("`") else ref[1:-1]).strip("\n")
        source = f"{upstream}:{NO_SECRETS_TEST}#{name}"
        if m.start() < invalid_at:
            if _OPTION_OFF.search(options):
                left_out["a valid case only because an option switches the rule off"] += 1
            elif not text.strip():
                left_out["an empty case"] += 1
            elif name not in seen:
                samples.append(CORPUS.sample("upstream-negative", source, "index.js", text, fmt="javascript"))
            seen.add(name)
            continue
        seen.add(name)
        secrets = _LITERAL.findall(text)
        basic = re.search(r"Basic ([A-Za-z0-9+/=]+)\"", text)
        if basic:
            secrets = [basic.group(1)]
        samples += CORPUS.positive(source, "index.js", text, secrets, left_out, fmt="javascript")
    # the spread cases: the import test (valid only with ignoreModules), the detectors' own patterns
    for ref in ("IMPORT_TEST_LEGACY", "IMPORT_TEST_FLAT"):
        if ref in body[:invalid_at]:
            left_out["a valid case only because an option switches the rule off"] += 1
    regexes = _regex_sources(repo, head)
    valid_names = re.search(r"const REGEX_TESTS = \[(.*?)\]\.map", src, re.S).group(1)
    for detector in re.findall(r"P\[\"([^\"]+)\"\]", valid_names):
        text = f"const REGEXP = `{regexes[detector]}`"
        samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{NO_SECRETS_TEST}#REGEX_TESTS/{detector}",
                                     "index.js", text, fmt="javascript"))
    invalid_names = re.search(r"const PATTERN_MATCH_TESTS = \[(.*?)\]\.map", src, re.S).group(1)
    left_out["an invalid case whose reported literal is a detector's own pattern source"] += len(
        re.findall(r"P\[\"([^\"]+)\"\]", invalid_names))
    return samples + _no_pattern_match(repo, head, upstream, left_out)


def _no_pattern_match(repo: str, head: str, upstream: str, left_out: Counter) -> list[dict]:
    consts, body, invalid_at = _cases(show(repo, head, NO_PATTERN_MATCH_TEST))
    samples = []
    for n, m in enumerate(re.finditer(r"code: (\w+|`[^`]*`),", body), 1):
        ref = m.group(1)
        text = (consts[ref] if not ref.startswith("`") else ref[1:-1]).strip("\n")
        if m.start() > invalid_at:
            left_out["an invalid no-pattern-match case whose errors name no one literal"] += 1
        elif not text.strip():
            left_out["an empty case"] += 1
        else:
            name = ref if not ref.startswith("`") else f"case-{n}"
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{NO_PATTERN_MATCH_TEST}#{name}",
                                         "index.js", text, fmt="javascript"))
    return samples


# -- titus ------------------------------------------------------------------------------------------------------

def titus(repo: str, left_out: Counter) -> list[dict]:
    import yaml

    head = head_commit(repo)
    upstream = f"{_TITUS}@{head}"
    samples: list[dict] = []
    for path in sorted(f for f in tree_files(repo, head) if f.startswith(TITUS_RULES) and f.endswith(".yml")):
        for rule in yaml.safe_load(show(repo, head, path)).get("rules") or []:
            rid = rule["id"]
            source = f"{upstream}:{path}#{rid}"
            examples = rule.get("examples") or []
            try:
                rx = compile_upstream(rule["pattern"])
            except re.error:
                left_out["an example of a rule whose pattern Python's re does not compile"] += len(examples)
                rx = None
            if rid in NOT_SECRET:
                left_out["an example of a rule the second corpus judged no secret"] += len(examples)
            elif rx is not None and "secret" not in rx.groupindex and rx.groups > 1 and not (
                    rid in SECRET_GROUPS or rid in SECRET_WITHIN):
                left_out["an example of a rule with several groups and none named the secret"] += len(examples)
            elif rx is not None:
                for n, text in enumerate(examples, 1):
                    secrets: list[str] = []
                    for m in rx.finditer(text):
                        if "secret" in rx.groupindex:
                            secrets += [m.group("secret")] if m.group("secret") else []
                        else:
                            secrets += _secrets(rid, m)
                    if not secrets:
                        left_out["an example its own pattern does not match under Python's re"] += 1
                        continue
                    samples += CORPUS.positive(f"{source}/example-{n}", "example.txt", text,
                                               sorted(set(secrets)), left_out, fmt=sniff(text))
            for n, text in enumerate(rule.get("negative_examples") or [], 1):
                if text.strip():
                    samples.append(CORPUS.sample("upstream-negative", f"{source}/negative-{n}", "example.txt",
                                                 text.rstrip("\n"), fmt=sniff(text)))
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "no-secrets": (
        ".github/workflows/main.yml", ".gitignore", ".npmignore", "package.json", "tsconfig.json",
        "staging/normal.eslintrc.js", "staging/normal-flat.eslintrc.js", "staging/mixed.eslintrc.js",
        "staging/mixed-flat.eslintrc.js", "staging/jsonc.eslintrc.js", "staging/jsonc-flat.eslintrc.js",
        "staging/json-flat.eslintrc.js", "src/no-secrets.schema.json", "src/no-pattern-match.schema.json"),
    "titus": (
        ".github/workflows/ci.yml", ".github/workflows/external-contribution.yml",
        ".github/workflows/integration.yml", ".github/workflows/release-new.yml", ".gitignore", "Makefile",
        "CONTRIBUTING.md", "go.mod", "burp/build.gradle.kts", "burp/settings.gradle.kts",
        "burp/gradle/wrapper/gradle-wrapper.properties", "pkg/enum/ignore/ignore.conf"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return no_secrets(repos["no-secrets"], left_out) + titus(repos["titus"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
