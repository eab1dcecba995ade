"""Build tests/vectors/packed_v1.json: packed rows pinned byte for byte (docs/chain.md, "Packed rows").

Four rows under a fixed store_id: a plain event, two packed events, a plain attestation.
The dictionary is fixed text and the streams are made with the standard library's zlib
(raw DEFLATE, level 9); the file keeps the stream bytes, so a zlib that deflates
differently changes nothing a verifier reads. Each case changes the stored rows and gives
the first break both verifiers must name. tests/test_packed_vectors.py checks the file.
    python tests/make_packed_vector.py > tests/vectors/packed_v1.json
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib

from agentwatch.store.chain import DOMAIN_TAG, GENESIS, canonical_json, format_hash, framed_kind_id, row_hash

STORE_ID = bytes.fromhex("00112233445566778899aabbccddeeff")
T0 = 1764460800000000000

DICTIONARY = canonical_json({
    "client": {"delivery": "socket", "pid": 4242, "ppid": 4241}, "cwd": "/home/dev/project",
    "event": {"kind": "tool_post", "name": "PostToolUse"}, "harness": "claude-code", "schema": 2,
    "tool": {"category": "shell", "name": "Bash", "response": {"stderr": "", "stdout": "total 48\n"}},
})

DOCUMENTS = [
    {"harness": "claude-code", "schema": 2, "session_id": "s-1",
     "event": {"kind": "session_start", "name": "SessionStart"}},
    {"harness": "claude-code", "schema": 2, "session_id": "s-1", "cwd": "/home/dev/project", "turn_id": "t-1",
     "client": {"delivery": "socket", "pid": 4242, "ppid": 4241, "ts_observed_ns": T0 + 2},
     "event": {"kind": "tool_post", "name": "PostToolUse"},
     "tool": {"call_id": "toolu_01", "category": "shell", "name": "Bash", "duration_ms": 12.5,
              "input": {"command": "ls -la src", "name": "not projected: only tool.name is"},
              "response": {"stderr": "", "stdout": "total 48\n" + "-rw-r--r-- 1 dev dev 1234 a.py\n" * 12}},
     "raw": {"permission_mode": "default", "tool_use_id": "toolu_01"}},
    {"harness": "claude-code", "schema": 2, "session_id": "s-1", "interrupt": False, "model": "claude-x",
     "decision": {"value": "deny", "reason": "not projected"},
     "event": "a string where an object is usual: no event.* path reaches into it",
     "tool": {"name": "Write", "is_error": True, "outcome": "denied", "mcp_server": None,
              "input": {"file_path": "/home/dev/project/notes.txt", "content": "ünïcödé ✓ 雪 😀\n" * 20}}},
    {"type": "heartbeat", "schema": 1, "note": "an attestation is never packed"},
]
KINDS = ("event", "event", "event", "attestation")
PACKED = (2, 3)
PROJECTION = (
    ("client", "delivery"), ("client", "pid"), ("client", "ts_observed_ns"), ("cwd",), ("decision", "value"),
    ("event", "kind"), ("event", "name"), ("harness",), ("interrupt",), ("model",), ("schema",), ("session_id",),
    ("tool", "call_id"), ("tool", "category"), ("tool", "duration_ms"), ("tool", "input_sha256"),
    ("tool", "is_error"), ("tool", "mcp_server"), ("tool", "name"), ("tool", "outcome"), ("turn_id",),
)


def projection(doc: dict) -> dict:
    out: dict = {}
    for path in PROJECTION:
        node = doc
        for key in path:
            node = node.get(key, KeyError) if isinstance(node, dict) else KeyError
        if node is not KeyError:
            place = out
            for key in path[:-1]:
                place = place.setdefault(key, {})
            place[path[-1]] = node
    return out


def deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)
    return c.compress(data) + c.flush()


def main() -> None:
    rows, prev = [], GENESIS
    for i, (doc, kind) in enumerate(zip(DOCUMENTS, KINDS)):
        seq = i + 1
        document = canonical_json(doc)
        record_id = f"0190f1c2-7a3b-7c1d-9e2f-{seq:012d}"
        digest = row_hash(STORE_ID, seq, T0 + seq, kind, record_id, prev, document)
        preimage = (DOMAIN_TAG + STORE_ID + seq.to_bytes(8, "big") + (T0 + seq).to_bytes(8, "big")
                    + framed_kind_id(kind, record_id) + prev + hashlib.sha256(document).digest())
        assert hashlib.sha256(preimage).digest() == digest
        row = {"seq": seq, "recorded_at_ns": T0 + seq, "kind": kind, "record_id": record_id,
               "payload_sha256": format_hash(hashlib.sha256(document).digest()), "prev_hash": format_hash(prev),
               "preimage_hex": preimage.hex(), "hash": format_hash(digest)}
        if seq in PACKED:
            z = deflate(document)
            row.update(payload=canonical_json(projection(doc)).decode(), payload_dict=1,
                       payload_z=base64.b64encode(z).decode(), document=document.decode())
        else:
            row.update(payload=document.decode(), payload_dict=None, payload_z=None)
        rows.append(row)
        prev = digest
    z2 = base64.b64decode(rows[1]["payload_z"])
    flipped = bytearray(z2)
    flipped[len(flipped) // 2] ^= 0x10
    other = json.loads(rows[1]["payload"])
    other["tool"]["name"] = "Read"
    cases = [
        {"name": "the projection of seq 2 names another tool",
         "set": [{"seq": 2, "column": "payload", "value": canonical_json(other).decode()}],
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "a bit of seq 2's stream flipped",
         "set": [{"seq": 2, "column": "payload_z", "value_b64": base64.b64encode(bytes(flipped)).decode()}],
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "seq 2's stream with a byte after its end",
         "set": [{"seq": 2, "column": "payload_z", "value_b64": base64.b64encode(z2 + b"\x00").decode()}],
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "seq 2's stream cut short",
         "set": [{"seq": 2, "column": "payload_z", "value_b64": base64.b64encode(z2[:-3]).decode()}],
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "seq 2's stream and dictionary id cleared, leaving the projection as a plain payload",
         "set": [{"seq": 2, "column": "payload_z", "value_b64": None}, {"seq": 2, "column": "payload_dict",
                                                                         "value": None}],
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "seq 3 names a dictionary that does not exist",
         "set": [{"seq": 3, "column": "payload_dict", "value": 2}],
         "finding": {"kind": "payload_edited", "seq": 3}},
        {"name": "the dictionary changed",
         "dictionary": base64.b64encode(DICTIONARY.replace(b"Bash", b"Bush")).decode(),
         "finding": {"kind": "payload_edited", "seq": 2}},
        {"name": "the dictionary deleted", "dictionary": None,
         "finding": {"kind": "payload_edited", "seq": 2}},
        # Not a break: the stored payload is then the very document the row's hash covers.
        {"name": "seq 3's document stored whole in place of its projection, stream kept",
         "set": [{"seq": 3, "column": "payload", "value": rows[2]["document"]}],
         "finding": None},
    ]
    vector = {
        "description": (
            "Packed rows over chain v1 (docs/chain.md, 'Packed rows'). Rows 2 and 3 are packed: payload holds the "
            "projection of the document, payload_z (base64 here) the document as raw DEFLATE with the preset "
            "dictionary of id payload_dict; the row hash covers SHA-256 of the document. Rows 1 and 4 are plain. "
            "A verifier reports all four intact. Each case changes the store (set: one column of one row, a "
            "value or value_b64; dictionary: the dictionary's new data in base64, or null to delete it) and gives "
            "the first break both verifiers name (null: none; the row is then hashed as stored, and what is "
            "stored is the document itself)."
        ),
        "chain_version": 1,
        "store_id": STORE_ID.hex(),
        "dictionaries": [{"id": 1, "data_b64": base64.b64encode(DICTIONARY).decode()}],
        "rows": rows,
        "expect": {"rows_checked": len(rows)},
        "cases": cases,
    }
    print(json.dumps(vector, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
