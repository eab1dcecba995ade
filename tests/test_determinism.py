"""Property tests never depend on luck in CI (issue 13, class 8).

The root conftest registers the hypothesis profiles: under CI the examples are
derandomized, so two runs draw exactly the same ones, and `make test` without CI
draws the same; `make fuzz` explores with fresh seeds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DRAW = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("root_conftest", {str(ROOT / "conftest.py")!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
from hypothesis import given, settings, strategies as st
current = settings.default
print(current.derandomize, current.database is None, current.max_examples)
seen = []
@given(st.text(), st.integers())
def draw(text, number):
    seen.append(repr((text, number)))
draw()
print(len(seen), "|".join(seen))
"""


def run(**env) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    proc = subprocess.run([sys.executable, "-c", DRAW], env={**clean, **env}, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_under_ci_two_runs_draw_the_same_examples_and_make_test_draws_them_too():
    first, second, local = run(CI="true"), run(CI="true"), run()
    assert first[0] == "True True 100"
    assert first[1].startswith("100 ")
    assert first == second == local


def test_make_fuzz_explores_with_fresh_seeds_and_more_examples():
    assert run(HYPOTHESIS_PROFILE="fuzz")[0] == "False False 2000"
