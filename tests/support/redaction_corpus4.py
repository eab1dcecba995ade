"""Score the redaction rules on the fourth held-out corpus (tests/fixtures/redaction/corpus4.json.gz).

The rules were written from gitleaks and detect-secrets and adjusted on the second
(noseyparker, trufflehog) and third (kingfisher, semgrep-rules, ripsecrets) corpora;
this corpus comes from the findings trivy's secret scanner tests expect and
secretlint's rule snapshot tests (tests/support/redaction_corpus4_extract.py builds
it; every sample names its source).
The scoring is the second corpus's (tests/support/redaction_corpus2.py).
`python tests/support/redaction_corpus4.py --write` records the figures
(figures4.json) and prints the tables for docs/redaction.md; `--before FILE` adds a
column of figures recorded earlier (figures4-before.json: the rules as they were
before anything was changed with this corpus in view).
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction_corpus2 import _cell, outcome, totals  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
CORPUS = HERE / "corpus4.json.gz"
FIGURES = HERE / "figures4.json"
BEFORE = HERE / "figures4-before.json"
SOURCES = ("trivy", "secretlint")
SETS = {"upstream-positive": "recall", "upstream-negative": "upstream negatives left intact",
        "not-secret": "not secrets by this project's threat model, left intact"}


def load() -> dict:
    with gzip.open(CORPUS, "rb") as f:
        return json.loads(f.read())


def score(policy) -> dict:
    """{set: {type: [ok, total]}} and the failing samples, each as set, type and source."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failures: list[str] = []
    for sample in load()["samples"]:
        ok = outcome(policy, sample)
        cell = counts[sample["set"]][sample["type"]]
        cell[0] += ok
        cell[1] += 1
        if not ok:
            failures.append(f"{sample['set']} {sample['type']} {sample['source']}")
    return {"counts": {s: dict(sorted(t.items())) for s, t in sorted(counts.items())}, "failures": sorted(failures)}


def table(figures: dict, before: dict | None = None) -> str:
    """Markdown: totals by source, then every type below 100% (before or after)."""
    cols = ["before", "after"] if before else ["figure"]
    runs = [before, figures] if before else [figures]
    lines = ["| set | source | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for s in SETS:
        for prefix, name in [(p + ":", p) for p in SOURCES] + [("", "all")]:
            cells = [_cell(totals(r, prefix).get(s)) for r in runs]
            if cells[-1] != "-":
                lines.append(f"| {SETS[s]} | {name} | " + " | ".join(cells) + " |")
    for s in SETS:
        rows = []
        for t in sorted(set().union(*(r["counts"].get(s, {}) for r in runs))):
            cells = [r["counts"].get(s, {}).get(t) for r in runs]
            if any(c and c[0] < c[1] for c in cells):
                rows.append(f"| `{t}` | " + " | ".join(_cell(c) for c in cells) + " |")
        n = len(figures["counts"].get(s, {}))
        lines += ["", f"**{SETS[s]}: the types below 100% ({len(rows)} of {n})**", "",
                  "| type | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols), *rows]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from agentwatch.record import redact

    figures = score(redact.Policy(redact.REDACTED, bytes(range(32))))
    if "--write" in argv:
        FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if "--write-before" in argv:
        BEFORE.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    before = json.loads(Path(argv[argv.index("--before") + 1]).read_text()) if "--before" in argv else None
    print(table(figures, before))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
