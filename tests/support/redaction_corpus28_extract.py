"""Build the twenty-eighth held-out redaction corpus (tests/fixtures/redaction/corpus28.json.gz).

The first twenty-seven corpora came from the projects tests/support/redaction_corpus27_extract.py
names and the ones it read before. This one reads a project none of them read:
fosscode/libreleak, a secret scanner for git repositories whose detector tests write a file
holding a fake secret, run the scanner on it and assert which rule reports it.

- fosscode/libreleak, `tests/detector_tests.rs`: every test that writes a file whose text is
  `format!` of a template and the fake secrets of `tests/common.rs` (`fake_secrets`, "secret
  fixtures for all supported detectors") and asserts the scanner detects it. The text is the
  template with the secrets in its `{}` places (Rust escapes read), the secrets are the
  fixtures it names, and the path is the file the test writes. A test that asserts the scanner
  detects nothing in a raw string it writes (`r#"..."#`) gives an upstream negative. Left out:
  a test built another way (several files, a loop, a string built in code), a fixture name
  `fake_secrets` does not set to a literal.
- Benign: ordinary files of the repository (the CI and release workflows, the ignore file, the
  crate manifest, the Dockerfiles, the GitHub Action's metadata, the shell scripts that run
  scans, the example repository list), each whole (up to 200 lines) and each line that names a
  password, secret, token, key, credential or auth, and `git log --format='%H %an %s' -n 15` at
  the pinned commit. The README, the Docker Compose file and the database setup are not: they
  show secrets or a password. Chosen before scoring, by the fourteenth corpus's rule.

A secret is kept only where the scoring can judge it (tests/support/redaction_corpus6_extract.py
`scorable`, the sixth corpus's rule). A text or secret any of the first twenty-seven corpora
holds is left out (counted). Each input is carried as the file the test writes, labelled with
the format its path and text show. The scorer (tests/support/redaction_corpus28.py) stores each
sample in the four carriers an agent produces. Sources read `owner/repo@commit:path#TEST-n` (the
n-th file the named test writes), or a benign `…:path` and `…:path#line-n`.

Usage (not part of the test suite, which reads the built file):

    .venv/bin/python tests/support/redaction_corpus28_extract.py --libreleak DIR

where DIR is a clone (or bare mirror) of fosscode/libreleak at the commit the fixture names.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_extract import HERE, Corpus, head_commit, show  # noqa: E402

OUT = HERE / "corpus28.json.gz"
SESSION = "corpus28"
_LIBRELEAK = "fosscode/libreleak"
CORPUS = Corpus({_LIBRELEAK: "libreleak"}, session=SESSION, earlier=27)
TESTS = "tests/detector_tests.rs"
FIXTURES = "tests/common.rs"

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
_FORMAT = re.compile(r'write_file\(\s*"([^"]+)",\s*&format!\(\s*"((?:[^"\\]|\\.)*)",\s*([\w, ]+?)\s*,?\s*\)')
_RAW = re.compile(r'write_file\(\s*"([^"]+)",\s*r#"(.*?)"#', re.DOTALL)


def unescape(literal: str) -> str:
    """A Rust string literal's body as the program holds it (a backslash before a newline joins lines)."""
    return re.sub(r"\\(\n\s*|u\{[0-9a-fA-F]+\}|.)", _escape, literal)


def _escape(m: re.Match[str]) -> str:
    e = m.group(1)
    if e.startswith("\n"):
        return ""
    if e.startswith("u{"):
        return chr(int(e[2:-1], 16))
    return _ESCAPES.get(e, e)


def fixtures(src: str) -> dict[str, str]:
    """The fake secrets `tests/common.rs` sets to a literal, by name."""
    body = src[src.index("pub mod fake_secrets"):]
    return {n: unescape(v) for n, v in re.findall(r'pub const (\w+): &str =\s*"((?:[^"\\]|\\.)*)"', body)}


def fill(template: str, values: list[str]) -> str:
    """`format!`'s text: each `{}` in turn replaced, `{{` and `}}` read as braces."""
    parts = iter(values)
    return re.sub(r"\{\{|\}\}|\{\}", lambda m: {"{{": "{", "}}": "}"}.get(m.group(), "") or next(parts), template)


def libreleak(repo: str, left_out: Counter) -> list[dict]:
    head = head_commit(repo)
    upstream = f"{_LIBRELEAK}@{head}"
    secrets = fixtures(show(repo, head, FIXTURES))
    samples: list[dict] = []
    for test in re.split(r"\n#\[test\]\n", show(repo, head, TESTS))[1:]:
        name = re.search(r"fn (\w+)", test).group(1)  # type: ignore[union-attr]
        writes = _FORMAT.findall(test)
        raws = _RAW.findall(test)
        negative = "!should_detect" in test
        if writes and not negative:
            for n, (path, template, args) in enumerate(writes, 1):
                names = [a.strip() for a in args.split(",") if a.strip()]
                if any(a not in secrets for a in names):
                    left_out["a fixture name fake_secrets does not set to a literal"] += 1
                    continue
                values = [secrets[a] for a in names]
                text = fill(unescape(template), values)
                samples += CORPUS.positive(f"{upstream}:{TESTS}#{name}-{n}", path, text, values, left_out)
        elif raws and negative:
            for n, (path, text) in enumerate(raws, 1):
                if not text.strip():
                    left_out["an empty text"] += 1
                    continue
                samples.append(CORPUS.sample("upstream-negative", f"{upstream}:{TESTS}#{name}-{n}", path,
                                             text.strip("\n")))
        else:
            left_out["a test built another way (several files, a loop, a string built in code)"] += 1
    return samples


BENIGN_FILES = {
    "libreleak": (
        ".github/workflows/ci.yml", ".github/workflows/release.yml", ".gitignore", "Cargo.toml", "Dockerfile",
        "Dockerfile.aggregator", "action.yml", "scan_all.sh", "scan_codeberg.sh", "scan_github.sh",
        "scripts/batch-scan.sh", "scripts/discover-repos.sh", "scripts/fetch-feeds.sh", "scripts/monitor.sh",
        "scripts/scan-queue.sh", "scripts/scan-repo.sh", "repos.txt.example"),
}


def sources(repos: dict[str, str], left_out: Counter) -> list[dict]:
    return libreleak(repos["libreleak"], left_out)


def main(argv: list[str]) -> int:
    return CORPUS.build(argv, OUT, __doc__, sources, BENIGN_FILES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
