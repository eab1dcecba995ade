"""Scoring the redaction rules on a held-out corpus (tests/fixtures/redaction/corpus{2,3,4}.json.gz).

Each held-out corpus comes from upstream scanners the rules were not written from, and
every sample names its source (tests/support/redaction_corpus{2,3,4}_extract.py build
them). The scoring is the first corpus's (tests/support/redaction_corpus.py): a positive
is caught when no 12-character piece of any of its secrets is left in the stored record;
a negative or a not-secret sample is intact when it is stored unchanged.

`python tests/support/redaction_corpusN.py --write` records a corpus's figures
(figuresN.json) and prints the tables for docs/redaction.md; `--write-before` records
the figures of the rules before anything was changed with the corpus in view
(figuresN-before.json); `--before FILE` adds a column of figures recorded earlier.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction_corpus import leaked, stored_text  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
SETS = {"upstream-positive": "recall", "upstream-negative": "upstream negatives left intact",
        "not-secret": "not secrets by this project's threat model, left intact"}


def outcome(policy, sample: dict) -> bool:
    out = stored_text(policy, sample["text"])
    if sample["set"] == "upstream-positive":
        return not any(leaked(out, secret) for secret in sample["secrets"])
    return out == sample["text"]


def totals(figures: dict, prefix: str = "") -> dict[str, tuple[int, int]]:
    return {s: (sum(c[0] for k, c in t.items() if k.startswith(prefix)),
                sum(c[1] for k, c in t.items() if k.startswith(prefix)))
            for s, t in figures["counts"].items()}


def _cell(c) -> str:
    return f"{c[0]} / {c[1]} ({c[0] / c[1]:.1%})" if c and c[1] else "-"


@dataclass(frozen=True)
class HeldOut:
    """One held-out corpus: its fixture, its recorded figures and the sources its types name."""

    number: int
    sources: tuple[str, ...]
    total_label: str = "all"  # the row that sums every source in the tables

    @property
    def corpus(self) -> Path:
        return HERE / f"corpus{self.number}.json.gz"

    @property
    def figures(self) -> Path:
        return HERE / f"figures{self.number}.json"

    @property
    def before(self) -> Path:
        return HERE / f"figures{self.number}-before.json"

    def load(self) -> dict:
        with gzip.open(self.corpus, "rb") as f:
            return json.loads(f.read())

    def score(self, policy) -> dict:
        """{set: {type: [ok, total]}} and the failing samples, each as set, type and source."""
        counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        failures: list[str] = []
        for sample in self.load()["samples"]:
            ok = outcome(policy, sample)
            cell = counts[sample["set"]][sample["type"]]
            cell[0] += ok
            cell[1] += 1
            if not ok:
                failures.append(f"{sample['set']} {sample['type']} {sample['source']}")
        return {"counts": {s: dict(sorted(t.items())) for s, t in sorted(counts.items())},
                "failures": sorted(failures)}

    def table(self, figures: dict, before: dict | None = None) -> str:
        """Markdown: totals by source, then every type below 100% (before or after)."""
        cols = ["before", "after"] if before else ["figure"]
        runs = [before, figures] if before else [figures]
        lines = ["| set | source | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
        for s in SETS:
            for prefix, name in [(p + ":", p) for p in self.sources] + [("", self.total_label)]:
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

    def main(self, argv: list[str]) -> int:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from agentwatch.record import redact

        figures = self.score(redact.Policy(redact.REDACTED, bytes(range(32))))
        if "--write" in argv:
            self.figures.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        if "--write-before" in argv:
            self.before.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        before = json.loads(Path(argv[argv.index("--before") + 1]).read_text()) if "--before" in argv else None
        print(self.table(figures, before))
        return 0
