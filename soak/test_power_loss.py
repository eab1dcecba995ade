"""Power-loss soak: at least 1,000 simulated crashes with the product's durability settings.

    make soak                                   # everything under soak/
    AGENTWATCH_SOAK_CRASHES=5000 AGENTWATCH_SOAK_SEED=7 .venv/bin/python -m pytest -m soak -s soak/test_power_loss.py

Prints the figures docs/reliability.md quotes. Each run owns its stores, in a temp dir.
"""

from __future__ import annotations

import os
import time

import pytest
from support import powerloss

pytestmark = pytest.mark.soak

CRASHES = int(os.environ.get("AGENTWATCH_SOAK_CRASHES", "1000"))
SEED = int(os.environ.get("AGENTWATCH_SOAK_SEED", "20260"))


def test_power_loss_loses_no_acknowledged_record(tmp_path):
    started = time.monotonic()
    report = powerloss.run(tmp_path, crashes=CRASHES, seed=SEED)
    print(f"\n{report.summary()}\n({time.monotonic() - started:.1f} s)")
    assert report.crashes == CRASHES
    assert report.failures == 0, report.problems
    assert report.acks_lost == 0 and report.acked_checked > 0


def test_control_without_sync_does_lose_records(tmp_path):
    crashes = max(CRASHES // 5, 30)
    report = powerloss.run(tmp_path, crashes=crashes, seed=SEED, synchronous="OFF")
    print(f"\n{report.summary()}")
    assert report.crashes_losing_acks > 0 and report.acks_lost > 0
