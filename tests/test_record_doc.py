"""docs/record.md and the adapters describe the same record (docs drift otherwise)."""

from __future__ import annotations

import re
from pathlib import Path

from test_adapters import CASES, envelope

from agentwatch.record import normalize
from agentwatch.record.adapters import HARNESSES, _common, adapter_for

DOC = (Path(__file__).parent.parent / "docs" / "record.md").read_text(encoding="utf-8")


def documented_kinds() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for line in DOC.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in HARNESSES:
            for name in re.findall(r"`([^`]+)`", cells[2]):
                table.setdefault(cells[0], {})[name] = cells[1]
    return table


def test_event_kind_table_matches_the_adapters():
    assert documented_kinds() == {h: dict(adapter_for(h).KINDS) for h in HARNESSES}


def test_every_kind_and_category_is_documented():
    for name in _common.KINDS + _common.CATEGORIES:
        assert f"| `{name}` |" in DOC, name


def keys(value: dict, prefix: str = ""):
    for key, item in value.items():
        path = f"{prefix}{key}"
        if key in ("raw", "raw_moved", "client", "argv", "input", "response"):
            yield path
        elif isinstance(item, dict):
            yield from keys(item, path + ".")
        else:
            yield path


def test_every_field_the_fixtures_produce_is_documented():
    seen = set()
    for path in CASES:
        seen.update(keys(normalize.record_document(envelope(path))))
    missing = sorted(k for k in seen if f"`{k}`" not in DOC)
    assert missing == []


def capability_rows() -> dict[str, list[str]]:
    rows = {}
    section = DOC.split("## What each harness can tell us", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in HARNESSES:
            rows[cells[0]] = cells
    return rows


def test_the_capability_table_matches_the_installers_and_the_sessions():
    from test_harness_sessions import load

    from agentwatch.install import cline
    from agentwatch.install.harnesses import JSON_HARNESSES

    rows = capability_rows()
    assert sorted(rows) == sorted(HARNESSES)
    for harness, (_, events, pairs, outcomes, _cannot, since) in rows.items():
        registered = cline.EVENTS if harness == "cline" else JSON_HARNESSES[harness].select((999, 0, 0))[0]
        spec = JSON_HARNESSES.get(harness)
        gates = [v for _, v in spec.gated] + [spec.modern_since] if spec else []
        gates = [v for v in gates if v is not None]
        assert since == (".".join(map(str, max(gates))) if gates else "any with hooks"), harness
        assert re.findall(r"`([^`]+)`", events) == registered, harness
        calls = load(harness)["expect"]["tool_calls"]
        assert re.findall(r"`([^`]+)`", pairs) == sorted({c["paired_by"] for c in calls}), harness
        assert sorted(re.findall(r"`([^`]+)`", outcomes)) == sorted({c["outcome"] for c in calls}), harness
