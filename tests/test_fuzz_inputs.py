"""Hostile input at library level: envelopes, import lines and spool files (docs/reliability.md).

Whatever arrives, normalization ends in one of two ways: a clean Append whose
payload is canonical JSON (it round-trips byte for byte), or a documented
rejection, a ValueError (BadEnvelope is one) carrying a message. Never another
exception type: a RecursionError or UnicodeError escaping here would cost the
caller (the daemon, `agentwatch import`, the spool drainer) a whole batch.

The default suite runs a bounded number of examples per property; the same
properties run with many more under the soak marker (`make soak`).
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentwatch.daemon.spool import Spool
from agentwatch.record import importer, normalize
from agentwatch.record.adapters import HARNESSES
from agentwatch.store.append import Append, Store
from agentwatch.store.chain import canonical_json

# A failing example can be megabytes long; hypothesis warns about printing it, which
# filterwarnings=error would turn into a second, less useful failure.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

SOAK_FACTOR = int(os.environ.get("AGENTWATCH_FUZZ_SOAK_FACTOR", "25"))
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def nested(depth: int, kind: str = "list", leaf=1):
    """A value nested `depth` levels deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def nested_text(depth: int, kind: str = "list") -> str:
    return ("[" * depth + "1" + "]" * depth) if kind == "list" else ('{"k":' * depth + "1" + "}" * depth)


# -- strategies --------------------------------------------------------------------------

# Ints with more digits than Python converts to text by default (4300).
huge_ints = st.integers(4301, 4400).map(lambda digits: 10**digits) | st.integers(4301, 4400).map(lambda d: -(10**d))
depths = st.sampled_from((1, 50, 400, 900, 980, 1000, 1100, 3000, 100_000))
kinds = st.sampled_from(("list", "dict"))
deep_values = st.builds(nested, st.sampled_from((400, 900, 980, 1000, 3000)), kinds)
deep_texts = st.builds(nested_text, depths, kinds)
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=None), max_size=30)
    | st.sampled_from(["\ud800", "\udfff\ud800", "\x00", "x" * 70_000, float("nan"), 2**64]) | huge_ints
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.just("\ud800"), inner, max_size=4)
    ),
    max_leaves=15,
)
payloads = json_values | deep_values
texts = (
    st.text(max_size=60) | deep_texts
    | st.sampled_from([
        '{"a": NaN, "b": Infinity, "c": -Infinity}', '{"a": 1, "a": 2}', "1" * 5000, "[" + "1" * 4301 + "]",
        "1e999", '{"tool_name": "Bash", "tool_input": {"command": "ls"', '"\\ud800"', "", "   ", "\ufeff{}",
    ])
)
b64s = st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()) | st.sampled_from(["!!", "abc", ""])
record_ids = st.just("r-1") | st.text(max_size=140) | st.sampled_from(["\ud800", "x" * 129, "a\nb", ""]) | scalars
harnesses = st.sampled_from(HARNESSES) | st.text(max_size=12) | st.sampled_from(["", "\ud800", "../../x", "Codex"])
envelopes = st.fixed_dictionaries(
    {"record_id": record_ids, "harness": harnesses},
    optional={
        "payload": payloads,
        "payload_text": texts | scalars,
        "payload_b64": b64s | scalars,
        "event": st.none() | st.text(max_size=20) | json_values,
        "pid": json_values,
        "ppid": st.integers() | json_values,
        "uid": json_values,
        "ts_observed_ns": json_values,
        "delivery": json_values,
        "argv": st.lists(st.text(max_size=10) | deep_texts | st.just('{"type": "agent-turn-complete"}'), max_size=3)
        | json_values,
        "orig_bytes": json_values,
        "truncated": json_values,
        "raw_sha256": json_values,
    },
)


def _valid_line(serial: int, harness: str) -> bytes:
    env = {"record_id": f"good-{serial}", "harness": harness, "payload": {"hook_event_name": "Stop", "n": serial}}
    return json.dumps(env).encode()


def _mutate(line: bytes, how: str, where: int, junk: bytes) -> bytes:
    cut = where % (len(line) + 1)
    if how == "truncate":
        return line[:cut]
    if how == "insert":
        return line[:cut] + junk + line[cut:]
    return junk


hostile_lines = st.one_of(
    st.binary(max_size=200),
    deep_texts.map(str.encode),
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.builds(
        _mutate,
        st.builds(_valid_line, st.integers(0, 10**6), st.sampled_from(HARNESSES)),
        st.sampled_from(("truncate", "insert", "replace")),
        st.integers(0, 500),
        st.binary(min_size=1, max_size=8) | st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"NaN", b"1" * 5000]),
    ),
)


# -- the properties ------------------------------------------------------------------------


def assert_clean_append(append: Append) -> dict:
    assert isinstance(append, Append) and append.kind == "event"
    doc = json.loads(append.payload)
    assert canonical_json(doc) == append.payload  # canonical bytes: what the chain hashes round-trips
    assert doc["schema"] == 2
    return doc


def check_to_append(env):
    try:
        append = normalize.to_append(env)
    except ValueError as exc:  # BadEnvelope included: a documented rejection, with its reason
        assert str(exc)
        return
    doc = assert_clean_append(append)
    assert append.record_id == env["record_id"]
    # the sender is the harness on the command line, or one that runs its config, named from the payload
    # (VS Code runs Claude's and Copilot's files with the payload of the agent harness selected in it)
    runs_claude_settings = {"claude-code", "vscode", "copilot", "cursor", "codex"}
    runs_shared_file = {"copilot", "vscode", "claude-code", "codex"}
    assert (doc["harness"] == env["harness"] or "payload_error" in doc  # scrubbed only when unrepresentable
            or (env["harness"] == "claude-code" and doc["harness"] in runs_claude_settings)
            or (env["harness"] in ("copilot", "vscode") and doc["harness"] in runs_shared_file))


def check_record_document(env):
    try:
        normalize.check_envelope(env)
    except normalize.BadEnvelope:
        return
    try:
        doc = normalize.record_document(env)
    except ValueError as exc:
        # Only a ppid or uid with more than 4300 digits, which no JSON text can produce
        # (json.loads refuses such a number first), so not from the wire, spool or import.
        assert "4300" in str(exc)
        return
    assert doc["schema"] == 2 and isinstance(doc["event"], dict)


def check_line(line, harness):
    try:
        append = importer.line_to_append(line, harness)
    except ValueError as exc:
        assert str(exc)
        return
    assert_clean_append(append)


def check_spool_read(data):
    with tempfile.TemporaryDirectory() as root:
        spool = Spool(Path(root) / "spool")
        spool.prepare()
        path = spool.new / "0190a0b0-0000-7000-8000-000000000000.json"
        path.write_bytes(data)
        item = spool.read(path)  # never raises for bad content
        assert item is not None and item.size == len(data)
        assert item.ok == (item.envelope is not None) == (item.error is None)
        if not item.ok:
            assert isinstance(item.error, str) and item.error
            assert item.gap_detail()["sha256"].startswith("sha256:")
            return
        check_to_append(item.envelope)  # what the drainer does next


def check_import_mix(lines):
    """Good and bad lines in one file: every good one is stored, every bad one is a gap row."""
    with tempfile.TemporaryDirectory() as root:
        root = Path(root)
        source = root / "in.jsonl"
        lines = [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines]
        source.write_bytes(b"\n".join(lines) + b"\n")
        expected_good, expected_bad = [], 0
        for line in lines:
            if not line.strip():
                continue
            try:
                expected_good.append(importer.line_to_append(line, "codex").record_id)
            except ValueError:
                expected_bad += 1
        report = importer.import_lines(root / "store.db", str(source), harness="codex", batch_size=3)
        assert len(report.rejected) == expected_bad
        assert report.stored + report.duplicates == len(expected_good)
        with Store(root / "store.db") as store:
            kinds = dict(store.conn.execute("SELECT kind, count(*) FROM records GROUP BY kind"))
            envelope_ids = {rid for rid in expected_good if rid.startswith("good-")}
            stored_ids = {r[0] for r in store.conn.execute("SELECT record_id FROM records WHERE kind = 'event'")}
        assert envelope_ids <= stored_ids
        assert kinds.get("event", 0) == report.stored and kinds.get("gap", 0) == expected_bad


def _profiles(check, examples, **strategies):
    """The property twice: bounded for the default suite, many more examples under the soak marker."""
    fast = settings(max_examples=examples, deadline=None, suppress_health_check=_HEALTH)(given(**strategies)(check))
    soak = settings(max_examples=examples * SOAK_FACTOR, deadline=None, suppress_health_check=_HEALTH)(
        given(**strategies)(check)
    )
    return fast, pytest.mark.soak(soak)


test_to_append, test_to_append_soak = _profiles(check_to_append, 150, env=envelopes | json_values)
test_record_document, test_record_document_soak = _profiles(check_record_document, 100, env=envelopes)
test_import_line, test_import_line_soak = _profiles(check_line, 150, line=hostile_lines, harness=harnesses)
def _dumps(value) -> bytes:
    try:
        return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):  # too long an int, too deep: no writer could have produced it
        return b"{}"


test_spool_read, test_spool_read_soak = _profiles(
    check_spool_read, 80, data=hostile_lines | st.builds(_dumps, envelopes) | st.builds(_dumps, json_values)
)
test_import_mix, test_import_mix_soak = _profiles(
    check_import_mix,
    10,
    lines=st.lists(hostile_lines | st.builds(_valid_line, st.integers(0, 10**6), st.sampled_from(HARNESSES)),
                   min_size=1, max_size=12),
)


# -- regressions: one per defect these properties found --------------------------------------


@pytest.mark.parametrize("depth", [300, 1001, 2000, 100_000])
def test_payload_text_too_deep_is_stored_as_text(depth):
    # 2000 and more: deeper than json.loads goes (RecursionError). 1001: json.loads copes on
    # Python 3.12+, and the store's JSON functions would refuse the row, failing its batch.
    text = nested_text(depth)
    doc = assert_clean_append(normalize.to_append({"record_id": "r", "harness": "codex", "payload_text": text}))
    assert doc["raw"] == text and "levels deep" in doc["payload_error"]


def test_argv_too_deep_to_parse_falls_back_to_the_payload():
    env = {"record_id": "r", "harness": "codex", "payload_text": "", "argv": ["notify", nested_text(100_000)]}
    doc = assert_clean_append(normalize.to_append(env))
    assert doc["argv"] == env["argv"]


@pytest.mark.parametrize("where", ["payload", "pid"])
def test_value_too_deep_to_serialize_is_a_clean_rejection(where):
    env = {"record_id": "r", "harness": "claude-code", "payload": {}}
    env[where] = nested(3000)
    with pytest.raises(ValueError, match="nested too deeply"):
        normalize.to_append(env)


def test_import_line_too_deep_is_rejected_and_the_good_lines_are_stored(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join([_valid_line(1, "codex"), nested_text(100_000).encode(), _valid_line(2, "codex")]))
    report = importer.import_lines(tmp_path / "store.db", str(source), harness="codex")
    assert report.stored == 2 and [n for n, _ in report.rejected] == [2]
    assert "nested too deeply" in report.rejected[0][1]


@pytest.fixture
def deep_interpreter():
    """Python 3.12+ parses and encodes JSON well past 1000 levels; so does any interpreter
    whose recursion limit was raised. Emulate that here, whatever runs the tests."""
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    yield
    sys.setrecursionlimit(old)


def test_append_refuses_a_payload_the_stores_json_functions_would_refuse():
    Append("r", "event", nested_text(1000).encode())  # SQLite's limit, inclusive
    with pytest.raises(ValueError, match="nested too deeply"):
        Append("r", "event", nested_text(1001).encode())
    brackets_in_strings = json.dumps({"s": "[" * 5000, "t": '\\"{' * 3000}).encode()
    Append("r", "event", brackets_in_strings)


def test_too_deep_for_the_store_is_rejected_alone_not_with_its_batch(tmp_path, deep_interpreter):
    # Before the fix, this normalized cleanly, then SQLite refused the INSERT ("malformed
    # JSON" from the generated columns) and the whole import, good lines included, failed.
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join([_valid_line(1, "codex"), nested_text(1500).encode(), _valid_line(2, "codex")]))
    report = importer.import_lines(tmp_path / "store.db", str(source), harness="codex")
    assert report.stored == 2 and [n for n, _ in report.rejected] == [2]
    with pytest.raises(ValueError, match="nested too deeply"):
        normalize.to_append({"record_id": "r", "harness": "codex", "payload": nested(1500)})
    doc = assert_clean_append(
        normalize.to_append({"record_id": "r", "harness": "codex", "payload_text": nested_text(1500)})
    )
    assert "levels deep" in doc["payload_error"]
