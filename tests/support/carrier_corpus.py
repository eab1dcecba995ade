"""Scoring shared by the held-out corpora stored in carriers (the sixth and later): each sample
as a Claude Code PostToolUse payload in four carriers (a command line, its output, a file read,
an MCP tool's input), judged by the leak rule of tests/support/redaction_corpus6_extract.py.
Each corpus's scorer (redaction_corpus6.py, redaction_corpus7.py, ...) describes its corpus and
names its number and sources; `scorer` gives it the rest. The helpers at the end are the checks
the corpora's tests share."""

from __future__ import annotations

import gzip
import importlib
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction_corpus6_extract import leaked, scorable  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "redaction"
CARRIERS = ("command", "output", "file-read", "mcp-input")
SETS = {"upstream-positive": "recall", "benign": "benign left intact",
        "upstream-negative": "upstream negatives left intact",
        "not-secret": "not secrets by this project's threat model, left intact"}


def load(corpus: Path) -> dict:
    with gzip.open(corpus, "rb") as f:
        return json.loads(f.read())


def payload(carrier: str, path: str, text: str, fmt: str = "", session: str = "corpus") -> dict:
    """A Claude Code PostToolUse hook payload holding the text in one carrier."""
    where = "/home/dev/project/" + path
    base = {"session_id": session, "hook_event_name": "PostToolUse", "cwd": "/home/dev/project"}
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


def record(sample: dict, carrier: str, session: str = "corpus") -> dict:
    return {"schema": 1, "raw": payload(carrier, sample["path"], sample["text"], sample["format"], session)}


def outcome(policy, sample: dict, carrier: str, session: str = "corpus", data: bytes | None = None) -> bool:
    """Is the sample caught (a positive) or left intact (the rest) in this carrier? `data` is the
    record as `policy.encode` stored it, when already encoded."""
    doc = record(sample, carrier, session)
    stored = json.loads(policy.encode(doc) if data is None else data)
    if sample["set"] == "upstream-positive":
        text = "\n".join(_strings(stored))
        return not any(leaked(text, secret) for secret in sample["secrets"])
    return stored == doc


_STORED: dict[tuple[Path, str, int], tuple[object, list[tuple[dict, str, dict, bytes]]]] = {}


def stored(policy, corpus: Path, session: str = "corpus") -> list[tuple[dict, str, dict, bytes]]:
    """(sample, carrier, record, policy.encode(record)) for every sample in every carrier, encoded
    once per policy object and run: the figures and the fast-path check of a corpus read the same
    bytes instead of encoding the corpus twice."""
    key = (Path(corpus), session, id(policy))
    if key not in _STORED or _STORED[key][0] is not policy:
        rows = [(sample, carrier, doc, policy.encode(doc))
                for sample in load(corpus)["samples"] for carrier in CARRIERS
                for doc in (record(sample, carrier, session),)]
        _STORED[key] = (policy, rows)  # the policy is kept, so its id is not reused while the entry lives
    return _STORED[key][1]


def score(policy, corpus: Path, session: str = "corpus") -> dict:
    """{set: {"source:format|carrier": [ok, total]}} and the failing samples (set, type, carrier, source)."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failures: list[str] = []
    for sample, carrier, _, data in stored(policy, corpus, session):
        ok = outcome(policy, sample, carrier, session, data)
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


def table(figures: dict, sources: tuple[str, ...], compare: dict | None = None) -> str:
    """Markdown: totals by source and by carrier, then format x carrier for each set. A cell counts
    samples in carriers: a source's or format's row sums its four carriers."""
    runs = [compare, figures] if compare else [figures]
    cols = ["before", "after"] if compare else ["figure"]
    lines = ["| set | source or carrier | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for s in SETS:
        rows = [{"source": p} for p in sources] + [{"carrier": c} for c in CARRIERS] + [{}]
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


def main(argv: list[str], corpus: Path, figures_path: Path, before_path: Path, sources: tuple[str, ...],
         session: str) -> int:
    """The command line of a corpus's scorer (its module docstring says what each flag does)."""
    if "--show" in argv:  # the tables of recorded figures, without scoring again
        print(table(json.loads(Path(argv[argv.index("--show") + 1]).read_text()), sources))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from agentwatch.record import redact

    figures = score(redact.Policy(redact.REDACTED, bytes(range(32))), corpus, session)
    if "--write" in argv:
        figures_path.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if "--before" in argv:
        before_path.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    compare = json.loads(Path(argv[argv.index("--compare") + 1]).read_text()) if "--compare" in argv else None
    print(table(figures, sources, compare))
    return 0


@dataclass(frozen=True)
class CarrierCorpus:
    """One corpus stored in carriers: its number names its fixture, its figures and the session of
    its records; its sources are the rows of its tables."""

    number: int
    sources: tuple[str, ...]

    @property
    def corpus(self) -> Path:
        return HERE / f"corpus{self.number}.json.gz"

    @property
    def figures(self) -> Path:
        return HERE / f"figures{self.number}.json"

    @property
    def before(self) -> Path:
        return HERE / f"figures{self.number}-before.json"

    @property
    def session(self) -> str:
        return f"corpus{self.number}"

    def load(self) -> dict:
        return load(self.corpus)

    def payload(self, carrier: str, path: str, text: str, fmt: str = "") -> dict:
        return payload(carrier, path, text, fmt, self.session)

    def record(self, sample: dict, carrier: str) -> dict:
        return record(sample, carrier, self.session)

    def score(self, policy) -> dict:
        return score(policy, self.corpus, self.session)

    def stored(self, policy) -> list[tuple[dict, str, dict, bytes]]:
        return stored(policy, self.corpus, self.session)

    def table(self, figures: dict, compare: dict | None = None) -> str:
        return table(figures, self.sources, compare)

    def main(self, argv: list[str]) -> int:
        return main(argv, self.corpus, self.figures, self.before, self.sources, self.session)


def scorer(namespace: dict, number: int, sources: tuple[str, ...]) -> CarrierCorpus:
    """Fills a corpus's scorer module (`namespace` is its globals()) with the names its tests and
    command line use: CORPUS, FIGURES, BEFORE, SOURCES, SESSION, load, payload, record, score,
    stored, table, main, and the shared CARRIERS, HERE, SETS, totals."""
    corpus = CarrierCorpus(number, sources)
    namespace.update(
        CORPUS=corpus.corpus, FIGURES=corpus.figures, BEFORE=corpus.before, SOURCES=corpus.sources,
        SESSION=corpus.session, load=corpus.load, payload=corpus.payload, record=corpus.record,
        score=corpus.score, stored=corpus.stored, table=corpus.table, main=corpus.main,
        CARRIERS=CARRIERS, HERE=HERE, SETS=SETS, totals=totals)
    return corpus


def check_recorded(corpus_module, policy) -> None:
    """The rules in the tree reproduce the corpus's recorded figures sample by sample (its FIGURES)."""
    recorded = json.loads(corpus_module.FIGURES.read_text())
    measured = corpus_module.score(policy)
    assert measured["failures"] == recorded["failures"]
    assert measured["counts"] == recorded["counts"]


def check_fast_path(corpus_module, policy) -> None:
    """Every sample in every carrier: the fast path's bytes (policy.encode) are the full walk's."""
    from agentwatch.store.chain import canonical_json as _canonical_json

    samples = corpus_module.load()["samples"]
    rows = corpus_module.stored(policy)  # POLICY.encode of each record, shared with the figures' test
    assert [(sample["source"], carrier) for sample, carrier, _, _ in rows] == [
        (sample["source"], carrier) for sample in samples for carrier in CARRIERS]
    for sample, carrier, doc, data in rows:
        assert doc == corpus_module.record(sample, carrier)
        assert data == _canonical_json(policy.apply(doc)), (sample["source"], carrier)


def words(text: str, secret: str) -> int:
    """How many times the secret stands in the text as a word."""
    return len(re.findall(rf"(?<![A-Za-z0-9_]){re.escape(secret)}(?![A-Za-z0-9_])", text))


def by_source(samples: list[dict], in_set: str = "") -> Counter:
    """Samples per source (the part of a type before its format), of one set or of all."""
    return Counter(s["type"].split(":")[0] for s in samples if not in_set or s["set"] == in_set)


def check_samples(data: dict, number: int, formats: int, uses: Callable[[str, str], int] = words,
                  sets: tuple[str, ...] = ("upstream-positive",)) -> None:
    """Every sample names its source under one of the corpus's upstream commits (one sample a
    source), its format (in its type, `formats` of them) and, in `sets`, its secrets: each in its
    text, standing there `uses(text, secret)` times, scorable, and none of them the session's name."""
    samples = data["samples"]
    assert all(s["source"].startswith(tuple(u + ":" for u in data["upstream"])) for s in samples)
    assert len({s["source"] for s in samples}) == len(samples)  # one source, one sample
    assert all(s["type"] == s["type"].split(":")[0] + ":" + s["format"] for s in samples)
    assert len({s["format"] for s in samples}) == formats
    for s in samples:
        if s["set"] in sets:
            # every secret is in its text, and masking it there would leave none of it in the carrier
            assert s["secrets"] and all(scorable(s["text"], s["path"], x, uses(s["text"], x)) for x in s["secrets"]), (
                s["source"])
            assert f"corpus{number}" not in s["secrets"]


def corpus_by_number(number: int):
    """The scorer module of a corpus by its number (the first corpus's is redaction_corpus.py)."""
    return importlib.import_module("redaction_corpus" + ("" if number == 1 else str(number)))


def earlier_texts(numbers: Iterable[int]) -> str:
    """The texts of the corpora numbered, one after another, between lines holding a NUL."""
    return "\n\x00\n".join(s["text"] for n in numbers for s in corpus_by_number(n).load()["samples"])


def check_none_earlier(samples: list[dict], numbers: Iterable[int]) -> None:
    """No text of these samples, nor a secret of 8 characters or more, is in a text of the corpora numbered."""
    before = earlier_texts(numbers)
    assert not [s["source"] for s in samples if s["text"] in before]
    assert not [s["source"] for s in samples for x in s.get("secrets", []) if len(x) >= 8 and x in before]


def check_command_writes(module, samples: list[dict], fmt: str, in_set: str = "") -> None:
    """A sample of the format that is no shell command line (of one set, or any) is carried as the
    command that writes its file."""
    sample = next(s for s in samples if s["format"] == fmt and (not in_set or s["set"] == in_set))
    command = module.payload("command", sample["path"], sample["text"], fmt)["tool_input"]["command"]
    assert command == f"cat > /home/dev/project/{sample['path']} <<'EOF'\n{sample['text']}\nEOF"
