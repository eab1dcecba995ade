"""Live-tail soaks at full size (`make soak`); tests/test_tail_soaks_quick.py runs them small.

AGENTWATCH_SOAK_EVENTS (5000) and AGENTWATCH_SOAK_KILLS (5) size them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import tail_soaks  # noqa: E402

EVENTS = int(os.environ.get("AGENTWATCH_SOAK_EVENTS", "5000"))
KILLS = int(os.environ.get("AGENTWATCH_SOAK_KILLS", "5"))


@pytest.mark.soak
def test_drop_consumer_reconciliation(tmp_path):
    tail_soaks.drop_consumer(tmp_path, events=EVENTS, kills=KILLS, rate=1000.0)


@pytest.mark.soak
def test_crash_soak(tmp_path):
    tail_soaks.crash(tmp_path, events=EVENTS, kills=KILLS)
