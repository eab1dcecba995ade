"""Stored bytes per tool event, against the harness payload's canonical size (issue 15, item 5).

Two event mixes, each MIX_ROWS events with their own record_ids and clocks, stored in
batches as the daemon commits them: the adapters benchmark's (tests/support/adapter_cases.py, one
tool-completion event per harness from the published-source fixtures, 230-450 bytes), and
the daemon benchmark's Claude Code PostToolUse (tests/support/ingest.py, about 1.5 KB, its
stdout 30 identical lines, so it compresses far better than real output would). A store's size is its file after a TRUNCATE
checkpoint (table, indexes and free pages: everything on disk); dbstat splits it.

The baseline, measured in the same run, is the mean canonical size of the harness payloads
themselves. Four layouts are built from the same events:

- `schema 1`: the store with the documents as they were before record schema 2 (`raw`
  holding the whole payload; agentwatch.record.compact switched off for the run);
- `schema 2`: the store as it is (docs/record.md, "Schema 2: each value once");
- `schema 2 + zlib+dict` and `+ zstd+dict`, not what the store does: the schema 2
  document compressed (zlib with a preset dictionary, which the standard library can read;
  zstd with a dictionary trained by `zstandard`), in a table that stores the forensic
  columns as plain columns, with the store's indexes.

Both dictionaries come from documents of the other fixture events (not the mix's), so no
measured document is in its own dictionary. Figures are printed, never asserted; run with
`make bench`.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Callable

import apsw
import pytest
from support.adapter_cases import CASES, FIXTURES, envelope
from support.ingest import post_tool_use

import agentwatch
from agentwatch.record import compact, normalize, redact
from agentwatch.store import packing
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

pytestmark = pytest.mark.bench

MIX_ROWS = 4000
BATCH = 50
DICT_BYTES = 32768


def source_slices() -> list[tuple[str, int, str]]:
    """(path, first line, text of about 1.4 KB) from this repository's own source files, in order."""
    root = Path(agentwatch.__file__).parent
    out = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        at = 0
        while at < len(lines):
            chunk, end = "", at
            while end < len(lines) and len(chunk) < 1400:
                chunk += lines[end]
                end += 1
            out.append((str(path.relative_to(root.parent)), at + 1, chunk))
            at = end
    return out


def varied_payload(i: int, slices: list[tuple[str, int, str]]) -> str:
    """A Claude Code PostToolUse that read a different part of a real file each time."""
    path, first, text = slices[(i * 7919) % len(slices)]
    doc = json.loads(post_tool_use(f"{i:06d}"))
    doc["tool_input"] = {"command": f"sed -n '{first},{first + text.count(chr(10))}p' {path}",
                         "description": "Read part of a file"}
    doc["tool_response"]["stdout"] = text
    return json.dumps(doc)


def mix_envelopes(mix: str) -> list[dict]:
    names = list(CASES)
    out = []
    slices = source_slices() if mix == "varied" else []
    for i in range(MIX_ROWS):
        harness = names[i % len(names)]
        env = envelope(harness, CASES[harness])
        if mix in ("daemon", "varied"):
            text = post_tool_use(f"{i:06d}").decode() if mix == "daemon" else varied_payload(i, slices)
            env = dict(envelope("claude-code", CASES["claude-code"]), payload_text=text)
            env["orig_bytes"] = len(env["payload_text"].encode())
        env["record_id"] = str(uuid.UUID(int=(0x0190F1C27A3B << 80) | (0x7 << 76) | i))
        env["ts_observed_ns"] = 1764460800000000000 + i * 1_234_567
        env["ts_mono_ns"] = 123456789 + i * 1_234_567
        out.append(env)
    return out


def training_envelopes() -> list[dict]:
    """The other fixture events (not the mix's), each a few times with its own ids and clocks."""
    mix = {FIXTURES / h / f"{n}.json" for h, n in CASES.items()}
    out = []
    for path in sorted(FIXTURES.glob("*/*.json")):
        if path in mix:
            continue
        fixture = json.loads(path.read_text(encoding="utf-8"))
        text = json.dumps(fixture["payload"]) if "payload" in fixture else fixture.get("payload_text", "")
        for k in range(8):
            env = {"record_id": str(uuid.uuid4()), "harness": path.parent.name, "payload_text": text,
                   "orig_bytes": len(text.encode()), "truncated": False,
                   "ts_observed_ns": 1764400000000000000 + k * 977_000_001, "ts_mono_ns": 5_000_000 + k,
                   "pid": 3000 + k, "ppid": 2999, "delivery": "socket"}
            if fixture.get("event"):
                env["event"] = fixture["event"]
            out.append(env)
    return out


# --- measuring a store --------------------------------------------------------------------------


def store_bytes(conn: apsw.Connection, path: Path) -> tuple[int, dict[str, int]]:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    parts = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    return path.stat().st_size, parts


def ours(path: Path, payloads: list[bytes], rids: list[str], pack: bool = True) -> tuple[int, dict[str, int]]:
    with Store(path, pack=pack) as store:
        for at in range(0, len(payloads), BATCH):
            store.append([Append(r, "event", p) for r, p in zip(rids[at : at + BATCH], payloads[at : at + BATCH])])
        return store_bytes(store.conn, path)


_PLAIN = """
CREATE TABLE records (
    seq INTEGER PRIMARY KEY, record_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, recorded_at_ns INTEGER NOT NULL,
    payload BLOB NOT NULL, prev_hash BLOB NOT NULL, hash BLOB NOT NULL,
    harness TEXT, session_id TEXT, event_name TEXT, event_kind TEXT, tool_name TEXT);
CREATE INDEX records_by_time    ON records (recorded_at_ns);
CREATE INDEX records_by_session ON records (session_id, seq);
CREATE INDEX records_by_tool    ON records (tool_name, seq);
CREATE INDEX records_by_event   ON records (harness, event_name, seq);
"""


def plain_columns(path: Path, docs: list[bytes], rids: list[str],
                  pack: Callable[[bytes], bytes]) -> tuple[int, dict[str, int]]:
    """The compressed layout: payload packed, forensic columns stored, the store's indexes."""
    conn = apsw.Connection(str(path))
    conn.pragma("journal_mode", "wal")
    conn.pragma("synchronous", "FULL")
    conn.execute(_PLAIN)
    now = time.time_ns()
    for at in range(0, len(docs), BATCH):
        conn.execute("BEGIN IMMEDIATE")
        rows = []
        for i in range(at, min(at + BATCH, len(docs))):
            d = json.loads(docs[i])
            tool = d.get("tool") or {}
            rows.append((i + 1, rids[i], "event", now + i, pack(docs[i]), bytes(range(32)), bytes(range(1, 33)),
                         d.get("harness"), d.get("session_id"), d["event"].get("name"), d["event"].get("kind"),
                         tool.get("name")))
        conn.executemany("INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        conn.execute("COMMIT")
    try:
        return store_bytes(conn, path)
    finally:
        conn.close()


@pytest.mark.parametrize("mix", ["adapters", "daemon", "varied"])
def test_stored_bytes_per_tool_event(tmp_path, mix, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    policy = redact.default_policy()
    envs = mix_envelopes(mix)
    baseline = sum(len(canonical_json(json.loads(e["payload_text"]))) for e in envs) / len(envs)
    rids = [e["record_id"] for e in envs]
    slim = [normalize.to_append(e, policy=policy).payload for e in envs]
    training = [normalize.to_append(e, policy=policy).payload for e in training_envelopes()]
    with monkeypatch.context() as m:
        m.setattr(normalize, "move_shared", lambda doc: doc)
        docs = [normalize.to_append(e, policy=policy).payload for e in envs]
    for full, small in zip(docs[:8], slim[:8]):
        assert compact.harness_payload(json.loads(small)) == json.loads(full)["raw"]

    trained = zstandard.train_dictionary(DICT_BYTES, training)
    zstd = zstandard.ZstdCompressor(level=19, dict_data=trained, write_content_size=False, write_checksum=False,
                                    write_dict_id=False)
    unzstd = zstandard.ZstdDecompressor(dict_data=trained)
    assert unzstd.decompressobj().decompress(zstd.compress(slim[0])) == slim[0]

    packed_path = tmp_path / "packed.db"
    results = {
        "schema 1, plain": (ours(tmp_path / "schema1.db", docs, rids, pack=False), sum(map(len, docs))),
        "schema 2, plain": (ours(tmp_path / "schema2.db", slim, rids, pack=False), sum(map(len, slim))),
        "schema 2, packed (the store)": (ours(packed_path, slim, rids), None),
        "zstd+dict, columns": (plain_columns(tmp_path / "zstd.db", slim, rids, zstd.compress),
                               sum(len(zstd.compress(d)) for d in slim)),
    }
    con = apsw.Connection(str(packed_path))
    packed_rows, stored_payload, first_packed = con.execute(
        "SELECT count(payload_z), sum(length(CAST(payload AS BLOB)) + coalesce(length(payload_z), 0)),"
        " min(CASE WHEN payload_z IS NOT NULL THEN seq END) FROM records").fetchone()
    steady = con.execute("SELECT avg(length(CAST(payload AS BLOB)) + length(payload_z)), avg(length(payload_z))"
                         " FROM records WHERE payload_z IS NOT NULL").fetchone()
    con.close()
    results["schema 2, packed (the store)"] = (results["schema 2, packed (the store)"][0], stored_payload)
    n = len(envs)
    print(f"\n\nstored bytes per tool event, {n} events of the {mix} mix (db + indexes after a TRUNCATE "
          f"checkpoint); baseline: the payload's canonical size, mean {baseline:.0f} B")
    print(f"{'layout':<30} {'file B/event':>12} {'ratio':>6} {'payload B':>9} {'table B':>8} {'indexes B':>9}")
    for name, ((size, parts), payload_total) in results.items():
        table = parts.get("records", 0)
        indexes = sum(v for k, v in parts.items() if k.startswith(("records_", "sqlite_autoindex_records")))
        print(f"{name:<30} {size / n:>12.0f} {size / n / baseline:>6.2f} {payload_total / n:>9.0f}"
              f" {table / n:>8.0f} {indexes / n:>9.0f}")
    print(f"packed rows: {packed_rows} of {n} (the first from seq {first_packed}: the dictionary is trained on "
          f"the first {packing.TRAIN_SAMPLES} documents); a packed row's payload column + payload_z: "
          f"{steady[0]:.0f} B, payload_z alone {steady[1]:.0f} B")
