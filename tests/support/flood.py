"""Clients that load the daemon the way the agent's hooks must survive: real processes.

`python flood.py SOCKET PREFIX MODE` appends records named PREFIX-0, PREFIX-1, ... as fast as
the daemon takes them, until SIGTERM. MODE `read` keeps about 500 requests in flight and reads
its acks; `ignore` never reads one (the daemon's replies pile up in its socket buffer); `large`
sends ~1 MiB payloads (base64 of random bytes, as an image Read returns) one after another,
reading each ack. On exit the ids the daemon acknowledged go to PREFIX.acked, one a line, so a
test can check each is stored exactly once.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import sys
from pathlib import Path


def _line(record_id: str, body: dict) -> bytes:
    return json.dumps({"op": "append", "v": 1, "record_id": record_id, "harness": "claude-code",
                       "event": "PostToolUse", "payload": body}).encode() + b"\n"


def small(record_id: str) -> bytes:
    return _line(record_id, {"hook_event_name": "PostToolUse", "session_id": "flood", "tool_name": "Bash",
                             "tool_input": {"command": "ls -la /tmp"}, "tool_response": {"stdout": "x" * 300}})


def large(record_id: str, size: int = 760_000) -> bytes:
    """Just under the 1 MiB line limit on the wire: an image a Read returned, as base64."""
    blob = base64.b64encode(os.urandom(size)).decode()
    return _line(record_id, {"hook_event_name": "PostToolUse", "session_id": "flood", "tool_name": "Read",
                             "tool_input": {"file_path": "/tmp/screenshot.png"},
                             "tool_response": {"type": "image", "file": {"base64": blob, "type": "image/png"}}})


class Stop(Exception):
    pass


def _stop(signum, frame):
    raise Stop


def main(path: str, prefix: str, mode: str) -> None:
    acked: list[str] = []
    signal.signal(signal.SIGTERM, _stop)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    buf = b""

    answered = 0

    def read_acks() -> None:
        nonlocal buf, answered
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise Stop
        buf += chunk
        *lines, buf = buf.split(b"\n")
        answered += len(lines)
        for raw in lines:
            reply = json.loads(raw)
            if reply.get("ok"):
                acked.append(reply["record_id"])

    n = 0
    try:
        sock.connect(path)
        while True:
            if mode == "large":
                sock.sendall(large(f"{prefix}-{n}"))
                n += 1
                while answered < n:
                    read_acks()
                continue
            sock.sendall(b"".join(small(f"{prefix}-{n + i}") for i in range(50)))
            n += 50
            while mode == "read" and n - answered > 500:
                read_acks()
    except (Stop, OSError):
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        Path(f"{prefix}.acked").write_text("".join(rid + "\n" for rid in acked))
        sock.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
