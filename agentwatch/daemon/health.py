"""Asking a running daemon how it is: `ping` and `health` over the socket.

A small blocking client with a deadline and a clear "cannot connect"
message; the `health` command and the daemon's own stale-socket check use it.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from agentwatch import safefs
from agentwatch.errors import AgentwatchError

DEFAULT_TIMEOUT = 5.0


class DaemonUnreachable(AgentwatchError):
    """No daemon answers on the socket (absent, refused, or silent past the deadline)."""

    exit_code = 3


def request(socket_path: Path | str, message: dict, timeout: float = DEFAULT_TIMEOUT, *,
            configured: bool = False) -> dict:
    """Send one request line and return the reply object. `configured`: the user named the socket
    (safefs.check_socket)."""
    deadline = time.monotonic() + timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        try:
            safefs.check_socket(socket_path, configured=configured)  # another user's socket could answer anything
            sock.connect(str(socket_path))
        except safefs.UnsafePath as exc:
            raise DaemonUnreachable(f"not connecting: {exc}") from None
        except FileNotFoundError:
            raise DaemonUnreachable(f"cannot connect to {socket_path}: no daemon socket there") from None
        except OSError as exc:
            raise DaemonUnreachable(f"cannot connect to {socket_path}: {exc.strerror or exc}") from None
        data = bytearray()
        try:
            sock.sendall(json.dumps(message).encode("utf-8") + b"\n")
            while b"\n" not in data:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            raise DaemonUnreachable(f"{socket_path}: no answer within {timeout:g} s") from None
        except OSError as exc:
            raise DaemonUnreachable(f"{socket_path}: {exc.strerror or exc}") from None
    finally:
        sock.close()
    line, newline, _ = bytes(data).partition(b"\n")
    if not newline:
        raise DaemonUnreachable(f"{socket_path}: connection closed without an answer")
    try:
        reply = json.loads(line)
    except ValueError:
        raise DaemonUnreachable(f"{socket_path}: answer is not JSON") from None
    if not isinstance(reply, dict):
        raise DaemonUnreachable(f"{socket_path}: answer is not a JSON object")
    return reply


def answers(socket_path: Path | str, timeout: float = 1.0) -> bool:
    """True when a daemon answers a ping on `socket_path`."""
    try:
        return request(socket_path, {"op": "ping"}, timeout).get("ok") is True
    except DaemonUnreachable:
        return False


def query(socket_path: Path | str, timeout: float = DEFAULT_TIMEOUT, *, configured: bool = False) -> dict:
    reply = request(socket_path, {"op": "health"}, timeout, configured=configured)
    if reply.get("ok") is not True:
        raise DaemonUnreachable(f"{socket_path}: health refused: {reply.get('error')}: {reply.get('message')}")
    return reply


# Shipping to the fleet server failing this long (it backs off and retries meanwhile) needs the operator.
SHIP_FAILING_S = 300.0

# A spool file older than this while the daemon runs means the drain is stuck.
SPOOL_STALE_S = 300.0

RECORDING, DEGRADED, STOPPED = "recording", "degraded", "stopped"
STATUS_EXIT = {RECORDING: 0, DEGRADED: 1, STOPPED: 3}


def assess(health: dict) -> tuple[str, list[str]]:
    """The top-level status of a health document and the reasons for it (empty when recording).

    `stopped`: the daemon is stopping (answering what was sent, then exiting). `degraded`: it records, but
    something needs the operator (failing commits, a chain break, a sweeper that
    cannot run, quarantined or stale spool files, a failed redaction self-test,
    a fleet server that refused this store's rows or a signed checkpoint or has
    been unreachable for 5 minutes, checkpoints that cannot be signed).
    """
    reasons = []
    writer = health.get("writer", {})
    stopped = writer.get("state") == "stopped"
    if stopped:
        # The store is not the one the daemon opened (deleted, swapped, its schema changed):
        # nothing is recorded until a restart, whatever else looks well.
        reasons.append(f"the writer stopped: {writer.get('stopped_reason')}; records are refused and spooled")
    elif writer.get("state", "ok") != "ok":
        reasons.append(f"writer is failing since {writer.get('failing_since')}: {writer.get('last_error')}")
    for named in writer.get("foreign_rows") or []:
        reasons.append(f"rows {named.get('first_seq')}..{named.get('last_seq')} were written to the store outside "
                       f"this daemon's writer (foreign_rows, named by gap row {named.get('gap_seq')})")
    sweeper = health.get("sweeper", {})
    if sweeper.get("state") == "broken":
        findings = sweeper.get("findings") or [sweeper.get("finding") or {}]
        for finding in findings:
            reasons.append(
                f"chain verification found {finding.get('kind')} at seq {finding.get('seq')}: {finding.get('detail')}"
            )
    elif sweeper.get("state") == "error":
        reasons.append(f"chain verification cannot run: {sweeper.get('last_error')}")
    spool = health.get("spool", {})
    if spool.get("bad"):
        reasons.append(f"{spool['bad']} spool file(s) quarantined in {health.get('spool_path')}/bad")
    oldest = spool.get("oldest_age_s")
    if oldest is not None and oldest > SPOOL_STALE_S:
        reasons.append(f"the oldest spool file waits for {oldest:.0f} s (over {SPOOL_STALE_S:g} s): the drain is stuck")
    self_test = health.get("redaction", {}).get("self_test")
    if self_test is not None and not self_test.get("ok"):
        failures = self_test.get("failures") or []
        reasons.append(f"redaction self-test failed ({len(failures)} failure(s), first: {failures[:1]})")
    ship = health.get("ship", {})
    if ship.get("checkpoint_refused"):
        cp = ship["checkpoint_refused"]
        reasons.append(f"the fleet server refused checkpoint {cp.get('size')} of this store ({cp.get('kind')}): "
                       f"{cp.get('detail')}")
    if ship.get("state") == "refused":
        refused = ship.get("refused") or {}
        reasons.append(f"the fleet server refused seq {refused.get('seq')} of this store ({refused.get('kind')}): "
                       f"{refused.get('detail')}")
    elif ship.get("failing_since_ns") and time.time_ns() - ship["failing_since_ns"] > SHIP_FAILING_S * 1e9:
        reasons.append(f"shipping to {ship.get('target')} fails for over {SHIP_FAILING_S:g} s: {ship.get('last_error')}")
    signing = health.get("signed_checkpoints") or {}
    if signing.get("state") == "failing":
        reasons.append(f"checkpoints are not being signed: {signing.get('last_error')}")
    recorder = health.get("recorder") or {}
    for finding in recorder.get("findings") or []:
        reasons.append(f"{finding.get('kind')}: {finding.get('harness')} ({finding.get('scope')}): "
                       f"{finding.get('detail')}")
    if recorder.get("sessions_missing_calls"):
        reasons.append(f"{recorder['sessions_missing_calls']} session(s) with tool calls in the transcript "
                       "that were never recorded (agentwatch coverage)")
    for finding in signing.get("findings") or []:
        reasons.append(f"the signer's evidence changed under it ({finding.get('kind')}): {finding.get('detail')}")
    if health.get("stopping", health.get("draining")):  # "draining": a daemon from before the rename
        return STOPPED, ["the daemon is stopping", *reasons]
    if stopped:
        return STOPPED, reasons
    return (DEGRADED if reasons else RECORDING), reasons


def problems(health: dict) -> list[str]:
    """What an operator should look at; empty when the daemon is recording and well."""
    if "reasons" in health:
        return list(health["reasons"])
    return assess(health)[1]  # a daemon from before `status`


def status_of(health: dict) -> str:
    return health.get("status") or assess(health)[0]


def unreachable(socket_path: Path | str, reason: str) -> dict:
    """What `agentwatch health` reports when no daemon answers."""
    return {"ok": False, "status": STOPPED, "reasons": [reason], "reachable": False, "socket": str(socket_path)}
