"""Sharing the daemon's capacity between its peers (docs/daemon.md, "Fair admission").

A peer is one client process, named by the kernel's (uid, pid) of its socket. The agent
waits for every hook, so a hook must not wait behind a client that floods the socket or
never reads its acknowledgements. Two things here make that so:

- `RoundRobin`: per-peer queues taken one item per peer in turn, a peer that had nothing
  queued first. The normalizing pool and the feed to the writer both take work from one,
  so a hook's one record is the next taken, and a flooder's backlog waits its turn.
- `share`: how many records one peer may hold in flight while others wait: the daemon's
  bound divided between the peers that hold records, and never less than one, so every
  peer can always send its next record and a flooder is slowed to its share.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, Hashable, Optional, TypeVar

T = TypeVar("T")

Peer = Hashable  # (uid, pid) of a socket client; a name of the daemon's own work ("spool", "daemon")


class RoundRobin(Generic[T]):
    """FIFO queues per peer, taken one item per peer in turn; a peer with nothing queued goes first."""

    def __init__(self) -> None:
        self._queues: dict[Peer, deque[T]] = {}
        self._turn: deque[Peer] = deque()  # peers with queued items, the next to be served first
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def push(self, peer: Peer, item: T) -> None:
        queue = self._queues.get(peer)
        if queue is None:
            queue = self._queues[peer] = deque()
            self._turn.appendleft(peer)  # it had nothing waiting: it goes before the peers with a backlog
        queue.append(item)
        self._len += 1

    def count(self, peer: Peer) -> int:
        queue = self._queues.get(peer)
        return len(queue) if queue is not None else 0

    def peek(self) -> Optional[T]:
        """The item `pop` would take next."""
        return self._queues[self._turn[0]][0] if self._turn else None

    def pop(self) -> Optional[T]:
        """The next peer's oldest item (None when empty); the peer goes to the back of the turn."""
        if not self._turn:
            return None
        peer = self._turn.popleft()
        queue = self._queues[peer]
        item = queue.popleft()
        self._len -= 1
        if queue:
            self._turn.append(peer)
        else:
            del self._queues[peer]
        return item

    def peers(self) -> int:
        return len(self._turn)


def share(limit: int, peers_holding: int) -> int:
    """Records one peer may hold in flight when `peers_holding` peers hold some: at least one."""
    return max(1, limit // max(1, peers_holding))


WRITER_WINDOW = 64  # records at the writer at once: a hook's record waits behind about one small group commit


def writer_window(batch_max: int) -> int:
    return max(1, min(batch_max, WRITER_WINDOW))
