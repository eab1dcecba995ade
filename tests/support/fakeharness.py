"""A harness process for process-witness tests: it runs hooks and tool commands as a real harness does.

Claude Code runs each hook command through a shell (`/bin/sh -c COMMAND`, the hook's JSON on
stdin: docs/hook.md) and each Bash tool call as a child process of its own; this script does
both, as its own process, so the witness sees a real tree: harness -> sh -> hook client, and
harness -> bash -> the tool's command.

    python fakeharness.py SCRIPT.json

SCRIPT is a list of steps: {"hook": PAYLOAD} runs the hook with that payload (Claude Code's
hook input shape); {"run": COMMAND} runs `bash -c COMMAND` and waits; {"burst": N, "parallel": K}
runs /bin/true N times, K at a time; {"signal": [PID, SIGNUM]} sends a signal (a test stops and
continues the daemon around a burst with it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
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
        elif "burst" in step:
            with ThreadPoolExecutor(step.get("parallel", 8)) as pool:
                list(pool.map(lambda _: subprocess.run(["/bin/true"]), range(step["burst"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
