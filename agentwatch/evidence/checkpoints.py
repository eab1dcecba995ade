"""Signed checkpoints of a store's Merkle tree (docs/chain.md, "Checkpoints").

Files, outside the store, under the state directory (`resolved_state_dir`):

    keys/<store_id>.key           the signer key (signed-note private key form), 0600
    keys/<store_id>.pub           its note verifier key, public
    checkpoints/<store_id>.json   the last signed checkpoint and what each witness accepted

The origin line and key name is `agentwatch.invalid/<store_id>`: unique per store,
and `.invalid` says it names no reachable host.

`Notary.sign()` never signs two roots for one size, nor a root that does not
extend the last one it signed: it checks a consistency proof, built from the
store, against the last signed checkpoint before it signs, and persists the new
checkpoint atomically before any witness sees it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from agentwatch import paths, platform_layer, safefs
from agentwatch.errors import EXIT_PROBLEM, AgentwatchError, UsageError
from agentwatch.evidence.note import Checkpoint, NoteError, Signer, Verifier, open_checkpoint
from agentwatch.evidence.stored_tree import StoredTree, TreeReadError
from agentwatch.store import db
from agentwatch.store.merkle import ProofError, verify_consistency
from agentwatch.verify.atomic import write_atomic

log = logging.getLogger("agentwatch.checkpoints")

STATE_FORMAT = "agentwatch-checkpoint-state/1"
ORIGIN_PREFIX = "agentwatch.invalid/"


class CheckpointError(AgentwatchError):
    """A checkpoint cannot be signed (the tree would fork or roll back), or its files are unusable."""

    exit_code = EXIT_PROBLEM


def origin_for(store_id: bytes) -> str:
    return ORIGIN_PREFIX + store_id.hex()


def resolved_state_dir(state_dir: Path | None = None) -> Path:
    return Path(state_dir or paths.state_dir())


def key_path(store_id: bytes, state_dir: Path | None = None) -> Path:
    return resolved_state_dir(state_dir) / "keys" / f"{store_id.hex()}.key"


def pub_path(store_id: bytes, state_dir: Path | None = None) -> Path:
    return resolved_state_dir(state_dir) / "keys" / f"{store_id.hex()}.pub"


def state_path(store_id: bytes, state_dir: Path | None = None) -> Path:
    return resolved_state_dir(state_dir) / "checkpoints" / f"{store_id.hex()}.json"


# --- keys -------------------------------------------------------------------------------------


def load_or_create_signer(store_id: bytes, state_dir: Path | None = None) -> Signer:
    """The store's signer, made on first use (0600 key in a 0700 directory) with its public .pub beside it."""
    path = key_path(store_id, state_dir)
    try:
        return _read_signer(path, store_id)
    except FileNotFoundError:
        pass
    signer = Signer.generate(origin_for(store_id))
    # The directory lists public keys too; the private key file itself is 0600.
    safefs.private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return _read_signer(path, store_id)
    try:
        os.write(fd, (signer.encode() + "\n").encode())
        platform_layer.full_fsync(fd)
    finally:
        os.close(fd)
    write_atomic(pub_path(store_id, state_dir), (signer.verifier.encode() + "\n").encode(), safefs.shared_file_mode())
    return signer


def _read_signer(path: Path, store_id: bytes) -> Signer:
    st = os.stat(path, follow_symlinks=False)
    if st.st_mode & 0o077:
        raise CheckpointError(f"{path}: the checkpoint key is readable by others (mode {st.st_mode & 0o777:o}); "
                              "chmod 600 it or replace it")
    try:
        signer = Signer.parse(path.read_text(encoding="ascii"))
    except (NoteError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: not a usable checkpoint key ({exc})") from None
    if signer.name != origin_for(store_id):
        raise CheckpointError(f"{path}: the key is named {signer.name!r}, not {origin_for(store_id)!r}")
    return signer


def read_verifier(store_id: bytes, state_dir: Path | None = None, key: str | None = None) -> Verifier | None:
    """The store's note verifier key: `key` (a vkey or a file holding one), else keys/<store_id>.pub."""
    if key:
        text = Path(key).read_text(encoding="ascii") if os.path.exists(key) else key
        try:
            return Verifier.parse(text)
        except NoteError as exc:
            raise UsageError(f"--key: {exc}") from None
    try:
        return Verifier.parse(pub_path(store_id, state_dir).read_text(encoding="ascii"))
    except FileNotFoundError:
        return None
    except (NoteError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{pub_path(store_id, state_dir)}: not a usable verifier key ({exc})") from None


# --- the signer's record ------------------------------------------------------------------------


@dataclass
class SignerState:
    """The last checkpoint signed for a store, and the size each witness accepted."""

    store_id: str
    store: str
    note: str
    size: int
    signed_at_ns: int
    witnesses: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": STATE_FORMAT, "store_id": self.store_id, "store": self.store, "size": self.size,
                "signed_at_ns": self.signed_at_ns, "note": self.note, "witnesses": self.witnesses}


def read_state(store_id: bytes, state_dir: Path | None = None) -> SignerState | None:
    path = state_path(store_id, state_dir)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint record ({exc})") from None
    try:
        if doc["format"] != STATE_FORMAT or doc["store_id"] != store_id.hex():
            raise ValueError("format or store_id")
        return SignerState(doc["store_id"], str(doc.get("store", "")), doc["note"], int(doc["size"]),
                           int(doc["signed_at_ns"]), {str(k): int(v) for k, v in doc.get("witnesses", {}).items()})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"{path}: not a valid checkpoint record ({exc})") from None


def write_state(state: SignerState, state_dir: Path | None = None) -> None:
    data = (json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n").encode()
    write_atomic(state_path(bytes.fromhex(state.store_id), state_dir), data, safefs.shared_file_mode())


# --- signing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signed:
    """A checkpoint the notary signed (or found already signed at that size)."""

    checkpoint: Checkpoint
    note: str
    new: bool
    witnesses: dict[str, str]  # witness name -> "accepted" or why not


class Notary:
    """Signs checkpoints of one store and hands them to its witnesses.

    `head()` returns the tree the writer has committed: (size, root). Proofs are
    read from the store on a read-only connection of the notary's own.

    It does not forget: the last checkpoint it signed (or found at start) and the size each
    witness accepted are kept in memory. A record on disk that went missing, backwards or
    elsewhere meanwhile, or a witness size that fell, is a finding (`checkpoint_lost`,
    `witness_lost`; `findings`, and `on_finding` is told), and signing goes on from what it
    remembers, never from the record it now finds.
    """

    def __init__(self, store_path: Path, store_id: bytes, head: Callable[[], tuple[int, bytes]], *,
                 state_dir: Path | None = None, witnesses: Sequence[Any] = ()):
        self.store_path = Path(store_path)
        self.store_id = store_id
        self.state_dir = state_dir
        self.head = head
        self.witnesses = list(witnesses)
        self.signer = load_or_create_signer(store_id, state_dir)
        self._lock = threading.Lock()
        self.signed = 0
        self.last_size: int | None = None
        self._proof: tuple[tuple[int, int], list[bytes]] | None = None
        self.last_error: str | None = None
        self._memory: SignerState | None = read_state(store_id, state_dir)
        self.findings: list[Any] = []  # verify.findings.Finding, in the order found
        self.on_finding: Callable[[Any], None] | None = None

    @property
    def verifier(self) -> Verifier:
        return self.signer.verifier

    def sign(self) -> Signed:
        """Sign the writer's current tree head if it extends the last signed one; then publish it."""
        with self._lock:
            size, root = self.head()
            checkpoint = Checkpoint(origin_for(self.store_id), size, root)
            last = self._recall()
            last_cp = open_checkpoint(last.note, self.verifier) if last is not None else None
            if last is not None and last_cp is not None and last_cp.size == size:
                if last_cp.root != root:
                    raise CheckpointError(f"refusing to sign a second root for tree size {size}")
                note, new = last.note, False
            else:
                if last_cp is not None:
                    self._check_extends(last_cp, checkpoint)
                note, new = self.signer.sign(checkpoint.text()), True
                last = SignerState(self.store_id.hex(), os.path.abspath(self.store_path), note, size, time.time_ns(),
                                   dict(last.witnesses) if last is not None else {})
                write_state(last, self.state_dir)
                self.signed += 1
            self._memory = last
            results = self._publish(checkpoint, note, last)
            self.last_size, self.last_error = size, None
            return Signed(checkpoint, note, new, results)

    def _recall(self) -> SignerState | None:
        """The last signed state: what this notary remembers, the record on disk compared with it."""
        from agentwatch.verify.findings import Finding

        memory = self._memory
        unreadable: str | None = None
        try:
            disk = read_state(self.store_id, self.state_dir)
        except CheckpointError as exc:
            disk, unreadable = None, str(exc)
        if memory is None:
            return disk
        found = []
        where = state_path(self.store_id, self.state_dir)
        if disk is None:
            found.append(Finding(memory.size, "checkpoint_lost", f"{where}: the record of signed checkpoint "
                                 f"{memory.size} is gone" + (f" ({unreadable})" if unreadable else "")))
        elif disk.size != memory.size or _body(disk.note) != _body(memory.note):
            found.append(Finding(min(disk.size, memory.size), "checkpoint_lost",
                                 f"{where}: holds checkpoint {disk.size}, but {memory.size} was signed last"))
        else:
            for name, size in sorted(memory.witnesses.items()):
                if disk.witnesses.get(name, 0) < size:
                    found.append(Finding(size, "witness_lost", f"{where}: witness {name} is recorded at "
                                         f"{disk.witnesses.get(name, 0)}, but it accepted {size}"))
        for finding in found:
            log.error("the signer's record changed under the running daemon: %s", finding.detail)
            self.findings.append(finding)
            if self.on_finding is not None:
                self.on_finding(finding)
        if found:
            # Go on from what was signed, and put its record back.
            write_state(memory, self.state_dir)
        return memory

    def _check_extends(self, old: Checkpoint, new: Checkpoint) -> None:
        if new.size < old.size:
            raise CheckpointError(f"refusing to sign tree size {new.size}: size {old.size} is already signed")
        if old.size == 0:
            return
        try:
            proof = self._consistency(old.size, new.size)
            verify_consistency(old.size, new.size, old.root, new.root, proof)
        except (ProofError, TreeReadError) as exc:
            raise CheckpointError(
                f"refusing to sign tree size {new.size}: it does not extend the signed size {old.size} ({exc})"
            ) from None

    def _consistency(self, old: int, new: int) -> list[bytes]:
        # The check before signing and the witness usually need the same proof: build it once.
        if self._proof is not None and self._proof[0] == (old, new):
            return self._proof[1]
        proof = self._build_consistency(old, new)
        self._proof = ((old, new), proof)
        return proof

    def _build_consistency(self, old: int, new: int) -> list[bytes]:
        conn = db.open_reader(self.store_path)
        try:
            conn.execute("BEGIN")
            try:
                return StoredTree(conn).consistency(old, new)
            finally:
                conn.execute("COMMIT")
        finally:
            conn.close()

    def _publish(self, checkpoint: Checkpoint, note: str, state: SignerState) -> dict[str, str]:
        results: dict[str, str] = {}
        changed = False
        for witness in self.witnesses:
            name = witness.name
            try:
                held = witness.held_size(checkpoint.origin)
                if held == checkpoint.size and state.witnesses.get(name) == held:
                    results[name] = "accepted"
                    continue
                reply = self._submit(witness, held, checkpoint, note)
                if reply.status == 409 and reply.body.strip().isdigit():
                    # The witness holds another size than it said (or than we assumed): it names
                    # that size in the body (C2SP tlog-witness); prove from there, once.
                    reply = self._submit(witness, int(reply.body), checkpoint, note)
            except Exception as exc:  # a witness's failure never stops the recorder
                results[name] = f"unreachable: {exc}"
                continue
            if reply.ok:
                results[name] = "accepted"
                if state.witnesses.get(name) != checkpoint.size:
                    state.witnesses[name] = checkpoint.size
                    changed = True
                cosigned = _with_cosignatures(state.note, reply.body)
                if cosigned != state.note:
                    state.note, changed = cosigned, True
            else:
                results[name] = f"refused ({reply.status}): {reply.reason}"
                log.error("witness %s refused checkpoint %d: %s", name, checkpoint.size, reply.reason)
        if changed:
            write_state(state, self.state_dir)
        return results


    def _submit(self, witness: Any, held: int, checkpoint: Checkpoint, note: str) -> Any:
        proof = self._consistency(held, checkpoint.size) if 0 < held < checkpoint.size else []
        return witness.add_checkpoint(held, proof, note)


def _body(note: str) -> str:
    """A signed note's text without its signature lines (cosignatures are added later)."""
    return note.split("\n\n", 1)[0]


def _with_cosignatures(note: str, body: str) -> str:
    """`note` with the signature lines of a witness's reply added (replacing that cosigner's older line)."""
    lines = [line for line in body.split("\n") if line.startswith("\u2014 ")]
    if not lines:
        return note
    names = {line.split(" ")[1] for line in lines}
    kept = [line for line in note[:-1].split("\n") if not (line.startswith("\u2014 ") and line.split(" ")[1] in names
                                                            and line.split(" ")[1] != note.split("\n", 1)[0])]
    return "\n".join(kept + lines) + "\n"


class CheckpointTimer:
    """Signs every `interval` seconds or every `rows` new rows, whichever comes first, on its own thread."""

    def __init__(self, notary: Notary, head_seq: Callable[[], int], *, interval: float, rows: int):
        self.notary = notary
        self.head_seq = head_seq
        self.interval = interval
        self.rows = rows
        self._wake = threading.Event()
        self._stopping = False
        self._signed_size = -1
        self._thread = threading.Thread(target=self._run, name="agentwatch-checkpoints", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def rows_committed(self) -> None:
        """From the writer after a commit: wake the timer when enough rows wait."""
        if self.rows and self.head_seq() - max(self._signed_size, 0) >= self.rows:
            self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread.ident is not None:
            self._thread.join()

    def sign_now(self) -> Signed | None:
        try:
            signed = self.notary.sign()
        except Exception as exc:  # logged and retried at the next tick; the recorder goes on
            self.notary.last_error = f"{type(exc).__name__}: {exc}"
            log.error("checkpoint not signed: %s", self.notary.last_error)
            return None
        self._signed_size = signed.checkpoint.size
        return signed

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(self.interval if self.interval > 0 else None)
            self._wake.clear()
            if self._stopping:
                return
            if self.head_seq() != self._signed_size:
                self.sign_now()


# --- what `agentwatch key` and `agentwatch checkpoint` print -------------------------------------


def _store_id_of(store: Path) -> bytes:
    from agentwatch.verify.walk import read_store_id

    conn = db.open_reader(Path(store))
    try:
        return read_store_id(conn)
    finally:
        conn.close()


def key_info(store: Path, state_dir: Path | None = None) -> dict[str, Any]:
    store_id = _store_id_of(store)
    verifier = read_verifier(store_id, state_dir)
    return {"store": str(store), "store_id": store_id.hex(), "origin": origin_for(store_id),
            "verifier_key": verifier.encode() if verifier is not None else None,
            "path": str(pub_path(store_id, state_dir))}


def checkpoint_info(store: Path, state_dir: Path | None = None) -> dict[str, Any]:
    """The latest signed checkpoint, checked against the store's verifier key. CheckpointError when there is none."""
    import base64

    store_id = _store_id_of(store)
    state = read_state(store_id, state_dir)
    verifier = read_verifier(store_id, state_dir)
    if state is None or verifier is None:
        raise CheckpointError("no checkpoint has been signed for this store yet (the daemon signs them while it runs)")
    try:
        checkpoint = open_checkpoint(state.note, verifier)
    except NoteError as exc:
        raise CheckpointError(f"{state_path(store_id, state_dir)}: the checkpoint does not verify: {exc}") from None
    return {"store": str(store), "store_id": store_id.hex(), "origin": checkpoint.origin, "size": checkpoint.size,
            "root": base64.b64encode(checkpoint.root).decode(), "signed_at_ns": state.signed_at_ns,
            "note": state.note, "witnesses": state.witnesses}


def sign_store(store: Path, *, state_dir: Path | None = None, witness_dirs: Sequence[Path] = ()) -> Signed:
    """Sign the tree over the store's rows now, for a writer other than the daemon (`agentwatch import`).

    The tree is recomputed from the row hashes; the notary's usual checks apply (it
    extends the last signed checkpoint, never two roots for one size). Call it only
    while no daemon serves the store: the daemon is the store's signer then.
    """
    from agentwatch.evidence.stored_tree import roots_at
    from agentwatch.evidence.witness import DirectoryWitness
    from agentwatch.verify import foreign
    from agentwatch.verify.walk import read_store_id

    conn = db.open_reader(Path(store))
    try:
        store_id = read_store_id(conn)
        conn.execute("BEGIN")
        try:
            head_seq = db.one(conn.execute("SELECT coalesce(max(seq), 0) FROM records"))[0]
            past = foreign.past_writer_head(conn, store, store_id, head_seq, state_dir=None)
            if past is not None:
                # Never sign rows no writer of the recorder wrote as if they were its own.
                raise CheckpointError(f"rows {past[0]}..{past[1]} lie past the head the recorder's writer last "
                                      "committed (foreign_rows): not signed; `agentwatch verify` names them")
            _, tree, _ = roots_at((h for (h,) in conn.execute("SELECT hash FROM records ORDER BY seq")), [])
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()
    head = (tree.size, tree.root())
    witnesses = [DirectoryWitness(d, cosign=True) for d in witness_dirs]
    notary = Notary(Path(store), store_id, lambda: head, state_dir=state_dir, witnesses=witnesses)
    for witness in witnesses:
        witness.trust(notary.verifier, os.path.abspath(store))
    return notary.sign()
