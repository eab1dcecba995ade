"""Build the fourth held-out redaction corpus (tests/fixtures/redaction/corpus4.json.gz).

The rules of agentwatch/record/redact/rules.toml were written from gitleaks and
detect-secrets and adjusted on a second (noseyparker, trufflehog) and a third
(kingfisher, semgrep-rules, ripsecrets) corpus. This corpus comes from two other
maintained projects' own test data, read from a git clone (or bare mirror) of each
at a named commit:

- aquasecurity/trivy: the findings its secret scanner's tests expect
  (pkg/fanal/secret/scanner_test.go). Each expected finding's `Match` is a line
  of a test data file (pkg/fanal/secret/testdata/) with the secret written as
  `*`; the line is found in the test data by that shape, and the secret is what
  the stars cover (one secret per run of stars, without the quotes around it). A match of stars alone (fewer
  than 4 other characters) fits any line of its length and is left out. The type is the finding's
  `RuleID`. An expected line that no test data file holds (the test's content is
  inline) is left out (counted). The lines of the test data files that name
  invalid keys (`invalid` in the file name) and that no expected finding covers
  are negatives.
- secretlint/secretlint: every rule package's snapshot tests
  (packages/@secretlint/secretlint-rule-*/test/snapshots/<case>/), whose
  output.json holds the input text (`sourceContent`) and each finding's range
  in it and `data` (the value the rule reports, under KEY, TOKEN, SECRET, ID,
  CREDENTIAL, URI or URL). A case with findings is a positive whose secrets are
  the reported values found in the text (else the ranges' text), cut down to the
  key where they hold more (`_sl_secret`: a URL's password, else what follows its
  scheme when that is one run, else its path (a webhook's key); a `name=` before
  the value; a PEM block's body, as in a service account file's private key). A case
  without findings is a negative, unless the case sets options of its own
  (.secretlintrc.json: an allow list or a rule switched off), which is left out.
  Findings of AWS account ids and Azure client and tenant ids are not secrets by
  this project's threat model (as in the second and third corpora): such a case
  is scored as text to leave intact.
  The presets' snapshots repeat the rules' and are not read; neither are rules
  that judge files or paths rather than text (no-dotenv, no-homedir,
  filter-comments, pattern, example, the internal test rules).

A sample whose text, or a positive one of whose secrets, occurs in the first,
second or third corpus is left out (counted): the corpus holds only what the rules
have not been measured on. Each sample records its source as
`owner/repo@commit:path#line-n` (trivy) or `owner/repo@commit:path#case`
(secretlint). Samples are token strings and the text around them, which are facts;
nothing else of the upstream files is kept.

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus4_extract.py --trivy /path/to/trivy --secretlint /path/to/secretlint
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from corpus_extract import HERE, git, write

OUT = HERE / "corpus4.json.gz"
TRIVY_DIR = "pkg/fanal/secret"
SL_DIR = "packages/@secretlint"
SL_NOT_TEXT_RULES = {"no-dotenv", "no-homedir", "filter-comments", "pattern", "example",
                     "internal-test-cjs", "internal-test-esm"}



_GO_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`|strings\.Repeat\("(.)",\s*(\d+)\)')
_GO_MATCH = re.compile(r'\bMatch:\s*((?:(?:"(?:[^"\\\n]|\\.)*"|`[^`]*`|strings\.Repeat\("."\s*,\s*\d+\))\s*\+?\s*)+)')
_RULE_ID = re.compile(r'\bRuleID:\s*"([^"]+)"')


def _go_value(expr: str) -> str:
    """A Go string expression of literals and `strings.Repeat` joined by `+`."""
    out = []
    for quoted, raw, ch, n in _GO_STRING.findall(expr):
        if ch:
            out.append(ch * int(n))
        elif raw or not quoted:
            out.append(raw)
        else:
            out.append(json.loads('"' + quoted + '"'))
    return "".join(out)


def _shape(masked: str) -> re.Pattern[str]:
    """The line a masked match stands for: its other characters as they are, each run of stars a group."""
    parts = re.split(r"(\*+)", masked)
    return re.compile("".join(f"([^\\n]{{{len(p)}}})" if p.startswith("*") else re.escape(p) for p in parts if p))


def trivy(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"aquasecurity/trivy@{commit[:12]}"
    test = git(repo, "show", f"HEAD:{TRIVY_DIR}/scanner_test.go")
    files = {}
    for path in sorted(git(repo, "ls-tree", "--name-only", "HEAD", TRIVY_DIR + "/testdata/").split("\n")):
        if path and not path.endswith((".yaml", ".yml")):
            try:
                files[path] = git(repo, "show", f"HEAD:{path}")
            except (subprocess.CalledProcessError, UnicodeDecodeError):
                left_out["trivy test data file that is not text"] += 1
    samples: list[dict] = []
    covered: set[tuple[str, int]] = set()
    rule = "unknown"
    events = sorted([(m.start(), "rule", m.group(1)) for m in _RULE_ID.finditer(test)]
                    + [(m.start(), "match", m.group(1)) for m in _GO_MATCH.finditer(test)])
    seen: set[tuple[str, int]] = set()
    for _, kind, value in events:
        if kind == "rule":
            rule = value
            continue
        masked = _go_value(value)
        if "*" not in masked:
            left_out["trivy expected match with nothing masked"] += 1
            continue
        if len(masked.strip().replace("*", "")) < 4:
            left_out["trivy expected match of stars alone (it fits any line of its length)"] += 1
            continue
        shape = _shape(masked)
        hits = []
        for path, text in files.items():
            for m in shape.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                hits.append((path, line, m))
        if not hits:
            left_out["trivy expected match whose line no test data file holds (inline content)"] += 1
            continue
        for path, line, m in hits:
            covered.add((path, line))
            if (path, line) in seen:
                continue
            seen.add((path, line))
            text = files[path].splitlines()[line - 1]
            secrets = sorted({g.strip().strip("\"'") for g in m.groups() if g.strip().strip("\"'")})
            samples.append({"set": "upstream-positive", "type": "trivy:" + rule, "text": text,
                            "secrets": secrets, "source": f"{name}:{path}#line-{line}"})
    for path, text in files.items():
        if "invalid" not in path.rsplit("/", 1)[-1]:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip() and (path, n) not in covered:
                samples.append({"set": "upstream-negative", "type": "trivy:invalid", "text": line,
                                "source": f"{name}:{path}#line-{n}"})
    return name, samples


_URL_PASSWORD = re.compile(r"://[^/:@\s]*:([^@\s/]+)@")
_NAME_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*[=:]\s*[\"']?(.+?)[\"']?$")
_PEM_BODY = re.compile(r"-----BEGIN [A-Z ]*-----(?:\s|\\n)*(.*?)(?:\s|\\n)*-----END", re.S)
_SCHEME_ONLY = re.compile(r"^[a-z][a-z0-9+.-]*://([^/:@\s]+)$")
_SCHEME_HOST = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s]+/")
SL_DATA_KEYS = ("KEY", "TOKEN", "SECRET", "ID", "CREDENTIAL", "URI", "URL")
SL_NOT_SECRET = {
    "AWSAccountID": "an AWS account id names an account; AWS documents it as not secret",
    "AzureClientId": "an OAuth client id is sent in the clear in every authorization request",
    "AzureTenantId": "a tenant id names a directory; it grants nothing alone",
}


def _sl_secret(text: str, found: str) -> str:
    """The key in what a secretlint rule reports: cut down where the report holds more."""
    pem = _PEM_BODY.search(found)
    if pem:
        return max(re.split(r"\s|\\n", pem.group(1)), key=len)
    url = _URL_PASSWORD.search(found)
    if url:
        return url.group(1)
    bare = _SCHEME_ONLY.match(found)
    if bare:
        return bare.group(1)
    host = _SCHEME_HOST.match(found)
    if host:
        return found[host.end():]
    pair = _NAME_VALUE.match(found)
    if pair and len(pair.group(1)) >= 8:
        return pair.group(1)
    return found


def _utf16_slice(text: str, start: int, end: int) -> str:
    """JavaScript's string range (UTF-16 code units) in a Python string."""
    units = text.encode("utf-16-le", "surrogatepass")
    return units[2 * start:2 * end].decode("utf-16-le", "surrogatepass")


def secretlint(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"secretlint/secretlint@{commit[:12]}"
    paths = git(repo, "ls-tree", "-r", "--name-only", "HEAD", SL_DIR + "/").split("\n")
    cases = sorted(p[:-len("/output.json")] for p in paths
                   if re.fullmatch(re.escape(SL_DIR) + r"/secretlint-rule-[^/]+/test/snapshots/[^/]+/output\.json", p))
    options = {p.rsplit("/", 1)[0] for p in paths if p.endswith("/.secretlintrc.json")}
    samples: list[dict] = []
    for case in cases:
        rule = case.split("/")[2].removeprefix("secretlint-rule-")
        if rule.startswith("preset-") or rule in SL_NOT_TEXT_RULES:
            continue
        out = json.loads(git(repo, "show", f"HEAD:{case}/output.json"))
        text = out.get("sourceContent")
        if out.get("sourceContentType", "text") != "text" or not isinstance(text, str):
            left_out["secretlint case whose input is not text"] += 1
            continue
        label = case.rsplit("/", 1)[-1]
        source = f"{name}:{case}#{label}"
        messages = out.get("messages") or []
        if messages and all(m.get("messageId") in SL_NOT_SECRET for m in messages):
            samples.append({"set": "not-secret", "type": "secretlint:" + rule, "text": text, "source": source,
                            "reason": SL_NOT_SECRET[messages[0]["messageId"]]})
        elif messages:
            secrets = set()
            for msg in messages:
                data = msg.get("data") or {}
                reported = [data[k] for k in SL_DATA_KEYS if isinstance(data.get(k), str) and data[k] in text]
                found = reported[0] if reported else _utf16_slice(text, *msg["range"])
                secrets.add(_sl_secret(text, found))
            samples.append({"set": "upstream-positive", "type": "secretlint:" + rule, "text": text,
                            "secrets": sorted(x for x in secrets if x.strip()), "source": source})
        elif case in options:
            left_out["secretlint case without findings under options of its own (an allow list, a switch)"] += 1
        else:
            samples.append({"set": "upstream-negative", "type": "secretlint:" + rule, "text": text,
                            "source": source})
    return name, samples




def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trivy", required=True, help="a git clone or mirror of aquasecurity/trivy")
    ap.add_argument("--secretlint", required=True, help="a git clone or mirror of secretlint/secretlint")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    left_out: Counter = Counter()
    upstream, samples = [], []
    for build, repo in ((trivy, args.trivy), (secretlint, args.secretlint)):
        name, got = build(repo, left_out)
        upstream.append(name)
        samples += got
    about = ("Fourth held-out redaction corpus: secret samples and negatives from projects whose data the "
             "rules were neither written from nor adjusted on. Built by "
             "tests/support/redaction_corpus4_extract.py; each sample names its source.")
    write(args.out, about, upstream, samples, left_out, earlier=3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
