"""Build the third held-out redaction corpus (tests/fixtures/redaction/corpus3.json.gz).

The rules of agentwatch/record/redact/rules.toml were written from gitleaks and
detect-secrets and then adjusted on a second corpus (noseyparker, trufflehog).
This corpus comes from three other maintained projects' own test data, read
from a git clone (or bare mirror) of each at a named commit:

- mongodb/kingfisher: every rule file's `examples` (positives) and
  `negative_examples` (negatives) in data/rules/*.yml. The secret of a
  positive is what the rule's own pattern captures in it (its groups, else the
  whole match), found with Python's `re`, cut down to the key where the
  capture holds more (`_kf_secrets`). Rules kingfisher itself does not
  report alone (`visible: false`: ids, domains, URLs, user names that another
  rule's validation uses) are kept as a set of their own, not secrets by this
  project's threat model, scored as text to leave intact; the two of them that
  name a credential (an AWS access key id, a Trello token) stay positives.
- semgrep/semgrep-rules: the test files of generic/secrets/security/, where a
  `ruleid:` comment marks the line below it as a positive and an `ok:` comment
  as a negative (a PEM block is taken whole, up to its END line).
- sirwart/ripsecrets: test/one_per_line/* (each line one secret),
  test/one_per_file/* (each file one secret) and test/none (each line none).

For the last two the secret is not captured by a group upstream; it is the
password of a `scheme://user:password@` URL, else the longest quoted string of
4 or more characters that is not a name (followed by `:`, `=` or `>`) or a URL, else the
longest path segment of a URL or run of key characters (letters, digits,
`+/_.~*%$-`, `=` padding) in the line, or the base64 body of a PEM block.

A sample whose text, or a positive one of whose secrets, occurs in the first or
the second corpus is left out (counted): the corpus holds only what the rules
have not been measured on. Each sample records its source as
`owner/repo@commit:path#rule/example-n` (kingfisher) or `...:path#line-n`. Samples are token strings and the text
around them, which are facts; nothing else of the upstream files is kept.

Usage (needs PyYAML; not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus3_extract.py --kingfisher /path/to/kingfisher \\
        --semgrep-rules /path/to/semgrep-rules --ripsecrets /path/to/ripsecrets
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from corpus_extract import HERE, compile_upstream, git, write

OUT = HERE / "corpus3.json.gz"
KF_RULES = "data/rules"
SG_DIR = "generic/secrets/security"

# semgrep rules whose findings are not secrets by this project's threat model (as in the
# second corpus: names and addresses the recorded agent works with are its subject matter).
SG_NOT_SECRET = {
    "detected-aws-account-id": "an AWS account id names an account; AWS documents it as not secret",
    "detected-google-oauth-url": "an OAuth client id is sent in the clear in every authorization request",
}

# kingfisher rules with `visible: false` that name a credential, not a place or a party.
KF_SECRET_DESPITE_HIDDEN = {"kingfisher.aws.1", "kingfisher.trello.2"}


def _not_secret_reason(name: str) -> str:
    words = name.lower()
    if "public key" in words:
        return "a public key is made to be shared"
    if any(w in words for w in ("url", "host", "domain")):
        return "a host name or URL is an address"
    if any(w in words for w in ("username", "email")):
        return "a user name or e-mail address names a party"
    return "an id or name (account, organization, application, client) names a thing; it grants nothing alone"





_URL_PASSWORD = re.compile(r"://[^/:@\s]*:([^@\s/]+)@")
_QUOTED = re.compile(r"""(["'`])([^"'`\n]{4,})\1(?!\s*[:=>])""")
_RUN = re.compile(r"[A-Za-z0-9+/_.~*%$-]+={0,2}")
_PEM_BODY = re.compile(r"-----BEGIN [A-Z ]*-----\s*(.*?)\s*-----END", re.S)


def _value(text: str) -> str:
    """The secret of a line whose upstream gives no capture group (see the module's doc)."""
    pem = _PEM_BODY.search(text)
    if pem:
        return max(re.split(r"\s|\\n|\\r", pem.group(1)), key=len)
    m = _URL_PASSWORD.search(text)
    if m:
        return m.group(1)
    quoted = [q for _, q in _QUOTED.findall(text) if "://" not in q]
    if quoted:
        return max(quoted, key=len)
    runs = []
    for run in _RUN.findall(text):  # a URL's path segments, not the URL, past its host
        runs += run.split("/")[3:] if run.startswith("//") else [run]
    return max(runs, key=len, default=text.strip())


_SCHEME_HOST = re.compile(r"^[a-z][a-z0-9+.-]*://[^/\s]+/")


def _kf_secrets(captured: list[str]) -> list[str]:
    """The secret in what a kingfisher pattern captures: captures holding more than the key are cut down.

    A URL with a password gives its password; a URL without one, its path (a webhook's
    key); a PEM block, its body; a JSON object, its key value (as `_value` finds it);
    a capture of under 6 characters beside others (a word of a header) is dropped.
    """
    out = []
    for c in captured:
        if _URL_PASSWORD.search(c):
            c = _URL_PASSWORD.search(c).group(1)
        elif _SCHEME_HOST.match(c):
            c = c[_SCHEME_HOST.match(c).end():]
        elif "-----BEGIN" in c or c.lstrip().startswith("{"):
            c = _value(c)
        out.append(c)
    return sorted({c for c in out if len(c.strip(" \"'")) >= 6 or len(out) == 1})


def kingfisher(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    import yaml

    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"mongodb/kingfisher@{commit[:12]}"
    samples: list[dict] = []
    for path in sorted(git(repo, "ls-tree", "--name-only", "HEAD", KF_RULES + "/").split()):
        if not path.endswith(".yml"):
            continue
        for rule in yaml.safe_load(git(repo, "show", f"HEAD:{path}"))["rules"]:
            typ = "kingfisher:" + rule["id"].removeprefix("kingfisher.")
            source = f"{name}:{path}#{rule['id']}"
            try:
                rx = compile_upstream(rule["pattern"])
            except re.error:
                left_out["kingfisher rule whose pattern Python re does not compile (its examples)"] += len(
                    rule.get("examples") or [])
                continue
            hidden = rule.get("visible") is False and rule["id"] not in KF_SECRET_DESPITE_HIDDEN
            for n, text in enumerate(rule.get("examples") or [], 1):
                secrets = _kf_secrets([g for m in rx.finditer(text) for g in ([g for g in m.groups() if g] or [m.group(0)])])
                if not secrets:
                    left_out["kingfisher example its own pattern does not match under Python re"] += 1
                    continue
                if all(re.fullmatch(r"\S+@[\w-]+(\.[\w-]+)+", x) for x in secrets):
                    left_out["kingfisher example whose capture holds no key (an e-mail address)"] += 1
                    continue
                sample = {"set": "upstream-positive", "type": typ, "text": text, "secrets": secrets,
                          "source": f"{source}/example-{n}"}
                if hidden:
                    sample |= {"set": "not-secret", "reason": _not_secret_reason(rule["name"])}
                samples.append(sample)
            for n, text in enumerate(rule.get("negative_examples") or [], 1):
                samples.append({"set": "upstream-negative", "type": typ, "text": text,
                                "source": f"{source}/negative-{n}"})
    return name, samples


_ANNOTATION = re.compile(r"^\s*(?:#|//|/\*|\{/\*|<!--|;)\s*(ruleid|ok|todoruleid|todook)\s*:\s*([\w.-]+)")


def semgrep_rules(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"semgrep/semgrep-rules@{commit[:12]}"
    samples: list[dict] = []
    for path in sorted(git(repo, "ls-tree", "--name-only", "HEAD", SG_DIR + "/").split()):
        if path.endswith((".yaml", ".yml")):
            continue
        lines = git(repo, "show", f"HEAD:{path}").splitlines()
        for i, line in enumerate(lines):
            m = _ANNOTATION.match(line)
            if not m or m.group(1).startswith("todo"):
                continue
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or _ANNOTATION.match(lines[j])):
                j += 1
            if j == len(lines):
                continue
            text = lines[j]
            if "-----BEGIN" in text:
                k = j
                while k < len(lines) and "-----END" not in lines[k]:
                    k += 1
                text = "\n".join(lines[j:k + 1])
            typ = "semgrep:" + m.group(2)
            source = f"{name}:{path}#line-{j + 1}"
            if m.group(1) == "ruleid" and m.group(2) in SG_NOT_SECRET:
                samples.append({"set": "not-secret", "type": typ, "text": text, "source": source,
                                "reason": SG_NOT_SECRET[m.group(2)]})
            elif m.group(1) == "ruleid" and re.match(r"^\w+::", text):
                samples.append({"set": "not-secret", "type": typ, "text": text, "source": source,
                                "reason": "a shadow(5) line whose password field is empty holds no secret"})
            elif m.group(1) == "ruleid":
                samples.append({"set": "upstream-positive", "type": typ, "text": text,
                                "secrets": [_value(text)], "source": source})
            else:
                samples.append({"set": "upstream-negative", "type": typ, "text": text, "source": source})
    return name, samples


def ripsecrets(repo: str, left_out: Counter) -> tuple[str, list[dict]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    name = f"sirwart/ripsecrets@{commit[:12]}"
    samples: list[dict] = []
    for path in sorted(git(repo, "ls-tree", "-r", "--name-only", "HEAD", "test/").split()):
        text = git(repo, "show", f"HEAD:{path}")
        kind = path.split("/")[1]
        if kind == "one_per_file":
            samples.append({"set": "upstream-positive", "type": "ripsecrets:" + path.split("/")[-1].split(".")[0],
                            "text": text, "secrets": [_value(text)], "source": f"{name}:{path}"})
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            source = f"{name}:{path}#line-{n}"
            if kind == "none":
                samples.append({"set": "upstream-negative", "type": "ripsecrets:none", "text": line, "source": source})
            elif kind == "one_per_line":
                samples.append({"set": "upstream-positive", "type": "ripsecrets:" + path.split("/")[-1],
                                "text": line, "secrets": [_value(line)], "source": source})
            else:
                left_out[f"ripsecrets test file of another kind ({kind})"] += 1
    return name, samples




def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kingfisher", required=True, help="a git clone or mirror of mongodb/kingfisher")
    ap.add_argument("--semgrep-rules", required=True, help="a git clone or mirror of semgrep/semgrep-rules")
    ap.add_argument("--ripsecrets", required=True, help="a git clone or mirror of sirwart/ripsecrets")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    left_out: Counter = Counter()
    upstream, samples = [], []
    for build, repo in ((kingfisher, args.kingfisher), (semgrep_rules, args.semgrep_rules),
                        (ripsecrets, args.ripsecrets)):
        name, got = build(repo, left_out)
        upstream.append(name)
        samples += got
    about = ("Third held-out redaction corpus: secret samples and negatives from projects whose data the "
             "rules were neither written from nor adjusted on. Built by "
             "tests/support/redaction_corpus3_extract.py; each sample names its source.")
    write(args.out, about, upstream, samples, left_out, earlier=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
