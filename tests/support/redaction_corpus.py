"""Score the redaction rules on the upstream corpus (tests/fixtures/redaction/corpus.json.gz).

The corpus holds upstream secret samples (gitleaks' per-rule samples, detect-secrets'
plugin tests), upstream negatives, and a benign corpus of real public files; every
sample names its source. A positive counts as caught when no 12-character piece of
its secret is left in the stored record; a benign sample counts as intact when it is
stored unchanged. `python tests/support/redaction_corpus.py --write` records the
figures (figures.json) and prints the table for docs/redaction.md.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
CORPUS = HERE / "corpus.json.gz"
FIGURES = HERE / "figures.json"
_PIECES = re.compile(r"[^A-Za-z0-9+/=_~.-]+")


def load() -> dict:
    with gzip.open(CORPUS, "rb") as f:
        return json.loads(f.read())


def leaked(stored: str, secret: str) -> bool:
    """Is a 12-character piece of the secret (or a short secret whole) still in the stored text?"""
    pieces = [p for p in _PIECES.split(secret) if len(p) >= 12]
    if not pieces:
        bare = secret.strip("\"'")
        return bool(bare) and bare in stored
    return any(p[i:i + 12] in stored for p in pieces for i in range(len(p) - 11))


def stored_text(policy, text: str) -> str:
    """The text as the store keeps it: through Policy.encode of a record document, read back."""
    data = policy.encode({"schema": 1, "raw": {"text": text}})
    return json.loads(data)["raw"]["text"]


def score(policy) -> dict:
    """{set: {type: [ok, total]}} and the failing samples' sources."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failures: list[str] = []
    for sample in load()["samples"]:
        out = stored_text(policy, sample["text"])
        if sample["set"] == "upstream-positive":
            secret = sample["secret"]
            ok = not leaked(out, secret) if secret else out != sample["text"]
        else:
            ok = out == sample["text"]
        cell = counts[sample["set"]][sample["type"]]
        cell[0] += ok
        cell[1] += 1
        if not ok:
            failures.append(f"{sample['set']} {sample['type']} {sample['source']}")
    return {"counts": {s: dict(sorted(t.items())) for s, t in sorted(counts.items())}, "failures": sorted(failures)}


def totals(figures: dict) -> dict[str, tuple[int, int]]:
    return {s: (sum(c[0] for c in t.values()), sum(c[1] for c in t.values())) for s, t in figures["counts"].items()}


def table(figures: dict) -> str:
    """Markdown: totals, then one row per type."""
    names = {"upstream-positive": "recall", "upstream-negative": "upstream negatives left intact",
             "benign": "benign left intact"}
    lines = ["| set | caught or intact | rate |", "|---|---|---|"]
    for s, (ok, n) in totals(figures).items():
        lines.append(f"| {names[s]} | {ok} / {n} | {ok / n:.2%} |")
    for s in ("upstream-positive", "benign", "upstream-negative"):
        lines += ["", f"**{names[s]}, per type**", "", "| type | caught or intact | rate |", "|---|---|---|"]
        for t, (ok, n) in figures["counts"][s].items():
            lines.append(f"| `{t}` | {ok} / {n} | {ok / n:.1%} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from agentwatch.record import redact

    figures = score(redact.Policy(redact.REDACTED, bytes(range(32))))
    if "--write" in argv:
        FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    print(table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
