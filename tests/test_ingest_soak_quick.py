"""The ingest soak, short: 200 real hook processes from 4 senders into a pre-filled store.

The full run (10,000 sends into 20,000 rows) is soak/test_ingest_soak.py; both
use support.ingest, so the gate is the same: stored == sent exactly
(by record_id set, pre-filled rows and attestations excluded), nothing twice,
every acknowledged seq stored, the chain verifies, reconcile holds.
"""

from __future__ import annotations

from support import ingest


def test_every_send_is_stored_exactly_once_with_the_sweeper_running(tmp_path):
    config = ingest.SoakConfig(prefill=2_000, sends=200, senders=4, verify_interval=0.05, attest_interval=0.5,
                                short_deadline_every=10)
    report = ingest.run(tmp_path / "soak", config)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert report.stored == report.ledger_ids == 200
    assert report.by_kind["event"] == 2_200
    # Beside the events, never counted as sends: one start, one stop, and the periodic rows
    # (as many as the run's length allows, every 0.5 s), and nothing else.
    periodic = report.attestations.get("periodic", 0)
    assert report.attestations == {"start": 1, "stop": 1, **({"periodic": periodic} if periodic else {})}
    assert report.by_kind["attestation"] == 2 + periodic
