"""Witnesses: keepers of the latest checkpoint of a log, outside the store (docs/chain.md, "Witnesses").

The interface follows C2SP tlog-witness `add-checkpoint`: a witness is handed
the old size it is believed to hold, a consistency proof from there, and a
signed checkpoint, and answers like the HTTP protocol does:

    200  accepted and persisted (body: a tlog-cosignature line, when the witness cosigns)
    400  old size above the checkpoint's size
    403  no valid signature by the key the witness trusts for the origin
    404  unknown origin
    409  old size is not what the witness holds (body: the size it holds)
    422  the proof does not verify, or the same size with another root

A witness persists a checkpoint before it answers, checks and persists under
one lock, and never goes back: a smaller size or a fork is refused.

`DirectoryWitness` keeps one JSON file per origin in a directory: by default
`<state dir>/witness/`, in the service deployment a directory the recorded
agent's user cannot write.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol, Sequence

from agentwatch import safefs
from agentwatch.evidence.cosign import Cosigner
from agentwatch.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint, split_note
from agentwatch.store.merkle import EMPTY_ROOT, ProofError, verify_consistency
from agentwatch.verify.atomic import write_atomic

ENTRY_FORMAT = "agentwatch-witness/1"
MAX_PROOF = 63


@dataclass(frozen=True)
class WitnessReply:
    status: int
    body: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200


class Witness(Protocol):
    """What the notary needs of a witness (the directory witness here; the fleet server is another)."""

    name: str

    def held_size(self, origin: str) -> int: ...

    def add_checkpoint(self, old_size: int, proof: Sequence[bytes], note: str) -> WitnessReply: ...


@dataclass(frozen=True)
class HeldCheckpoint:
    """What a witness holds for one origin."""

    witness: str
    origin: str
    verifier_key: str
    note: str
    size: int
    store: str


def _file_name(origin: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", origin) + ".json"


class DirectoryWitness:
    def __init__(self, directory: Path | str, *, cosign: bool = False):
        self.directory = Path(directory)
        self.name = str(self.directory)
        self.cosign = cosign  # answer 200 with a tlog-cosignature line (agentwatch.evidence.cosign)

    # -- reading --------------------------------------------------------------------

    def _path(self, origin: str) -> Path:
        return self.directory / _file_name(origin)

    def held(self, origin: str) -> HeldCheckpoint | None:
        return self._read(self._path(origin))

    def entries(self) -> Iterator[HeldCheckpoint]:
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return
        for name in names:
            if name.endswith(".json") and not name.startswith("."):
                entry = self._read(self.directory / name)
                if entry is not None:
                    yield entry

    def _read(self, path: Path) -> HeldCheckpoint | None:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None
        try:
            if doc["format"] != ENTRY_FORMAT:
                return None
            return HeldCheckpoint(self.name, doc["origin"], doc["verifier_key"], doc["note"], int(doc["size"]),
                                  str(doc.get("store", "")))
        except (KeyError, TypeError, ValueError):
            return None

    def held_size(self, origin: str) -> int:
        entry = self.held(origin)
        return entry.size if entry is not None else 0

    # -- writing --------------------------------------------------------------------

    def _locked(self):
        safefs.private_dir(self.directory)
        fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def _write(self, entry: HeldCheckpoint) -> None:
        doc = {"format": ENTRY_FORMAT, "origin": entry.origin, "verifier_key": entry.verifier_key,
               "note": entry.note, "size": entry.size, "store": entry.store, "updated_at_ns": time.time_ns()}
        write_atomic(self._path(entry.origin), (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(), safefs.shared_file_mode())

    def trust(self, verifier: Verifier, store: str = "") -> None:
        """Start witnessing the log named by `verifier` (its key is pinned at the first call)."""
        fd = self._locked()
        try:
            entry = self.held(verifier.name)
            if entry is None:
                self._write(HeldCheckpoint(self.name, verifier.name, verifier.encode(), "", 0, store))
            elif entry.verifier_key != verifier.encode():
                raise NoteError(f"witness {self.name} already trusts another key for {verifier.name}")
        finally:
            os.close(fd)

    def add_checkpoint(self, old_size: int, proof: Sequence[bytes], note: str) -> WitnessReply:
        """C2SP tlog-witness add-checkpoint, against this directory."""
        try:
            text, _ = split_note(note)
            origin = text.split("\n", 1)[0]
        except NoteError as exc:
            return WitnessReply(400, reason=f"not a signed note: {exc}")
        fd = self._locked()
        try:
            entry = self.held(origin)
            if entry is None:
                return WitnessReply(404, reason=f"unknown origin {origin!r}")
            try:
                checkpoint = open_checkpoint(note, Verifier.parse(entry.verifier_key))
            except NoteError as exc:
                return WitnessReply(403, reason=str(exc))
            if old_size > checkpoint.size:
                return WitnessReply(400, reason=f"old size {old_size} is above the checkpoint's size {checkpoint.size}")
            if len(proof) > MAX_PROOF:
                return WitnessReply(400, reason="more than 63 proof hashes")
            if old_size != entry.size:
                return WitnessReply(409, f"{entry.size}\n", f"the witness holds size {entry.size}, not {old_size}")
            if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
                return WitnessReply(422, reason="a tree of size 0 has the empty root")
            if old_size == 0:
                if proof:
                    return WitnessReply(422, reason="no proof is needed from size 0")
            else:
                held = Checkpoint.parse(split_note(entry.note)[0])
                try:
                    verify_consistency(old_size, checkpoint.size, held.root, checkpoint.root, proof)
                except ProofError as exc:
                    return WitnessReply(422, reason=f"not consistent with the held checkpoint: {exc}")
            if old_size != checkpoint.size or not entry.note:
                self._write(HeldCheckpoint(self.name, origin, entry.verifier_key, note, checkpoint.size, entry.store))
            if self.cosign:
                return WitnessReply(200, Cosigner.in_directory(self.directory).cosign(text, int(time.time())))
            return WitnessReply(200)
        finally:
            os.close(fd)


def proof_lines(proof: Sequence[bytes]) -> str:
    return "".join(base64.b64encode(p).decode() + "\n" for p in proof)
