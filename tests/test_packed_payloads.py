"""Packed payloads (docs/chain.md, "Packed payloads"): event documents stored deflated with a
dictionary trained on the store's own records, their forensic fields kept queryable.

The documents are the harness fixtures (tests/fixtures/harness, built from each harness's
published sources), normalized as the daemon normalizes them. Tampering goes through
chain_tamper, as an attacker with the user's rights would; both verifiers must name it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import subprocess
import sys
import uuid
import zlib
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.adapter_cases import FIXTURES
from support.chain_tamper import STANDALONE, tamper

import agentwatch.standalone_verify as standalone
from agentwatch.evidence.audit import verify_store
from agentwatch.readers import sql, tail
from agentwatch.record import normalize, redact
from agentwatch.store import db, erasure, migrations, packing
from agentwatch.store.append import Append, RowRefused, Store
from agentwatch.store.chain import canonical_json

TRAIN = 16  # documents before the first dictionary, in these tests
SHIPPED_TRAIN = packing.TRAIN_SAMPLES  # what a daemon started by a test uses


@pytest.fixture(autouse=True)
def small_training(monkeypatch):
    monkeypatch.setattr(packing, "TRAIN_SAMPLES", TRAIN)


def fixture_documents(rounds: int = 3) -> list[Append]:
    """Every harness fixture, normalized, `rounds` times with its own record ids and clocks."""
    policy = redact.default_policy()
    out = []
    paths = sorted(FIXTURES.glob("*/*.json"))
    for r in range(rounds):
        for k, path in enumerate(paths):
            fixture = json.loads(path.read_text(encoding="utf-8"))
            text = json.dumps(fixture["payload"]) if "payload" in fixture else fixture.get("payload_text", "")
            env = {"record_id": str(uuid.UUID(int=(r << 32) | k)), "harness": path.parent.name,
                   "payload_text": text, "orig_bytes": len(text.encode()), "truncated": False,
                   "ts_observed_ns": 1764400000000000000 + (r * 1000 + k) * 977_000_001,
                   "ts_mono_ns": 5_000_000 + k, "pid": 3000 + k, "ppid": 2999, "delivery": "socket"}
            if fixture.get("event"):
                env["event"] = fixture["event"]
            out.append(normalize.to_append(env, policy=policy))
    return out


def store_of(path: Path, rows: list[Append], *, pack: bool = True, batch: int = 25) -> Path:
    with Store(path, pack=pack) as store:
        for at in range(0, len(rows), batch):
            store.append(rows[at : at + batch])
    return path


def ours(path: Path):
    """agentwatch verify --full, with its anchors and evidence beside the store."""
    return verify_store(path, full=True, state_dir=path.parent / f"{path.name}.state")


def standalone_verify(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-I", "-S", str(STANDALONE), str(path), "--json"],
                          capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def documents() -> list[Append]:
    return fixture_documents()


def _packed_seqs(path: Path) -> list[int]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute("SELECT seq FROM records WHERE payload_z IS NOT NULL ORDER BY seq")]
    finally:
        con.close()


# --- what is stored -------------------------------------------------------------------------


def test_documents_are_packed_once_a_dictionary_is_trained_and_read_back_exactly(tmp_path, documents):
    path = store_of(tmp_path / "s.db", documents)
    big = [i + 1 for i, a in enumerate(documents) if len(a.payload) >= packing.PACK_MIN_BYTES]
    con = db.open_reader(path)
    try:
        (dictionaries,) = con.execute("SELECT count(*) FROM _agentwatch_dictionaries").fetchone()
        assert dictionaries == 1
        packed = _packed_seqs(path)
        # The first TRAIN big documents train the dictionary (their batch and the ones before it stay plain).
        first_packed_batch = ((big[TRAIN - 1] - 1) // 25 + 1) * 25 + 1
        assert packed == [s for s in big if s >= first_packed_batch]
        # Each packed row's payload is exactly the projection of its document.
        for seq, payload in con.execute("SELECT seq, CAST(payload AS BLOB) FROM records WHERE payload_z IS NOT NULL"):
            assert payload == canonical_json(packing.projection(json.loads(documents[seq - 1].payload)))
        records = tail.read_after(con, 0, len(documents) + 1)
    finally:
        con.close()
    assert [r.payload for r in records] == [a.payload for a in documents]


def test_packed_rows_cost_less_than_plain_ones(tmp_path, documents):
    plain = store_of(tmp_path / "plain.db", documents, pack=False)
    packed = store_of(tmp_path / "packed.db", documents)
    sizes = {}
    for name, path in (("plain", plain), ("packed", packed)):
        con = sqlite3.connect(path)
        sizes[name] = con.execute("SELECT sum(length(CAST(payload AS BLOB)) + coalesce(length(payload_z), 0))"
                                  " FROM records WHERE seq IN (SELECT seq FROM records WHERE payload_z IS NOT NULL)"
                                  " OR ? = 'plain'", (name,)).fetchone()[0]
        con.close()
    packed_rows = _packed_seqs(packed)
    plain_bytes = sum(len(documents[s - 1].payload) for s in packed_rows)
    assert sizes["plain"] == sum(len(a.payload) for a in documents)
    assert sizes["packed"] < plain_bytes


def test_forensic_columns_and_views_are_the_same_packed_or_plain(tmp_path, documents):
    plain = store_of(tmp_path / "plain.db", documents, pack=False)
    packed = store_of(tmp_path / "packed.db", documents)
    assert len(_packed_seqs(packed)) > 0
    queries = (
        "SELECT seq, record_id, kind, harness, session_id, event_name, event_kind, tool_name, erased_seq"
        " FROM records ORDER BY seq",
        "SELECT seq, record_id, harness, session_id, event_name, event_kind, tool_name, tool_category, turn_id, cwd,"
        " model, client_pid, observed_at_ns FROM main.events ORDER BY seq",
        "SELECT first_seq, harness, session_id, turn_id, tool_name, tool_category, mcp_server, call_id, paired_by,"
        " started_at, ended_at, duration_ms, duration_source, outcome, start_seq, end_seq, start_record_id,"
        " end_record_id FROM tool_calls ORDER BY first_seq",
    )
    for query in queries:
        got = []
        for path in (plain, packed):
            con = db.open_reader(path)
            got.append(con.execute(query).fetchall())
            con.close()
        assert got[0] == got[1]
        assert len(got[0]) > 0


def test_forensic_sql_shows_whole_documents(tmp_path, documents):
    path = store_of(tmp_path / "s.db", documents)
    whole = [a.payload.decode() for a in documents]
    _, rows = sql.run(path, "SELECT payload FROM records ORDER BY seq")
    assert [r[0] for r in rows] == whole
    _, rows = sql.run(path, "SELECT payload FROM events ORDER BY seq")
    assert [r[0] for r in rows] == whole
    # A path outside the projection reads from the document too.
    _, rows = sql.run(path, "SELECT count(*) FROM records WHERE payload_z IS NOT NULL"
                            " AND json_extract(payload, '$.raw') IS NOT NULL")
    (n,) = next(rows)
    assert n == sum(1 for s in _packed_seqs(path) if "raw" in json.loads(documents[s - 1].payload))


def test_both_verifiers_accept_a_packed_store(tmp_path, documents):
    path = store_of(tmp_path / "s.db", documents)
    result = ours(path)
    assert result.ok and result.rows_checked == len(documents)
    report = standalone_verify(path)
    assert report["ok"] is True and report["rows_checked"] == len(documents)


def test_small_documents_attestations_and_gaps_stay_plain(tmp_path, documents):
    big = max(documents, key=lambda a: len(a.payload))
    rows = [Append(f"e-{i}", "event", big.payload) for i in range(TRAIN + 30)]
    rows += [Append("a-1", "attestation", big.payload), Append("g-1", "gap", big.payload),
             Append("small", "event", canonical_json({"harness": "codex", "x": "y" * 100}))]
    path = store_of(tmp_path / "s.db", rows)
    con = sqlite3.connect(path)
    plain = con.execute("SELECT record_id FROM records WHERE payload_z IS NULL AND seq > 25").fetchall()
    con.close()
    # The first batch of 25 trains the dictionary; in the second every big event is packed.
    assert plain == [("a-1",), ("g-1",), ("small",)]
    assert _packed_seqs(path) == list(range(26, TRAIN + 31))


# --- the dictionary's life ------------------------------------------------------------------


def test_a_refused_batch_leaves_no_dictionary_and_the_next_one_writes_it(tmp_path, documents):
    big = [a for a in documents if len(a.payload) >= packing.PACK_MIN_BYTES]
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.append(big[:TRAIN])  # trains the dictionary, not yet written
        assert store.packer.pending is not None
        bad = Append("bad", "event", b'{"harness":"x","pad":"' + b"a" * 600 + b'"')  # not JSON: refused
        with pytest.raises(RowRefused):
            store.append([*big[TRAIN : TRAIN + 5], bad])
        assert store.conn.execute("SELECT count(*) FROM _agentwatch_dictionaries").fetchone() == (0,)
        store.append(big[TRAIN : TRAIN + 5])
        assert store.conn.execute("SELECT count(*) FROM _agentwatch_dictionaries").fetchone() == (1,)
        assert store.conn.execute("SELECT count(*), min(payload_dict), max(payload_dict) FROM records"
                                  " WHERE payload_z IS NOT NULL").fetchone() == (5, 1, 1)
    with Store(path) as store:  # reopened: the stored dictionary is the current one
        assert store.packer.current is not None and store.packer.current.id == 1


def test_a_fresher_dictionary_is_kept_only_when_it_packs_better(tmp_path, documents, monkeypatch):
    monkeypatch.setattr(packing, "RETRAIN_ROWS", 40)
    by_harness: dict[str, list[Append]] = {}
    for a in documents:
        if len(a.payload) >= packing.PACK_MIN_BYTES:
            by_harness.setdefault(json.loads(a.payload)["harness"], []).append(a)
    first, second = by_harness["claude-code"], by_harness["gemini-cli"]

    def many(rows: list[Append], tag: str, n: int) -> list[Append]:
        return [Append(f"{tag}-{i}", "event", rows[i % len(rows)].payload) for i in range(n)]

    same = store_of(tmp_path / "same.db", many(first, "a", 200))
    shifted = store_of(tmp_path / "shifted.db", many(first, "a", 100) + many(second, "b", 200))
    used = {}
    for name, path in (("same", same), ("shifted", shifted)):
        con = sqlite3.connect(path)
        rows = con.execute("SELECT seq, payload_dict FROM records WHERE payload_z IS NOT NULL ORDER BY seq").fetchall()
        (stored,) = con.execute("SELECT count(*) FROM _agentwatch_dictionaries").fetchone()
        con.close()
        runs = [d for i, (_, d) in enumerate(rows) if i == 0 or rows[i - 1][1] != d]
        used[name] = (runs, stored)
        assert all(d == 1 for s, d in rows if s <= 100)
        assert ours(path).ok
        assert standalone_verify(path)["ok"] is True
    # One shape throughout: every trial of a fresher dictionary falls short of RETRAIN_GAIN.
    # After the shift the first trial trains on a window still half Claude Code's and wins;
    # the next, on Gemini's alone, wins again; later ones do not.
    assert used == {"same": ([1], 1), "shifted": ([1, 2, 3], 3)}


# --- old rows -------------------------------------------------------------------------------


def test_a_store_from_before_packing_is_upgraded_and_its_rows_stay_as_they_were(tmp_path, documents):
    path = tmp_path / "old.db"
    conn = apsw_connection(path)
    migrations.migrate(conn, migrations.load()[:5])
    conn.close()
    # Rows written by the schema before packing: the same INSERT the writer then made.
    old_rows = documents[:40]
    con = sqlite3.connect(path, isolation_level=None)
    sid = bytes.fromhex(con.execute("SELECT value FROM _agentwatch_meta WHERE key = 'store_id'").fetchone()[0])
    prev = bytes(32)
    from agentwatch.store.chain import row_hash
    for seq, a in enumerate(old_rows, 1):
        digest = row_hash(sid, seq, 1_764_000_000_000_000_000 + seq, "event", a.record_id, prev, a.payload)
        con.execute("INSERT INTO records (seq, record_id, kind, recorded_at_ns, payload, prev_hash, hash)"
                    " VALUES (?, ?, 'event', ?, ?, ?, ?)",
                    (seq, a.record_id, 1_764_000_000_000_000_000 + seq, a.payload.decode(), prev, digest))
        prev = digest
    con.close()
    assert standalone_verify(path)["ok"] is True  # the standalone verifier reads the old layout
    store_of(path, documents[40:])  # upgrades to the packing schema, then appends
    assert _packed_seqs(path)[0] > 40
    result = ours(path)
    assert result.ok and result.rows_checked == len(documents)
    assert standalone_verify(path)["rows_checked"] == len(documents)


def apsw_connection(path: Path):
    import apsw

    return apsw.Connection(str(path))


# --- tampering ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def packed_template(tmp_path_factory) -> tuple[Path, list[int]]:
    path = tmp_path_factory.mktemp("packed") / "template.db"
    import agentwatch.store.packing as p

    old = p.TRAIN_SAMPLES
    p.TRAIN_SAMPLES = TRAIN
    try:
        store_of(path, fixture_documents(rounds=2))
    finally:
        p.TRAIN_SAMPLES = old
    return path, _packed_seqs(path)


def _both_name(path: Path, seq: int, kind: str) -> None:
    result = ours(path)
    assert result.finding is not None and (result.finding.seq, result.finding.kind) == (seq, kind)
    report = standalone_verify(path)
    assert (report["finding"]["seq"], report["finding"]["kind"]) == (seq, kind)


def _copy(template: Path, dest: Path) -> Path:
    dest.write_bytes(template.read_bytes())
    return dest


def test_an_edited_projection_is_named(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[3]
    with tamper(path) as con:
        proj = json.loads(con.execute("SELECT payload FROM records WHERE seq = ?", (seq,)).fetchone()[0])
        proj["harness"] = "someone-else"
        con.execute("UPDATE records SET payload = ? WHERE seq = ?", (canonical_json(proj).decode(), seq))
    _both_name(path, seq, "payload_edited")


def test_an_edited_packed_document_is_named(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[5]
    with tamper(path) as con:
        z = bytearray(con.execute("SELECT payload_z FROM records WHERE seq = ?", (seq,)).fetchone()[0])
        z[len(z) // 2] ^= 0x10
        con.execute("UPDATE records SET payload_z = ? WHERE seq = ?", (bytes(z), seq))
    _both_name(path, seq, "payload_edited")


def test_a_document_unpacked_in_place_of_its_projection_is_named(tmp_path, packed_template):
    """Clearing payload_z leaves the projection as a plain row's payload: not the document the chain covers."""
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[0]
    with tamper(path) as con:
        con.execute("UPDATE records SET payload_z = NULL, payload_dict = NULL WHERE seq = ?", (seq,))
    _both_name(path, seq, "payload_edited")


def test_a_changed_dictionary_is_named_at_its_first_row(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    replace_dictionary(path, 32768)
    _both_name(path, packed[0], "payload_edited")


def replace_dictionary(path: Path, size: int) -> None:
    """Dictionary 1 becomes `size` zero bytes, through its append-only trigger (dropped and put back)."""
    with tamper(path) as con:
        (trigger,) = con.execute("SELECT sql FROM sqlite_schema WHERE name = '_agentwatch_dictionaries_no_update'"
                                 ).fetchone()
        con.execute("DROP TRIGGER _agentwatch_dictionaries_no_update")
        con.execute("UPDATE _agentwatch_dictionaries SET data = zeroblob(?) WHERE id = 1", (size,))
        con.execute(trigger)


def test_a_decompression_bomb_is_refused_not_inflated(tmp_path, packed_template, monkeypatch):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[1]
    con = sqlite3.connect(path)
    (data,) = con.execute("SELECT data FROM _agentwatch_dictionaries WHERE id = 1").fetchone()
    con.close()
    c = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, data)
    bomb = c.compress(b" " * (standalone.MAX_DOCUMENT + 1)) + c.flush()
    with tamper(path) as con:
        con.execute("UPDATE records SET payload_z = ? WHERE seq = ?", (bomb, seq))
    assert packing.Dictionary(data).unpack(bomb) is None
    _both_name(path, seq, "payload_edited")


# --- erasure --------------------------------------------------------------------------------


def test_erasing_a_packed_row_removes_its_bytes_and_keeps_the_chain(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[2]
    con = sqlite3.connect(path)
    z, proj = con.execute("SELECT payload_z, CAST(payload AS BLOB) FROM records WHERE seq = ?", (seq,)).fetchone()
    con.close()
    document = packing.unpacked(proj, packing.Dictionary(_dictionary(path)), z)
    assert document is not None

    def on_disk(needle: bytes) -> list[str]:
        return [p.name for p in sorted(tmp_path.iterdir()) if p.is_file() and needle in p.read_bytes()]

    assert on_disk(z) == ["s.db"]
    with Store(path) as store:
        done = erasure.erase_rows(store, [seq], "packed row erased in a test")
    assert done.erased[0].payload_sha256 == hashlib.sha256(document).digest()
    assert on_disk(z) == [] and on_disk(proj) == []
    con = sqlite3.connect(path)
    assert con.execute("SELECT payload, payload_dict, payload_z FROM records WHERE seq = ?",
                       (seq,)).fetchone() == ("null", None, None)
    con.close()
    result = ours(path)
    assert result.ok and [e[0] for e in result.erased] == [seq]
    report = standalone_verify(path)
    assert report["ok"] is True and [e["seq"] for e in report["erased"]] == [seq]


def _dictionary(path: Path) -> bytes:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT data FROM _agentwatch_dictionaries WHERE id = 1").fetchone()[0]
    finally:
        con.close()


def test_the_guard_refuses_an_erasure_that_leaves_the_packed_document(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    seq = packed[2]
    with Store(path) as store:
        import apsw

        def keep_z(conn, appended) -> None:
            conn.execute("UPDATE records SET payload = 'null' WHERE seq = ?", (seq,))

        named = erasure._plan(store, seq, "a reason of its own")
        doc = {"schema": 1, "type": "erasure", "erased_seq": seq, "payload_sha256":
               "sha256:" + named.payload_sha256.hex()}
        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.append([Append(erasure.erasure_record_id(seq), "attestation", canonical_json(doc))],
                         before_commit=keep_z)


# --- the projection, in both verifiers ------------------------------------------------------

_KEYS = st.sampled_from(["client", "tool", "event", "decision", "name", "pid", "value", "kind", "harness",
                         "cwd", "other", "delivery", "call_id", "schema", "turn_id"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(_KEYS, _JSON, max_size=6))
@example({"tool": {"name": "Bash", "input": {"name": "x"}}, "event": "not an object", "client": {}})
@example({"decision": {"value": {"nested": [1, 2]}}, "tool": []})
@example({"tool": {"duration_ms": 1e16, "is_error": -0.0}, "client": {"pid": 2**64}})  # orjson reads 2**64 as a float
@example({"client": {"pid": -(2**63) - 1}, "turn_id": 1e-07})
def test_both_verifiers_project_a_document_alike(doc):
    document = canonical_json(doc)
    ours = packing.projected(document)
    assert ours == canonical_json(packing.projection(doc))

    class _Conn:
        def dictionary(self, _id):
            return b"{}"

    c = zlib.compressobj(4, zlib.DEFLATED, -15, 6, zlib.Z_DEFAULT_STRATEGY, b"{}")
    z = c.compress(document) + c.flush()
    assert standalone.document_of(_Conn(), ours, 1, z) == document
    assert standalone.document_of(_Conn(), ours + b" ", 1, z) is None


# --- readers --------------------------------------------------------------------------------


def test_sessions_timelines_subscriptions_and_otlp_read_packed_rows_as_plain_ones(tmp_path, monkeypatch):
    """The published-source sessions (tests/support/sessions.py), packed down to small events."""
    from support import sessions as fixture_sessions

    from agentwatch.daemon import subscriptions
    from agentwatch.readers import otlp, sessions
    from agentwatch.verify.walk import read_store_id

    monkeypatch.setattr(packing, "PACK_MIN_BYTES", 64)
    seen = {}
    for name, train in (("plain", 10**9), ("packed", 8)):
        monkeypatch.setattr(packing, "TRAIN_SAMPLES", train)
        path = tmp_path / f"{name}.db"
        fixture_sessions.build(path, monkeypatch)
        listed = sessions.list_sessions(path)
        timelines = [sessions.timeline(path, s.session_id, s.harness) for s in listed]
        conn = db.open_reader(path)
        try:
            (packed,) = conn.execute("SELECT count(payload_z) FROM records").fetchone()
            head = conn.execute("SELECT max(seq) FROM records").fetchone()[0]
            lines, _ = subscriptions.read_chunk(conn, 0, head, None)
            records = tail.read_after(conn, 0, head)
            spans = otlp.Mapper(conn, read_store_id(conn), content=True).spans(records)
        finally:
            conn.close()
        # Span ids derive from the store_id, which differs between the two stores.
        spans = [dataclasses.replace(s, trace_id=b"", span_id=b"", parent_span_id=b"") for s in spans]
        seen[name] = (packed, listed, timelines, [json.loads(x)["payload"] for x in lines], spans)
    plain, packed = seen["plain"], seen["packed"]
    assert plain[0] == 0 and packed[0] == sum(len(v) for v in fixture_sessions.SESSIONS.values()) - 8
    assert packed[1:] == plain[1:]


def test_a_proof_bundle_of_a_packed_row_carries_its_document(tmp_path, documents):
    from agentwatch.evidence import bundle as bundles
    from agentwatch.evidence.checkpoints import Notary

    path = tmp_path / "s.db"
    state = tmp_path / "state"
    with Store(path) as store:
        for at in range(0, len(documents), 25):
            store.append(documents[at : at + 25])
        notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state)
        notary.sign()
    seq = _packed_seqs(path)[0]
    doc = bundles.prove_inclusion(path, seq, state_dir=state)
    assert doc["record"]["payload"].encode() == documents[seq - 1].payload
    assert bundles.verify_bundle(doc, notary.verifier).seq == seq
    assert standalone.check_bundle(doc, notary.verifier.encode()) == \
        f"seq {seq} is in the signed tree of {len(documents)} rows"


@pytest.mark.parametrize(("depth", "packed"), [(packing.PACK_MAX_DEPTH - 2, True), (packing.PACK_MAX_DEPTH - 1, False),
                                               (990, False)])
def test_a_deeply_nested_document_is_stored_plain(tmp_path, depth, packed):
    """Every verifier parses a packed document; one nested past PACK_MAX_DEPTH stays plain (depth + 2 levels)."""
    deep = b'{"value":' * depth + b'"bottom"' + b"}" * depth  # canonical JSON, built as text
    document = (b'{"decision":{"value":' + deep + b'},"event":{"kind":"permission","name":"x"},"harness":"codex",'
                b'"pad":"' + b"p" * 600 + b'"}')
    rows = [Append(f"d-{i}", "event", document) for i in range(TRAIN + 30)]
    path = store_of(tmp_path / "s.db", rows)
    assert _packed_seqs(path) == (list(range(26, TRAIN + 31)) if packed else [])
    assert ours(path).ok and standalone_verify(path)["ok"] is True


def test_a_writer_opens_a_store_whose_dictionary_is_not_one_and_trains_its_own(tmp_path, packed_template):
    template, packed = packed_template
    path = _copy(template, tmp_path / "s.db")
    replace_dictionary(path, 40000)  # longer than a dictionary can be
    with Store(path) as store:
        assert store.packer.current is None
        head = store.head()[0]
        store.append(fixture_documents(rounds=1)[:TRAIN])
        store.append([Append(f"new-{a.record_id}", "event", a.payload) for a in fixture_documents(rounds=1)[:40]])
        used = store.conn.execute("SELECT DISTINCT payload_dict FROM records WHERE seq > ? AND payload_z IS NOT NULL",
                                  (head,)).fetchall()
    assert used == [(2,)]
    _both_name(path, packed[0], "payload_edited")


# --- the setting ----------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--packing", "--no-packing"])
def test_serve_packs_large_events_unless_told_not_to(tmp_path, flag):
    """A real daemon, 300 events of about 1 KB each. Packing starts with the group commit after
    the one that holds the TRAIN_SAMPLES-th event (rows of one commit share recorded_at_ns)."""
    from support.daemon import Daemon, append_many

    d = Daemon(tmp_path, extra_args=[flag]).start()
    try:
        # In two rounds, so the second lands in commits after the dictionary is trained.
        append_many(d, 260, prefix="big", tool_input={"command": "cat notes.txt", "note": "n" * 900})
        append_many(d, 40, prefix="more", tool_input={"command": "cat notes.txt", "note": "m" * 900})
    finally:
        assert d.stop() == 0
    con = sqlite3.connect(d.store)
    rows = con.execute("SELECT recorded_at_ns, payload_z IS NOT NULL FROM records WHERE kind = 'event' ORDER BY seq"
                       ).fetchall()
    con.close()
    assert len(rows) == 300
    packed = [i for i, (_, z) in enumerate(rows) if z]
    if flag == "--no-packing":
        assert packed == []
        return
    trained_in = rows[SHIPPED_TRAIN - 1][0]  # the commit holding the last sample it needs
    first = next(i for i, (at, _) in enumerate(rows) if at > trained_in)
    assert packed == list(range(first, 300))
    assert ours(d.store).ok


def test_import_reads_the_packing_setting(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from agentwatch.cli import app

    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps({"record_id": f"imp-{i}", "harness": "claude-code",
                                         "payload": {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                                     "session_id": "s", "tool_response": {"stdout": "x" * 900}}})
                             + "\n" for i in range(TRAIN + 40)))
    packed = {}
    for setting in ("true", "false"):
        monkeypatch.setenv("AGENTWATCH_PACKING", setting)
        store = tmp_path / f"{setting}.db"
        result = CliRunner().invoke(app, ["import", "--store", str(store), "--batch-size", "20", str(lines)])
        assert result.exit_code == 0, result.output
        packed[setting] = _packed_seqs(store)
    # Batches of 20: the first (TRAIN = 16 samples) trains the dictionary, the rest are packed.
    assert packed == {"true": list(range(21, TRAIN + 41)), "false": []}
