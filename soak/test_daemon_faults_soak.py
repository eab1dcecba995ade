"""Daemon-level fault soaks: many SIGKILLs under load, SIGSTOP cycles, disk full cycles.

    make soak
    .venv/bin/python -m pytest -m soak -s soak/test_daemon_faults_soak.py

Short versions run in the default suite (tests/test_daemon_faults.py); the harness
is tests/support/faultload.py. AGENTWATCH_SOAK_KILLS and AGENTWATCH_SOAK_SEED change the run.
"""

from __future__ import annotations

import os

import pytest
from support.daemon import Daemon
from support.faultload import assert_gate, kill_under_load

pytestmark = [pytest.mark.soak, pytest.mark.usefixtures("reap_daemons")]


def test_sigkill_many_times_under_load(tmp_path):
    kills = int(os.environ.get("AGENTWATCH_SOAK_KILLS", "60"))
    seed = int(os.environ.get("AGENTWATCH_SOAK_SEED", "20260"))
    run = kill_under_load(tmp_path, kills=kills, seed=seed, socket_senders=3, hook_senders=2)
    print(f"\nseed {seed}: {run.line()}")
    assert_gate(run.figures, Daemon(tmp_path))
    assert run.kills >= 50
