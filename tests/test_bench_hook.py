"""Hook client wall time against bare interpreter start-up, measured in the same run.

Each run is a real process, as a harness spawns it: `python -I -S hook.py
claude-code` with a 1.5 KB PostToolUse payload on stdin, acknowledged by a
fake daemon (no store behind it), its socket named once by AGENTWATCH_SOCKET and
once by the config file, versus `python -I -S -c pass` with the same
interpreter. Runs alternate, so both see the same machine load. Figures are
printed (p50, p99 and their ratios; target p50 ratio <= 1.5), never asserted.
Run with `make bench`; AGENTWATCH_BENCH_RUNS sets the number of runs (default 300).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.hook_fakes import FakeDaemon, SocketDir, hook_cmd

from agentwatch import config as agentwatch_config

pytestmark = pytest.mark.bench

PAYLOAD = json.dumps(
    {
        "session_id": "3f1c6a52-2d7e-4c55-9b1e-6a8f0d2c7e41",
        "transcript_path": "/home/dev/.claude/projects/p/3f1c6a52.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls -la src", "description": "List files"},
        "tool_response": {
            "stdout": "total 48\n" + "-rw-r--r-- 1 dev dev 1234 a.py\n" * 30,
            "stderr": "",
            "interrupted": False,
        },
        "tool_use_id": "toolu_01ABCDEF",
    }
).encode()


def _percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def _time(cmd: list[str], env: dict, stdin: bytes) -> float:
    start = time.perf_counter_ns()
    done = subprocess.run(cmd, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return elapsed


def _figures(label: str, values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    p50, p99 = _percentile(values, 0.50), _percentile(values, 0.99)
    print(f"  {label:<34} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   (n={len(values)})")
    return p50, p99


def test_hook_wall_time_against_bare_interpreter(request):
    config = request.config
    if config.getoption("benchmark_disable", False) and not config.getoption("benchmark_enable", False):
        pytest.skip("benchmark: run with `make bench`")
    runs = int(os.environ.get("AGENTWATCH_BENCH_RUNS", "300"))
    bare_cmd = [sys.executable, "-I", "-S", "-c", "pass"]
    warmup = 10
    with SocketDir() as directory, FakeDaemon(directory / "agentwatch.sock") as daemon:
        env = dict(os.environ, AGENTWATCH_SOCKET=str(directory / "agentwatch.sock"))
        # The same socket named by the config file instead (docs/deployment.md step 4's form).
        config_file = directory / "config.toml"
        config_file.write_text(f'store = "{directory}/store.db"\nsocket = "{directory}/agentwatch.sock"\n\n'
                               f'[checkpoint]\nwitness_dirs = ["{directory}/witness"]\n')
        config_file.chmod(0o600)
        file_env = dict(os.environ, AGENTWATCH_CONFIG=str(config_file))
        bare, acked, from_file = [], [], []
        for i in range(warmup + runs):
            b = _time(bare_cmd, env, PAYLOAD)
            h = _time(hook_cmd("claude-code"), env, PAYLOAD)
            f = _time(hook_cmd("claude-code"), file_env, PAYLOAD)
            if i >= warmup:
                bare.append(b)
                acked.append(h)
                from_file.append(f)
        assert len(daemon.lines) == 2 * (warmup + runs)  # every run acknowledged, none spooled
    assert not (agentwatch_config.load().spool / "new").exists()

    # The fallback path, for orientation: no daemon, each record fsync'd into the spool.
    down_env = dict(os.environ, AGENTWATCH_SOCKET=str(directory / "gone.sock"))
    spooled = [_time(hook_cmd("claude-code"), down_env, PAYLOAD) for _ in range(max(50, runs // 4))]
    assert len(list((agentwatch_config.load().spool / "new").iterdir())) == len(spooled)

    print(f"\nhook client wall time, {os.cpu_count()} CPUs, {sys.version.split()[0]}:")
    bare50, bare99 = _figures("python -I -S -c pass", bare)
    hook50, hook99 = _figures("hook.py, acked by a fake daemon", acked)
    file50, file99 = _figures("hook.py, socket from config file", from_file)
    _figures("hook.py, no daemon (spooled)", spooled)
    print(f"  ratio acked/bare: p50 {hook50 / bare50:.2f}x   p99 {hook99 / bare99:.2f}x   (target p50 <= 1.5x)")
    print(f"  ratio config file/bare: p50 {file50 / bare50:.2f}x   p99 {file99 / bare99:.2f}x   (target p50 <= 1.5x)")
