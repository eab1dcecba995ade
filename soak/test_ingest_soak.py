"""Ingest soak: 10,000 sends through real hook processes into a store pre-filled to 20,000 rows.

    make soak
    .venv/bin/python -m pytest -m soak -q -s soak/test_ingest_soak.py
    AGENTWATCH_SOAK_SENDS=2000 AGENTWATCH_SOAK_PREFILL=5000 AGENTWATCH_SOAK_SENDERS=4 ...

Lesson 1 of docs/architecture.md (a verifier under the append lock dropped ~10% of 10,000
events at 20,000 rows) run with the sweeper every 0.05 s; lesson 2 (a count
against shared state is a race) by a store the soak creates and owns and an
exact gate. The report (docs/soak.md) separates every boundary, each from its
own source. Shares support.ingest with tests/test_ingest_soak_quick.py.
"""

from __future__ import annotations

import os

import pytest
from support import ingest

pytestmark = pytest.mark.soak


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def test_ten_thousand_sends_are_stored_exactly_once(tmp_path):
    config = ingest.SoakConfig(
        prefill=_env_int("AGENTWATCH_SOAK_PREFILL", 20_000),
        sends=_env_int("AGENTWATCH_SOAK_SENDS", 10_000),
        senders=_env_int("AGENTWATCH_SOAK_SENDERS", 8),
        verify_interval=float(os.environ.get("AGENTWATCH_SOAK_VERIFY_INTERVAL", "0.05")),
        attest_interval=1.0,
        short_deadline_every=_env_int("AGENTWATCH_SOAK_SHORT_DEADLINE_EVERY", 50),
    )
    report = ingest.run(tmp_path / "soak", config)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert report.stored == report.ledger_ids == config.sends
    assert report.by_kind["event"] == config.prefill + config.sends
