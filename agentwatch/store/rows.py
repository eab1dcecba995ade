"""The committed row as readers and live-tail subscribers see it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentwatch.store.chain import format_hash


@dataclass(frozen=True, slots=True)
class TailRecord:
    seq: int
    record_id: str
    kind: str
    recorded_at_ns: int
    hash: bytes
    payload: bytes

    def to_json(self) -> dict:
        return {
            "seq": self.seq,
            "record_id": self.record_id,
            "kind": self.kind,
            "recorded_at_ns": self.recorded_at_ns,
            "hash": format_hash(self.hash),
            "payload": json.loads(self.payload),
        }
