"""The store deleted while running, its WAL deleted after SIGKILL, the store replaced while stopped.

    make soak
    .venv/bin/python -m pytest -m soak -s soak/test_store_loss_soak.py

Each scenario runs AGENTWATCH_SOAK_STORE_CASES times (8) from AGENTWATCH_SOAK_SEED (20260), with
two sender threads and two real hook processes and the attack at a random moment; every case
ends with every acknowledged record stored or named by an accepted finding (tests/support/storeloss.py).
The short version is tests/test_store_loss_quick.py.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from support.storeloss import SCENARIOS, assert_gate, run_case

pytestmark = [pytest.mark.soak, pytest.mark.usefixtures("reap_daemons")]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_store_loss_many_times_under_load(tmp_path, scenario):
    cases = int(os.environ.get("AGENTWATCH_SOAK_STORE_CASES", "8"))
    seed = int(os.environ.get("AGENTWATCH_SOAK_SEED", "20260"))
    totals: Counter = Counter()
    refusals: Counter = Counter()
    for i in range(cases):
        root = tmp_path / f"case-{i}"
        result = run_case(root, scenario, seed=seed + i, up_s=(0.3, 3.0), socket_senders=2, hook_senders=2)
        print(f"\nseed {seed + i}: {result.line()}")
        assert_gate(result, root / "data" / "spool")
        refusals[result.refused_with] += 1
        for key in ("sent", "acked", "spooled", "stored", "named", "recovered", "lost", "duplicates", "seq_mismatch"):
            totals[key] += getattr(result, key)
    print(f"\n{scenario}: {cases} cases, start refused with exit codes {dict(refusals)}; {dict(totals)}")
    assert totals["lost"] == 0
