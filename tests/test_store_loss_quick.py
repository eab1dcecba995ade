"""The three destructive scenarios once each, short (soak/test_store_loss_soak.py runs many).

Real hook processes and sender threads record while the store is deleted under the daemon,
its WAL deleted after a SIGKILL, or the store replaced while the daemon is stopped; each
case ends with every acknowledged record stored or named by an accepted finding
(tests/support/storeloss.py, docs/reliability.md "Store identity").
"""

from __future__ import annotations

import pytest
from support.hook_fakes import SocketDir
from support.storeloss import SCENARIOS, assert_gate, run_case

pytestmark = pytest.mark.usefixtures("reap_daemons")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_acknowledged_record_is_stored_or_named(scenario):
    # A short root, removed afterwards: the daemon's socket is root/run/agentwatch.sock, and
    # AF_UNIX paths stop at 107 bytes (pytest's tmp_path under xdist comes within a few).
    with SocketDir() as short:
        result = run_case(short / scenario, scenario, seed=1, up_s=(0.8, 1.0))
        print("\n" + result.line())
        assert_gate(result, short / scenario / "data" / "spool")
