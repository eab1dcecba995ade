"""Hostile input on the wire and in the spool, against a real daemon (hypothesis).

Each example pipelines a mix of hostile frames and good appends on one
connection while a second connection keeps appending and pinging. Every reply
is checked against a model of docs/protocol.md (`expected`), the daemon must
keep answering, and at the end every acknowledged record is stored exactly
once at its acked seq and nothing unacknowledged is. The `*_soak` tests run
the same properties with many more examples.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.daemon import Client, Daemon, envelope, line, wait_for

from agentwatch.store.append import json_nesting_exceeds

pytestmark = pytest.mark.usefixtures("reap_daemons")

MAX_LINE = 1 << 20
def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def expected(frame: bytes) -> set[str]:
    """What the protocol allows as the reply to one line (without its newline)."""
    if len(frame) > MAX_LINE:
        return {"too_large"}
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError:
        return {"bad_utf8"}
    try:
        request = json.loads(text)
    except (ValueError, RecursionError):
        return {"bad_json"}
    if type(request) is not dict:
        return {"bad_json"}
    # Near the interpreter's recursion limit the daemon's parser (called deeper in its
    # stack than this one) may give up first: a clean bad_json then.
    lenient = {"bad_json"} if json_nesting_exceeds(frame, 500) else set()
    op = request.get("op")
    if op in ("ping", "health"):
        return {op} | lenient
    if op != "append":
        return {"unknown_op"} | lenient
    if request.get("v", 1) != 1:
        return {"bad_request"} | lenient
    return {"ack", "bad_request"} | lenient  # normalize decides: a bad envelope, or stored (payload_error if need be)


def outcome(reply: dict) -> str:
    if reply.get("ok") is True:
        return reply.get("op") or "ack"
    return reply["error"]


def _no_newline(data: bytes) -> bytes:
    return data.replace(b"\n", b" ")


def _rid() -> str:
    return f"fuzz-{uuid.uuid4()}"


def _with(**fields) -> bytes:
    return json.dumps({**envelope(_rid()), **fields}).encode()


_deep = st.integers(1, 4000).map(lambda n: b'{"op":"append","payload":' + b"[" * n + b"]" * n + b"}")
_huge_number = st.integers(4301, 6000).map(
    lambda n: _with().replace(b'"payload": {', b'"payload": {"n": ' + b"7" * n + b", ", 1)
)
_nan = st.sampled_from([b"NaN", b"Infinity", b"-Infinity"]).map(
    lambda lit: _with().replace(b'"payload": {', b'"payload": {"x": ' + lit + b", ", 1)
)
_dup_keys = st.just(0).map(lambda _: _with()[:-1] + b', "record_id": "' + _rid().encode() + b'", "op": "append"}')
_bad_utf8 = st.tuples(st.binary(max_size=40), st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"])).map(
    lambda t: b'{"op":"ping","x":"' + _no_newline(t[0]) + t[1] + b'"}'
)
_truncated = st.integers(1, 300).map(lambda k: (lambda f: f[: max(1, len(f) - k)])(_with()))
_random = st.binary(max_size=300).map(_no_newline)
_oversized = st.integers(1, 3000).map(lambda k: _with(tool_output="a" * (MAX_LINE + k)))
_hostile_payload = st.one_of(
    st.text(max_size=200).map(lambda t: _with(payload_text=t)),
    st.binary(max_size=200).map(lambda b: _with(payload_b64=__import__("base64").b64encode(b).decode())),
    st.just(0).map(lambda _: _with(payload_b64="!!not base64")),
    st.integers(300, 900).map(lambda n: _with(payload_text="[" * n + "]" * n)),
    st.recursive(st.none() | st.booleans() | st.floats() | st.text(max_size=20), lambda c: st.lists(c, max_size=4)
                 | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=30).map(
        lambda v: json.dumps({**envelope(_rid()), "payload": v}, allow_nan=True).encode()),
    st.dictionaries(st.sampled_from(["record_id", "harness", "event", "pid", "v", "payload"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=2)),
                    max_size=6).map(lambda d: json.dumps({**envelope(_rid()), **d}).encode()),
)  # fmt: skip
HOSTILE = st.one_of(_deep, _huge_number, _nan, _dup_keys, _bad_utf8, _truncated, _random, _hostile_payload,
                    st.sampled_from([b"", b"[]", b"null", b"1e999999", b'{"op":"nope"}', b'{"op":"append","v":2}',
                                     b'{"op":"ping"}', b'{"op":"health"}', b"\x00" * 10]))  # fmt: skip
FRAMES = st.lists(st.one_of(HOSTILE, st.just(b"GOOD")), min_size=1, max_size=8)


class Run:
    """Bookkeeping across examples: what was acked, at which seq, and what was refused."""

    def __init__(self, d: Daemon):
        self.d = d
        self.acked: dict[str, int] = {}
        self.refused: set[str] = set()
        self.nan_acked: set[str] = set()
        self.frames = 0
        self.by_outcome: dict[str, int] = {}
        self.other = Client(d.socket)

    def ack(self, record_id: str, reply: dict) -> None:
        assert reply["record_id"] == record_id
        if record_id in self.acked:
            assert reply["duplicate"] and reply["seq"] == self.acked[record_id], reply
        self.acked[record_id] = reply["seq"]

    def example(self, frames: list[bytes], oversized: bool = False) -> None:
        wire, allowed, ids = [], [], []
        for frame in frames:
            if frame == b"GOOD":
                rid = _rid()
                frame = json.dumps(envelope(rid)).encode()
                allowed.append({"ack"})
            else:
                allowed.append(expected(frame))
                try:
                    rid = json.loads(frame).get("record_id")
                except (ValueError, RecursionError, AttributeError, UnicodeDecodeError):
                    rid = None
            wire.append(frame + b"\n")
            ids.append(rid)
        with Client(self.d.socket) as client:
            client.send(b"".join(wire))
            # Another connection appends meanwhile and is answered.
            rid = _rid()
            self.ack(rid, self.other.request(envelope(rid)))
            for frame, allow, rid in zip(frames, allowed, ids):
                reply = client.reply()
                got = outcome(reply)
                assert got in allow, (frame[:200], reply)
                self.frames += 1
                self.by_outcome[got] = self.by_outcome.get(got, 0) + 1
                if got == "ack":
                    self.ack(rid, reply)
                    if frame.startswith(b'{') and b'"payload": {"x": ' in frame:  # from _nan
                        self.nan_acked.add(rid)
                elif isinstance(rid, str) and got == "bad_request":
                    self.refused.add(rid)
        assert self.other.request({"op": "ping"})["ok"] is True

    def finish(self) -> str:
        self.other.close()
        assert self.d.health()["writer"]["state"] == "ok"
        rows = self.d.rows("event")
        stored: dict[str, list[int]] = {}
        for r in rows:
            stored.setdefault(r["record_id"], []).append(r["seq"])
        assert {k: [v] for k, v in self.acked.items()} == stored
        assert not (self.refused - set(self.acked)) & set(stored)
        payload = {r["record_id"]: r["payload"] for r in rows}
        for rid in self.nan_acked:
            assert "payload_error" in payload[rid], payload[rid]
        return (f"{self.frames} frames, outcomes {dict(sorted(self.by_outcome.items()))}; "
                f"{len(self.acked)} records acked, {len(stored)} stored, each once at its acked seq")


def _wire_fuzz(tmp_path, examples: int, oversized_examples: int) -> str:
    d = Daemon(tmp_path, verify_interval=1.0).start()
    try:
        run = Run(d)

        @fuzz(examples)
        @given(FRAMES)
        def frames_property(frames):
            run.example(frames)

        @fuzz(oversized_examples)
        @given(st.lists(st.one_of(_oversized, st.just(b"GOOD")), min_size=1, max_size=3))
        def oversized_property(frames):
            run.example(frames)

        frames_property()
        oversized_property()
        summary = run.finish()
    finally:
        code = d.stop()
    assert code == 0, d.output()
    return summary


def test_hostile_frames_get_their_errors_and_every_good_record_is_stored_once(tmp_path):
    print("\nwire fuzz: " + _wire_fuzz(tmp_path, examples=120, oversized_examples=4))


@pytest.mark.soak
def test_hostile_frames_soak(tmp_path):
    print("\nwire fuzz soak: " + _wire_fuzz(tmp_path, examples=3000, oversized_examples=60))


def test_truncated_last_frame_with_half_close_is_answered_then_eof(tmp_path):
    d = Daemon(tmp_path, verify_interval=0).start()
    try:
        good = [line(envelope(f"good-{i}")) for i in range(3)]
        cut = line(envelope("cut"))[:40]
        with Client(d.socket) as client:
            client.send(b"".join(good) + cut)
            client.sock.shutdown(socket.SHUT_WR)
            replies = [client.reply() for _ in range(4)]
            assert client.reply_line() is None
        assert [r.get("record_id") for r in replies[:3]] == ["good-0", "good-1", "good-2"]
        assert replies[3]["error"] == "bad_json"
        assert [r["record_id"] for r in d.rows("event")] == ["good-0", "good-1", "good-2"]
    finally:
        assert d.stop() == 0


# -- hostile spool files --------------------------------------------------------------------


def _not_an_envelope(data: bytes) -> bool:
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return True
    return not (isinstance(value, dict) and isinstance(value.get("record_id"), str) and value.get("op", "append") == "append")


SPOOL_BYTES = st.one_of(
    st.binary(max_size=400),
    _truncated,
    _deep,
    _huge_number,
    _bad_utf8,
    st.sampled_from([b"", b"[]", b"null", b'{"op":"ping"}', b'{"record_id": 5}', b"\xff" * 10]),
    st.dictionaries(st.sampled_from(["record_id", "harness", "payload", "payload_text"]),
                    st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=4).map(
        lambda d: json.dumps({"record_id": _rid(), **d}).encode()),
).filter(_not_an_envelope)  # fmt: skip


def _spool_fuzz(tmp_path, examples: int) -> str:
    d = Daemon(tmp_path, verify_interval=0).start()
    planted: dict[str, str] = {}  # file name -> sha256
    try:

        @fuzz(examples)
        @given(st.lists(SPOOL_BYTES, min_size=1, max_size=8))
        def spool_property(contents):
            names = []
            for data in contents:
                name = f"{uuid.uuid4()}.json"
                tmp = d.spool / "tmp" / name
                tmp.write_bytes(data)
                os.rename(tmp, d.spool / "new" / name)
                planted[name] = "sha256:" + hashlib.sha256(data).hexdigest()
                names.append(name)
            wait_for(lambda: not os.listdir(d.spool / "new"), "the drainer to take the files", every=0.05)

        spool_property()
        gaps = [r["payload"] for r in d.rows("gap")]
        by_file: dict[str, list[dict]] = {}
        for g in gaps:
            by_file.setdefault(g["file"], []).append(g)
        assert set(by_file) == set(planted)
        for name, rows in by_file.items():
            assert len(rows) == 1, rows
            assert rows[0]["reason"] in ("spool_unparsable", "spool_refused") and rows[0]["sha256"] == planted[name]
            assert (d.spool / "bad" / name).exists() and (d.spool / "bad" / (name + ".reason")).exists()
        assert d.count("event") == 0
        assert d.health()["counters"]["spool_quarantined"] == len(planted)
    finally:
        assert d.stop() == 0
    return f"{len(planted)} hostile spool files, {len(gaps)} gap rows (one each), {len(planted)} quarantined, 0 events"


def test_hostile_spool_files_are_quarantined_with_one_gap_row_each(tmp_path):
    print("\nspool fuzz: " + _spool_fuzz(tmp_path, examples=12))


@pytest.mark.soak
def test_hostile_spool_files_soak(tmp_path):
    print("\nspool fuzz soak: " + _spool_fuzz(tmp_path, examples=200))
