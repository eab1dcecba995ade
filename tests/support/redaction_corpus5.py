"""Score the redaction rules on the fifth held-out corpus (tests/fixtures/redaction/corpus5.json.gz), per carrier.

The corpus is whole files and lines of text formats from GitGuardian/sample_secrets,
detect-secrets' test_data and checkov's secrets sanity sets
(tests/support/redaction_corpus5_extract.py builds it; every sample names its source
and its path). Unlike the earlier corpora, each sample is stored in the four carriers an
agent's record holds text in, as a Claude Code hook payload (docs/harnesses.md):

- `command`: a Bash command line that writes the file (`cat > PATH <<'EOF' ... EOF`);
- `output`: the output of `cat PATH` (`tool_response.stdout`);
- `file-read`: a Read of PATH (`tool_response.file.content`);
- `mcp-input`: an MCP tool's input (`mcp__filesystem__write_file` with `path`, `content`).

A positive is caught in a carrier when no 12-character piece of any of its secrets is
left in the stored record (the first corpus's rule); a negative is intact when the
record is stored unchanged. Figures are per set, type (`source:format`) and carrier.
`python tests/support/redaction_corpus5.py --write` records figures5.json;
`--write-before` records figures5-before.json; `--before FILE` adds that column.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout_corpus import SETS, _cell  # noqa: E402
from redaction_corpus import leaked  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
CORPUS = HERE / "corpus5.json.gz"
FIGURES = HERE / "figures5.json"
BEFORE = HERE / "figures5-before.json"
SOURCES = ("gitguardian", "detect-secrets", "checkov")
CARRIERS = ("command", "output", "file-read", "mcp-input")


def load() -> dict:
    with gzip.open(CORPUS, "rb") as f:
        return json.loads(f.read())


def payload(carrier: str, path: str, text: str) -> dict:
    """A Claude Code PostToolUse hook payload holding the text in one carrier."""
    where = "/home/dev/project/" + path
    base = {"session_id": "corpus5", "hook_event_name": "PostToolUse", "cwd": "/home/dev/project"}
    if carrier == "command":
        return {**base, "tool_name": "Bash",
                "tool_input": {"command": f"cat > {where} <<'EOF'\n{text}\nEOF", "description": "write the file"},
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


def outcome(policy, sample: dict, carrier: str) -> bool:
    doc = {"schema": 1, "raw": payload(carrier, sample["path"], sample["text"])}
    stored = json.loads(policy.encode(doc))
    if sample["set"] == "upstream-positive":
        text = "\n".join(_strings(stored))
        return not any(leaked(text, secret) for secret in sample["secrets"])
    return stored == doc


def score(policy) -> dict:
    """{set: {"type|carrier": [ok, total]}} and the failing samples (set, type, carrier, source)."""
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


def totals(figures: dict, prefix: str = "", carrier: str = "") -> dict[str, tuple[int, int]]:
    return {s: (sum(c[0] for k, c in t.items() if k.startswith(prefix) and k.endswith("|" + carrier if carrier else "")),
                sum(c[1] for k, c in t.items() if k.startswith(prefix) and k.endswith("|" + carrier if carrier else "")))
            for s, t in figures["counts"].items()}


def table(figures: dict, before: dict | None = None) -> str:
    """Markdown: totals by source and by carrier, then format x carrier for each set."""
    runs = [before, figures] if before else [figures]
    cols = ["before", "after"] if before else ["figure"]
    lines = ["| set | source or carrier | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for s in SETS:
        rows = [(p + ":", "", p) for p in SOURCES] + [("", c, c) for c in CARRIERS] + [("", "", "all")]
        for prefix, carrier, name in rows:
            cells = [_cell(totals(r, prefix, carrier).get(s)) for r in runs]
            if cells[-1] != "-":
                lines.append(f"| {SETS[s]} | {name} | " + " | ".join(cells) + " |")
    for s in SETS:
        types = sorted({k.split("|")[0] for k in figures["counts"].get(s, {})})
        if not types:
            continue
        lines += ["", f"**{SETS[s]}, format x carrier** ({' / '.join(cols)})", "",
                  "| type | " + " | ".join(CARRIERS) + " |", "|---|" + "---|" * len(CARRIERS)]
        for t in types:
            cells = []
            for c in CARRIERS:
                got = [r["counts"].get(s, {}).get(f"{t}|{c}") for r in runs]
                cells.append(" / ".join(f"{g[0]}/{g[1]}" if g else "-" for g in got))
            lines.append(f"| `{t}` | " + " | ".join(cells) + " |")
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
