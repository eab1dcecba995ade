"""The process witness against real processes and the real kernel (docs/reliability.md, "The process witness").

A harness process (tests/support/fakeharness.py) runs its hooks through `/bin/sh -c` and its
tool commands as `bash -c`, as Claude Code does, against a real `agentwatch serve
--process-witness`; the proc connector and fanotify are the kernel's own. Needs root for
CAP_NET_ADMIN and CAP_SYS_ADMIN (CI runs as root); elsewhere these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import apsw
import pytest
from support.daemon import Daemon, wait_for
from support.users import as_user, python_for_others, system_user

from agentwatch.daemon import kernel
from agentwatch.readers import processes

# Serial (`make test` runs this file alone, after the parallel phase):
# the witness must read a 0.25 s sleep's argv from /proc while the sleep runs.
pytestmark = pytest.mark.serial

HARNESS = Path(__file__).parent / "support" / "fakeharness.py"
REPO = Path(__file__).resolve().parent.parent


def _need_capabilities() -> None:
    missing = kernel.missing_capabilities(kernel.effective_capabilities())
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs as root, but this process lacks {missing}")
        pytest.skip(f"the process witness needs {', '.join(missing)}")


@pytest.fixture
def witnessed(tmp_path, monkeypatch):
    _need_capabilities()
    started = []

    def start(buffer: int | None = None) -> Daemon:
        if buffer is not None:
            monkeypatch.setenv("AGENTWATCH_SERVE_PROCESS_WITNESS_BUFFER", str(buffer))
        d = Daemon(tmp_path / f"d{len(started)}", extra_args=["--process-witness"]).start()
        started.append(d)
        return d

    yield start
    for d in started:
        assert d.stop() == 0, d.output()


def hook(event: str, session: str = "s1", **fields) -> dict:
    """A Claude Code hook input (docs: code.claude.com/docs/en/hooks, "Hook input")."""
    return {"hook": {"hook_event_name": event, "session_id": session, "cwd": "/tmp", **fields}}


def bash_call(call_id: str, command: str) -> list[dict]:
    """A Bash tool call as Claude Code reports it: PreToolUse, the command, PostToolUse."""
    tool = {"tool_name": "Bash", "tool_use_id": call_id, "tool_input": {"command": command}}
    return [hook("PreToolUse", **tool), {"run": command}, hook("PostToolUse", **tool, tool_response={"stdout": ""})]


def run_harness(d: Daemon, tmp_path: Path, steps: list[dict]) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    # A loaded machine can hold an ack past the hook's 250 ms; these tests need live deliveries.
    env = {**os.environ, "AGENTWATCH_SOCKET": str(d.socket), "AGENTWATCH_HOOK_TIMEOUT_MS": "10000"}
    subprocess.run([sys.executable, str(HARNESS), str(script)], env=env, check=True, timeout=120)


def attestations(d: Daemon, type_: str) -> list[dict]:
    conn = apsw.Connection(f"file:{d.store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        return [json.loads(p) for (p,) in conn.execute(
            "SELECT payload FROM records WHERE kind = 'attestation' AND json_extract(payload, '$.type') = ? "
            "ORDER BY seq", (type_,))]
    finally:
        conn.close()


def gaps(d: Daemon, reason: str) -> list[dict]:
    conn = apsw.Connection(f"file:{d.store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        return [json.loads(p) for (p,) in conn.execute(
            "SELECT payload FROM records WHERE kind = 'gap' AND json_extract(payload, '$.reason') = ?", (reason,))]
    finally:
        conn.close()


def caught_up(d: Daemon) -> bool:
    """Whether the witness's rows cover every hook whose record is stored (an exec row of its peer pid)."""
    conn = apsw.Connection(f"file:{d.store}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        peers = {p for (p,) in conn.execute(
            "SELECT json_extract(payload, '$.client.peer_pid') FROM records WHERE kind = 'event'")}
    finally:
        conn.close()
    execs = {r["pid"] for r in attestations(d, "process") if r["event"] == "exec"}
    return peers <= execs


def reconcile(d: Daemon) -> processes.Report:
    """Once the witness has caught up with every stored hook, nothing is left to settle."""
    wait_for(lambda: caught_up(d), "the witness's rows of every hook")
    return processes.reconcile(d.store, settle_s=0)


def exec_rows(d: Daemon, marker: str) -> list[dict]:
    return [r for r in attestations(d, "process")
            if r["event"] == "exec" and any(marker in a for a in r.get("argv") or [])]


def test_a_session_with_every_hook_has_no_finding_and_both_verifiers_accept_it(witnessed, tmp_path):
    d = witnessed()
    run_harness(d, tmp_path, [hook("SessionStart"), *bash_call("t1", "echo covered-one"),
                              *bash_call("t2", "/bin/sleep 0.25"), hook("Stop")])
    wait_for(lambda: exec_rows(d, "0.25"), "the exec rows of the second call")
    report = reconcile(d)
    assert report.findings == [], report.to_json()
    assert (report.sessions_followed, report.roots, report.calls_checked) == (1, 1, 2)
    assert report.trees - report.hook_trees == 2  # one per call: bash -c COMMAND
    roots = attestations(d, "process_root")
    assert [(r["session_id"], r["harness"]) for r in roots] == [("s1", "claude-code")]
    # bash -c runs the last command in its own process: two exec rows, one pid. The sleep's argv
    # is read while it sleeps; bash's only if /proc was read before bash exec'd the sleep (never
    # the sleep's argv in bash's row).
    sleep = exec_rows(d, "0.25")
    two = [r for r in attestations(d, "process") if r["event"] == "exec" and r["pid"] == sleep[0]["pid"]]
    assert [r["path"] for r in two] == [os.path.realpath("/bin/bash"), os.path.realpath("/bin/sleep")]
    assert two[0]["argv"] in (None, ["/bin/bash", "-c", "/bin/sleep 0.25"])
    assert two[1]["argv"] == ["/bin/sleep", "0.25"]
    assert two[0]["ppid"] == roots[0]["root_pid"] and two[0]["tree_pid"] == two[0]["pid"]
    d.stop()
    for argv in ([sys.executable, "-I", "-S", str(REPO / "agentwatch" / "standalone_verify.py"), str(d.store)],
                 [sys.executable, "-m", "agentwatch.cli", "verify", "--store", str(d.store)]):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_command_whose_hooks_were_dropped_is_an_unrecorded_exec(witnessed, tmp_path):
    d = witnessed()
    run_harness(d, tmp_path, [hook("SessionStart"), *bash_call("t1", "echo reported"),
                              {"run": "sleep 0.2; echo dropped-hook-call"},  # it ran; its hooks never reached us
                              hook("Stop")])
    wait_for(lambda: exec_rows(d, "dropped-hook-call"), "the exec row of the dropped call")
    report = reconcile(d)
    assert [(f.kind, f.session_id) for f in report.findings] == [("unrecorded_exec", "s1")], report.to_json()
    assert "sleep 0.2; echo dropped-hook-call" in report.findings[0].detail


def test_a_fabricated_call_of_a_command_that_never_ran_is_a_phantom_call(witnessed, tmp_path):
    d = witnessed()
    tool = {"tool_name": "Bash", "tool_use_id": "t9", "tool_input": {"command": "rm -rf /never-ran"}}
    run_harness(d, tmp_path, [hook("SessionStart"), *bash_call("t1", "sleep 0.2; echo real"),
                              hook("PreToolUse", **tool), hook("PostToolUse", **tool, tool_response={"stdout": ""}),
                              hook("Stop")])
    wait_for(lambda: len(attestations(d, "process_root")) == 1 and exec_rows(d, "echo real"), "the witness rows")
    report = reconcile(d)
    assert [(f.kind, f.session_id) for f in report.findings] == [("phantom_call", "s1")], report.to_json()
    assert "rm -rf /never-ran" in report.findings[0].detail
    assert report.calls_checked == 2


def test_a_burst_past_a_small_buffer_is_a_gap_row_with_the_count(witnessed, tmp_path):
    d = witnessed(buffer=4096)
    pid = d.proc.pid
    run_harness(d, tmp_path, [hook("SessionStart"), {"signal": [pid, signal.SIGSTOP]},
                              {"burst": 2000, "parallel": 8}, {"signal": [pid, signal.SIGCONT]}, hook("Stop")])
    # A loss shows when the next event from the same CPU arrives: one exec on every CPU.
    for cpu in os.sched_getaffinity(0):
        subprocess.run(["/bin/true"], preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu}), check=True)

    seen: dict = {}

    def settled() -> bool:
        # Read the store first: a loss counted after it (the machine's other processes keep an
        # 8 KiB buffer overflowing) only makes health's count larger, never equal by chance.
        seen["rows"] = gaps(d, "process_witness_lost")
        seen["health"] = d.health()["process_witness"]
        return seen["health"]["lost_events"] > 2000 and \
            sum(g["lost_events"] for g in seen["rows"]) == seen["health"]["lost_events"]

    wait_for(settled, "every lost event counted in gap rows")
    health, lost = seen["health"], seen["rows"]
    assert health["state"] == "running"
    assert health["enobufs"] >= 1
    # Each /bin/true is a fork, an exec and an exit: 6,000 events against room for about ten; the
    # kernel's per-CPU sequence numbers count every one that did not arrive, and the gap rows
    # carry exactly the count health reports.
    assert sum(g["lost_events"] for g in lost) == health["lost_events"]
    assert health["lost_events"] > 2000
    assert all(g["source"] == "proc_connector" for g in lost)


def test_the_documented_buffer_loses_nothing_at_a_2000_exec_burst(witnessed, tmp_path):
    d = witnessed()
    run_harness(d, tmp_path, [hook("SessionStart"), {"burst": 2000, "parallel": 8}, hook("Stop")])
    true = os.path.realpath("/bin/true")
    wait_for(lambda: sum(r["path"] == true for r in attestations(d, "process") if r["event"] == "exec") == 2000,
             "2,000 exec rows of /bin/true", deadline_s=60)
    assert gaps(d, "process_witness_lost") == []
    assert d.health()["process_witness"]["lost_events"] == 0
    assert sum(r["path"] == true for r in attestations(d, "process") if r["event"] == "exec") == 2000


def test_capabilities_are_read_from_the_kernel():
    assert kernel.missing_capabilities(0) == ["CAP_NET_ADMIN (the proc connector)", "CAP_SYS_ADMIN (fanotify)"]
    assert kernel.missing_capabilities(1 << kernel.CAP_NET_ADMIN | 1 << kernel.CAP_SYS_ADMIN) == []
    assert kernel.effective_capabilities() == int(
        next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("CapEff:"))
        .split()[1], 16)


def test_the_service_units_ambient_capabilities_let_another_account_witness_the_agent(tmp_path):
    """As systemd starts the unit (`AmbientCapabilities=`), setpriv starts the daemon: a user of its own
    with exactly CAP_NET_ADMIN, CAP_SYS_ADMIN and CAP_SYS_PTRACE; the agent (root here) is another uid."""
    _need_capabilities()
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    from agentwatch.daemon.service import systemd_system_unit

    unit = systemd_system_unit()
    assert "AmbientCapabilities=CAP_NET_ADMIN CAP_SYS_ADMIN CAP_SYS_PTRACE" in unit.splitlines()
    assert "Environment=AGENTWATCH_SERVE_PROCESS_WITNESS=true" in unit.splitlines()
    with system_user("awsw", private_group=True) as user:
        prefix, extra_env = python_for_others()
        top = Path(tempfile.mkdtemp(prefix="agentwatch-sw-"))
        os.chmod(top, 0o755)
        base = top / "svc"
        base.mkdir()
        os.chown(base, user.pw_uid, user.pw_gid)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(base), **extra_env,
               "XDG_STATE_HOME": str(base / "state"), "XDG_DATA_HOME": str(base / "data"),
               "XDG_CONFIG_HOME": str(base / "config"), "XDG_RUNTIME_DIR": str(base / "run"),
               "AGENTWATCH_SERVE_SOCKET_GROUP": user.pw_name, "AGENTWATCH_SERVE_PROCESS_WITNESS": "true"}
        caps = "+net_admin,+sys_admin,+sys_ptrace"
        sock = base / "run" / "agentwatch" / "agentwatch.sock"
        store = base / "data" / "agentwatch" / "store.db"
        with open(tmp_path / "daemon.log", "wb") as log:
            daemon = subprocess.Popen(["setpriv", "--reuid", str(user.pw_uid), "--regid", str(user.pw_gid),
                                       "--clear-groups", "--inh-caps", caps, "--ambient-caps", caps, "--",
                                       *prefix, "-m", "agentwatch.cli", "serve", "--verify-interval", "0"],
                                      env=env, stdout=log, stderr=log, cwd="/", umask=0o027)
        try:
            wait_for(lambda: daemon.poll() is not None or sock.exists(), "the daemon's socket")
            assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()
            status = (Path("/proc") / str(daemon.pid) / "status").read_text()
            assert f"Uid:\t{user.pw_uid}" in status and "CapEff:\t0000000000281000" in status
            fake = Daemon(tmp_path, socket_path=sock, store=store)
            assert fake.request({"op": "health"})["process_witness"]["state"] == "running"
            run_harness(fake, tmp_path, [hook("SessionStart"), *bash_call("t1", "sleep 0.2; echo as-root"),
                                         {"run": "sleep 0.2; echo unreported"}, hook("Stop")])
            wait_for(lambda: exec_rows(fake, "unreported"), "the unreported command's exec row")
            assert [r["uid"] for r in exec_rows(fake, "as-root")] == [0]  # the agent's uid, not the daemon's
            report = reconcile(fake)
            assert [(f.kind, f.session_id) for f in report.findings] == [("unrecorded_exec", "s1")]
            assert "echo unreported" in report.findings[0].detail
        finally:
            daemon.send_signal(signal.SIGTERM)
            code = daemon.wait(30)
            shutil.rmtree(top, ignore_errors=True)
            assert code == 0, (tmp_path / "daemon.log").read_text()


def test_without_the_capabilities_the_witness_is_unavailable_and_nothing_else_changes(tmp_path):
    with system_user("awpw") as user:
        prefix, extra_env = python_for_others()
        top = Path(tempfile.mkdtemp(prefix="agentwatch-pw-"))  # pytest's tmp_path is root's alone
        os.chmod(top, 0o755)
        base = top / "home"
        base.mkdir()
        os.chown(base, user.pw_uid, user.pw_gid)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(base), **extra_env,
               "XDG_STATE_HOME": str(base / "state"), "XDG_DATA_HOME": str(base / "data"),
               "XDG_CONFIG_HOME": str(base / "config"), "XDG_RUNTIME_DIR": str(base / "run")}
        sock = base / "run" / "agentwatch" / "agentwatch.sock"
        with open(tmp_path / "daemon.log", "wb") as log:
            daemon = subprocess.Popen([*prefix, "-m", "agentwatch.cli", "serve", "--process-witness", "--socket",
                                       str(sock), "--verify-interval", "0"], env=env, stdout=log, stderr=log, cwd="/",
                                      **as_user(user))
        try:
            wait_for(lambda: daemon.poll() is not None or sock.exists(), "the daemon's socket")
            assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()
            run = lambda argv, **kw: subprocess.run([*prefix, *argv], env=env, capture_output=True, text=True,  # noqa: E731
                                                    cwd="/", timeout=60, **as_user(user), **kw)
            hook_run = run(["-I", "-S", str(REPO / "agentwatch" / "hook.py"), "claude-code"],
                           input=json.dumps({"hook_event_name": "Stop", "session_id": "s"}))
            assert hook_run.returncode == 0, hook_run.stderr
            health = run(["-m", "agentwatch.cli", "health", "--socket", str(sock), "--json"])
            doc = json.loads(health.stdout)
            assert doc["process_witness"] == {
                "state": "unavailable",
                "reason": "missing CAP_NET_ADMIN (the proc connector), CAP_SYS_ADMIN (fanotify)"}
            assert (doc["status"], doc["reasons"], doc["counters"]["accepted"]) == ("recording", [], 1)
            text = run(["-m", "agentwatch.cli", "health", "--socket", str(sock)])
            assert ("process witness: unavailable (missing CAP_NET_ADMIN (the proc connector), "
                    "CAP_SYS_ADMIN (fanotify))") in text.stdout
        finally:
            daemon.send_signal(signal.SIGTERM)
            code = daemon.wait(30)
            shutil.rmtree(top, ignore_errors=True)
            assert code == 0, (tmp_path / "daemon.log").read_text()


class _WithoutSysAdmin(Daemon):
    """The daemon with CAP_SYS_ADMIN dropped from its bounding set: root, but no fanotify."""

    def argv(self) -> list[str]:
        return ["setpriv", "--bounding-set", "-sys_admin", *super().argv()]


def test_without_cap_sys_admin_the_witness_runs_and_takes_exec_paths_from_proc(tmp_path, monkeypatch):
    _need_capabilities()
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    d = _WithoutSysAdmin(tmp_path / "d", extra_args=["--process-witness"]).start()
    try:
        witness = d.health()["process_witness"]
        assert (witness["state"], witness["exec_paths"]) == ("running", "/proc only (missing CAP_SYS_ADMIN (fanotify))")
        run_harness(d, tmp_path, [hook("SessionStart"), *bash_call("t1", "/bin/sleep 0.3"), hook("Stop")])
        wait_for(lambda: any(r["argv"] == ["/bin/sleep", "0.3"] for r in exec_rows(d, "0.3")), "the sleep's exec row")
        # Without fanotify a row is read from /proc: bash's row shows the sleep when bash exec'd it
        # before /proc was read (docs/reliability.md); the last exec of the process is the sleep.
        pid = exec_rows(d, "0.3")[-1]["pid"]
        last = [r for r in attestations(d, "process") if r["event"] == "exec" and r["pid"] == pid][-1]
        assert (last["path"], last["path_from"], last["argv"]) == (os.path.realpath("/bin/sleep"), "proc",
                                                                   ["/bin/sleep", "0.3"])
        assert reconcile(d).findings == []
    finally:
        assert d.stop() == 0, d.output()
