"""CPU per event of `normalize.to_append` under `privacy = "full"` and `"redacted"`, on two mixes.

- the adapter mix: one realistic event per harness (tests/adapter_cases.py), most without secrets;
- the content mix: every sample of the fifth held-out corpus in each of its four carriers
  (tests/support/redaction_corpus5.py), files and command output that hold secret names.

Usage: `python tests/support/redaction_cost_mix.py [ROOT]`, ROOT a checkout of the project
(default: this one), so a run can put another branch beside this one on the same machine.
Figures are best-of-5 process CPU time; quote the ratio, not the microseconds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    root = argv[0] if argv else str(HERE.parents[1])
    sys.path[:0] = [root, root + "/tests", str(HERE)]
    import redaction_corpus5 as corpus5

    from agentwatch.record import normalize, redact
    from support.adapter_cases import CASES, envelope

    adapter_mix = [envelope(harness, name) for harness, name in CASES.items()]
    content_mix = [{"record_id": "0190f1c2-7a3b-7c1d-9e2f-3a4b5c6d7e8f", "harness": "claude-code",
                    "payload_text": json.dumps(corpus5.payload(carrier, s["path"], s["text"])),
                    "ts_observed_ns": 1, "ts_mono_ns": 1, "pid": 1, "ppid": 1, "delivery": "socket"}
                   for s in corpus5.load()["samples"] for carrier in corpus5.CARRIERS]
    full = redact.Policy(redact.FULL)
    redacted = redact.Policy(redact.REDACTED, bytes(range(32)))

    def per_event_us(policy: redact.Policy, envs: list[dict], rounds: int) -> float:
        for env in envs:
            normalize.to_append(dict(env), policy=policy)  # warm: rules compiled, caches filled
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            for _ in range(rounds):
                for env in envs:
                    normalize.to_append(dict(env), policy=policy)
            best = min(best, time.process_time() - start)
        return best / (rounds * len(envs)) * 1e6

    for name, envs, rounds in (("adapter mix", adapter_mix, 200), ("content mix", content_mix, 5)):
        f, r = per_event_us(full, envs, rounds), per_event_us(redacted, envs, rounds)
        print(f"{root}: {name} ({len(envs)} events): full {f:.1f} µs/event, redacted {r:.1f} µs/event, "
              f"ratio {r / f:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
