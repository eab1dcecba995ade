"""Commands for retention: `hold add|list|release`, `retention run`, `archive` (docs/retention.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, SocketOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError

hold_app = typer.Typer(name="hold", help="Legal holds: rows retention and erase must keep.", no_args_is_help=True)
app.add_typer(hold_app)
retention_app = typer.Typer(name="retention", help="Apply the retention policy.", no_args_is_help=True)
app.add_typer(retention_app)

ReasonOpt = typer.Option(..., "--reason", metavar="TEXT", help="Why (stored in clear in the chained row).")
ByOpt = typer.Option(None, "--by", metavar="NAME", help="Who asks for it, beside the uid recorded anyway.")


def _sign(cfg) -> None:
    """Cover rows written here with a signed checkpoint, unless a daemon serves the store (it signs)."""
    from agentwatch.evidence import checkpoints, compare

    if not cfg["checkpoint.enabled"] or compare.daemon_serving(cfg.store):
        return
    try:
        checkpoints.sign_store(cfg.store, state_dir=cfg["state_dir"],
                               witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])
    except Exception as exc:  # the rows are stored; verify will name them `unsigned`
        print(f"agentwatch: the new rows are not covered by a signed checkpoint: {exc}", file=sys.stderr)


def _emit(doc: dict, json_out: bool, line: str) -> None:
    if json_out:
        print(json.dumps(doc, sort_keys=True))
    else:
        print(line)


@hold_app.command("add")
def hold_add_cmd(
    session: Optional[str] = typer.Option(None, "--session", metavar="ID", help="Hold one recorded session's rows (its id or an unambiguous prefix of one)."),
    harness: Optional[str] = typer.Option(None, "--harness", metavar="NAME", help="Hold one harness's rows."),
    since: Optional[str] = typer.Option(None, "--since", metavar="TIME", help="Hold rows recorded at or after (ISO time or age)."),
    until: Optional[str] = typer.Option(None, "--until", metavar="TIME", help="Hold rows recorded at or before (ISO time or age)."),
    reason: str = ReasonOpt,
    by: Optional[str] = ByOpt,
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Place a legal hold: the rows it covers keep their payloads through retention and erase.

    The scopes given combine (a session of a harness within a time range); at
    least one is needed. The hold is a chained `hold` row naming its scope,
    reason and who placed it; it holds until `hold release`. While a daemon
    serves the store it writes the row (only the daemon's own account or root
    may); otherwise it is written here under the store's lock.
    Exit 0 placed, 2 usage, 3 store or daemon unreachable.

    Example: agentwatch hold add --session 8a1c2f0e --reason "incident 4411"
    """
    from agentwatch import config
    from agentwatch.daemon.retention import submit_operator
    from agentwatch.readers.sessions import parse_since, resolve

    try:
        cfg = config.load({"store": store, "socket": socket_path})
        if session is not None:  # the full id of a recorded session: a hold matches ids exactly
            session = resolve(cfg.store, session, harness)[1]
        scope = {"session_id": session, "harness": harness,
                 "since_ns": parse_since(since) if since else None, "until_ns": parse_since(until) if until else None}
        request = {"action": "hold", "scope": scope, "reason": reason, **({"by": by} if by else {})}
        done = submit_operator(cfg.store, cfg.socket, request)
    except AgentwatchError as exc:
        fail(exc)
    if done["via"] == "store":
        _sign(cfg)
    hold_id = done["record_id"].removeprefix("attest-")
    _emit({"hold_id": hold_id, **done}, json_out,
          f"placed {hold_id} (seq {done['seq']})" + (f" on session {session}" if session else ""))


@hold_app.command("release")
def hold_release_cmd(
    hold_id: str = typer.Argument(..., metavar="HOLD_ID", help="The hold's id, as `hold list` shows it."),
    reason: str = ReasonOpt,
    by: Optional[str] = ByOpt,
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Release a legal hold: a chained `hold_release` row; retention may then take its rows.

    Exit 0 released, 2 usage (no such hold, released already), 3 unreachable.

    Example: agentwatch hold release hold-3f2a9c01d4e5 --reason "case closed"
    """
    from agentwatch import config
    from agentwatch.daemon.retention import submit_operator

    try:
        cfg = config.load({"store": store, "socket": socket_path})
        request = {"action": "release", "hold_id": hold_id, "reason": reason, **({"by": by} if by else {})}
        done = submit_operator(cfg.store, cfg.socket, request)
    except AgentwatchError as exc:
        fail(exc)
    if done["via"] == "store":
        _sign(cfg)
    _emit({"hold_id": hold_id, **done}, json_out, f"released {hold_id} (seq {done['seq']})")


@hold_app.command("list")
def hold_list_cmd(
    all_: bool = typer.Option(False, "--all", help="Released holds too."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1, metavar="N", help="Only the N newest holds (default: every hold); the next page is --before the smallest seq of this one."),
    before: Optional[int] = typer.Option(None, "--before", min=1, metavar="SEQ", help="Only holds placed before this seq (the next page of --limit)."),
) -> None:
    """List the legal holds in force (with --all, released ones too).

    Exit 0, 3 store unreachable.

    Example: agentwatch hold list --json
    """
    from agentwatch import config
    from agentwatch.store import db
    from agentwatch.store.retention import holds

    try:
        cfg = config.load({"store": store})
        with db.store_errors(cfg.store):
            conn = db.open_reader(cfg.store)
            try:
                found = [h for h in holds(conn) if all_ or h.active]
            finally:
                conn.close()
    except AgentwatchError as exc:
        fail(exc)
    from agentwatch.readers import paging

    listed = len(found)
    found, next_before = paging.page_back(found, lambda h: h.seq, limit=limit, before=before)
    if next_before is not None:
        typer.echo(paging.more_remain("--before", next_before), err=True)
    if json_out:
        print(json.dumps([h.to_json() for h in found], sort_keys=True))
        return
    kind = "" if all_ else " in force"
    if not found and listed:  # an empty page, not an empty list: say where the holds are
        print(f"no holds{kind} before seq {before}; {listed}{kind} at or after it (drop --before to list them)")
    elif not found:
        print(f"no holds{kind}")
    for h in found:
        scope = ", ".join(f"{k}={v}" for k, v in sorted(h.scope.items()))
        state = "in force" if h.active else f"released (seq {h.released_by_seq})"
        print(f"{h.hold_id}  seq {h.seq}  {state}  {scope}  reason: {h.reason}")


@retention_app.command("run")
def retention_run_cmd(
    days: Optional[float] = typer.Option(None, "--days", min=0.0, metavar="DAYS",
                                         help="Payloads older than this (default: config retention.payload_days)."),
    by: Optional[str] = ByOpt,
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Remove the payloads of rows older than the policy allows, now, on a store no daemon serves.

    The daemon does the same every retention.interval_s while it serves. Each
    transaction appends a chained `retention` row (range, rows, bytes freed,
    policy digest); each retained row keeps its payload's digest, so the chain,
    the tree and every proof still verify. Rows under a legal hold are kept.
    Exit 0 done, 2 usage, 3 store unreachable or daemon serving it.

    Example: agentwatch retention run --days 30
    """
    from agentwatch import config
    from agentwatch.daemon.retention import retain_offline
    from agentwatch.store.retention import Policy

    try:
        cfg = config.load({"store": store})
        policy = Policy(cfg["retention.payload_days"] if days is None else days)
        if policy.payload_days <= 0:
            fail("no retention policy: set retention.payload_days or give --days", 2)
        passes = retain_offline(cfg.store, policy, max_rows=cfg["retention.max_rows"], by=by)
    except AgentwatchError as exc:
        fail(exc)
    if passes:
        _sign(cfg)
    doc = {"policy": policy.to_json(), "policy_digest": policy.digest, "passes": [p.to_json() for p in passes],
           "rows": sum(p.rows for p in passes), "bytes_freed": sum(p.bytes_freed for p in passes)}
    _emit(doc, json_out, f"retained {doc['rows']} rows ({doc['bytes_freed']} payload bytes) in {len(passes)} "
          f"transactions; rows under hold kept: {passes[-1].held if passes else 0}")


@app.command("archive")
def archive_cmd(
    before: str = typer.Option(..., "--before", metavar="TIME", help="Archive rows recorded before this (ISO time or age)."),
    out: Path = typer.Option(..., "-o", "--output", metavar="FILE", help="Where to write the archive."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Write the rows recorded before TIME, payloads and proofs, to one offline-verifiable file.

    The archive holds each row with its inclusion proof against the latest
    signed checkpoint, which it carries; `agentwatch verify-bundle FILE --key
    KEY` and `standalone_verify.py --bundle FILE --key KEY` check it with the
    key alone. Write it before retention removes those payloads. Rows after the
    latest checkpoint cannot be archived until one covers them.
    Exit 0 written, 1 not covered by a checkpoint, 2 usage, 3 store unreachable.

    Example: agentwatch archive --before 30d -o 2026-q3.agentwatch-archive.json
    """
    from agentwatch import config
    from agentwatch.evidence.archive import write_archive
    from agentwatch.readers.sessions import parse_since
    from agentwatch.store import db

    if out.is_dir():
        fail(f"{out}: is a directory; give the archive's file name (-o DIR/NAME)", 2)
    try:
        cfg = config.load({"store": store})
        with db.store_errors(cfg.store):
            result = write_archive(cfg.store, parse_since(before), out, state_dir=cfg["state_dir"])
    except AgentwatchError as exc:
        fail(exc)
    try:
        from agentwatch.daemon.retention import submit_operator

        noted = submit_operator(cfg.store, cfg.socket, {"action": "archived", "reason": f"archive {out.name}",
                                                        "archive": result.to_json()})
    except AgentwatchError as exc:
        print(f"agentwatch: the archive is written, but recording it in the store failed: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    if noted["via"] == "store":
        _sign(cfg)
    _emit({**result.to_json(), "recorded_seq": noted["seq"]}, json_out,
          f"archived {result.rows} rows (seq {result.first_seq}..{result.last_seq}) to {result.path}: "
          f"{result.bytes} bytes, {result.sha256}; recorded as seq {noted['seq']}")
