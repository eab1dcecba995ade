"""A stand-in daemon that answers `health` with a document the test chose, for screens
that must be the same on every run (a live daemon's uptime and ages never are)."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path


class FakeHealth:
    def __init__(self, path: Path, doc: dict):
        self.path = path
        self.doc = doc
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "FakeHealth":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(json.dumps({"ok": True, "op": "health", **self.doc}).encode() + b"\n")


def document(**changes) -> dict:
    """A health document of a daemon that records and is well, in the shape docs/daemon.md gives."""
    doc = {
        "version": "0.1.0", "pid": 4242, "uptime_s": 5025.5,
        "store": "/home/dev/.local/share/agentwatch/store.db", "socket": "/run/user/1000/agentwatch/agentwatch.sock",
        "spool_path": "/home/dev/.local/share/agentwatch/spool", "config_digest": "sha256:" + "ab" * 32,
        "event_loop": "uvloop", "head_seq": 182_344, "head_hash": "sha256:" + "cd" * 32,
        "writer": {"state": "ok", "failing_since_ns": None, "failing_since": None, "last_error": None,
                   "commits": 41_210, "rows_committed": 182_344, "largest_batch": 212, "rows_refused_by_store": 0,
                   "last_commit_ns": 1_764_496_800_000_000_000, "queued": 0, "longest_commit_ms": 4.2,
                   "longest_queue_wait_ms": 9.8,
                   "wal_checkpoints": {"background": 73, "tail": 42, "capped": 0, "busy": 0, "errors": 0,
                                   "last_error": None}},
        "inflight": 0, "max_inflight": 2048, "max_inflight_per_connection": 1000, "connections_open": 3,
        "stopping": False,
        "spool": {"backlog": 0, "backlog_bytes": 0, "oldest_age_s": None, "tmp": 0, "bad": 0, "inflight": 0},
        "sweeper": {"state": "ok", "started_from": "anchor", "verified_seq": 182_340,
                    "verified_hash": "sha256:" + "ef" * 32, "lag_rows": 4, "rows_verified": 182_340,
                    "last_round_ns": 1_764_496_800_000_000_000, "finding": None, "last_error": None,
                    "found_by": None, "findings": [], "rounds": 1005, "verifies_in": "process", "worker_pid": 4243,
                    "full": {"interval_s": 3600.0, "state": "idle", "position_seq": None, "target_seq": None,
                             "passes": 1, "last_pass_ns": 1_764_496_000_000_000_000}},
        "counters": {"appended": 182_001, "duplicates": 3, "rejected": {"bad_json": 1}},
        "limits": {"max_line_bytes": 1_048_576, "idle_timeout_s": 30.0, "attest_interval_s": 60.0,
                   "batch_max": 1000, "max_batch": 1000, "verify_interval_s": 5.0, "full_verify_interval_s": 3600.0},
        "reachable": True, "last_commit_age_s": 2.4, "wal_bytes": 4_128_272,
        "redaction": {"mode": "redacted", "self_test": {"ok": True, "failures": [], "checked": 121}},
        "status": "recording", "reasons": [],
    }
    for key, value in changes.items():
        doc[key] = value
    return doc
