"""The fleet server as a witness with the notary's interface (agentwatch.evidence.witness).

`PgWitness` answers `held_size` from `agentwatch.held_checkpoint` (the largest
checkpoint the server holds for a store this login claims) and `add_checkpoint`
through `agentwatch.ingest_checkpoint`, as a shipping login. Like a directory
witness it checks the consistency proof from the size it holds, and, given
the store's verifier key, the signature; the server then checks the root
against its own copy of the rows, which no proof can talk it out of.

The answers follow C2SP tlog-witness as the directory witness gives them, with
one more: 503 when the server does not hold the rows the checkpoint covers yet
(the shipper sends rows first; try again after they are shipped).
"""

from __future__ import annotations

from typing import Optional, Sequence

from agentwatch.evidence.checkpoints import ORIGIN_PREFIX
from agentwatch.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint, split_note
from agentwatch.evidence.witness import MAX_PROOF, WitnessReply
from agentwatch.fleet.connect import FleetUnreachable, connect, first_line, redact
from agentwatch.fleet.ship import default_host
from agentwatch.store.merkle import ProofError, verify_consistency

_HELD = "SELECT tree_size, root_hash FROM agentwatch.held_checkpoint(%s, %s)"
_INGEST = "SELECT accepted, refused, detail FROM agentwatch.ingest_checkpoint(%s, %s, %s, %s, %s, %s)"
_REFUSED_STATUS = {"checkpoint_inconsistent": 422, "fork": 403, "malformed": 400, "not_yet": 503}


class PgWitness:
    def __init__(self, target: str, *, host: Optional[str] = None, verifier: Optional[Verifier] = None):
        self.target = target
        self.host = host or default_host()
        self.verifier = verifier  # the store's key: when given, a note it did not sign is refused (403)
        self.name = redact(target)

    def _held(self, conn, origin: str) -> tuple[int, Optional[bytes]]:
        size, root = conn.execute(_HELD, (origin[len(ORIGIN_PREFIX):], self.host)).fetchone()
        return (size, bytes(root)) if size is not None else (0, None)

    def held_size(self, origin: str) -> int:
        """The largest size the server holds for `origin` (0: none). Raises FleetUnreachable."""
        import psycopg

        if not origin.startswith(ORIGIN_PREFIX):
            return 0
        with connect(self.target, application="agentwatch witness") as conn:
            try:
                return self._held(conn, origin)[0]
            except psycopg.Error as exc:
                raise FleetUnreachable(f"{self.name}: {first_line(exc)}") from None

    def add_checkpoint(self, old_size: int, proof: Sequence[bytes], note: str) -> WitnessReply:
        """C2SP tlog-witness add-checkpoint, against the fleet server. Raises FleetUnreachable."""
        import psycopg

        try:
            checkpoint = (open_checkpoint(note, self.verifier) if self.verifier is not None
                          else Checkpoint.parse(split_note(note)[0]))
        except NoteError as exc:
            return WitnessReply(403 if self.verifier is not None else 400, reason=str(exc))
        if not checkpoint.origin.startswith(ORIGIN_PREFIX):
            return WitnessReply(404, reason=f"unknown origin {checkpoint.origin!r}")
        if old_size > checkpoint.size:
            return WitnessReply(400, reason=f"old size {old_size} is above the checkpoint's size {checkpoint.size}")
        if len(proof) > MAX_PROOF:
            return WitnessReply(400, reason="more than 63 proof hashes")
        with connect(self.target, application="agentwatch witness") as conn:
            try:
                held_size, held_root = self._held(conn, checkpoint.origin)
                if old_size != held_size:
                    return WitnessReply(409, f"{held_size}\n", f"the witness holds size {held_size}, not {old_size}")
                if held_root is not None:
                    try:
                        verify_consistency(held_size, checkpoint.size, held_root, checkpoint.root, proof)
                    except ProofError as exc:
                        return WitnessReply(422, reason=f"not consistent with the held checkpoint: {exc}")
                elif proof:
                    return WitnessReply(422, reason="no proof is needed from size 0")
                accepted, refused, detail = conn.execute(_INGEST, (
                    checkpoint.origin[len(ORIGIN_PREFIX):], self.host, checkpoint.origin, checkpoint.size,
                    checkpoint.root, note)).fetchone()
            except psycopg.Error as exc:
                raise FleetUnreachable(f"{self.name}: {first_line(exc)}") from None
        if accepted:
            return WitnessReply(200)
        return WitnessReply(_REFUSED_STATUS.get(refused, 422), reason=f"{refused}: {detail}")
