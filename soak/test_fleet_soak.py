"""Fleet soak: three recorders each take 10,000 real hook events and ship them to one PostgreSQL.

    make soak
    .venv/bin/python -m pytest -m soak -q -s soak/test_fleet_soak.py
    AGENTWATCH_SOAK_FLEET_EVENTS=2000 AGENTWATCH_SOAK_FLEET_SENDERS=3 ...

Midway, recorder 0's daemon is SIGKILLed (its hooks spool until it is back) and
the PostgreSQL server is restarted in immediate mode (crash recovery). Then
recorder 1 erases rows after they shipped and rows before they ship.
Afterwards every record is in the central copy exactly once, equal to the
local row column for column (erased rows `null` on both sides), every source's
chain verifies in PostgreSQL, and
`reconcile --pg` has every source within bounds (tests/support/fleet_soak.py).
"""

from __future__ import annotations

import os

import pytest
from support import fleet_soak, postgres

pytestmark = pytest.mark.soak


def test_three_recorders_ship_thirty_thousand_hook_events_through_a_crash_and_a_restart(tmp_path):
    bindir = postgres.require_binaries()
    config = fleet_soak.FleetSoakConfig(
        recorders=3,
        events=int(os.environ.get("AGENTWATCH_SOAK_FLEET_EVENTS", 10_000)),
        senders=int(os.environ.get("AGENTWATCH_SOAK_FLEET_SENDERS", 2)),
    )
    report = fleet_soak.run(tmp_path / "soak", config, bindir)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert [r.ledger_ids for r in report.recorders] == [config.planned(i) for i in range(3)]
    assert [len(r.erased) for r in report.recorders] == [0, 2 * config.erase, 0]
