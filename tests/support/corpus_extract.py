"""What the held-out corpus extractors share (tests/support/redaction_corpus{2,...,22}_extract.py).

Reading an upstream repository at its checked-out commit, taking its rule patterns under
Python's `re`, and writing the fixture: each text once per set, nothing the earlier
corpora already hold, gzip without a timestamp so a rerun gives the same bytes.
Standard library only, like the extractors (which add PyYAML where an upstream writes YAML).

From the seventh corpus on, an extractor names its own choices in a `Corpus` (its upstreams'
labels, the carrier's session id, how many corpora came before) and takes from it what every
such extractor does alike: a sample's record, a positive's scorable secrets, the benign files
and `git log`, the secrets an earlier corpus holds, the command line and the fixture.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
            "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
            "eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second", "twenty-third",
            "twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def head_commit(repo: str) -> str:
    """The commit the clone or mirror stands at: the one its fixture pins."""
    return git(repo, "rev-parse", "HEAD").strip()


def show(repo: str, rev: str, path: str) -> str:
    return git(repo, "show", f"{rev}:{path}")


def tree_files(repo: str, rev: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).split("\n")


def compile_upstream(pattern: str) -> re.Pattern[str]:
    """An upstream (Rust/PCRE) pattern under Python's `re`: named groups spelled `(?P<`, global flags first."""
    pattern = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", pattern)
    try:
        return re.compile(pattern)
    except re.error:
        flags = "".join(sorted(set("".join(re.findall(r"\(\?([imsx]+)\)", pattern)))))
        return re.compile(f"(?{flags})" + re.sub(r"\(\?[imsx]+\)", "", pattern))


def write(out: Path, about: str, upstream: list[str], samples: list[dict], left_out: Counter, earlier: int) -> None:
    """Write the fixture: `samples` without repeats in a set and without what the first
    `earlier` corpora hold (a text, or a secret of 8 characters or more); print a summary."""
    seen_before = _texts(earlier)
    where = ORDINALS[0] if earlier == 1 else ", ".join(ORDINALS[: earlier - 1]) + " or " + ORDINALS[earlier - 1]
    seen: set[tuple[str, str]] = set()
    unique = []
    for s in samples:
        if (s["set"], s["text"]) in seen:
            left_out["the same text twice in one set"] += 1
            continue
        seen.add((s["set"], s["text"]))
        if earlier and s["text"] in seen_before:
            left_out[f"text already in the {where} corpus"] += 1
            continue
        if earlier and any(len(secret) >= 8 and secret in seen_before for secret in s.get("secrets", [])):
            left_out[f"a secret already in the {where} corpus"] += 1
            continue
        unique.append(s)
    doc = {"about": about, "upstream": upstream, "left_out": dict(sorted(left_out.items())), "samples": unique}
    data = json.dumps(doc, indent=0, sort_keys=True, ensure_ascii=False).encode()
    out.write_bytes(gzip.compress(data, mtime=0))
    print(json.dumps({"samples": len(unique), "sets": Counter(s["set"] for s in unique),
                      "sources": Counter(s["type"].split(":")[0] for s in unique),
                      "left_out": doc["left_out"]}, indent=1))


def _texts(corpora: int) -> str:
    """Every text of the first `corpora` corpora, joined: what the rules were measured on."""
    texts = []
    for name in ("corpus.json.gz", "corpus2.json.gz", "corpus3.json.gz", "corpus4.json.gz", "corpus5.json.gz",
                 "corpus6.json.gz", "corpus7.json.gz", "corpus8.json.gz", "corpus9.json.gz", "corpus10.json.gz",
                 "corpus11.json.gz", "corpus12.json.gz", "corpus13.json.gz", "corpus14.json.gz",
                 "corpus15.json.gz", "corpus16.json.gz", "corpus17.json.gz", "corpus18.json.gz",
                 "corpus19.json.gz", "corpus20.json.gz", "corpus21.json.gz", "corpus22.json.gz",
                 "corpus23.json.gz", "corpus24.json.gz", "corpus25.json.gz", "corpus26.json.gz",
                 "corpus27.json.gz")[:corpora]:
        with gzip.open(HERE / name, "rb") as f:
            texts += [s["text"] for s in json.loads(f.read())["samples"]]
    return "\n\x00\n".join(texts)



@dataclass(frozen=True)
class Corpus:
    """One corpus's own choices, and what its extractor does with them as every other does.

    The format, scoring and benign-line rules are the sixth corpus's
    (tests/support/redaction_corpus6_extract.py), imported where used: that extractor imports
    this module."""

    names: dict[str, str]  # "owner/repo" -> the short name that starts each sample's `type`
    session: str  # the carrier's session id ("corpus7"): in every carrier, so never a secret
    earlier: int  # how many corpora came before: what a text or secret must not repeat
    commit_chars: int = 40  # how much of a commit the benign sources name

    @property
    def owner_repo(self) -> dict[str, str]:
        return {v: k for k, v in self.names.items()}

    def sample(self, kind: str, source: str, path: str, text: str, secrets: list[str] | None = None,
               fmt: str | None = None) -> dict:
        """A fixture record: its set, `short-name:format` type, format, source, path, text and secrets."""
        from redaction_corpus6_extract import format_of

        fmt = fmt or format_of(path, text)
        s: dict = {"set": kind, "type": self.names[source.split("@", 1)[0]] + ":" + fmt, "format": fmt,
                   "source": source, "path": path, "text": text}
        if secrets is not None:
            s["secrets"] = secrets
        return s

    def positive(self, source: str, path: str, text: str, secrets: list[str], left_out: Counter,
                 uses: Counter | None = None, fmt: str | None = None) -> list[dict]:
        """The positive with the secrets the scoring can judge, or none where none is left.

        A short secret must stand as a word in its text as many times as upstream labels it
        (`uses`, else its count in `secrets`: more, and it is a name or a word too); the session
        id is in every carrier (the sixth corpus's carrier words name the rest)."""
        from redaction_corpus6_extract import scorable

        uses = uses or Counter(secrets)
        kept = sorted({x for x in secrets if x != self.session and scorable(text, path, x, uses[x])})
        left_out["a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)"] += (
            len(set(secrets)) - len(kept))
        if not kept:
            left_out["a positive with no secret left to judge"] += 1
            return []
        return [self.sample("upstream-positive", source, path, text, kept, fmt)]

    def benign(self, repos: dict[str, str], files: dict[str, tuple[str, ...]], left_out: Counter) -> list[dict]:
        """Ordinary files of each repository (whole, and each line naming a secret word) and its `git log`.

        `repos` maps a short name to its clone, `files` to the paths read at its commit; a file
        that is not there is counted, a leading byte-order mark dropped."""
        from redaction_corpus6_extract import _MAX_LINES, _SECRET_WORD, format_of

        owner_repo = self.owner_repo
        samples = []
        for name, repo in repos.items():
            head = head_commit(repo)
            upstream = f"{owner_repo[name]}@{head[:self.commit_chars]}"
            present = set(tree_files(repo, head))
            for path in files[name]:
                if path not in present:
                    left_out["benign file not at the pinned commit"] += 1
                    continue
                text = show(repo, head, path).lstrip("\ufeff").rstrip("\n")
                fmt = format_of(path, text)
                source = f"{upstream}:{path}"
                if len(text.splitlines()) <= _MAX_LINES:
                    samples.append(self.sample("benign", source, path, text, fmt=fmt))
                for i, line in enumerate(text.splitlines(), 1):
                    if _SECRET_WORD.search(line) and line.strip() and line.strip() != text.strip():
                        samples.append(self.sample("benign", f"{source}#line-{i}", path, line, fmt=fmt))
            log = git(repo, "log", "--format=%H %an %s", "-n", "15", head).rstrip("\n")
            samples.append(self.sample("benign", f"{upstream}:(git log --format='%H %an %s' -n 15)", "git-log.txt",
                                       log, fmt="command-output"))
        return samples

    def drop_earlier_secrets(self, samples: list[dict], left_out: Counter) -> list[dict]:
        """A sample of several secrets keeps the ones the earlier corpora do not hold."""
        seen = _texts(self.earlier)
        for s in samples:
            fresh = [x for x in s.get("secrets", []) if not (len(x) >= 8 and x in seen)]
            if fresh and len(fresh) < len(s.get("secrets", [])):
                left_out["a secret already in an earlier corpus, dropped from a sample of several"] += (
                    len(s["secrets"]) - len(fresh))
                s["secrets"] = fresh
        return samples

    def repos(self, argv: list[str]) -> dict[str, str]:
        """The command line: `--NAME DIR` for each upstream's short name, a clone or bare mirror at
        the commit the fixture names; the clones by short name, in `names`' order."""
        ap = argparse.ArgumentParser()
        for name in self.names.values():
            ap.add_argument("--" + name, dest=name, required=True, metavar="DIR")
        args = vars(ap.parse_args(argv))
        return {name: args[name] for name in self.names.values()}

    def build(self, argv: list[str], out: Path, doc: str | None,
              sources: Callable[[dict[str, str], Counter], list[dict]], files: dict[str, tuple[str, ...]],
              thin: Callable[[list[dict], Counter], list[dict]] | None = None) -> int:
        """The extractor's run: the clones from the command line, the upstream samples `sources`
        takes from them, the benign `files` and `git log`, the earlier corpora's secrets dropped,
        `thin` where a corpus keeps fewer, and the fixture written to `out`."""
        repos = self.repos(argv)
        left_out: Counter = Counter()
        samples = sources(repos, left_out) + self.benign(repos, files, left_out)
        samples = self.drop_earlier_secrets(samples, left_out)
        if thin is not None:
            samples = thin(samples, left_out)
        self.write(out, doc or "", samples, left_out)
        return 0

    def write(self, out: Path, doc: str, samples: list[dict], left_out: Counter) -> None:
        """Write the fixture (`write`): about, the extractor's docstring's first paragraph; upstream,
        each `owner/repo@commit` its samples name."""
        upstream = sorted({s["source"].split(":", 1)[0] for s in samples})
        write(out, doc.split("\n\n")[0], upstream, samples, +left_out, earlier=self.earlier)
