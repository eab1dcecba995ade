"""Reconciliation of the process witness against the tool calls the hooks reported (docs/reliability.md).

The process witness (daemon/procwitness.py) records what the kernel saw run under each harness
process; the hooks report the tool calls. Each shell-type tool call is paired with the process
trees the harness started in its window (from its `tool_pre` row to its `tool_post` or
`tool_error` row, by the recorder's commit times), and two findings come out:

- `unrecorded_exec`: a process tree the harness started that no tool call's window covers: the
  agent ran something no hook reported (or the harness ran something of its own: the finding
  carries argv so a reader can tell);
- `phantom_call`: a shell-type call that reported a command, in a session the witness followed,
  with no process tree started in its window: a command that never ran.

A tree is a child of the harness process with everything below it. Trees of the hook clients
themselves (a tree holding the pid a record's connection came from) are the recorder's own and
are left out (for a spooled record, which has no peer pid, the tree of the pid its hook claims,
if that tree ran the hook client). Only sessions the witness followed (a `process_root` row
names them) are checked.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from agentwatch.store import db
from agentwatch.store.packing import DOCUMENT_COLUMNS, Dictionaries

# Shell-category tools that do not start a process of their own (they read or signal one).
NON_SPAWNING = frozenset({"bashoutput", "killshell", "write_stdin"})
SLACK_NS = 1_000_000  # how far the kernel's exec times (monotonic, converted) and the commit times (wall) may disagree
SETTLE_S = 2.0  # the last seconds left unjudged: the witness's rows may not all be stored yet
HOOK_SPAN_NS = 60_000_000_000  # a hook client connects within this long of its exec
# A spooled record carries no kernel peer pid, only the pid its hook claims: a tree is taken for
# that hook only when it ran the hook client, so a forged spool file cannot hide another tree.
HOOK_PROGRAMS = ("agentwatch/hook.py", "/agentwatch-hook")


@dataclass
class Tree:
    root_pid: int
    tree_pid: int
    start_ns: int
    first_seq: int
    execs: list[dict] = field(default_factory=list)  # {seq, pid, path, argv}
    ended: bool = False
    hook: bool = False
    call: Optional["Call"] = None

    def argv_text(self) -> str:
        return " ".join(" ".join(e["argv"]) if isinstance(e.get("argv"), list) else str(e.get("path"))
                        for e in self.execs)

    def to_json(self) -> dict:
        return {"root_pid": self.root_pid, "tree_pid": self.tree_pid, "start_ns": self.start_ns,
                "first_seq": self.first_seq, "execs": self.execs,
                "call_seq": self.call.seq if self.call is not None else None}


@dataclass
class Call:
    session_id: Any
    harness: Any
    call_id: Any
    name: str
    category: Any
    command: Optional[str]
    seq: int  # the first row of the call
    start_ns: Optional[int] = None  # its tool_pre's commit
    end_ns: Optional[int] = None  # its tool_post / tool_error's commit
    duration_ms: Any = None
    root_pid: Optional[int] = None
    trees: list[Tree] = field(default_factory=list)

    @property
    def expects_exec(self) -> bool:
        return self.category == "shell" and self.name.lower() not in NON_SPAWNING

    def window(self, prev_event_ns: Optional[int], next_event_ns: Optional[int]) -> tuple[int, int]:
        """From the pre hook's commit to the post hook's; a missing pre: from the duration the post
        reports, else from the session's event before it; a missing post: to the session's next event."""
        start = self.start_ns
        if start is None:
            if isinstance(self.duration_ms, (int, float)) and self.end_ns is not None:
                start = self.end_ns - int(self.duration_ms * 1_000_000)
            else:
                start = prev_event_ns if prev_event_ns is not None else (self.end_ns or 0)
        end = self.end_ns if self.end_ns is not None else (next_event_ns or start + 3_600_000_000_000)
        return start - SLACK_NS, end + SLACK_NS


@dataclass(frozen=True)
class Finding:
    kind: str  # unrecorded_exec | phantom_call
    seq: int  # the tree's first exec row, or the call's first row
    session_id: Any
    root_pid: Optional[int]
    detail: str
    during_loss: bool = False  # the witness lost kernel events near this time: the finding may be the loss

    def to_json(self) -> dict:
        return {"kind": self.kind, "seq": self.seq, "session_id": self.session_id, "root_pid": self.root_pid,
                "detail": self.detail, "during_loss": self.during_loss}


@dataclass
class Report:
    store: str
    roots: int = 0
    sessions_followed: int = 0
    trees: int = 0
    hook_trees: int = 0
    calls_checked: int = 0
    calls_unfollowed: int = 0  # shell calls in sessions the witness did not follow
    unsettled: int = 0  # trees and calls of the last `settle_s` seconds, not judged yet
    lost_events: int = 0
    findings: list[Finding] = field(default_factory=list)
    next_before: Optional[int] = None  # a page of findings (--limit): where the next page starts

    def to_json(self) -> dict:
        return {"store": self.store, "roots": self.roots, "sessions_followed": self.sessions_followed,
                "trees": self.trees, "hook_trees": self.hook_trees, "calls_checked": self.calls_checked,
                "calls_unfollowed": self.calls_unfollowed, "unsettled": self.unsettled,
                "lost_events": self.lost_events,
                "findings": [f.to_json() for f in self.findings],
                "next": {"before": self.next_before} if self.next_before is not None else None}


def reconcile(store: Path, session: Optional[str] = None, settle_s: float = SETTLE_S,
              now_ns: Optional[int] = None) -> Report:
    """Pair the witnessed process trees with the reported tool calls in a store (read-only).

    The witness's rows follow the kernel by up to a flush interval (0.25 s) and a busy writer's
    queue, while a hook's record is committed at once: what started or ended in the last
    `settle_s` seconds is counted as `unsettled`, not judged (a hook whose process rows are not
    stored yet would otherwise read as an unrecorded exec).
    """
    conn = db.open_reader(store)
    try:
        horizon = (now_ns if now_ns is not None else time.time_ns()) - int(settle_s * 1e9)
        return _reconcile(conn, str(store), session, horizon)
    finally:
        conn.close()


def coverage_source(settle_s: float = SETTLE_S, now_ns: Optional[int] = None) -> Callable[[Any, Any], None]:
    """A source for `agentwatch coverage` (coverage.pairing.coverage's `sources`): each session's
    `unrecorded_exec` and `phantom_call` findings, beside what its transcript says."""
    from agentwatch.coverage.pairing import Finding as CoverageFinding

    horizon = (now_ns if now_ns is not None else time.time_ns()) - int(settle_s * 1e9)
    witnessed: dict[int, bool] = {}

    def extend(conn: Any, result: Any) -> None:
        if id(conn) not in witnessed:  # a store the witness never wrote to: nothing to pair, nothing read
            witnessed[id(conn)] = conn.execute(
                "SELECT 1 FROM records WHERE kind = 'attestation' AND json_valid(payload) "
                "AND json_extract(payload, '$.type') = 'process_root' LIMIT 1").fetchone() is not None
        if not witnessed[id(conn)]:
            return
        for f in _reconcile(conn, "", result.session_id, horizon).findings:
            result.findings.append(CoverageFinding(f.kind, f.detail, seq=f.seq, source="process_witness"))

    return extend


def _reconcile(conn: Any, store: str, session: Optional[str], horizon: int) -> Report:
    report = Report(store)
    roots_of_session: dict[Any, set[int]] = {}
    trees: dict[tuple[int, int], list[Tree]] = {}
    losses: list[int] = []
    for seq, payload in conn.execute(
            "SELECT seq, payload FROM records WHERE kind = 'attestation' "
            "AND json_extract(payload, '$.type') IN ('process', 'process_root') ORDER BY seq"):
        doc = json.loads(payload)
        if doc.get("type") == "process_root":
            roots_of_session.setdefault(doc.get("session_id"), set()).add(doc.get("root_pid"))
            continue
        key = (doc.get("root_pid"), doc.get("tree_pid"))
        if doc.get("event") == "exec":
            group = trees.setdefault(key, [])
            if not group or group[-1].ended:
                group.append(Tree(key[0], key[1], doc.get("start_ns") or 0, seq))
            group[-1].execs.append({"seq": seq, "pid": doc.get("pid"), "path": doc.get("path"),
                                    "argv": doc.get("argv"), "start_ns": doc.get("start_ns")})
        elif doc.get("event") == "exit" and doc.get("pid") == key[1] and trees.get(key):
            trees[key][-1].ended = True
    for (payload,) in conn.execute(
            "SELECT payload FROM records WHERE kind = 'gap' "
            "AND json_extract(payload, '$.reason') = 'process_witness_lost'"):
        doc = json.loads(payload)
        report.lost_events += doc.get("lost_events") or 0
        losses.append(doc.get("noticed_ns") or 0)
    all_trees = [t for group in trees.values() for t in group]

    # The events: which hook clients connected (their trees are the recorder's), and the calls.
    document = Dictionaries.of(conn).document
    hook_execs: dict[int, list[Tree]] = {}
    for tree in all_trees:
        for e in tree.execs:
            hook_execs.setdefault(e["pid"], []).append(tree)
    calls: dict[tuple, Call] = {}
    session_events: dict[Any, list[int]] = {}
    sql = (f"SELECT seq, recorded_at_ns, event_kind, {DOCUMENT_COLUMNS} FROM records WHERE kind = 'event'"
           + (" AND session_id = ?" if session is not None else "") + " ORDER BY seq")
    for seq, at_ns, event_kind, *cols in conn.execute(sql, (session,) if session is not None else ()):
        doc = json.loads(document(*cols))
        sid = doc.get("session_id")
        session_events.setdefault(sid, []).append(at_ns)
        client = doc.get("client") or {}
        peer, claimed = client.get("peer_pid"), None
        if peer is None and client.get("delivery") == "spool":
            claimed = client.get("pid")  # a spooled record: the pid its hook claims, not the kernel's
        for pid, need_hook_argv in ((peer, False), (claimed, True)):
            for tree in hook_execs.get(pid, ()) if pid is not None else ():
                if any(e["pid"] == pid and 0 <= at_ns - (e.get("start_ns") or 0) <= HOOK_SPAN_NS
                       and (not need_hook_argv or _runs_hook(e)) for e in tree.execs):
                    tree.hook = True
                    roots_of_session.setdefault(sid, set()).add(tree.root_pid)
        if event_kind not in ("tool_pre", "tool_post", "tool_error"):
            continue
        tool = doc.get("tool") or {}
        call_id = tool.get("call_id")
        call_key: tuple = (sid, call_id) if call_id is not None else (sid, "seq", seq)
        if event_kind == "tool_pre" or call_key not in calls:
            if event_kind == "tool_pre" and call_key in calls and calls[call_key].start_ns is not None:
                call_key = (sid, "seq", seq)  # a call id used twice: a call of its own
            if call_key not in calls:
                tool_input = tool.get("input")
                command = tool_input.get("command") if isinstance(tool_input, dict) else None
                calls[call_key] = Call(sid, doc.get("harness"), call_id, str(tool.get("name") or ""),
                                       tool.get("category"), command if isinstance(command, str) else None, seq)
        call = calls[call_key]
        if event_kind == "tool_pre":
            call.start_ns = at_ns
        else:
            call.end_ns = at_ns
            call.duration_ms = tool.get("duration_ms")

    followed = {sid for sid, roots in roots_of_session.items() if roots and sid is not None}
    if session is not None:
        followed &= {session}
    report.roots = len({r for sid in followed for r in roots_of_session[sid]})
    report.sessions_followed = len(followed)
    report.trees = len(all_trees)
    report.hook_trees = sum(t.hook for t in all_trees)

    def next_event(call: Call) -> Optional[int]:
        after = [t for t in session_events.get(call.session_id, []) if call.start_ns is not None and t > call.start_ns]
        return min(after) if after else None

    def prev_event(call: Call) -> Optional[int]:
        before = [t for t in session_events.get(call.session_id, []) if call.end_ns is not None and t < call.end_ns]
        return max(before) if before else None

    checked: list[tuple[Call, tuple[int, int]]] = []
    for call in calls.values():
        if call.session_id not in followed:
            if call.expects_exec:
                report.calls_unfollowed += 1
            continue
        checked.append((call, call.window(prev_event(call), next_event(call))))
    report.calls_checked = sum(c.expects_exec for c, _ in checked)

    candidates = [t for t in all_trees if not t.hook and any(t.root_pid in roots_of_session[s] for s in followed)]
    candidates.sort(key=lambda t: t.start_ns)

    def fits(call: Call, window: tuple[int, int], tree: Tree) -> bool:
        return tree.root_pid in roots_of_session.get(call.session_id, ()) and window[0] <= tree.start_ns <= window[1]

    # 1. A tree running the call's own command; 2. the earliest tree in the window of a call that
    # still has none; 3. any call's window (a search tool's ripgrep, a second process of one call).
    for call, window in checked:
        if call.expects_exec and call.command:
            for tree in candidates:
                if tree.call is None and fits(call, window, tree) and call.command in tree.argv_text():
                    tree.call = call
                    call.trees.append(tree)
    for call, window in sorted(checked, key=lambda cw: cw[1][0]):
        if call.expects_exec and not call.trees:
            for tree in candidates:
                if tree.call is None and fits(call, window, tree):
                    tree.call = call
                    call.trees.append(tree)
                    break
    for tree in candidates:
        if tree.call is None:
            for call, window in checked:
                if fits(call, window, tree):
                    tree.call = call
                    break

    def near_loss(lo: int, hi: int) -> bool:
        return any(lo - 1_000_000_000 <= n <= hi + 1_000_000_000 for n in losses)

    for tree in candidates:
        if tree.call is None and tree.start_ns > horizon:
            report.unsettled += 1
        elif tree.call is None:
            sid = next((s for s in followed if tree.root_pid in roots_of_session[s]), None)
            report.findings.append(Finding(
                "unrecorded_exec", tree.first_seq, sid, tree.root_pid,
                f"process tree {tree.tree_pid} under harness pid {tree.root_pid} ran "
                f"{_short(tree.argv_text())!r}; no tool call was reported around it",
                near_loss(tree.start_ns, tree.start_ns)))
    for call, window in checked:
        if call.expects_exec and not call.trees and window[1] > horizon:
            report.unsettled += 1
        elif call.expects_exec and not call.trees:
            report.findings.append(Finding(
                "phantom_call", call.seq, call.session_id, next(iter(roots_of_session[call.session_id]), None),
                f"{call.name} call {call.call_id} reported {_short(call.command or '')!r}, "
                f"but no process started under the harness in its window", near_loss(*window)))
    report.findings.sort(key=lambda f: f.seq)
    return report


def _runs_hook(e: dict) -> bool:
    """Whether an exec ran agentwatch's hook client (install/command.py writes `…/agentwatch/hook.py`)."""
    argv = e.get("argv")
    return isinstance(argv, list) and any(isinstance(a, str) and a.endswith(HOOK_PROGRAMS) for a in argv)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
