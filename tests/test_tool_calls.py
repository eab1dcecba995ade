"""The tool_calls view (migrations/0003) over real stores built from fixture sequences."""

from __future__ import annotations

import copy
import itertools
import json
import time
from pathlib import Path

import pytest

from agentwatch.record import normalize
from agentwatch.store.append import Store

FIXTURES = Path(__file__).parent / "fixtures" / "harness"
MS = 1_000_000


def fixture(harness: str, name: str, **changes) -> dict:
    """A fixture's payload, with top-level fields replaced."""
    data = json.loads((FIXTURES / harness / f"{name}.json").read_text(encoding="utf-8"))
    payload = copy.deepcopy(data["payload"])
    payload.update(changes)
    return {"harness": harness, "payload": payload, "event": data.get("event")}


class Recorder:
    """Appends events to a store of the test's own, one commit per event."""

    def __init__(self, path: Path):
        self.store = Store(path)
        self.ids = itertools.count(1)

    def add(self, event: dict, *, observed_ms: int | None = None, ppid: int | None = None) -> int:
        env = {"record_id": f"r-{next(self.ids)}", "harness": event["harness"], "payload": event["payload"]}
        if event.get("event"):
            env["event"] = event["event"]
        if observed_ms is not None:
            env["ts_observed_ns"] = observed_ms * MS
        if ppid is not None:
            env["ppid"] = ppid
        [result] = self.store.append([normalize.to_append(env)])
        return result.seq

    def calls(self, where: str = "1", *args) -> list[dict]:
        cursor = self.store.conn.execute(f"SELECT * FROM tool_calls WHERE {where} ORDER BY first_seq", args)
        names = [d[0] for d in cursor.getdescription()]
        return [dict(zip(names, row)) for row in cursor]


@pytest.fixture
def rec(store_path):
    recorder = Recorder(store_path)
    yield recorder
    recorder.store.close()


def claude(name: str, call_id: str, session: str = "s-1", **changes) -> dict:
    return fixture("claude-code", name, tool_use_id=call_id, session_id=session, **changes)


def test_claude_calls_pair_by_call_id_whatever_the_interleaving(rec):
    a1 = rec.add(claude("PreToolUse", "A"), observed_ms=1000)
    b1 = rec.add(claude("PreToolUse", "B"), observed_ms=1010)
    b2 = rec.add(claude("PostToolUse", "B"), observed_ms=1060)
    a2 = rec.add(claude("PostToolUse", "A"), observed_ms=1250)
    c1 = rec.add(claude("PreToolUse", "C"), observed_ms=1300)
    rec.add(fixture("claude-code", "UserPromptSubmit"))
    rec.add(fixture("claude-code", "Stop"))

    calls = rec.calls()
    assert [(c["call_id"], c["start_seq"], c["end_seq"], c["outcome"]) for c in calls] == [
        ("A", a1, a2, "ok"), ("B", b1, b2, "ok"), ("C", c1, None, "open"),
    ]
    assert [(c["duration_ms"], c["duration_source"]) for c in calls] == [
        (250.0, "observed"), (50.0, "observed"), (None, None),
    ]
    assert {c["paired_by"] for c in calls} == {"call_id"}
    assert calls[0]["tool_name"] == "Bash" and calls[0]["tool_category"] == "shell"
    assert [(c["start_record_id"], c["end_record_id"]) for c in calls] == [
        (f"r-{a1}", f"r-{a2}"), (f"r-{b1}", f"r-{b2}"), (f"r-{c1}", None),
    ]
    assert [(c["started_at"], c["ended_at"]) for c in calls] == [
        ("1970-01-01T00:00:01.000Z", "1970-01-01T00:00:01.250Z"),
        ("1970-01-01T00:00:01.010Z", "1970-01-01T00:00:01.060Z"),
        ("1970-01-01T00:00:01.300Z", None),
    ]


def test_an_end_recorded_before_its_start_still_pairs_by_call_id(rec):
    # async hooks run in the background, so the post can reach the store first
    post = rec.add(claude("PostToolUse", "A"), observed_ms=2000)
    pre = rec.add(claude("PreToolUse", "A"), observed_ms=1900)
    [call] = rec.calls()
    assert (call["start_seq"], call["end_seq"], call["outcome"]) == (pre, post, "ok")
    assert (call["duration_ms"], call["duration_source"]) == (100.0, "observed")
    assert call["first_seq"] == pre


def test_failure_ends_a_call_with_outcome_error(rec):
    rec.add(claude("PreToolUse", "toolu_01Fail", tool_input={"command": "make deploy"}))
    rec.add(fixture("claude-code", "PostToolUseFailure", session_id="s-1"))
    [call] = rec.calls()
    assert call["outcome"] == "error"


def test_duration_falls_back_to_recorded_time_without_client_clocks(rec):
    rec.add(claude("PreToolUse", "A"))
    rec.add(claude("PostToolUse", "A"))
    [call] = rec.calls()
    assert call["duration_source"] == "recorded" and call["duration_ms"] >= 0


def test_every_record_with_one_call_id_is_one_call(rec):
    # a delivery repeated through a second config: still one call, started by the first start
    for name in ("PreToolUse", "PreToolUse", "PostToolUse", "PostToolUse"):
        rec.add(claude(name, "A"))
    assert [(c["start_seq"], c["end_seq"], c["outcome"]) for c in rec.calls()] == [(1, 3, "ok")]


def cursor(name: str, command: str = "npm test", session: str = "conv-1", **changes) -> dict:
    return fixture("cursor", name, command=command, conversation_id=session, **changes)


def test_cursor_calls_pair_fifo_by_tool_and_input(rec):
    p1 = rec.add(cursor("beforeShellExecution"))
    p2 = rec.add(cursor("beforeShellExecution"))                 # same command, still running
    lint = rec.add(cursor("beforeShellExecution", "npm run lint"))
    e1 = rec.add(cursor("afterShellExecution", duration=40))
    e2 = rec.add(cursor("afterShellExecution", duration=70))
    calls = rec.calls()
    assert [(c["start_seq"], c["end_seq"], c["outcome"], c["duration_ms"]) for c in calls] == [
        (p1, e1, "ok", 40), (p2, e2, "ok", 70), (lint, None, "open", None),
    ]
    assert {c["paired_by"] for c in calls} == {"fifo"}
    assert calls[0]["duration_source"] == "harness"
    assert calls[0]["call_id"] is None and calls[0]["tool_name"] == "Shell"


def test_fifo_never_pairs_an_end_with_a_later_start(rec):
    lone_end = rec.add(cursor("afterShellExecution"))   # its start was never recorded
    p1 = rec.add(cursor("beforeShellExecution"))
    e1 = rec.add(cursor("afterShellExecution"))
    e2 = rec.add(cursor("afterShellExecution"))        # a second end, nothing open
    p2 = rec.add(cursor("beforeShellExecution"))
    p3 = rec.add(cursor("beforeShellExecution"))
    e3 = rec.add(cursor("afterShellExecution"))
    calls = rec.calls()
    assert [(c["start_seq"], c["end_seq"], c["outcome"]) for c in calls] == [
        (None, lone_end, "ok"),
        (p1, e1, "ok"),
        (None, e2, "ok"),
        (p2, e3, "ok"),
        (p3, None, "open"),
    ]
    by_outcome = rec.store.conn.execute(
        "SELECT outcome, start_seq IS NULL, count(*) FROM tool_calls GROUP BY 1, 2 ORDER BY 1, 2")
    assert by_outcome.fetchall() == [("ok", 0, 2), ("ok", 1, 2), ("open", 0, 1)]


def test_fifo_keys_do_not_cross_sessions_inputs_or_tools(rec):
    rec.add(cursor("beforeShellExecution", session="conv-1"))
    rec.add(cursor("afterShellExecution", session="conv-2"))
    rec.add(cursor("beforeShellExecution", "ls"))
    rec.add(cursor("afterShellExecution", "ls -la"))
    rec.add(fixture("cursor", "beforeMCPExecution", conversation_id="conv-1"))
    rec.add(fixture("cursor", "afterMCPExecution", conversation_id="conv-1"))
    calls = rec.calls()
    assert [(c["outcome"], c["start_seq"] is None, c["end_seq"] is None) for c in calls] == [
        ("open", False, True), ("ok", True, False), ("open", False, True), ("ok", True, False), ("ok", False, False),
    ]
    assert calls[-1]["tool_category"] == "mcp"


def test_cursor_one_sided_file_events_are_half_calls(rec):
    rec.add(fixture("cursor", "beforeReadFile"))
    rec.add(fixture("cursor", "afterFileEdit"))
    assert [(c["tool_name"], c["outcome"], c["start_seq"], c["end_seq"]) for c in rec.calls()] == [
        ("Read", "open", 1, None), ("Edit", "ok", None, 2),
    ]


def test_copilot_calls_pair_in_a_synthesized_session(rec):
    # toolArgs as a JSON string (pre) and as an object (post) digest alike
    pre = fixture("copilot", "preToolUse")
    post = fixture("copilot", "postToolUse", toolArgs=json.loads(pre["payload"]["toolArgs"]))
    denied = fixture("copilot", "postToolUse-denied")
    denied_pre = fixture("copilot", "preToolUse", toolArgs=denied["payload"]["toolArgs"])
    s1 = rec.add(pre, ppid=900, observed_ms=10)
    e1 = rec.add(post, ppid=900, observed_ms=35)
    rec.add(pre, ppid=901)                        # another Copilot process: another session
    s2 = rec.add(denied_pre, ppid=900)
    e2 = rec.add(denied, ppid=900)
    calls = rec.calls()
    assert [(c["start_seq"], c["end_seq"], c["outcome"]) for c in calls] == [
        (s1, e1, "ok"), (3, None, "open"), (s2, e2, "denied"),
    ]
    assert calls[0]["session_id"] == calls[2]["session_id"] != calls[1]["session_id"]
    assert calls[0]["session_id"].startswith("synth:")
    assert (calls[0]["duration_ms"], calls[0]["duration_source"]) == (25.0, "observed")


def test_cline_gemini_openhands_pair_fifo(rec):
    for harness, pre, post in (
        ("cline", "PreToolUse", "PostToolUse"),
        ("cline", "PreToolUse-edit", "PostToolUse-failure"),   # different tools: no pair
        ("gemini-cli", "BeforeTool", "AfterTool"),
        ("openhands", "PreToolUse", "PostToolUse"),
    ):
        rec.add(fixture(harness, pre))
        rec.add(fixture(harness, post))
    calls = rec.calls()
    assert [(c["harness"], c["tool_name"], c["outcome"]) for c in calls] == [
        ("cline", "execute_command", "ok"),
        ("cline", "replace_in_file", "open"),
        ("cline", "write_to_file", "error"),
        ("gemini-cli", "run_shell_command", "ok"),
        ("openhands", "terminal", "ok"),
    ]
    assert (calls[0]["duration_ms"], calls[0]["duration_source"]) == (1830, "harness")


def test_gemini_tool_error_ends_the_call_as_error(rec):
    args = fixture("gemini-cli", "AfterTool-error")["payload"]["tool_input"]
    rec.add(fixture("gemini-cli", "BeforeTool", tool_name="read_file", tool_input=args))
    rec.add(fixture("gemini-cli", "AfterTool-error"))
    [call] = rec.calls()
    assert call["outcome"] == "error"


def test_exact_counts_over_a_mixed_store(rec):
    for i in range(50):
        rec.add(claude("PreToolUse", f"c{i}", session=f"s{i % 5}"))
        if i % 10:
            rec.add(claude("PostToolUse", f"c{i}", session=f"s{i % 5}"))
        rec.add(cursor("beforeShellExecution", f"cmd {i % 3}", session=f"conv{i % 4}"))
        rec.add(cursor("afterShellExecution", f"cmd {i % 3}", session=f"conv{i % 4}"))
        rec.add(fixture("claude-code", "Notification"))
    total = rec.store.conn.execute("SELECT count(*) FROM records").fetchone()[0]
    assert total == 50 * 4 + 45
    rows = rec.store.conn.execute(
        "SELECT harness, outcome, count(*) FROM tool_calls GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    assert rows == [("claude-code", "ok", 45), ("claude-code", "open", 5), ("cursor", "ok", 50)]
    assert rec.calls("session_id = ?", "s3") == [c for c in rec.calls() if c["session_id"] == "s3"]
    assert len(rec.calls("session_id = ?", "s3")) == 10


def test_a_session_filter_reaches_the_session_index(rec):
    rec.add(claude("PreToolUse", "A"))
    plan = rec.store.conn.execute("EXPLAIN QUERY PLAN SELECT * FROM tool_calls WHERE session_id = ?", ("s-1",))
    details = [row[3] for row in plan]
    assert any("records_by_session" in d for d in details), details
    assert not any(d.startswith("SCAN records") for d in details), details


def test_a_denial_and_an_interrupt_are_outcomes_of_their_own(rec):
    rec.add(claude("PreToolUse", "toolu_01Deny"))
    rec.add(fixture("claude-code", "PermissionDenied", session_id="s-1"))
    rec.add(claude("PreToolUse", "toolu_01Intr"))
    rec.add(fixture("claude-code", "PostToolUseFailure-interrupt", session_id="s-1"))
    assert [(c["call_id"], c["outcome"], c["start_seq"], c["end_seq"]) for c in rec.calls()] == [
        ("toolu_01Deny", "denied", 1, 2), ("toolu_01Intr", "interrupted", 3, 4),
    ]


def test_the_most_specific_end_decides_when_a_call_has_two(rec):
    # a denial reported twice: the permission event and a failure event for the same id
    rec.add(claude("PreToolUse", "toolu_01Deny"))
    rec.add(claude("PostToolUseFailure", "toolu_01Deny"))
    rec.add(fixture("claude-code", "PermissionDenied", session_id="s-1"))
    [call] = rec.calls()
    assert (call["outcome"], call["start_seq"], call["end_seq"], call["end_record_id"]) == ("denied", 1, 2, "r-2")


def codex(name: str, turn: str, **changes) -> dict:
    return fixture("codex", name, session_id="cx-1", turn_id=turn, **changes)


def test_an_interrupt_ends_the_open_calls_of_its_turn_only(rec):
    rec.add(codex("PreToolUse", "t1", tool_use_id="call_1"), observed_ms=1_000)
    rec.add(codex("PreToolUse", "t2", tool_use_id="call_2"), observed_ms=2_000)
    rec.add(codex("PreToolUse", "t2", tool_use_id="call_3"), observed_ms=3_000)
    rec.add(codex("PostToolUse", "t2", tool_use_id="call_3"), observed_ms=3_500)
    rec.add(codex("Interrupt", "t2"))
    before_ms = time.time_ns() // MS
    calls = rec.calls()
    after_ms = time.time_ns() // MS
    assert [(c["call_id"], c["outcome"]) for c in calls] == [
        ("call_1", "open"), ("call_2", "interrupted"), ("call_3", "ok"),
    ]
    # only a call still open has an age: now minus its start
    assert before_ms - 1_000 <= calls[0]["age_ms"] <= after_ms - 1_000
    assert [c["age_ms"] for c in calls[1:]] == [None, None]


def test_an_interrupt_without_a_turn_ends_every_open_call_of_its_session(rec):
    rec.add(fixture("copilot", "preToolUse"), ppid=700)
    rec.add(fixture("copilot", "preToolUse"), ppid=701)             # another session
    rec.add(fixture("copilot", "sessionEnd", reason="abort"), ppid=700)
    assert [c["outcome"] for c in rec.calls()] == ["interrupted", "open"]


@pytest.mark.parametrize("reason", ["complete", "error", "timeout", "user_exit"])
def test_only_a_copilot_abort_interrupts_the_calls_left_open(rec, reason):
    # github/docs content/copilot/reference/hooks-reference.md: `/clear` ends the old session
    # with reason user_exit while the CLI keeps running; a call denied in an earlier turn stays open
    rec.add(fixture("copilot", "preToolUse"), ppid=700)
    rec.add(fixture("copilot", "sessionEnd", reason=reason), ppid=700)
    assert [c["outcome"] for c in rec.calls()] == ["open"]


def test_gemini_parallel_reads_get_their_own_outcomes_whatever_order_they_end(rec):
    # google-gemini/gemini-cli packages/core/src/scheduler/scheduler.ts: contiguous read-only
    # calls run at once (_isParallelizable, Promise.all); the quicker one's AfterTool comes first
    missing = {"absolute_path": "/home/dev/site/src/theme.ts"}
    present = {"absolute_path": "/home/dev/site/src/styles/theme.ts"}
    first = rec.add(fixture("gemini-cli", "BeforeTool", tool_name="read_file", tool_input=missing), observed_ms=1_000)
    second = rec.add(fixture("gemini-cli", "BeforeTool", tool_name="read_file", tool_input=present), observed_ms=1_001)
    ok = rec.add(fixture("gemini-cli", "AfterTool", tool_name="read_file", tool_input=present), observed_ms=1_040)
    failed = rec.add(fixture("gemini-cli", "AfterTool-error", tool_input=missing), observed_ms=1_090)
    assert [(c["start_seq"], c["end_seq"], c["outcome"], c["paired_by"]) for c in rec.calls()] == [
        (first, failed, "error", "fifo"), (second, ok, "ok", "fifo"),
    ]


def test_gemini_call_whose_arguments_a_hook_rewrote_pairs_by_order_as_the_last_resort(rec):
    # coreToolHookTriggers.ts merges a BeforeTool hook's tool_input into the params AfterTool
    # reports: the two digests differ, and the halves left alone pair on the tool name, in order
    read = {"absolute_path": "/home/dev/site/src/theme.ts"}
    rec.add(fixture("gemini-cli", "BeforeTool", tool_name="read_file", tool_input=read), observed_ms=1_000)
    rec.add(fixture("gemini-cli", "BeforeTool", tool_name="glob", tool_input={"pattern": "**/theme*"}),
            observed_ms=1_001)
    rec.add(fixture("gemini-cli", "AfterTool-error", tool_input=read), observed_ms=1_020)
    rec.add(fixture("gemini-cli", "AfterTool", tool_name="glob", tool_input={"pattern": "src/**/theme*"}),
            observed_ms=1_030)
    rec.add(fixture("gemini-cli", "AfterTool", tool_name="glob", tool_input={"pattern": "x"}), observed_ms=1_040)
    rec.add(fixture("gemini-cli", "BeforeTool", tool_name="glob", tool_input={"pattern": "y"}), observed_ms=1_050)
    assert [(c["tool_name"], c["start_seq"], c["end_seq"], c["outcome"]) for c in rec.calls()] == [
        ("read_file", 1, 3, "error"),
        ("glob", 2, 4, "ok"),      # rewritten: paired by order
        ("glob", None, 5, "ok"),   # an end never pairs with a later start
        ("glob", 6, None, "open"),
    ]


def test_only_gemini_pairs_by_order_as_the_last_resort(rec):
    rec.add(fixture("openhands", "PreToolUse", tool_input={"command": "ls"}), observed_ms=1_000)
    rec.add(fixture("openhands", "PostToolUse", tool_input={"command": "ls -la"}), observed_ms=1_010)
    assert [(c["start_seq"], c["end_seq"], c["outcome"]) for c in rec.calls()] == [(1, None, "open"), (None, 2, "ok")]


def test_fifo_follows_the_order_the_hooks_started_not_the_order_they_were_stored(rec):
    # OpenHands runs async hooks: a quick tool's PostToolUse can reach the store first
    post = rec.add(fixture("openhands", "PostToolUse", tool_input={"command": "ls"}), observed_ms=5_020)
    pre = rec.add(fixture("openhands", "PreToolUse", tool_input={"command": "ls"}), observed_ms=5_000)
    [call] = rec.calls()
    assert (call["start_seq"], call["end_seq"], call["outcome"]) == (pre, post, "ok")
    assert (call["duration_ms"], call["duration_source"]) == (20.0, "observed")
