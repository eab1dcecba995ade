"""Build the held-out redaction corpus (tests/fixtures/redaction/corpus2.json.gz).

The rules of agentwatch/record/redact/rules.toml were written from gitleaks and
detect-secrets; this corpus comes from two other scanners' own test data, read
from a git clone (or bare mirror) of each at a named commit:

- praetorian-inc/noseyparker: every rule file's `examples` (positives) and
  `negative_examples` (negatives). The secret of a positive is what the rule's
  own pattern captures in it (its groups, else the whole match), found with
  Python's `re`.
- trufflesecurity/trufflehog: the pattern tests of pkg/detectors/*/*_test.go,
  each test case's `input` and `want`. A case that wants results is a positive
  whose secrets are the wanted strings; a case that wants none is a negative.
  Inputs are evaluated from the Go source where they are string literals, `+`
  of them, file-level string variables and `fmt.Sprintf` with `%s`/`%v`/`%q`;
  a case written any other way is left out (and counted).

Each sample records its source as `owner/repo@commit:path#rule-or-test-case`.
Samples are token strings and the text around them, which are facts; nothing
else of the upstream files is kept.

Usage (needs PyYAML; not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus2_extract.py \
        --noseyparker /path/to/noseyparker --trufflehog /path/to/trufflehog
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

from corpus_extract import HERE, compile_upstream, git, write

OUT = HERE / "corpus2.json.gz"
NP_RULES = "crates/noseyparker/data/default/builtin/rules"

# Rules whose examples are not secrets by this project's threat model (the
# recorded agent must not leak credentials; names and addresses it works with
# are its subject matter). Their examples are kept, as a set of their own, and
# scored as text to leave intact.
NOT_SECRET = {
    "np.age.1": "an age recipient is an X25519 public key, made to be shared",
    "np.aws.3": "an AWS account id names an account; AWS documents it as not secret",
    "np.s3.1": "an S3 bucket host name is an address",
    "np.s3.2": "an S3 bucket URL is an address",
    "np.arn.1": "an Amazon Resource Name is an address",
    "np.gcs.1": "a Cloud Storage bucket host name is an address",
    "np.gcs.2": "a Cloud Storage bucket URL is an address",
    "np.github.5": "an OAuth client id is sent in the clear in every authorization request",
    "np.google.1": "an OAuth client id is sent in the clear in every authorization request",
    "np.linkedin.1": "an OAuth client id is sent in the clear in every authorization request",
    "np.twitter.1": "an OAuth client id is sent in the clear in every authorization request",
    "np.reactapp.1": "a user name",
    "np.shopify.1": "a shop's domain name",
}

# Rules that capture more than the secret (a user name, a host, a client id
# beside it): the groups that hold the secret, read from each rule's pattern.
# Every other rule's secret is all its groups (one, for all but these).
SECRET_GROUPS = {
    "np.auth0.1": (3,), "np.azure.1": (2,), "np.azure.2": (3,), "np.blynk.8": (2,), "np.blynk.9": (2,),
    "np.generic.3": (2,), "np.generic.4": (2,), "np.generic.7": (2,), "np.generic.8": (3,),
    "np.generic.9": (2,), "np.generic.13": (2,), "np.generic.14": (2,), "np.gitalk.1": (2,),
    "np.google.6": (2,), "np.kubernetes.2": (2,), "np.mongodb.1": (2,), "np.netrc.1": (3,),
    "np.odbc.1": (2,), "np.phpmailer.1": (3,), "np.postgres.1": (2,), "np.psexec.1": (2,),
    "np.vmware.1": (2,),
}
# Rules whose match holds a whole configuration value: the password inside it.
SECRET_WITHIN = {
    "np.generic.10": r"(?i)(?:password|pwd)\s*=\s*([^;\"]+)",
    "np.gradle.1": r"""password\s+['"]([^'"]+)""",
}


def _secrets(rule_id: str, m: re.Match[str]) -> list[str]:
    if rule_id in SECRET_WITHIN:
        inner = re.search(SECRET_WITHIN[rule_id], m.group(0))
        return [inner.group(1)] if inner else [m.group(m.lastindex or 0)]
    if rule_id in SECRET_GROUPS:
        return [m.group(i) for i in SECRET_GROUPS[rule_id] if m.group(i)]
    return [g for g in m.groups() if g] or [m.group(0)]





def noseyparker(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    import yaml

    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"praetorian-inc/noseyparker@{commit[:12]}"
    samples: list[dict] = []
    for path in sorted(git(repo, "ls-tree", "--name-only", "HEAD", NP_RULES + "/").split()):
        if not path.endswith(".yml"):
            continue
        for rule in yaml.safe_load(git(repo, "show", f"HEAD:{path}"))["rules"]:
            typ = "noseyparker:" + rule["id"].removeprefix("np.")
            source = f"{name}:{path}#{rule['id']}"
            rx = compile_upstream(rule["pattern"])
            for text in rule.get("examples") or []:
                secrets: list[str] = []
                for m in rx.finditer(text):
                    secrets += _secrets(rule["id"], m)
                if not secrets:
                    left_out["noseyparker example its own pattern does not match under Python re"] += 1
                    continue
                sample = {"set": "upstream-positive", "type": typ, "text": text,
                          "secrets": sorted(set(secrets)), "source": source}
                if rule["id"] in NOT_SECRET:
                    sample |= {"set": "not-secret", "reason": NOT_SECRET[rule["id"]]}
                samples.append(sample)
            for text in rule.get("negative_examples") or []:
                samples.append({"set": "upstream-negative", "type": typ, "text": text, "source": source})
    return name, samples


# -- a small evaluator for the string expressions of trufflehog's Go test cases -----------------

class Unsupported(Exception):
    pass


_TOKEN = re.compile(r'''\s*(?:(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<raw>`[^`]*`)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)|(?P<op>[+(),{}\[\]]))''')


class _Expr:
    def __init__(self, src: str, pos: int, env: dict[str, str]):
        self.src, self.pos, self.env = src, pos, env

    def _next(self) -> tuple[str, str]:
        m = _TOKEN.match(self.src, self.pos)
        if not m:
            raise Unsupported(self.src[self.pos:self.pos + 40])
        self.pos = m.end()
        kind = m.lastgroup or ""
        return kind, m.group(kind)

    def _peek(self) -> tuple[str, str]:
        saved = self.pos
        try:
            return self._next()
        finally:
            self.pos = saved

    def expr(self) -> str:
        out = self.term()
        while self._peek() == ("op", "+"):
            self._next()
            out += self.term()
        return out

    def term(self) -> str:
        kind, tok = self._next()
        if kind == "str":
            return ast.literal_eval(tok)
        if kind == "raw":
            return tok[1:-1].replace("\r", "")
        if kind == "name" and tok == "fmt.Sprintf":
            if self._next() != ("op", "("):
                raise Unsupported("Sprintf")
            args = [self.expr()]
            while self._peek() == ("op", ","):
                self._next()
                if self._peek() == ("op", ")"):
                    break
                args.append(self.expr())
            if self._next() != ("op", ")"):
                raise Unsupported("Sprintf args")
            return _sprintf(args[0], args[1:])
        if kind == "name" and tok in self.env:
            return self.env[tok]
        raise Unsupported(tok)

    def string_list(self) -> list[str]:
        kind, tok = self._next()
        if (kind, tok) == ("name", "nil"):
            return []
        if (kind, tok) != ("op", "[") or self._next() != ("op", "]") or self._next() != ("name", "string"):
            raise Unsupported("want")
        if self._next() != ("op", "{"):
            raise Unsupported("want")
        out: list[str] = []
        while self._peek() != ("op", "}"):
            out.append(self.expr())
            if self._peek() == ("op", ","):
                self._next()
        self._next()
        return out


def _sprintf(fmt: str, args: list[str]) -> str:
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(1)
        if verb == "%":
            return "%"
        value = next(it)
        if verb in "sv":
            return value
        if verb == "q":
            return json.dumps(value)
        raise Unsupported("%" + verb)

    try:
        return re.sub(r"%([%svqd])", one, fmt)
    except StopIteration:
        raise Unsupported("Sprintf arity") from None


_ASSIGN = re.compile(r"(?m)^\s*(?:var\s+|const\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|=)\s*")
_CASE = re.compile(r"(?m)^\s*(?:input|Input):\s*")


def _env(src: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for _ in range(3):  # variables built from other variables
        for m in _ASSIGN.finditer(src):
            try:
                env[m.group(1)] = _Expr(src, m.end(), env).expr()
            except (Unsupported, ValueError, SyntaxError):
                pass
    return env


_ADDRESS = re.compile(r"(?i)[a-z][a-z0-9+.-]*://\S*|[^\s@:/]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+|"
                      r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?::[0-9]{1,5})?")
_SECRET_KEY = re.compile(r"(?i)key|secret|token|password|credential")


def _secret_parts(want: str, text: str) -> list[str]:
    """The secrets in one wanted result.

    trufflehog reports a credential made of several finds as one string (its
    RawV2: an id and a secret glued or joined by ':', a JSON object, a host
    after the key). Such a string is taken back apart into the pieces that
    occur in the text; pieces that are addresses (a URL, a host name, an
    e-mail address) are names, not secrets, and are dropped, as are the
    values of a JSON object under keys that do not name a secret.
    """
    if want in text:
        return [want]
    if want.startswith("{"):
        try:
            obj = json.loads(want)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return [p for k, v in obj.items() if isinstance(v, str) and _SECRET_KEY.search(k)
                    for p in _secret_parts(v, text)]
    parts, i = [], 0
    while i < len(want):
        n = 1
        while i + n <= len(want) and want[i:i + n] in text:
            n += 1
        n = max(n - 1, 1)
        parts.append(want[i:i + n])
        i += n
    return [p for p in parts if len(p) >= 8 and p in text and not _ADDRESS.fullmatch(p.strip(":"))]


def trufflehog(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"trufflesecurity/trufflehog@{commit[:12]}"
    samples: list[dict] = []
    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "pkg/detectors/").split()
             if p.endswith("_test.go") and not p.endswith("_integration_test.go")]
    for path in sorted(paths):
        src = git(repo, "show", f"HEAD:{path}")
        if "_Pattern(" not in src:
            continue
        env = _env(src)
        detector = path.split("/")[2]
        starts = [m.end() for m in _CASE.finditer(src)] + [len(src)]
        for i, start in enumerate(starts[:-1]):
            case_name = ""
            head = src[max(0, start - 400):start]
            names = re.findall(r'name:\s*"((?:[^"\\]|\\.)*)"', head)
            if names:
                case_name = names[-1]
            try:
                e = _Expr(src, start, env)
                text = e.expr()
                want_at = re.compile(r"(?m)^\s*(?:want|Want|expected|Expected):\s*").search(src, e.pos, starts[i + 1])
                if not want_at:
                    raise Unsupported("no want")
                want = _Expr(src, want_at.end(), env).string_list()
            except (Unsupported, ValueError, SyntaxError):
                left_out["trufflehog test case not written as string expressions this script evaluates"] += 1
                continue
            source = f"{name}:{path}#{case_name or 'case'}"
            typ = "trufflehog:" + detector
            if want:
                secrets = sorted({part for w in want for part in _secret_parts(w, text)})
                if not secrets:
                    left_out["trufflehog positive with no secret part found in its text"] += 1
                    continue
                samples.append({"set": "upstream-positive", "type": typ, "text": text,
                                "secrets": secrets, "source": source})
            else:
                samples.append({"set": "upstream-negative", "type": typ, "text": text, "source": source})
    return name, samples


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--noseyparker", required=True, help="a git clone or mirror of praetorian-inc/noseyparker")
    ap.add_argument("--trufflehog", required=True, help="a git clone or mirror of trufflesecurity/trufflehog")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    left_out: Counter = Counter()
    upstream, samples = [], []
    for build, repo in ((noseyparker, args.noseyparker), (trufflehog, args.trufflehog)):
        name, got = build(repo, left_out)
        upstream.append(name)
        samples += got
    about = ("Held-out redaction corpus: secret samples and negatives from scanners whose data the "
             "rules were not written from. Built by tests/support/redaction_corpus2_extract.py; each "
             "sample names its source.")
    write(args.out, about, upstream, samples, left_out, earlier=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
