"""Build the twenty-seventh held-out redaction corpus (tests/fixtures/redaction/corpus27.json.gz).

The first twenty-six corpora came from the projects tests/support/redaction_corpus26_extract.py
names and the ones it read before. This one reads a project none of them read:
keyshade-xyz/keyshade, a secret manager whose `@keyshade/secret-scan` package tells a secret from
a plain variable. Each of its rules is a file that returns the rule's regular expressions and
carries its own test cases (`{ input, expected }`), which the package's test suite runs.

- keyshade-xyz/keyshade, `packages/secret-scan/src/rules/*.ts`: the test cases of every rule
  the suite runs (`testSecret(RULE.testcases)` in `packages/secret-scan/src/test/secret.test.ts`,
  comments aside). A case that expects a secret (`expected: true`) is a positive whose secret
  is what the rule's own patterns find in its input (the first capturing group that matched,
  else the whole match; the patterns read under Python's `re` as
  tests/support/corpus_extract.py `compile_upstream` spells them); a case that expects none is
  an upstream negative. Strings are written out as JavaScript does it (quotes, escapes,
  template literals without substitutions). Left out: the rules the suite does not run (its
  comments say they misfire), the public-IP rule (an address is no secret, and it is published
  on purpose), a case built another way, an empty text, a positive none of whose rule's
  patterns finds anything under Python's `re`.
- Benign: ordinary files of the repository outside its applications and packages (the CI
  workflows, the issue and pull-request templates, the release-drafter, Dependabot-like and
  owner configuration, the contributing, security and conduct guides, the root package,
  workspace, lint and format configuration, the ignore files, the Docker Compose files), each
  whole (up to 200 lines) and each line that names a password, secret, token, key, credential
  or auth, and `git log --format='%H %an %s' -n 15` at the pinned commit. `.env.example` is not:
  it lists the project's own credentials to fill in. Chosen before scoring, by the fourteenth
  corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). A text or secret any of the first twenty-six corpora
holds is left out (counted). Each input is carried as `example.txt`, labelled with the format
its text shows (`sniff`). The scorer (tests/support/redaction_corpus27.py) stores each sample in
the four carriers an agent produces. Sources read `owner/repo@commit:path#case-n` (the n-th test
case of that rule), or a benign `…:path` and `…:path#line-n`.

Usage (not part of the test suite, which reads the built file):

    .venv/bin/python tests/support/redaction_corpus27_extract.py --keyshade DIR

where DIR is a clone (or bare mirror) of keyshade-xyz/keyshade at the commit the fixture names.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, compile_upstream, head_commit, show, tree_files  # noqa: E402
from redaction_corpus6_extract import sniff  # noqa: E402

OUT = HERE / "corpus27.json.gz"
SESSION = "corpus27"
_KEYSHADE = "keyshade-xyz/keyshade"
CORPUS = Corpus({_KEYSHADE: "keyshade"}, session=SESSION, earlier=26)
RULES = "packages/secret-scan/src/rules/"
SUITE = "packages/secret-scan/src/test/secret.test.ts"
NOT_SECRETS = ("ip_public",)  # a public IP address: published on purpose, no secret

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


class Unknown(Exception):
    """A value the reader does not evaluate (a substitution, a call, a name)."""


def _uncomment(src: str) -> str:
    """The source without `/* ... */` blocks and `//` comments that start a line."""
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.DOTALL)
    return re.sub(r"(?m)^\s*//.*$", "", src)


def string_at(src: str, i: int) -> tuple[str, int]:
    """The JavaScript string literal starting at src[i] (quoted or a plain template), and where it ends."""
    quote = src[i]
    if quote not in "'\"`":
        raise Unknown(src[i:i + 20])
    out = []
    j = i + 1
    while j < len(src):
        c = src[j]
        if c == quote:
            return "".join(out), j + 1
        if quote == "`" and c == "$" and src[j + 1:j + 2] == "{":
            raise Unknown("a substitution")
        if c == "\\":
            e = src[j + 1]
            if e == "u":
                out.append(chr(int(src[j + 2:j + 6], 16)))
                j += 6
                continue
            if e == "x":
                out.append(chr(int(src[j + 2:j + 4], 16)))
                j += 4
                continue
            if e == "\n":
                j += 2
                continue
            out.append(_ESCAPES.get(e, e))
            j += 2
            continue
        out.append(c)
        j += 1
    raise Unknown("an unterminated string")


def value_at(src: str, i: int) -> tuple[str, int]:
    """A string expression at src[i]: literals joined by `+`."""
    i = len(src) - len(src[i:].lstrip())
    text, i = string_at(src, i)
    while True:
        m = re.match(r"\s*\+\s*", src[i:])
        if not m:
            return text, i
        more, i = string_at(src, i + m.end())
        text += more


def _regex_at(src: str, i: int) -> tuple[re.Pattern[str], int]:
    """The regular-expression literal starting at src[i] (a `/`), and where it ends."""
    j, in_class = i + 1, False
    while True:
        c = src[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            break
        j += 1
    flags = re.match(r"[a-z]*", src[j + 1:]).group()  # type: ignore[union-attr]
    inline = "".join(f for f in flags if f in "ims")
    return compile_upstream((f"(?{inline})" if inline else "") + src[i + 1:j]), j + 1 + len(flags)


def regexes(src: str, name: str) -> list[re.Pattern[str]]:
    """The patterns the rule's function `name` returns (`return [...]`): literals, and constants
    the file sets to a literal."""
    start = src.index("return [", src.index(f"function {name}(")) + len("return [")
    out = []
    i = start
    while i < len(src) and src[i] != "]":
        if src.startswith("//", i):
            i = src.index("\n", i)
        elif src[i] == "/":
            pattern, i = _regex_at(src, i)
            out.append(pattern)
        elif src[i].isalpha():
            ident = re.match(r"\w+", src[i:]).group()  # type: ignore[union-attr]
            const = re.search(rf"const {ident} = /", src)
            if const is None:
                raise Unknown(ident)
            out.append(_regex_at(src, const.end() - 1)[0])
            i += len(ident)
        else:
            i += 1
    return out


def secret_of(text: str, patterns: list[re.Pattern[str]]) -> str | None:
    """What the rule finds in `text`: the first capturing group that matched, else the whole match."""
    for p in patterns:
        m = p.search(text)
        if m:
            groups = [g for g in m.groups() if g]
            return groups[0] if groups else m.group()
    return None


def cases(src: str, left_out: Counter) -> list[tuple[int, str, bool]]:
    """(n, input, expected) for every test case of a rule file."""
    out = []
    body = _uncomment(src)
    for n, m in enumerate(re.finditer(r"\{\s*input:", body), 1):
        try:
            text, i = value_at(body, m.end())
            e = re.match(r"\s*,\s*expected:\s*(true|false)\b", body[i:])
            if not e:
                raise Unknown("no expected")
        except (Unknown, ValueError, IndexError):
            left_out["a case built another way (a substitution, a name)"] += 1
            continue
        out.append((n, text, e.group(1) == "true"))
    return out


def suite_rules(src: str) -> list[str]:
    """The rules the test suite runs."""
    return re.findall(r"testSecret\((\w+)\.testcases\)", _uncomment(src))


def keyshade(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_KEYSHADE}@{head}"
    tree = set(tree_files(repo, head))
    files = {p[len(RULES):-3]: p for p in tree if p.startswith(RULES) and p.endswith(".ts")}
    run = suite_rules(show(repo, head, SUITE))
    exports = dict(re.findall(r"import (\w+) from '\./(\w+)'", show(repo, head, RULES + "index.ts")))
    samples: list[dict] = []
    for name in sorted(files):
        if name == "index":
            continue
        rule = next((k for k, v in exports.items() if v == name), name)
        src = show(repo, head, files[name])
        found = cases(src, left_out)
        if rule not in run:
            left_out["a case of a rule the suite does not run"] += len(found)
            continue
        if name in NOT_SECRETS:
            left_out["a case of the public-IP rule (an address is no secret)"] += len(found)
            continue
        patterns = regexes(src, rule)
        for n, text, expected in found:
            source = f"{upstream}:{files[name]}#case-{n}"
            if not text.strip():
                left_out["an empty text"] += 1
                continue
            fmt = sniff(text)
            if not expected:
                samples.append(CORPUS.sample("upstream-negative", source, "example.txt", text, fmt=fmt))
                continue
            secret = secret_of(text, patterns)
            if secret is None:
                left_out["a positive its rule's patterns find nothing in under Python's re"] += 1
                continue
            samples += CORPUS.positive(source, "example.txt", text, [secret], left_out, fmt=fmt)
    return samples


BENIGN_FILES = {
    "keyshade": (
        ".github/CODEOWNERS", ".github/FUNDING.yml", ".github/ISSUE_TEMPLATE/bug_report.md",
        ".github/ISSUE_TEMPLATE/feature_request.md", ".github/PULL_REQUEST_TEMPLATE.md", ".github/release-drafter.yml",
        ".github/workflows/auto-assign.yaml", ".github/workflows/docker-ci.yml",
        ".github/workflows/issue-pr-reminder.yaml", ".github/workflows/issue-unassign.yaml",
        ".github/workflows/pr-lint.yaml", ".github/workflows/pr-review-reminder.yaml", ".github/workflows/release.yml",
        ".github/workflows/validate-api-client.yaml", ".github/workflows/validate-api.yaml",
        ".github/workflows/validate-cli.yaml", ".github/workflows/validate-platform.yaml",
        ".github/workflows/validate-secret-scan.yaml", ".github/workflows/validate-web.yaml", ".dockerignore",
        ".gitignore", ".npmrc", ".prettierignore", "CODE_OF_CONDUCT.md", "CONTRIBUTING.md", "SECURITY.md",
        "codecov.yml", "docker-compose-test.yml", "docker-compose.yml", "eslint.config.mts", "lint-staged.config.js",
        "package.json", "pnpm-workspace.yaml", "prettier.config.js", "turbo.json"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return keyshade(repos["keyshade"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
