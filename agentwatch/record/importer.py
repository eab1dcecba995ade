"""`agentwatch import`: JSON lines into a store, in batches.

A line is an append envelope (wire protocol v1) or a bare harness payload. A
malformed line, or one longer than the wire protocol allows (1 MiB), is
reported with its number and recorded as a `gap` row (the store says what it
was not given); it never stops the good lines. An over-long line is read in
bounded pieces and hashed, never held whole, so an endless one costs time,
not memory.

The `client` block of an imported record holds the importer's own facts
(delivery `import`, its uid and pid, when it read the line); whatever client
fields the input claims are kept apart under `client_claimed`, so an input
cannot pass itself off as a hook's socket delivery or as another user's.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterator

from agentwatch.errors import UsageError
from agentwatch.record.ids import derived_record_id
from agentwatch.record.normalize import BadEnvelope, gap_append, to_append
from agentwatch.store.append import Append, Store

_PAYLOAD_KEYS = ("payload", "payload_text", "payload_b64")
MAX_LINE = 1 << 20  # bytes per line, newline excluded: the wire protocol's limit
_PIECE = 1 << 20  # how much of an over-long line is read at a time


@dataclass
class ImportReport:
    store: Path
    lines: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "store": str(self.store),
            "lines": self.lines,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "rejected": len(self.rejected),
            "errors": [{"line": n, "reason": r} for n, r in self.rejected],
        }


def is_envelope(obj: object) -> bool:
    return isinstance(obj, dict) and "record_id" in obj and "harness" in obj and any(k in obj for k in _PAYLOAD_KEYS)


def importer_client() -> dict:
    """The client facts of a record this process imports: its own, never the input's."""
    return {"delivery": "import", "uid": os.geteuid(), "pid": os.getpid(), "ts_observed_ns": time.time_ns()}


def line_to_append(line: bytes, harness: str, policy=None, number: int = 0) -> Append:
    """Input line `number` to the row it becomes. Raises ValueError with a clear reason.

    A bare payload's record id is derived from the harness, the line number and the
    line's bytes, so the same input imported twice is stored once."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text)
    except RecursionError:
        raise ValueError("not valid JSON here: nested too deeply to parse") from None
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if is_envelope(obj):
        envelope = obj
    else:
        record_id = derived_record_id(b"import", harness.encode("utf-8", "surrogateescape"), b"%d" % number, line)
        envelope = {"record_id": record_id, "harness": harness, "payload": obj}
    try:
        return to_append(envelope, policy=policy, client=importer_client())
    except BadEnvelope as exc:
        raise ValueError(f"bad envelope: {exc}") from None


def _open(source: str) -> IO[bytes]:
    if source == "-":
        return sys.stdin.buffer
    try:
        return open(source, "rb")
    except FileNotFoundError:
        raise UsageError(f"{source}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{source}: cannot read ({exc.strerror})") from None


@dataclass(frozen=True)
class TooLong:
    """A line past MAX_LINE: its size and digest, not its bytes."""

    size: int
    sha256: str


def _lines(stream: IO[bytes], read: list[int], max_line: int = MAX_LINE) -> Iterator[tuple[int, "bytes | TooLong"]]:
    """(line number, line without its newline) for every non-blank line; TooLong for one past max_line.

    `read[0]` counts the bytes consumed so far (for a progress bar)."""
    number = 0
    while True:
        raw = stream.readline(max_line + 2)  # the longest line allowed, "\r\n" included
        if not raw:
            return
        read[0] += len(raw)
        number += 1
        line = raw.rstrip(b"\r\n") if raw.endswith(b"\n") else raw
        if len(line) > max_line:
            yield number, _rest_of_long_line(stream, raw, read)
        elif line.strip():
            yield number, line


def _rest_of_long_line(stream: IO[bytes], head: bytes, read: list[int]) -> TooLong:
    """Read to the end of an over-long line in bounded pieces; its size and sha256, newline excluded."""
    digest = hashlib.sha256()
    size = 0
    piece = head
    while piece:
        ended = piece.endswith(b"\n")
        if ended:
            piece = piece[:-1]
        digest.update(piece)
        size += len(piece)
        if ended:
            break
        piece = stream.readline(_PIECE)
        read[0] += len(piece)
    return TooLong(size, "sha256:" + digest.hexdigest())


def _size(stream: IO[bytes]) -> int | None:
    """The input's size when it is a regular file (a pipe's is unknown)."""
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def import_lines(
    store_path: Path, source: str, *, harness: str = "unknown", batch_size: int = 1000, policy=None,
    progress: Callable[[int, int | None], None] | None = None, pack: bool = True, writer=None,
    report: ImportReport | None = None,
) -> ImportReport:
    """`policy` is the redaction policy (config.Config.policy()); None means the default mode.

    `progress(bytes_read, total_bytes)` runs after each batch (total None for a pipe); `pack`
    stores large event documents packed (config packing; store/packing.py). `writer` is the
    held writer lock (daemon/integrity.py, `Exclusive`): told when the store is opened and before
    it is closed. `report`, when given, is the one filled in as batches commit: a caller
    reads it for a rate, or for what was committed when the import is interrupted."""
    if batch_size < 1:
        raise UsageError("batch size must be at least 1")
    stream = _open(source)
    report = report if report is not None else ImportReport(store=Path(store_path))
    try:
        store = Store(store_path, pack=pack)
        if writer is not None:
            try:
                writer.opened(store)
            except BaseException:
                store.close()
                raise
    except BaseException:
        if stream is not sys.stdin.buffer:
            stream.close()
        raise
    try:
        batch: list[Append] = []
        read = [0]
        total = _size(stream) if progress else None
        for number, line in _lines(stream, read):
            report.lines += 1
            if isinstance(line, TooLong):
                reason = f"line longer than {MAX_LINE} bytes ({line.size} bytes); skipped unread"
                report.rejected.append((number, reason))
                batch.append(_rejection(source, number, line.size, line.sha256, reason))
            else:
                try:
                    batch.append(line_to_append(line, harness, policy, number))
                except ValueError as exc:
                    report.rejected.append((number, str(exc)))
                    batch.append(_rejection(source, number, len(line), _sha256(line), str(exc)))
            if len(batch) >= batch_size:
                _flush(store, batch, report)
                if progress:
                    progress(read[0], total)
        _flush(store, batch, report)
        if progress:
            progress(read[0], total)
    finally:
        try:
            if writer is not None:
                writer.closing(store)
        finally:
            store.close()
        if stream is not sys.stdin.buffer:
            stream.close()
    return report


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _source_name(source: str) -> str:
    return "-" if source == "-" else str(Path(source).name)


def _rejection(source: str, number: int, size: int, digest: str, reason: str) -> Append:
    return gap_append(
        # The recorder's namespace (no input line can take it first), derived like a bare payload's id:
        # the same rejected line imported again is a duplicate, not a second gap row.
        "gap-import-" + derived_record_id(b"import-rejected", _source_name(source).encode("utf-8", "surrogateescape"),
                                          b"%d" % number, digest.encode()),
        "import_rejected_line",
        {
            "source": _source_name(source),
            "line": number,
            "error": reason,
            "bytes": size,
            "sha256": digest,
        },
    )


def _flush(store: Store, batch: list[Append], report: ImportReport) -> None:
    if not batch:
        return
    for result, item in zip(store.append(batch), batch):
        if item.kind != "event":
            continue
        if result.duplicate:
            report.duplicates += 1
        else:
            report.stored += 1
    batch.clear()
