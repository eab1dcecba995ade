"""Build the ninth held-out redaction corpus (tests/fixtures/redaction/corpus9.json.gz).

The first eight corpora came from gitleaks, detect-secrets, noseyparker, trufflehog,
kingfisher, semgrep-rules, ripsecrets, trivy, secretlint, GitGuardian/sample_secrets,
GitGuardian/ggshield, checkov, SonarSource sonar-text, sonar-iac, sonar-java, sonar-python
and sonar-php, gosec, bandit, horusec, talisman, awslabs/git-secrets,
eslint-plugin-no-secrets, DevSkim and americanexpress/earlybird (Skyscanner/whispers and
Plazmaz/leaky-repo set aside). This one comes from two other projects, neither read by an
earlier corpus, each labelled by its upstream:

- Checkmarx/2ms: the tests of its rules, `engine/rules/ruledefine/*_test.go`. Each test
  names the rule it runs (`TwomsToGitleaksRule(Rule())`) and lists `truePositives` (texts
  the rule must find a secret in) and `falsePositives` (texts it must find none in).
  Each true positive written out as a Go string literal (or literals joined by `+`) is a
  positive; its secret is what the rule itself captures: the rule's regular expression
  (`engine/rules/ruledefine/<rule>.go`, rebuilt here from the same generator functions and
  constants as `utils.go` defines, taken under Python's `re`), its `SecretGroup`, else
  the first non-empty group, else the whole match (gitleaks' semantics, which 2ms runs), at
  every place it matches the text. A true positive the rebuilt expression does not match
  (a Go-only construct) is left out. Each false positive is an upstream negative. Values
  that are placeholders by this project's threat model (a run of one character, `xxx`,
  `${VAR}`, `<...>`, `[...]`, a bare word like `password`) are left out, as are secrets
  the rules of identifiers find (2ms' `...ClientID`, `...UserID`, `...AccessID` rules: a
  client, user or application id, not a credential).
- ajinabraham/njsscan: `tests/assets/node_source/true_positives/semantic_grep/generic/hardcoded_secrets.js`,
  whose `// ruleid:node_password` (and `node_api_key`, `node_secret`) comments label the
  line below as a finding (semgrep's test convention); the line is a positive and its
  secret is the line's one string literal. `node_username` lines hold a user name, not a
  secret, and are left out. Each line of
  `tests/assets/node_source/true_negatives/safe_creds_node.js` (upstream's true negatives
  of the same rules) is an upstream negative.
- Benign: ordinary files of the same repositories outside their tests (CI workflows,
  build and tool configuration, Dockerfiles, scripts), each whole (up to 200 lines) and
  each line that names a password, secret, token, key, credential or auth, and the output
  of `git log --format='%H %an %s' -n 15` at each pinned commit.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). Samples are labelled with the format of their text.
The scorer (tests/support/redaction_corpus9.py) stores each in the four carriers an agent
produces. Sources read `owner/repo@commit:path` (and `#TestName/tp-n`, `#TestName/fp-n`,
`#line-n`).

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus9_extract.py --2ms DIR --njsscan DIR

where each DIR is a git clone or bare mirror (at the commit the fixture names). Standard
library only.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, compile_upstream, git, head_commit, show  # noqa: E402
from redaction_corpus6_extract import _SECRET_WORD, path_for, sniff  # noqa: E402

OUT = HERE / "corpus9.json.gz"
_NAMES = {"Checkmarx/2ms": "2ms", "ajinabraham/njsscan": "njsscan"}
CORPUS = Corpus(_NAMES, session="corpus9", earlier=8)
RULES_DIR = "engine/rules/ruledefine"
NJSSCAN_POSITIVES = "tests/assets/node_source/true_positives/semantic_grep/generic/hardcoded_secrets.js"
NJSSCAN_NEGATIVES = "tests/assets/node_source/true_negatives/safe_creds_node.js"
NJSSCAN_SECRET_RULES = ("node_password", "node_api_key", "node_secret")
# 2ms rules whose finding is an identifier (a client, user or account id), not a credential.
NOT_SECRET_RULE = re.compile(r"(?:ClientID|UserID|AccessID|AccountID)$")


def placeholder(value: str) -> bool:
    """A value upstream writes where a real one would go (not a secret by this project's threat model)."""
    v = value.strip("'\"`")
    return (len(set(v.lower())) <= 1 or v.lower() in {"password", "secret", "token", "changeme", "test", "xxx"}
            or re.fullmatch(r"\$\{?\w+\}?|<[^>]*>|\[[^\]]*\]|\{\{[^}]*\}\}|%\w", v) is not None
            or re.fullmatch(r"(?i)x+|\*+|0+|(x+[-_])+x+", v) is not None)


# -- Go source: string literals and the rules' regular expressions ------------------------------------------

_GO_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\",
           "\"": "\"", "'": "'"}


def _go_unquote(literal: str) -> str:
    """The value of a Go string literal (raw in backquotes, or interpreted in double quotes)."""
    if literal.startswith("`"):
        return literal[1:-1].replace("\r", "")

    def one(m: re.Match) -> str:
        e = m.group(1)
        if e[0] in "xuU":
            return chr(int(e[1:], 16))
        if e[0].isdigit():
            return chr(int(e, 8))
        return _SIMPLE[e]

    return _GO_ESCAPE.sub(one, literal[1:-1])


_TOKEN = re.compile(r"\s+|//[^\n]*|/\*.*?\*/|`[^`]*`|\"(?:[^\"\\\n]|\\.)*\"|.", re.S)


def go_list(src: str, start: int) -> tuple[list[str | None], int]:
    """The items of the `[]string{...}` whose `{` is at `start`: each a string (literals joined by
    `+`) or None where an item is not made of literals only; and the index after the `}`."""
    items: list[str | None] = []
    parts: list[str] = []
    other = False
    depth = 0
    pos = start + 1
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        assert m is not None
        tok = m.group(0)
        pos = m.end()
        if tok.isspace() or tok.startswith(("//", "/*")):
            continue
        if depth == 0 and tok in (",", "}"):
            if parts or other:
                items.append(None if other else "".join(parts))
            parts, other = [], False
            if tok == "}":
                return items, pos
            continue
        if tok in "({[":
            depth += 1
            other = True
        elif tok in ")}]":
            depth -= 1
        elif tok[0] in "`\"" and depth == 0:
            parts.append(_go_unquote(tok))
        elif tok != "+":
            other = True
    raise ValueError("unterminated list")


# The generator functions and constants of 2ms' engine/rules/ruledefine/utils.go, in Python.
_PREFIX_CI, _PREFIX, _SUFFIX = r"[\w.-]{0,50}?(?i:", r"[\w.-]{0,50}?(?:", r")(?:[ \t\w.-]{0,20})[\s'\"]{0,3}"
_SUFFIX_XML = r")(?:[0-9a-z\-_\t .]{0,20})(?:<\/key>\s{0,10}<string)?(?:[\s|']|[\s|\"]){0,3}"
_OPERATOR = r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)"
_SECRET_PREFIX_UNIQUE, _SECRET_PREFIX = r"\b(", r"[\x60'\"\s=]{0,20}("
_SECRET_SUFFIX = r")(?:[\x60'\"\s;]|\\[nr]|$)"
_SECRET_SUFFIX_XML = r")(?:['|\"|\n|\r|\s|\x60|;]|\\n|\\r|$|\s{0,10}<\/string>)"


def _semi_generic(identifiers: list[str], secret: str, case_insensitive: bool, xml: bool = False) -> str:
    ids = (_PREFIX + "|".join(identifiers) + (_SUFFIX_XML if xml else _SUFFIX))
    head = "(?i)" + ids if case_insensitive else _PREFIX_CI + ids + ")"
    return head + _OPERATOR + _SECRET_PREFIX + secret + (_SECRET_SUFFIX_XML if xml else _SECRET_SUFFIX)


_GENERATORS = {
    "MustCompile": lambda s: s,
    "MergeRegexps": lambda *ps: "|".join(ps),  # gitleaks' utils.MergeRegexps joins the patterns with `|`
    "generateSemiGenericRegex": _semi_generic,
    "generateSemiGenericRegexIncludingXml": lambda i, s, c: _semi_generic(i, s, c, xml=True),
    "generateUniqueTokenRegex": lambda s, c: ("(?i)" if c else "") + _SECRET_PREFIX_UNIQUE + s + _SECRET_SUFFIX,
    "Numeric": lambda n: f"[0-9]{{{n}}}", "Hex": lambda n: f"[a-f0-9]{{{n}}}",
    "AlphaNumeric": lambda n: f"[a-z0-9]{{{n}}}", "AlphaNumericExtendedShort": lambda n: f"[a-z0-9_-]{{{n}}}",
    "AlphaNumericExtended": lambda n: f"[a-z0-9=_\\-]{{{n}}}",
    "AlphaNumericExtendedLong": lambda n: f"[a-z0-9\\/=_\\+\\-]{{{n}}}",
    "Hex8_4_4_4_12": lambda: r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "Sprintf": lambda f, *args: re.sub("%[sv]", lambda m, a=iter(args): str(next(a)), f),
    "True": True, "False": False,
}


def go_expression(expr: str, consts: dict[str, str], variables: dict[str, str]):
    """A rule's regular expression from its Go expression: literals, `[]string{...}`, the generators
    above and package constants; anything else raises."""
    out = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        assert m is not None
        tok = m.group(0)
        pos = m.end()
        if tok.startswith(("//", "/*")):
            continue
        if tok[0] in "`\"" and len(tok) > 1:
            out.append(repr(_go_unquote(tok)))
        elif expr.startswith("[]string{", pos - 1):
            out.append("[")
            pos += len("]string{")
        elif tok == "}":
            out.append("]")
        else:
            out.append(tok)
    code = re.sub(r"\.\s*String\(\)", "", "".join(out)).replace("regexp.", "").replace("utils.", "")
    code = re.sub(r"\bfmt\.", "", code)
    code = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", code))
    names: dict = {**_GENERATORS, **consts}
    for _ in range(10):  # a package variable the expression names is rebuilt the same way
        try:
            value = eval(code, {"__builtins__": {}}, names)  # noqa: S307 - upstream's rule code
            return value if isinstance(value, list) else str(value)
        except NameError as e:
            name = str(e).split("'")[1]
            if name not in variables:
                raise
            names[name] = go_expression(variables[name], consts, variables)
    raise ValueError(code)


_VAR = re.compile(r"^(?:var |\t)(\w+)\s*=\s*", re.M)  # a package variable, alone or in a `var (...)` block
_CONST = re.compile(r"^\s*(\w+)\s*=\s*(`[^`]*`|\"(?:[^\"\\\n]|\\.)*\")\s*(?://.*)?$", re.M)


def _go_statement(src: str, start: int, field: bool = False) -> str:
    """The Go expression that starts at `start` and runs to the end of its statement (or, for a
    struct field's value, to the comma that ends it)."""
    depth = 0
    pos = start
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        assert m is not None
        tok = m.group(0)
        if tok in "({[":
            depth += 1
        elif tok in ")}]":
            depth -= 1
        elif field and tok == "," and depth == 0:
            return src[start:pos]
        elif "\n" in tok and depth == 0 and not src[:pos].rstrip().endswith((".", "+", ",", "(")):
            return src[start:pos]
        pos = m.end()
    return src[start:]


def rule_regexes(repo: str, head: str) -> tuple[dict[str, tuple[re.Pattern[str], int]], Counter]:
    """{rule function name: (its compiled expression, its SecretGroup)} for every rule of 2ms."""
    files = [p for p in git(repo, "ls-tree", "--name-only", head, RULES_DIR + "/").split("\n")
             if p.endswith(".go") and not p.endswith("_test.go")]
    srcs = {p: show(repo, head, p) for p in files}
    consts: dict[str, str] = {}
    variables: dict[str, str] = {}
    for src in srcs.values():
        for m in _CONST.finditer(src):
            consts.setdefault(m.group(1), _go_unquote(m.group(2)))
        for m in _VAR.finditer(src):
            variables.setdefault(m.group(1), _go_statement(src, m.end()))
    rules: dict[str, tuple[re.Pattern[str], int]] = {}
    failed: Counter = Counter()
    for src in srcs.values():
        for m in re.finditer(r"^func (\w+)\(\) \*Rule \{(.*?)^\}", src, re.M | re.S):
            body = m.group(2)
            r = re.search(r"\bRegex:\s*", body)
            if not r:
                continue
            expr = _go_statement(body, r.end(), field=True).strip()
            group = re.search(r"\bSecretGroup:\s*(\d+)", body)
            try:
                pattern = go_expression(variables.get(expr, expr), consts, variables)
                # Go's `\z` (end of text) is Python's `\Z`
                rules[m.group(1)] = (compile_upstream(str(pattern).replace(r"\z", r"\Z")),
                                     int(group.group(1)) if group else 0)
            except Exception:  # noqa: BLE001 - a Go-only construct: that rule's positives are left out
                failed["a 2ms rule whose expression does not rebuild under Python's re"] += 1
    return rules, failed


def captured(pattern: re.Pattern[str], group: int, text: str) -> list[str]:
    """What the rule captures in the text at each match (gitleaks' semantics, module docstring)."""
    found = []
    for m in pattern.finditer(text):
        if group and group <= (pattern.groups or 0):
            value = m.group(group)
        else:
            value = next((g for g in m.groups() if g), None) or m.group(0)
        if value:
            found.append(value)
    return found


_TEST = re.compile(r"^func (Test\w+)\(t \*testing\.T\)", re.M)
_CASE_LIST = re.compile(r"\b(truePositives|falsePositives):\s*\[\]string\{")


def twoms(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"Checkmarx/2ms@{head}"
    rules, failed = rule_regexes(repo, head)
    left_out.update(failed)
    samples = []
    tests = sorted(p for p in git(repo, "ls-tree", "--name-only", head, RULES_DIR + "/").split("\n")
                   if p.endswith("_test.go"))
    for path in tests:
        src = show(repo, head, path)
        call = re.search(r"TwomsToGitleaksRule\((\w+)\(\)\)", src)
        test = _TEST.search(src)
        if not call or not test:
            continue
        rule = call.group(1)
        n = {"truePositives": 0, "falsePositives": 0}
        for m in _CASE_LIST.finditer(src):
            items, _ = go_list(src, m.end() - 1)
            kind = m.group(1)
            for text in items:
                n[kind] += 1
                source = f"{upstream}:{path}#{test.group(1)}/{'tp' if kind == 'truePositives' else 'fp'}-{n[kind]}"
                if text is None:
                    left_out["a 2ms test text not written out as literals (built by code)"] += 1
                    continue
                if not text.strip():
                    left_out["a 2ms test text that is empty"] += 1
                    continue
                fmt = sniff(text)
                if kind == "falsePositives":
                    samples.append(CORPUS.sample("upstream-negative", source, path_for(fmt), text, fmt=fmt))
                    continue
                if NOT_SECRET_RULE.search(rule):
                    left_out["a 2ms finding of an identifier rule (client, user or account id)"] += 1
                    continue
                if rule not in rules:
                    left_out["a 2ms positive whose rule does not rebuild under Python's re"] += 1
                    continue
                secrets = captured(*rules[rule], text)
                if not secrets:
                    left_out["a 2ms positive the rebuilt rule does not match under Python's re"] += 1
                    continue
                if all(placeholder(x) for x in secrets):
                    left_out["a 2ms positive whose value is a placeholder"] += 1
                    continue
                secrets = [x for x in secrets if not placeholder(x)]
                samples += CORPUS.positive(source, path_for(fmt), text, secrets, left_out, fmt=fmt)
    return samples


# -- njsscan ----------------------------------------------------------------------------------------------------

_JS_LITERAL = re.compile(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"")


def njsscan(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"ajinabraham/njsscan@{head}"
    samples = []
    lines = show(repo, head, NJSSCAN_POSITIVES).split("\n")
    for n, line in enumerate(lines):
        m = re.match(r"^\s*//\s*ruleid:\s*(\w+)", line)
        if not m or n + 1 >= len(lines):
            continue
        code = lines[n + 1].strip()
        source = f"{upstream}:{NJSSCAN_POSITIVES}#line-{n + 2}"
        if m.group(1) not in NJSSCAN_SECRET_RULES:
            left_out["an njsscan finding that holds a user name, not a secret"] += 1
            continue
        literals = [a or b for a, b in _JS_LITERAL.findall(code)]
        values = [v for v in literals if not _SECRET_WORD.search(v) and not re.fullmatch(r"(?i)api_?key", v)]
        if len(values) != 1 or placeholder(values[0]):
            left_out["an njsscan line without one literal value"] += 1
            continue
        samples += CORPUS.positive(source, "hardcoded_secrets.js", code, values, left_out, fmt="javascript")
    for n, line in enumerate(show(repo, head, NJSSCAN_NEGATIVES).split("\n"), 1):
        if line.strip():
            samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{NJSSCAN_NEGATIVES}#line-{n}",
                                         "safe_creds_node.js", line.strip(), fmt="javascript"))
    return samples


# -- benign ----------------------------------------------------------------------------------------------------

BENIGN_FILES = {
    "2ms": (".github/secret_scanning.yml", ".github/workflows/cesar.yaml",
            ".github/workflows/ci-projects.yaml", ".github/workflows/codecov.yaml",
            ".github/workflows/cx-one-scan.yaml", ".github/workflows/new-rules.yml", ".github/workflows/pr-labels.yml",
            ".github/workflows/pr-title.yml", ".github/workflows/pr-validation.yml", ".github/workflows/release.yml",
            ".github/workflows/run-projects.yaml", ".github/workflows/security.yml",
            ".github/workflows/trivy-cache.yaml", ".github/workflows/trivy-vulnerability-scan.yaml",
            ".github/workflows/validate-issues.yaml", ".github/workflows/validate-readme.yml", ".golangci.yml",
            ".pre-commit-config.yaml", ".ci/update-readme.sh", "Dockerfile", "Makefile", "go.mod", "trivy.yaml",
            ".gitignore"),
    "njsscan": (".github/workflows/docker-latest.yml", ".github/workflows/docker-release.yml",
                ".github/workflows/publish.yml", ".github/workflows/python_test.yml", ".github/FUNDING.yml",
                "Dockerfile", "setup.py", "tox.ini", "MANIFEST.in", ".dockerignore", ".gitignore"),
}


PER_TEST = 3


def thin(samples: list[dict], left_out: Counter) -> list[dict]:
    """At most PER_TEST positives of each 2ms rule test, evenly spaced in upstream's order (its first,
    middle and last): most tests list one secret in some 26 generated shapes (gitleaks' sample
    generator), so this keeps every rule and a spread of shapes without thousands of near-repeats.
    Only samples that the fixture keeps (no repeat, nothing of an earlier corpus) are picked from."""
    from corpus_extract import _texts

    seen_before = _texts(8)
    seen: set[str] = set()
    candidates: dict[str, list[int]] = {}
    drop: set[int] = set()
    for i, s in enumerate(samples):
        if s["set"] != "upstream-positive" or not s["source"].startswith("Checkmarx/2ms@"):
            continue
        if s["text"] in seen:  # a repeat goes whether or not its first is picked
            left_out["the same text twice in one set"] += 1
            drop.add(i)
            continue
        seen.add(s["text"])
        if s["text"] not in seen_before and not any(len(x) >= 8 and x in seen_before for x in s["secrets"]):
            candidates.setdefault(s["source"].rsplit("/", 1)[0], []).append(i)
    picked = len(drop)
    for found in candidates.values():
        n = len(found)
        keep = {found[round(j * (n - 1) / (PER_TEST - 1))] for j in range(PER_TEST)} if n > PER_TEST else set(found)
        drop |= set(found) - keep
    left_out[f"a 2ms positive beyond {PER_TEST} of its rule test (evenly spaced pick)"] += len(drop) - picked
    return [s for i, s in enumerate(samples) if i not in drop]


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    """The upstream samples, source by source (the benign ones are `CORPUS.benign`'s)."""
    return twoms(repos["2ms"], left_out) + njsscan(repos["njsscan"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES, thin=thin)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
