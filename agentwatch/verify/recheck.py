"""Old rows re-checked on a schedule by the default, incremental `verify` (docs/chain.md, "Threat model").

An incremental verify walks only the rows after its anchor, so an in-place edit of an older
row that leaves every stored hash alone would wait for a `--full` run. So each incremental
verify also re-checks, below its anchor:

- a **rotating window** of WINDOW_ROWS rows, starting where the previous run's window ended
  and wrapping at the anchor: over ceil(anchored rows / WINDOW_ROWS) runs every row is seen;
- SAMPLES rows chosen at random (an edit anywhere has a chance to be seen at every run);
- and it becomes a **full** walk whenever the last full walk of this store is older than
  FULL_EVERY_S (seven days): a bound in time that does not depend on how often verify runs.

A re-checked row is verified from the stored hash of the row before it (verify/walk.py),
which is how a changed payload, kind, record_id or time shows. The schedule's state is a
small file beside the anchors: `<state>/recheck/<store_id>.json`.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

from agentwatch.store.chain import GENESIS
from agentwatch.verify.anchors import anchor_path
from agentwatch.verify.atomic import write_atomic
from agentwatch.verify.findings import Finding
from agentwatch.verify.walk import CHUNK_ROWS, verify_segment, walk_segment

FORMAT = "agentwatch-recheck/1"
WINDOW_ROWS = 20_000
SAMPLES = 64
FULL_EVERY_S = 7 * 86400


@dataclass
class Schedule:
    next_seq: int = 1  # where the next window starts
    full_at_ns: int = 0  # when the last full walk of this store ended clean (0: never)


def state_path(store_id: bytes, state_dir: Path | None = None) -> Path:
    """`<state>/recheck/<store_id>.json`, beside the anchors directory."""
    return anchor_path(store_id, state_dir).parent.parent / "recheck" / f"{store_id.hex()}.json"


def load(store_id: bytes, state_dir: Path | None = None) -> Schedule:
    try:
        doc = json.loads(state_path(store_id, state_dir).read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT:
            return Schedule()
        return Schedule(int(doc["next_seq"]), int(doc["full_at_ns"]))
    except (OSError, ValueError, KeyError, TypeError):
        return Schedule()  # a missing or damaged schedule only makes the next run do more


def save(store_id: bytes, schedule: Schedule, state_dir: Path | None = None) -> None:
    path = state_path(store_id, state_dir)
    data = json.dumps({"format": FORMAT, "next_seq": schedule.next_seq, "full_at_ns": schedule.full_at_ns},
                      sort_keys=True).encode() + b"\n"
    try:
        write_atomic(path, data, 0o600)
    except OSError:
        pass  # as above: the schedule is advice, not evidence


def full_due(schedule: Schedule, now_ns: int | None = None) -> bool:
    now = time.time_ns() if now_ns is None else now_ns
    return now - schedule.full_at_ns >= FULL_EVERY_S * 1_000_000_000


@dataclass
class Rechecked:
    window: tuple[int, int] | None  # (first, last) seq re-checked in the window
    samples: list[int]
    rows: int
    finding: Finding | None


def recheck(conn, store_id: bytes, anchored_seq: int, schedule: Schedule, *, window_rows: int | None = None,
            samples: int | None = None, rng: random.Random | None = None) -> Rechecked:
    """Re-check the window and the samples among rows 1..anchored_seq; advances `schedule.next_seq`."""
    window_rows = WINDOW_ROWS if window_rows is None else window_rows
    samples = SAMPLES if samples is None else samples
    if anchored_seq < 1:
        return Rechecked(None, [], 0, None)
    first = schedule.next_seq if 1 <= schedule.next_seq <= anchored_seq else 1
    last = min(anchored_seq, first + window_rows - 1)
    rows, finding = _walk(conn, store_id, first, last)
    schedule.next_seq = last + 1 if last < anchored_seq else 1
    picked: list[int] = []
    rng = rng or random.Random(int.from_bytes(os.urandom(8), "big"))
    for seq in sorted(rng.sample(range(1, anchored_seq + 1), min(samples, anchored_seq))):
        if finding is not None:
            break
        if first <= seq <= last:
            continue
        picked.append(seq)
        n, finding = _walk(conn, store_id, seq, seq)
        rows += n
    return Rechecked((first, last), picked, rows, finding)


def _walk(conn, store_id: bytes, first: int, last: int) -> tuple[int, Finding | None]:
    if first == 1:
        n, _, _, finding, _ = walk_segment(conn, store_id, 0, GENESIS, last, CHUNK_ROWS)
    else:
        n, _, _, finding, _ = verify_segment(conn, store_id, first - 1, last, CHUNK_ROWS)
    return n, finding
