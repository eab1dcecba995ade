"""The sweeper's hashing, in a child process of the daemon.

Verification reads and hashes every row; in the daemon's own process it would
compete with the event loop and the writer for the GIL on every row it reads
(SQLite calls release it), which slowed ingestion measurably. Here it shares
nothing with them but the store file, opened read-only.

The protocol is the sweeper's alone: on stdin, pickled requests
``(store_id, after_seq, after_hash, limit)``; on stdout, one pickled reply per
request, ``("ok", RangeResult)`` or ``("error", text)``. EOF on stdin (the
daemon stopped or died) ends the process.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from . import db
from .verify import verify_range


def main(argv: list[str]) -> int:
    store = Path(argv[0])
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    conn = None
    try:
        while True:
            try:
                store_id, after_seq, after_hash, limit = pickle.load(requests)
            except EOFError:
                return 0
            try:
                if conn is None:
                    conn = db.open_reader(store)
                reply = ("ok", verify_range(conn, store_id, after_seq, after_hash, limit))
            except Exception as exc:  # reported to the sweeper, which reports it in health
                reply = ("error", f"{type(exc).__name__}: {exc}")
                if conn is not None:
                    conn.close()
                    conn = None
            pickle.dump(reply, replies)
            replies.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        if conn is not None:
            conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
