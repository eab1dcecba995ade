"""Witness cosignatures: C2SP tlog-cosignature v1 with Ed25519 (signature type 0x04).

A cosignature is one more signature line on a checkpoint note:

    — <cosigner name> base64(key ID ‖ 8-byte big-endian timestamp ‖ 64-byte signature)

key ID = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4]; the signed message is
``cosignature/v1\\ntime <timestamp>\\n`` followed by the checkpoint's note text.
It states that, at that time, this was the largest consistent tree the witness
had seen for the origin. A directory witness cosigns with a key kept in its own
directory (`.cosigner.key`, 0600; its public key in `cosigner.pub`), so a cosignature is worth as much as that
directory's owner is out of the recorded agent's reach.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from agentwatch import platform_layer, safefs
from agentwatch.evidence.note import DASH, NoteError, check_name, split_note
from agentwatch.verify.atomic import write_atomic

COSIGNATURE = 0x04
KEY_FILE = ".cosigner.key"
PUB_FILE = "cosigner.pub"


def key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([COSIGNATURE]) + public_key).digest()[:4]


def message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode("utf-8")


@dataclass(frozen=True)
class CosignerKey:
    """A cosigner's public half, as a vkey `<name>+<hex key ID>+<base64(0x04 ‖ key)>`."""

    name: str
    public_key: bytes

    def encode(self) -> str:
        b64 = base64.b64encode(bytes([COSIGNATURE]) + self.public_key).decode()
        return f"{self.name}+{key_id(self.name, self.public_key).hex()}+{b64}"

    @classmethod
    def parse(cls, text: str) -> "CosignerKey":
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("a cosigner key is <name>+<hex key id>+<base64 key>")
        try:
            raw = base64.b64decode(parts[2], validate=True)
        except ValueError:
            raise NoteError("the cosigner key is not base64") from None
        if len(raw) != 33 or raw[0] != COSIGNATURE:
            raise NoteError("not an Ed25519 cosigner key (type 0x04, 32 bytes)")
        key = cls(check_name(parts[0]), raw[1:])
        if parts[1] != key_id(key.name, key.public_key).hex():
            raise NoteError("the cosigner key's ID does not match its name and key")
        return key

    def timestamp_of(self, note: str) -> int:
        """The time of this cosigner's valid cosignature on `note`; NoteError when it has none."""
        text, sigs = split_note(note)
        kid = key_id(self.name, self.public_key)
        for sig in sigs:
            if sig.name != self.name or sig.key_id != kid:
                continue
            if len(sig.signature) != 72:
                raise NoteError(f"the cosignature by {self.name} is not a timestamp and a signature")
            (timestamp,) = struct.unpack(">Q", sig.signature[:8])
            try:
                Ed25519PublicKey.from_public_bytes(self.public_key).verify(sig.signature[8:], message(text, timestamp))
            except InvalidSignature:
                raise NoteError(f"the cosignature by {self.name} does not verify") from None
            return timestamp
        raise NoteError(f"no cosignature by {self.name}")


class Cosigner:
    def __init__(self, name: str, seed: bytes):
        self.name = check_name(name)
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.key = CosignerKey(name, self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    def cosign(self, text: str, timestamp: int) -> str:
        """The cosignature line (with its newline) on a checkpoint's note text."""
        sig = self._key.sign(message(text, timestamp))
        raw = key_id(self.name, self.key.public_key) + struct.pack(">Q", timestamp) + sig
        return f"{DASH} {self.name} {base64.b64encode(raw).decode()}\n"

    @classmethod
    def in_directory(cls, directory: Path) -> "Cosigner":
        """The directory witness's cosigner, made on first use: `<dir>/.cosigner.key`, 0600."""
        path = Path(directory) / KEY_FILE
        try:
            return cls._read(path)
        except FileNotFoundError:
            pass
        safefs.private_dir(path.parent)
        seed = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        name = f"agentwatch.invalid/witness/{os.urandom(8).hex()}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return cls._read(path)
        try:
            os.write(fd, f"{name}\n{base64.b64encode(seed).decode()}\n".encode())
            platform_layer.full_fsync(fd)
        finally:
            os.close(fd)
        cosigner = cls(name, seed)
        write_atomic(path.parent / PUB_FILE, (cosigner.key.encode() + "\n").encode(), safefs.shared_file_mode())
        return cosigner

    @classmethod
    def _read(cls, path: Path) -> "Cosigner":
        lines = path.read_text(encoding="ascii").split("\n")
        try:
            return cls(lines[0], base64.b64decode(lines[1], validate=True))
        except (IndexError, ValueError) as exc:
            raise NoteError(f"{path}: not a cosigner key ({exc})") from None


def read_cosigner_key(directory: Path) -> CosignerKey | None:
    """The public key of a directory witness's cosigner (`<dir>/cosigner.pub`), None if it has none."""
    try:
        return CosignerKey.parse((Path(directory) / PUB_FILE).read_text(encoding="ascii"))
    except (FileNotFoundError, NoteError):
        return None
