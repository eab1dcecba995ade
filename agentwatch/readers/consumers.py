"""Durable named consumers: an acknowledged position and a delivery log per consumer.

Where: `$XDG_STATE_HOME/agentwatch/consumers/<store_id>/<name>.cursor.json` and
`<name>.deliveries.jsonl`, under the `state_dir` setting (config.load: `--state-dir`,
AGENTWATCH_STATE_DIR, the config file; docs/config.md) or a `state_dir` argument. Why there and not in the store: consumers read the store
read-only (readers never write it), a consumer's position is its own state and
not part of the recorded history, and keying by store id keeps positions of one
store from being applied to another.

Accounting: a consumer appends each delivered record's seq to its delivery log
*after* handing it downstream, then moves its cursor (tmp + fsync + rename). A
consumer killed at any instant resumes after its cursor, so a record may be
delivered again (at-least-once on the wire) and logged twice; reconcile counts
the distinct seqs (exactly-once accounting by seq) and reports redeliveries.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from agentwatch import platform_layer, safefs
from agentwatch.errors import UsageError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CURSOR_FORMAT = "agentwatch-consumer/1"


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise UsageError(f"consumer name {name!r}: use 1-64 letters, digits, '.', '_' or '-'")
    return name


def consumers_dir(store_id: bytes, state_dir: Path | None = None) -> Path:
    if state_dir is None:
        from agentwatch import config  # the one resolver: environment, then the config file, then the default

        state_dir = config.load(project=False)["state_dir"]
    return Path(state_dir) / "consumers" / store_id.hex()


@dataclass
class Cursor:
    consumer: str
    store_id: str
    start_seq: int  # the first seq this consumer asked for
    acked_seq: int  # everything in [start_seq, acked_seq] was delivered and acknowledged
    kinds: list[str] | None  # the kind filter it consumes with (None: every kind)
    updated_at_ns: int

    def to_json(self) -> dict:
        return {"format": CURSOR_FORMAT, **self.__dict__}


class Consumer:
    """One named consumer's durable state. One process at a time uses a name."""

    def __init__(self, name: str, store_id: bytes, state_dir: Path | None = None):
        self.name = check_name(name)
        self.store_id = store_id
        self.dir = consumers_dir(store_id, state_dir)
        self.cursor_path = self.dir / f"{name}.cursor.json"
        self.log_path = self.dir / f"{name}.deliveries.jsonl"
        self._log_fd: int | None = None

    def load(self) -> Cursor | None:
        try:
            data = json.loads(self.cursor_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise UsageError(f"{self.cursor_path}: unreadable consumer cursor ({exc})") from None
        if data.get("format") != CURSOR_FORMAT or data.get("store_id") != self.store_id.hex():
            raise UsageError(f"{self.cursor_path}: not a cursor for this store")
        data.pop("format")
        return Cursor(**data)

    def start(self, start_seq: int, kinds: Iterable[str] | None) -> Cursor:
        """The cursor to resume from, created at `start_seq` for a new consumer."""
        cursor = self.load()
        if cursor is None:
            cursor = Cursor(self.name, self.store_id.hex(), start_seq, start_seq - 1,
                            sorted(kinds) if kinds else None, time.time_ns())
            self.save(cursor)
        return cursor

    def record_deliveries(self, seqs: Iterable[int]) -> None:
        """Append delivered seqs to the log, in one write per batch."""
        data = "".join(f"{seq}\n" for seq in seqs).encode("ascii")
        if not data:
            return
        if self._log_fd is None:
            safefs.private_dir(self.dir, "consumer directory")
            self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.write(self._log_fd, data)
        platform_layer.full_fsync(self._log_fd)

    def ack(self, cursor: Cursor, seq: int) -> None:
        cursor.acked_seq = seq
        cursor.updated_at_ns = time.time_ns()
        self.save(cursor)

    def save(self, cursor: Cursor) -> None:
        safefs.private_dir(self.dir, "consumer directory")
        tmp = self.cursor_path.with_suffix(f".tmp{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps(cursor.to_json(), sort_keys=True).encode("utf-8"))
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.cursor_path)
        dir_fd = os.open(self.dir, os.O_RDONLY)
        try:
            platform_layer.full_fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def deliveries(self) -> Iterator[int]:
        """Every logged delivery, in log order; a torn last line (a crash mid-write) is skipped."""
        try:
            with open(self.log_path, "rb") as log:
                for line in log:
                    if line.endswith(b"\n") and line[:-1].isdigit():
                        yield int(line)
        except FileNotFoundError:
            return

    def close(self) -> None:
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None
