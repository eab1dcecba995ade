"""How the normalizing workers start (docs/daemon.md, "Normalizing workers"): each compiles every
pattern of the built-in rules before it says it is ready, and the daemon launches them early in
its own startup, so a startup that fails after that must not leave them behind."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

from support.daemon import wait_for
from test_health_sweeper import BrokenRedactorDaemon

# A fresh process: every lazily compiled pattern that exists is the built-in rules', and none
# is compiled yet; after compile_builtin() none is left to compile and each was counted once.
_COUNT_LAZY = """
import gc
from agentwatch.record.redact import rules

def lazy():
    return [o for o in gc.get_objects() if isinstance(o, rules._Lazy)]

rules.builtin()
before = sum(o._compiled is None for o in lazy())
compiled = rules.compile_builtin()
print(len(lazy()), before, compiled, sum(o._compiled is None for o in lazy()), rules.compile_builtin())
"""


def test_compile_builtin_compiles_every_lazy_pattern_of_the_rules():
    done = subprocess.run([sys.executable, "-c", _COUNT_LAZY], capture_output=True, text=True, check=True)
    total, uncompiled_before, compiled, uncompiled_after, again = map(int, done.stdout.split())
    assert total > 0
    assert (uncompiled_before, compiled, uncompiled_after) == (total, total, 0)
    assert again == total  # asked again, it counts the same patterns (already compiled: no work)


def _tagged(tag: str) -> dict[int, bytes]:
    """Live processes whose environment carries `tag` (the daemon's children inherit it): pid, command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if state != "Z" and f"AGENTWATCH_TEST_TAG={tag}".encode() in environ.split(b"\0"):
            found[int(entry.name)] = cmdline
    return found


def test_a_start_refused_after_the_workers_were_launched_leaves_no_worker(tmp_path, monkeypatch):
    """The workers are launched before the redaction self-test; when it fails (exit 2) they end too."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv("AGENTWATCH_TEST_TAG", tag)
    refused = BrokenRedactorDaemon(tmp_path / "refused", extra_args=["--normalize-workers", "2"])
    refused.spawn()
    workers: set[int] = set()
    while refused.proc.poll() is None:  # the self-test runs for a good part of a second: they are seen
        workers |= {pid for pid, cmd in _tagged(tag).items() if b"agentwatch.daemon.workers" in cmd}
        time.sleep(0.002)
    assert refused.wait() == 2
    assert "redaction self-test failed" in refused.output()
    assert not refused.socket.exists()
    assert len(workers) == 2
    wait_for(lambda: _tagged(tag) == {}, "the launched workers to end")
