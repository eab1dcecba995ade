"""Intruder soak: a second writer and forged rows under load from real hook processes (issue #24).

    make soak
    .venv/bin/python -m pytest -m soak -q -s soak/test_intruder_soak.py

Shares support/intruder.py with tests/test_intruder_soak_quick.py; the gate is the same.
"""

from __future__ import annotations

import os

import pytest
from support import intruder

pytestmark = pytest.mark.soak


def test_forged_rows_and_second_writers_under_load_are_all_named(tmp_path):
    config = intruder.IntruderConfig(
        prefill=int(os.environ.get("AGENTWATCH_SOAK_PREFILL", 5_000)),
        sends=int(os.environ.get("AGENTWATCH_SOAK_SENDS", 2_000)),
        senders=int(os.environ.get("AGENTWATCH_SOAK_SENDERS", 8)),
        forged_batches=100, second_serves=20)
    report = intruder.run(tmp_path / "soak", config)
    print(f"\n{report.summary()}")
    assert report.problems() == []
    assert report.stored == config.sends + 1
    assert len(report.forged_seqs) == 200
