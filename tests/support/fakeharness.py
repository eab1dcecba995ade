"""A harness process for process-witness tests: it runs hooks and tool commands as a real harness does.

Claude Code runs each hook command through a shell (`/bin/sh -c COMMAND`, the hook's JSON on
stdin: docs/hook.md) and each Bash tool call as a child process of its own; this script does
both, as its own process, so the witness sees a real tree: harness -> sh -> hook client, and
harness -> bash -> the tool's command.

    python fakeharness.py SCRIPT.json

SCRIPT is a list of steps: {"hook": PAYLOAD} runs the hook with that payload (Claude Code's
hook input shape); {"run": COMMAND} runs `bash -c COMMAND` and waits; {"burst": N, "parallel": K}
runs /bin/true N times, K at a time; {"paced": RATE, "seconds": S} runs /bin/true RATE times a
second for S seconds (4 threads keep the pace) and writes the rate it reached to the file
{"report": PATH} names; {"signal": [PID, SIGNUM]} sends a signal (a test stops and
continues the daemon around a burst with it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "agentwatch", "hook.py")


def main(script_path: str) -> int:
    with open(script_path, encoding="utf-8") as f:
        steps = json.load(f)
    hook_command = f"{shlex.quote(sys.executable)} -I -S {shlex.quote(HOOK)} claude-code"
    for step in steps:
        if "hook" in step:
            subprocess.run(["/bin/sh", "-c", hook_command], input=json.dumps(step["hook"]).encode(), check=True)
        elif "run" in step:
            subprocess.run(["/bin/bash", "-c", step["run"]], check=False)
        elif "signal" in step:
            os.kill(*step["signal"])
        elif "paced" in step:
            rate = paced(step["paced"], step["seconds"])
            if step.get("report"):
                with open(step["report"], "w", encoding="utf-8") as f:
                    json.dump({"rate": rate}, f)
        elif "burst" in step:
            with ThreadPoolExecutor(step.get("parallel", 8)) as pool:
                list(pool.map(lambda _: subprocess.run(["/bin/true"]), range(step["burst"])))
    return 0


def paced(rate: float, seconds: float, threads: int = 4) -> float:
    """Run /bin/true `rate` times a second for `seconds`; returns the rate reached."""
    n = int(rate * seconds)
    t0 = time.monotonic()

    def worker(k: int) -> None:
        for i in range(k, n, threads):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            subprocess.run(["/bin/true"])

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, range(threads)))
    return n / (time.monotonic() - t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
