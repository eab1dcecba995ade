"""Build the fifth held-out redaction corpus (tests/fixtures/redaction/corpus5.json.gz).

The first four corpora came from gitleaks' rules, detect-secrets' plugin tests,
noseyparker, trufflehog, kingfisher, semgrep-rules, ripsecrets, trivy and secretlint.
This one measures the format-aware text layer (issue #33) on whole files of the text
formats an agent reads, taken from three projects' test data that none of the
earlier corpora reads, each labelled by its upstream:

- GitGuardian/sample_secrets (every file of every commit of its history): the
  repository's README lists each secret it holds as its first and last characters
  around `X`s (`sup3XXXXXXXXXorGG`); a secret is the run in a file that starts and
  ends so (for the private key, the body of the PEM block that starts so). Files
  that hold one are positives; the README itself is not read.
- Yelp/detect-secrets `test_data/` (not its plugin tests, which the first corpus
  read): the locations its own tests expect findings at
  (tests/core/secrets_collection_test.py: config.ini lines 2, 10, 21, 22, 32,
  config.yaml lines 3, 5, 13; config.env and config.md hold one each; baseline_test.py:
  files/file_with_secrets.py one) and each_secret.py, whose variable names say which
  plugin each value is for (the EXAMPLE AWS keys are excluded upstream). The secret is
  the value on that line.
- bridgecrewio/checkov `tests/secrets/sanity/`: `secrets/true_positive.json` is six
  findings (tests/secrets/test_runner.py `test_sanity_check_secrets` expects 6): the
  value of each pair; `non_secrets/`, `iac_fp/` and `non_iac_fp/` must give no
  finding (the same module's three false-positive tests): negatives.

Each positive file is a sample (every labelled secret in it), and so is each line that
holds a labelled secret; each negative file is a sample, and so is each non-blank line
of it. The scorer (tests/support/redaction_corpus5.py) stores every sample in the four
carriers an agent produces (a command line that writes the file, the output of a
command that prints it, a file read, an MCP tool's input), so the figures are per
format and carrier. Sources read `owner/repo@commit:path` (and `#line-n`).

Usage (not part of the test suite, which reads the built file):

    python tests/support/redaction_corpus5_extract.py --gitguardian DIR --detect-secrets DIR --checkov DIR

where each DIR is a git clone or bare mirror.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, git  # noqa: E402

OUT = HERE / "corpus5.json.gz"
_README_SECRET = re.compile(r"\|\s*`([^`|]+?)X{3,}(?:\.\.\.\.\.\.X+)?([^`|X]+)`\s*\|")

# detect-secrets test_data: (path, line) of each finding its tests expect.
DS_LINES = {
    "test_data/config.ini": (2, 10, 21, 22, 32),
    "test_data/config.yaml": (3, 5, 13),
    "test_data/config.env": (1,),
    "test_data/config.md": (10,),
    "test_data/files/file_with_secrets.py": (3,),
    "test_data/each_secret.py": (4, 5, 6),  # base64_secret, hex_secret, basic_auth (its password)
}
_DS_VALUE = re.compile(r"[:=]\s*(?:!!binary\s+)?['\"]?(?P<v>[^'\"\s#]+)|^\s+(?P<w>[^'\"\s#]+)\s*$")
CHECKOV_POSITIVE = ("tests/secrets/sanity/secrets/true_positive.json",)
CHECKOV_NEGATIVE_DIRS = ("tests/secrets/sanity/non_secrets", "tests/secrets/sanity/iac_fp",
                         "tests/secrets/sanity/non_iac_fp")


def _head(repo: str) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def _show(repo: str, rev: str, path: str) -> str:
    return git(repo, "show", f"{rev}:{path}")


def gitguardian(repo: str) -> list[dict]:
    head = _head(repo)
    readme = _show(repo, head, "README.md")
    labels = [(a.strip(), b.strip()) for a, b in _README_SECRET.findall(readme)]
    upstream = f"GitGuardian/sample_secrets@{head[:12]}"
    blobs: dict[str, tuple[str, str]] = {}
    for rev in git(repo, "rev-list", "--all").split():
        for line in git(repo, "ls-tree", "-r", rev).splitlines():
            meta, path = line.split("\t", 1)
            blob = meta.split()[2]
            if path != "README.md" and blob not in blobs:
                blobs[blob] = (rev, path)
    samples = []
    for blob, (_rev, path) in sorted(blobs.items(), key=lambda kv: (kv[1][1], kv[1][0])):
        text = git(repo, "cat-file", "-p", blob)
        secrets = []
        for first, last in labels:
            if first.startswith("MIIE"):
                m = re.search(r"-----BEGIN[^\n]*-----\n(" + re.escape(first) + r"[\s\S]*?" + re.escape(last) + r")\n", text)
                if m:
                    secrets.append(m.group(1))
                continue
            pattern = re.escape(first) + r"[^\s\"'`]*?" + re.escape(last)
            secrets += [m.group() for m in re.finditer(pattern, text)]
        if secrets:
            samples += _positive(f"{upstream}:{path}#blob-{blob[:12]}", path, text, sorted(set(secrets)))
    return samples


def detect_secrets(repo: str) -> list[dict]:
    head = _head(repo)
    upstream = f"Yelp/detect-secrets@{head[:12]}"
    samples = []
    for path, numbers in DS_LINES.items():
        text = _show(repo, head, path)
        lines = text.splitlines()
        secrets = []
        for n in numbers:
            line = lines[n - 1]
            if path.endswith("each_secret.py") and "://" in line:
                secrets.append(re.search(r"://[^:]+:([^@]+)@", line).group(1))
                continue
            m = _DS_VALUE.search(line)
            assert m, (path, n, line)
            secrets.append(m.group("v") or m.group("w"))
        samples += _positive(f"{upstream}:{path}", path, text, secrets, lines=numbers)
    return samples


def checkov(repo: str) -> list[dict]:
    head = _head(repo)
    upstream = f"bridgecrewio/checkov@{head[:12]}"
    samples = []
    for path in CHECKOV_POSITIVE:
        text = _show(repo, head, path)
        secrets = re.findall(r'"[^"]+":\s*"([^"]+)"', text)
        samples += _positive(f"{upstream}:{path}", path, text, secrets)
    for d in CHECKOV_NEGATIVE_DIRS:
        for path in git(repo, "ls-tree", "-r", "--name-only", head, d).split():
            text = _show(repo, head, path)
            source = f"{upstream}:{path}"
            samples.append(_sample("upstream-negative", source, path, text))
            for i, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    samples.append(_sample("upstream-negative", f"{source}#line-{i}", path, line))
    return samples


def _positive(source: str, path: str, text: str, secrets: list[str], lines: tuple[int, ...] = ()) -> list[dict]:
    """The file, and each line holding a secret (only the labelled lines, where upstream names lines)."""
    out = [_sample("upstream-positive", source, path, text, secrets)]
    sep = "-" if "#" in source else "#"
    for i, line in enumerate(text.splitlines(), 1):
        held = [s for s in secrets if re.search(rf"(?<![A-Za-z0-9]){re.escape(s)}(?![A-Za-z0-9])", line)]
        if held and line.strip() != text.strip() and (not lines or i in lines):
            out.append(_sample("upstream-positive", f"{source}{sep}line-{i}", path, line, held))
    return out


_NAMES = {"GitGuardian": "gitguardian", "Yelp": "detect-secrets", "bridgecrewio": "checkov"}


def _sample(kind: str, source: str, path: str, text: str, secrets: list[str] | None = None) -> dict:
    s = {"set": kind, "type": _NAMES[source.split("/", 1)[0]] + ":" + fmt(path),
         "source": source, "path": path, "text": text}
    if secrets is not None:
        s["secrets"] = secrets
    return s


def fmt(path: str) -> str:
    """The format a path names (the per-class tables' rows)."""
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else name.lstrip(".")
    return {"yml": "yaml", "rsa": "pem", "define_ldap": "ini", "cache_ggshield": "json", "gitignore": "text",
            "md": "markdown"}.get(ext, ext)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gitguardian", required=True)
    ap.add_argument("--detect-secrets", required=True)
    ap.add_argument("--checkov", required=True)
    args = ap.parse_args(argv)
    samples = gitguardian(args.gitguardian) + detect_secrets(args.detect_secrets) + checkov(args.checkov)
    upstream = sorted({s["source"].split(":", 1)[0] for s in samples})
    from corpus_extract import write

    write(OUT, __doc__.split("\n\n")[0], upstream, samples, Counter(), earlier=4)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
