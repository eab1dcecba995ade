"""The chain v1 recipe: pinned vectors for both implementations, and properties.

The vectors in tests/vectors/chain_v1.json fix exact hashes; the library
(chain.row_hash and verify's own walk) and the standalone verifier must both
reproduce them. Hypothesis then checks canonical JSON and that any single-byte
payload edit anywhere in a chain is found at exactly that row.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sqlite3
import tempfile
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import chain_tamper as t

from agentwatch import standalone_verify
from agentwatch.evidence.audit import verify_store
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import DOMAIN_TAG, GENESIS, canonical_json, format_hash, parse_hash, row_hash
from agentwatch.store.migrations import APPLICATION_ID
from agentwatch.verify.walk import verify_range

VECTORS = json.loads((Path(__file__).parent / "vectors" / "chain_v1.json").read_text(encoding="utf-8"))
STORE_ID = bytes.fromhex(VECTORS["store_id"])
ROWS = VECTORS["rows"]
# Hypothesis runs many examples per test; the per-test temp dirs it shares are never written.
SETTINGS = settings(deadline=None, max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- vectors ------------------------------------------------------------------------------


def vector_rows():
    """(seq, recorded_at_ns, kind, record_id, payload bytes, prev_hash, hash) per vector row."""
    for v in ROWS:
        payload = bytes.fromhex(v["payload_hex"])
        prev, digest = parse_hash(v["prev_hash"]), parse_hash(v["hash"])
        yield v["seq"], v["recorded_at_ns"], v["kind"], v["record_id"], payload, prev, digest


def test_vectors_fix_the_domain_tag_and_genesis():
    assert bytes.fromhex(VECTORS["domain_tag_hex"]) == DOMAIN_TAG == b"agentwatch/chain/v1\x00"
    assert len(STORE_ID) == 16
    assert ROWS[0]["prev_hash"] == format_hash(GENESIS) == "sha256:" + "0" * 64
    assert [v["kind"] for v in ROWS] == ["event", "attestation", "gap", "event"]
    assert any(not v["record_id"].isascii() for v in ROWS) and any(not v["payload"].isascii() for v in ROWS)


@pytest.mark.parametrize("index", range(len(ROWS)))
def test_vector_row_hash_library_and_standalone(index):
    v = ROWS[index]
    seq, at, kind, rid, payload, prev, digest = list(vector_rows())[index]
    assert payload == v["payload"].encode("utf-8")
    assert canonical_json(json.loads(v["payload"])) == payload
    assert format_hash(hashlib.sha256(payload).digest()) == v["payload_sha256"]
    assert hashlib.sha256(bytes.fromhex(v["preimage_hex"])).digest() == digest
    assert row_hash(STORE_ID, seq, at, kind, rid, prev, payload) == digest
    assert standalone_verify.row_hash(STORE_ID, seq, at, kind.encode(), rid.encode(), prev, payload) == digest


def test_vectors_chain_from_genesis():
    prev = GENESIS
    for _, _, _, _, _, prev_hash, digest in vector_rows():
        assert prev_hash == prev
        prev = digest


def _create_records(execute) -> None:
    execute(
        "CREATE TABLE records (seq INTEGER PRIMARY KEY, record_id TEXT, kind TEXT, recorded_at_ns INTEGER,"
        " payload TEXT, prev_hash BLOB, hash BLOB)"
    )


def _insert_vectors(execute) -> None:
    for seq, at, kind, rid, payload, prev, digest in vector_rows():
        execute(
            "INSERT INTO records VALUES (?, ?, ?, ?, CAST(? AS TEXT), ?, ?)",
            (seq, rid, kind, at, payload, prev, digest),
        )


def test_vectors_verify_in_the_library_walk():
    conn = apsw.Connection(":memory:")
    _create_records(conn.execute)
    _insert_vectors(conn.execute)
    result = verify_range(conn, STORE_ID, 0, GENESIS, 100)
    assert (result.rows, result.last_seq, result.finding) == (4, 4, None)
    assert format_hash(result.last_hash) == ROWS[-1]["hash"]


def test_vectors_verify_in_the_standalone_walk(tmp_path):
    path = tmp_path / "vectors.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("CREATE TABLE _agentwatch_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO _agentwatch_meta VALUES ('store_id', ?), ('chain_version', '1')", (VECTORS["store_id"],))
    _create_records(con.execute)
    _insert_vectors(con.execute)
    con.close()
    report = standalone_verify.verify(str(path))
    assert (report["ok"], report["rows_checked"], report["head_hash"]) == (True, 4, ROWS[-1]["hash"])


# --- canonical JSON -------------------------------------------------------------------------

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def reversed_keys(value):
    """The same JSON value with every object's keys inserted in reverse order."""
    if isinstance(value, dict):
        return {k: reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


@given(json_values)
@SETTINGS
def test_canonical_json_round_trips(value):
    encoded = canonical_json(value)
    assert json.loads(encoded.decode("utf-8")) == value
    assert canonical_json(json.loads(encoded)) == encoded


@given(json_values)
@SETTINGS
def test_canonical_json_ignores_key_order(value):
    assert canonical_json(reversed_keys(value)) == canonical_json(value)


@given(st.sampled_from([math.nan, math.inf, -math.inf]), st.lists(st.integers(), max_size=3))
@SETTINGS
def test_canonical_json_refuses_nan_and_infinity(bad, siblings):
    for value in (bad, [*siblings, bad], {"k": bad}):
        with pytest.raises(ValueError):
            canonical_json(value)


@given(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.text(max_size=4), st.booleans())
@SETTINGS
def test_canonical_json_refuses_lone_surrogates(surrogate, text, as_key):
    bad = text + surrogate + text
    with pytest.raises(ValueError):
        canonical_json({bad: 1} if as_key else {"k": [bad]})


# --- chains built from random documents ----------------------------------------------------


@given(st.lists(st.tuples(st.sampled_from(t.KIND_CYCLE), json_objects), min_size=1, max_size=6))
@settings(SETTINGS, max_examples=15)
def test_random_chains_verify_in_both_verifiers(docs):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store.db"
        with Store(path) as store:
            store.append([Append(f"r{i}", kind, canonical_json(doc)) for i, (kind, doc) in enumerate(docs)])
        lib = verify_store(path, full=True, update_anchor=False, state_dir=Path(tmp))
        report = standalone_verify.verify(str(path))
    assert (lib.ok, lib.rows_checked, lib.head_seq) == (True, len(docs), len(docs))
    assert (report["ok"], report["rows_checked"], report["head_hash"]) == (True, len(docs), lib.head_hash)


@pytest.fixture(scope="module")
def random_chain(tmp_path_factory):
    """A 10-row chain of varied random documents, kinds and record ids (seeded)."""
    rng = random.Random(20251130)
    alphabet = "abcxyz0189 _-\"\\/é雪😀\n\t"
    path = tmp_path_factory.mktemp("random") / "store.db"
    rows = []

    def text(low: int, high: int) -> str:
        return "".join(rng.choices(alphabet, k=rng.randint(low, high)))

    for i in range(10):
        doc = {
            text(1, 6): rng.choice([rng.randint(-(10**12), 10**12), rng.random(), text(0, 40), None, True])
            for _ in range(rng.randint(1, 6))
        }
        rows.append(Append(f"id-{i}-{rng.randint(0, 10**6)}", rng.choice(t.KIND_CYCLE), canonical_json(doc)))
    with Store(path) as store:
        store.append(rows)
    return path, [len(r.payload) for r in rows]


@given(st.data())
@settings(SETTINGS, max_examples=40)
def test_any_single_byte_payload_edit_is_found_at_that_seq(random_chain, data):
    template, lengths = random_chain
    seq = data.draw(st.integers(1, len(lengths)), label="seq")
    index = data.draw(st.integers(0, lengths[seq - 1] - 1), label="byte")
    delta = data.draw(st.integers(1, 255), label="xor")
    with tempfile.TemporaryDirectory() as tmp:
        path = t.copy_store(template, Path(tmp) / "store.db")
        with t.tamper(path) as con:
            original = t.raw(con, seq)[3]
            t.flip_payload_byte(con, seq, index, original[index] ^ delta)
        lib = verify_store(path, full=True, update_anchor=False, state_dir=Path(tmp))
        report = standalone_verify.verify(str(path))
    # The head has no successor to tell a content edit from a hash edit.
    expected = (False, "edited" if seq == len(lengths) else "payload_edited", seq)
    assert t.verdict_of(lib) == expected
    assert t.verdict_of(report) == expected
