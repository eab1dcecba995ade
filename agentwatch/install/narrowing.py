"""A re-install never silently narrows what agentwatch records.

The events an install registers depend on the harness version it reads
(versions.py). Run again when that version cannot be read (the CLI is not on
PATH in this shell, or prints nothing), the plain selection would be the
events every hooks-capable build accepts, and writing it would drop the
failure, denial and subagent events an earlier install registered: from then
on those calls would show `open`. So:

- version unknown: every event of ours already in the file stays (the harness
  accepted that config before), and the selection is added to it, in the same
  mode (Cursor: tool events or per-action events, never both, which would
  record each call twice);
- version known and the selection drops installed events (a downgrade): that
  is a narrowing, refused unless the caller asks for it (`install --narrow`),
  because the harness may reject the wider config but the user must choose to
  record less. Replacing Cursor's per-action events by its tool events (an
  upgrade past 2.4), or an event name by the one that replaced it, is not a
  narrowing: each dropped event has a successor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .harnesses import JsonHarness
from .versions import Version


@dataclass
class Plan:
    events: list[str]  # what the file will hold, in the spec's order
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    narrowed: list[str] = field(default_factory=list)  # removed without a successor: needs --narrow
    notes: list[str] = field(default_factory=list)


def plan(spec: JsonHarness, version: Version | None, selected: list[str], installed: list[str]) -> Plan:
    """Reconcile the version's selection with the events of ours already installed."""
    known = spec.all_events()
    mine = [e for e in installed if e in known]
    notes: list[str] = []
    events = list(selected)
    modern_only = set(spec.events) - set(spec.legacy_events or spec.events)
    if version is None and mine:
        if spec.legacy_events is not None and modern_only & set(mine):
            # The file holds the tool events of a build that has them: stay in that mode.
            events = list(spec.events)
        kept = [e for e in mine if e not in events and e not in spec.retired]
        if kept:
            notes.append(f"{spec.name} version unknown: kept the events installed earlier ({', '.join(kept)}); "
                         "run install again where its CLI is on PATH to check them")
        events = events + kept
    removed = [e for e in mine if e not in events]
    superseded = set(spec.legacy_events or []) - set(events) if modern_only & set(events) else set()
    superseded |= {old for old, new in spec.retired.items() if new in events}
    narrowed = [e for e in removed if e not in superseded]
    added = [e for e in events if e not in mine]
    return Plan(events, added, removed, narrowed, notes)


def refusal(spec: JsonHarness, found: str, result: Plan) -> str:
    return (f"{spec.name}: {found}, so this install would stop recording {', '.join(result.narrowed)} "
            "(installed earlier); nothing changed. Run `agentwatch install "
            f"{spec.name} --narrow` to remove them, or update the harness")
