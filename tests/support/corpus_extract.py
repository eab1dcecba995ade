"""What the held-out corpus extractors share (tests/support/redaction_corpus{2,...,14}_extract.py).

Reading an upstream repository at its checked-out commit, taking its rule patterns under
Python's `re`, and writing the fixture: each text once per set, nothing the earlier
corpora already hold, gzip without a timestamp so a rerun gives the same bytes.
Standard library only, like the extractors (which add PyYAML where an upstream writes YAML).
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
            "eleventh", "twelfth", "thirteenth", "fourteenth")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


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
                 "corpus11.json.gz", "corpus12.json.gz", "corpus13.json.gz")[:corpora]:
        with gzip.open(HERE / name, "rb") as f:
            texts += [s["text"] for s in json.loads(f.read())["samples"]]
    return "\n\x00\n".join(texts)
