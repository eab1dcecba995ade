"""C2SP signed notes and tlog checkpoints with Ed25519 (docs/chain.md, "Checkpoints").

A checkpoint is the note text ``<origin>\\n<tree size>\\n<base64 root>\\n``;
a signed note appends an empty line and one line per signature,
``— <key name> <base64(4-byte key ID || signature)>``. The key ID is
SHA-256(key name || 0x0A || 0x01 || public key)[:4]; a verifier key is
``<name>+<hex key ID>+<base64(0x01 || public key)>``.

Signing uses the `cryptography` package; checking a signature here does too
(the standalone verifier has its own stdlib Ed25519).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ED25519 = 0x01
DASH = "\u2014"
MAX_NOTE_BYTES = 64 * 1024
MAX_SIGNATURES = 16
_NAME = re.compile(r"[^\s+]+")
_SIZE = re.compile(r"0|[1-9][0-9]{0,19}")


class NoteError(ValueError):
    """A note, checkpoint or key that does not parse, or a signature that does not verify."""


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise NoteError(f"{what} is not valid base64") from None


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise NoteError(f"key name {name!r} must be non-empty, without spaces or '+'")
    return name


def key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([ED25519]) + public_key).digest()[:4]


@dataclass(frozen=True, slots=True)
class Verifier:
    """A note verifier key: a name and an Ed25519 public key."""

    name: str
    public_key: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.name, self.public_key)

    def encode(self) -> str:
        b64 = base64.b64encode(bytes([ED25519]) + self.public_key).decode()
        return f"{self.name}+{self.key_id.hex()}+{b64}"

    @classmethod
    def parse(cls, text: str) -> "Verifier":
        parts = text.strip().split("+", 2)  # the name and the hex ID hold no '+'; base64 may
        if len(parts) != 3:
            raise NoteError("a verifier key is <name>+<hex key id>+<base64 key>")
        name, hex_id, b64 = parts
        check_name(name)
        raw = _b64decode(b64, "the verifier key")
        if len(raw) != 33 or raw[0] != ED25519:
            raise NoteError("the verifier key is not an Ed25519 key (type 0x01, 32 bytes)")
        verifier = cls(name, raw[1:])
        if hex_id.lower() != verifier.key_id.hex() or len(hex_id) != 8:
            raise NoteError("the verifier key's ID does not match its name and key")
        return verifier

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except InvalidSignature:
            return False
        return True


class Signer:
    """An Ed25519 note signer (the install's checkpoint key)."""

    def __init__(self, name: str, seed: bytes):
        self.name = check_name(name)
        if len(seed) != 32:
            raise NoteError("an Ed25519 private key is a 32-byte seed")
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        public = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = Verifier(name, public)

    @classmethod
    def generate(cls, name: str) -> "Signer":
        from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

        seed = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(name, seed)

    def seed(self) -> bytes:
        from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

        return self._key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    def encode(self) -> str:
        """PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 || seed)>: the signed-note private key form."""
        b64 = base64.b64encode(bytes([ED25519]) + self.seed()).decode()
        return f"PRIVATE+KEY+{self.name}+{self.verifier.key_id.hex()}+{b64}"

    @classmethod
    def parse(cls, text: str) -> "Signer":
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a signer key is PRIVATE+KEY+<name>+<hex key id>+<base64 key>")
        raw = _b64decode(parts[4], "the signer key")
        if len(raw) != 33 or raw[0] != ED25519:
            raise NoteError("the signer key is not an Ed25519 key")
        signer = cls(parts[2], raw[1:])
        if parts[3].lower() != signer.verifier.key_id.hex():
            raise NoteError("the signer key's ID does not match its name and key")
        return signer

    def sign(self, text: str) -> str:
        """The signed note: text, an empty line, one signature line."""
        body = check_text(text)
        sig = self._key.sign(body.encode("utf-8"))
        line = base64.b64encode(self.verifier.key_id + sig).decode()
        return f"{body}\n{DASH} {self.name} {line}\n"


def check_text(text: str) -> str:
    if not text.endswith("\n"):
        raise NoteError("note text must end with a newline")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise NoteError("note text contains a control character")
    return text


@dataclass(frozen=True, slots=True)
class Signature:
    name: str
    key_id: bytes
    signature: bytes


def split_note(note: str) -> tuple[str, list[Signature]]:
    """(text, signatures) of a signed note; NoteError if it is not one."""
    if len(note.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        raise NoteError("the note is too large")
    if not note.endswith("\n"):
        raise NoteError("a signed note ends with a newline")
    at = note.rfind("\n\n")
    if at < 0:
        raise NoteError("a signed note has an empty line before its signatures")
    text, sig_block = note[: at + 1], note[at + 2 :]
    check_text(text)
    sigs = []
    for line in sig_block[:-1].split("\n"):
        if not line.startswith(DASH + " "):
            raise NoteError("a signature line starts with an em dash and a space")
        parts = line[2:].split(" ")
        if len(parts) != 2:
            raise NoteError("a signature line is '— <name> <base64>'")
        name = check_name(parts[0])
        raw = _b64decode(parts[1], "a signature")
        if len(raw) < 5:
            raise NoteError("a signature is shorter than its key ID")
        sigs.append(Signature(name, raw[:4], raw[4:]))
    if not sigs:
        raise NoteError("the note has no signatures")
    if len(sigs) > MAX_SIGNATURES:
        raise NoteError(f"the note has more than {MAX_SIGNATURES} signatures")
    return text, sigs


def open_note(note: str, verifiers: list[Verifier]) -> str:
    """The note text, if a known key signed it and every known key's signature verifies."""
    text, sigs = split_note(note)
    known = {(v.name, v.key_id): v for v in verifiers}
    verified = 0
    for sig in sigs:
        v = known.get((sig.name, sig.key_id))
        if v is None:
            continue  # unknown keys are ignored (witness cosignatures, rotated keys)
        if not v.verify(text.encode("utf-8"), sig.signature):
            raise NoteError(f"the signature by {sig.name} does not verify")
        verified += 1
    if not verified:
        raise NoteError("no signature from a known key")
    return text


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A tlog checkpoint body: origin, tree size, root hash."""

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse(cls, text: str) -> "Checkpoint":
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint is at least three non-empty lines, each ending in a newline")
        origin, size, root = lines[0], lines[1], lines[2]
        if not _SIZE.fullmatch(size):
            raise NoteError("the tree size is not a decimal number without leading zeros")
        digest = _b64decode(root, "the root hash")
        if len(digest) != 32:
            raise NoteError("the root hash is not 32 bytes")
        return cls(origin, int(size), digest)


def open_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """A checkpoint signed by `verifier`, whose origin is the verifier's name."""
    checkpoint = Checkpoint.parse(open_note(note, [verifier]))
    if checkpoint.origin != verifier.name:
        raise NoteError(f"the checkpoint's origin {checkpoint.origin!r} is not the key's name {verifier.name!r}")
    return checkpoint
