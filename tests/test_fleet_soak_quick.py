"""The fleet soak, short: three recorders, 60 real hook events each, one daemon SIGKILLed midway and
the PostgreSQL server restarted, then rows erased before and after they ship; every record central exactly
once (erased ones `null` on both sides), every chain verified there.

The full run (10,000 events per recorder) is soak/test_fleet_soak.py; both use
tests/support/fleet_soak.py, so the gate is the same.
"""

from __future__ import annotations

from support import fleet_soak, postgres


def test_three_recorders_ship_through_a_daemon_crash_and_a_server_restart(tmp_path):
    bindir = postgres.require_binaries()
    config = fleet_soak.FleetSoakConfig(recorders=3, events=60, senders=2)
    report = fleet_soak.run(tmp_path / "soak", config, bindir)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert [r.ledger_ids for r in report.recorders] == [60, 66, 60]
    assert [len(r.erased) for r in report.recorders] == [0, 6, 0]
    assert [r.central_rows for r in report.recorders] == [r.local_rows for r in report.recorders]
