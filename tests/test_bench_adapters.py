"""Normalization cost per event, per adapter: normalize.to_append on a realistic
envelope (payload as the hook client sends it, unparsed text).

Printed next to a baseline measured in the same run on the same payload:
json.loads + canonical_json, the least any path to the store must do. Columns:
`to_append` (everything the daemon does before the store, redaction included),
`normalize` (record_document + canonical_json: decoding, the adapter, the
envelope fields), `adapter` (adapter.normalize on the parsed payload alone).
The table uses CPU time (time.process_time), which a busy machine distorts
less than wall time; pytest-benchmark's own table is wall time. Figures are
reported, never asserted. Run with `make bench`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.adapter_cases import CASES, envelope

from agentwatch.record import normalize, redact
from agentwatch.record.adapters import adapter_for
from agentwatch.store.chain import canonical_json

pytestmark = pytest.mark.bench

RESULTS: dict[str, tuple[int, float, float, float, float]] = {}


def per_call_us(fn, *args, n: int = 2000, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.process_time() - start) / n)
    return best * 1e6


def baseline(text: str) -> bytes:
    return canonical_json(json.loads(text))


def normalize_only(env: dict) -> bytes:
    return canonical_json(normalize.record_document(env))


@pytest.fixture(scope="module", autouse=True)
def table():
    yield
    if RESULTS:
        print("\n\nnormalization cost per event, µs of CPU (baseline = json.loads + canonical_json of the payload)")
        print(f"{'harness':<12} {'bytes':>5} {'to_append':>9} {'normalize':>9} {'adapter':>7} {'baseline':>8}"
              f" {'normalize/baseline':>18}")
        for harness, (size, total, norm, adapter, base) in RESULTS.items():
            print(f"{harness:<12} {size:>5} {total:>9.1f} {norm:>9.1f} {adapter:>7.1f} {base:>8.1f}"
                  f" {norm / base:>18.2f}")


@pytest.mark.parametrize("harness", list(CASES))
def test_to_append_cost(benchmark, harness):
    env = envelope(harness, CASES[harness])
    payload = json.loads(env["payload_text"])
    adapter = adapter_for(harness)
    hint = env.get("event")

    policy = redact.default_policy()  # resolved once, as the daemon does
    benchmark(normalize.to_append, env, policy=policy)
    total = per_call_us(lambda e: normalize.to_append(e, policy=policy), env)
    norm_us = per_call_us(normalize_only, env)
    adapter_us = per_call_us(adapter.normalize, payload, hint)
    base_us = per_call_us(baseline, env["payload_text"])
    RESULTS[harness] = (env["orig_bytes"], total, norm_us, adapter_us, base_us)
    benchmark.extra_info.update(
        cpu_us_to_append=round(total, 2), cpu_us_normalize=round(norm_us, 2),
        cpu_us_adapter=round(adapter_us, 2), cpu_us_baseline=round(base_us, 2),
    )


# -- instructions, counted: a figure this shared machine cannot blur ----------------------------

CALLS = 100
# Per harness and operation, one interpreter under callgrind; "none" does the set-up alone.
# About 10 s each here: the whole table takes about 4 minutes.
COUNT_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from support.adapter_cases import CASES, envelope
from agentwatch.record import normalize
from agentwatch.record import redact
from agentwatch.store.chain import canonical_json, reference_canonical_json
env = envelope(sys.argv[2], CASES[sys.argv[2]])
policy = redact.default_policy()
op, calls = sys.argv[3], int(sys.argv[4])
# Every run, "none" included, pays the first calls (lazy compiles, caches): counted once, subtracted.
normalize.to_append(dict(env, record_id="warm-up"), policy=policy)
canonical_json(json.loads(env["payload_text"]))
if op == "to_append":  # a new record_id per call, the payload the same
    for i in range(calls):
        normalize.to_append(dict(env, record_id=f"0190f1c2-7a3b-7c1d-9e2f-{i:012d}"), policy=policy)
elif op == "baseline":
    for i in range(calls):
        canonical_json(json.loads(env["payload_text"]))
elif op == "reference":  # the same with the reference encoder (docs/chain.md), without the compiled codec
    for i in range(calls):
        reference_canonical_json(json.loads(env["payload_text"]))
"""


def instructions(harness: str, op: str) -> int:
    """Instructions the interpreter ran for COUNT_SCRIPT (callgrind counts; it does not time)."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", COUNT_SCRIPT, str(Path(__file__).resolve().parent), harness, op, str(CALLS)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(re.search(r"Collected : (\d+)", out.stderr).group(1))


def test_to_append_instructions_per_event():
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    print(f"\n\nnormalization cost per event, instructions (callgrind; {CALLS} calls, set-up subtracted)")
    print("baseline: json.loads + canonical_json (compiled codec); reference: json.loads + the reference encoder")
    print(f"{'harness':<12} {'to_append':>10} {'baseline':>9} {'ratio':>6} {'reference':>9} {'ratio':>6}")
    for harness in CASES:
        idle = instructions(harness, "none")
        total = (instructions(harness, "to_append") - idle) // CALLS
        base = (instructions(harness, "baseline") - idle) // CALLS
        ref = (instructions(harness, "reference") - idle) // CALLS
        print(f"{harness:<12} {total:>10,} {base:>9,} {total / base:>6.1f} {ref:>9,} {total / ref:>6.1f}")
        assert total > base > 0 and ref > 0
