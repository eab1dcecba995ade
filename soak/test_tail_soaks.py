"""Live-tail soaks at full size (`make soak`); tests/test_tail_soaks_quick.py runs them small.

AGENTWATCH_SOAK_EVENTS (5000) and AGENTWATCH_SOAK_KILLS (5) size them.
"""

from __future__ import annotations

import os

import pytest
from support import tail_soaks

EVENTS = int(os.environ.get("AGENTWATCH_SOAK_EVENTS", "5000"))
KILLS = int(os.environ.get("AGENTWATCH_SOAK_KILLS", "5"))


@pytest.mark.soak
def test_drop_consumer_reconciliation(tmp_path):
    tail_soaks.drop_consumer(tmp_path, events=EVENTS, kills=KILLS, rate=1000.0)


@pytest.mark.soak
def test_crash_soak(tmp_path):
    tail_soaks.crash(tmp_path, events=EVENTS, kills=KILLS)
