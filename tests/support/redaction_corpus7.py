"""Score the redaction rules on the seventh held-out corpus (tests/fixtures/redaction/corpus7.json.gz), format x carrier.

The corpus is snippets and files from GitGuardian/ggshield's unit-test texts and recorded
API exchanges, awslabs/git-secrets' AWS credential test, eslint-plugin-no-secrets' rule
tests and DevSkim's secrets rule examples, and ordinary files of those repositories
(tests/support/redaction_corpus7_extract.py builds it; every sample names its source, its
path and the format of its text). As in the fifth and sixth corpora, each sample is
stored in the four carriers an agent's record holds text in, as a Claude Code hook
payload (docs/harnesses.md):

- `command`: a Bash command line: the sample itself where it is a shell command line,
  else one that writes the file (`cat > PATH <<'EOF' ... EOF`);
- `output`: the output of `cat PATH` (`tool_response.stdout`);
- `file-read`: a Read of PATH (`tool_response.file.content`);
- `mcp-input`: an MCP tool's input (`mcp__filesystem__write_file` with `path`, `content`).

A positive is caught in a carrier when none of its secrets is left in the stored record:
no 12-character piece of a secret of 12 or more (the earlier corpora's rule), no whole
word of a shorter one (the masks set aside; the extractor keeps only secrets this can
judge). A benign, negative or not-secret sample is intact when the record is stored
unchanged. `python tests/support/redaction_corpus7.py --write` records figures7.json;
`--before` records figures7-before.json (the rules as they were when the corpus was
built, before any change made with it in view); `--compare FILE` adds that column;
`--show FILE` prints the tables of recorded figures without scoring.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction_corpus6_extract import leaked  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
CORPUS = HERE / "corpus7.json.gz"
FIGURES = HERE / "figures7.json"
BEFORE = HERE / "figures7-before.json"
SOURCES = ("ggshield", "git-secrets", "no-secrets", "devskim")
CARRIERS = ("command", "output", "file-read", "mcp-input")
SETS = {"upstream-positive": "recall", "benign": "benign left intact",
        "upstream-negative": "upstream negatives left intact",
        "not-secret": "not secrets by this project's threat model, left intact"}


def load() -> dict:
    with gzip.open(CORPUS, "rb") as f:
        return json.loads(f.read())


def payload(carrier: str, path: str, text: str, fmt: str = "") -> dict:
    """A Claude Code PostToolUse hook payload holding the text in one carrier."""
    where = "/home/dev/project/" + path
    base = {"session_id": "corpus7", "hook_event_name": "PostToolUse", "cwd": "/home/dev/project"}
    if carrier == "command":
        command = text if fmt == "shell" else f"cat > {where} <<'EOF'\n{text}\nEOF"
        return {**base, "tool_name": "Bash", "tool_input": {"command": command, "description": "write the file"},
                "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}
    if carrier == "output":
        return {**base, "tool_name": "Bash", "tool_input": {"command": f"cat {where}"},
                "tool_response": {"stdout": text, "stderr": "", "interrupted": False}}
    if carrier == "file-read":
        return {**base, "tool_name": "Read", "tool_input": {"file_path": where},
                "tool_response": {"type": "text", "file": {"filePath": where, "content": text,
                                                           "numLines": text.count("\n") + 1}}}
    if carrier == "mcp-input":
        return {**base, "tool_name": "mcp__filesystem__write_file", "tool_input": {"path": where, "content": text},
                "tool_response": [{"type": "text", "text": f"Successfully wrote to {where}"}]}
    raise ValueError(carrier)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def record(sample: dict, carrier: str) -> dict:
    return {"schema": 1, "raw": payload(carrier, sample["path"], sample["text"], sample["format"])}


def outcome(policy, sample: dict, carrier: str) -> bool:
    doc = record(sample, carrier)
    stored = json.loads(policy.encode(doc))
    if sample["set"] == "upstream-positive":
        text = "\n".join(_strings(stored))
        return not any(leaked(text, secret) for secret in sample["secrets"])
    return stored == doc


def score(policy) -> dict:
    """{set: {"source:format|carrier": [ok, total]}} and the failing samples (set, type, carrier, source)."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failures: list[str] = []
    for sample in load()["samples"]:
        for carrier in CARRIERS:
            ok = outcome(policy, sample, carrier)
            cell = counts[sample["set"]][f"{sample['type']}|{carrier}"]
            cell[0] += ok
            cell[1] += 1
            if not ok:
                failures.append(f"{sample['set']} {sample['type']} {carrier} {sample['source']}")
    return {"counts": {s: dict(sorted(t.items())) for s, t in sorted(counts.items())}, "failures": sorted(failures)}


def totals(figures: dict, source: str = "", fmt: str = "", carrier: str = "") -> dict[str, tuple[int, int]]:
    """Sums per set over the cells of one source, format and carrier (each optional)."""
    def keep(key: str) -> bool:
        typ, car = key.split("|")
        src, form = typ.split(":", 1)
        return (not source or src == source) and (not fmt or form == fmt) and (not carrier or car == carrier)

    return {s: (sum(c[0] for k, c in t.items() if keep(k)), sum(c[1] for k, c in t.items() if keep(k)))
            for s, t in figures["counts"].items()}


def _cell(c) -> str:
    return f"{c[0]} / {c[1]} ({c[0] / c[1]:.1%})" if c and c[1] else "-"


def table(figures: dict, compare: dict | None = None) -> str:
    """Markdown: totals by source and by carrier, then format x carrier for each set. A cell counts
    samples in carriers: a source's or format's row sums its four carriers."""
    runs = [compare, figures] if compare else [figures]
    cols = ["before", "after"] if compare else ["figure"]
    lines = ["| set | source or carrier | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for s in SETS:
        rows = [{"source": p} for p in SOURCES] + [{"carrier": c} for c in CARRIERS] + [{}]
        for row in rows:
            cells = [_cell(totals(r, **row).get(s)) for r in runs]
            if cells[-1] != "-":
                name = row.get("source") or row.get("carrier") or "all"
                lines.append(f"| {SETS[s]} | {name} | " + " | ".join(cells) + " |")
    for s in SETS:
        formats = sorted({k.split("|")[0].split(":", 1)[1] for k in figures["counts"].get(s, {})})
        if not formats:
            continue
        lines += ["", f"**{SETS[s]}, format x carrier** ({' / '.join(cols)})", "",
                  "| format | " + " | ".join(CARRIERS) + " | all |", "|---|" + "---|" * (len(CARRIERS) + 1)]
        for f in formats:
            cells = []
            for c in (*CARRIERS, ""):
                got = [totals(r, fmt=f, carrier=c).get(s) for r in runs]
                cells.append(" / ".join(f"{g[0]}/{g[1]}" if g and g[1] else "-" for g in got))
            lines.append(f"| `{f}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if "--show" in argv:  # the tables of recorded figures, without scoring again
        print(table(json.loads(Path(argv[argv.index("--show") + 1]).read_text())))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from agentwatch.record import redact

    figures = score(redact.Policy(redact.REDACTED, bytes(range(32))))
    if "--write" in argv:
        FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if "--before" in argv:
        BEFORE.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    compare = json.loads(Path(argv[argv.index("--compare") + 1]).read_text()) if "--compare" in argv else None
    print(table(figures, compare))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
