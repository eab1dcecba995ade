"""`python -m agentwatch.fleet.worker`: the shipper as a child of `agentwatch serve`.

The daemon starts it when `ship.url` is set (agentwatch/daemon/shipping.py).
It runs in its own process, so shipping never takes the daemon's GIL, and at the
lowest CPU priority (`--nice`, default 19), so on a busy machine ingestion goes
first. It writes one JSON status line (fleet.ship.ShipStatus) to stdout at
every change and at most twice a second while shipping, and stops when stdin
closes (the daemon stopped or died) or on SIGTERM, after shipping what the
store holds (for at most `--flush-s` seconds: the daemon's stop attestation
is committed just before it closes stdin).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from agentwatch.errors import AgentwatchError
from agentwatch.fleet.ship import BATCH_ROWS, MAX_BATCH_ROWS, Shipper, ShipStatus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentwatch.fleet.worker")
    parser.add_argument("--store", required=True)
    parser.add_argument("--to", required=True, help="the fleet server (no password: libpq finds it)")
    parser.add_argument("--host", default=None)
    parser.add_argument("--batch-rows", type=int, default=BATCH_ROWS, choices=range(1, MAX_BATCH_ROWS + 1),
                        metavar="N")
    parser.add_argument("--state-dir", default=None,
                        help="where the signed checkpoints live (state_dir; default: the state directory)")
    parser.add_argument("--nice", type=int, default=19)
    parser.add_argument("--flush-s", type=float, default=5.0,
                        help="once told to stop, ship what the store holds for at most this long")
    args = parser.parse_args(argv)
    if args.nice:
        try:
            os.nice(args.nice)
        except OSError:
            pass  # not allowed here: ship at the daemon's priority
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    threading.Thread(target=_stop_at_eof, args=(stop,), daemon=True, name="stdin-eof").start()
    lock = threading.Lock()

    def emit(status: ShipStatus) -> None:
        with lock:
            sys.stdout.write(json.dumps(status.to_json()) + "\n")
            sys.stdout.flush()

    try:
        shipper = Shipper(args.store, args.to, host=args.host, batch_rows=args.batch_rows, on_status=emit,
                          state_dir=args.state_dir)
        shipper.run(stop, flush_s=args.flush_s)
    except (AgentwatchError, ValueError) as exc:
        emit(ShipStatus(state="error", last_error=str(exc)))
        return getattr(exc, "exit_code", 2)
    return 0


def _stop_at_eof(stop: threading.Event) -> None:
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (OSError, ValueError):
        pass
    stop.set()


if __name__ == "__main__":
    raise SystemExit(main())
