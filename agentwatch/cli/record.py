"""Commands that record: `serve`, `hook`, `import`, `init`, `erase`, `health`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from agentwatch.cli.app import JsonOpt, SocketOpt, StoreOpt, app, fail, interrupted
from agentwatch.errors import AgentwatchError
from agentwatch.record.adapters import HARNESSES


@app.command("import")
def import_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="JSON lines: harness payloads or append envelopes."),
    store: Optional[Path] = StoreOpt,
    harness: str = typer.Option("unknown", "--harness", help="Harness name for lines that are bare payloads (claude-code, codex, ...; unknown when none fits)."),
    batch_size: int = typer.Option(1000, "--batch-size", min=1, max=100_000, help="Rows per transaction."),
    json_out: bool = JsonOpt,
) -> None:
    """Append JSON lines to a store, in batches, creating it if needed.

    A line is either a wire-protocol append envelope (has "record_id",
    "harness" and one of "payload"/"payload_text"/"payload_b64") or a bare
    harness payload (wrapped with --harness and a record_id derived from the
    harness, the line number and the line, so importing the same input again
    stores nothing twice: docs/protocol.md, "Record ids"). Malformed
    lines are reported with their line numbers on stderr and do not stop the
    good ones; the exit code is 1 when any line was rejected. Refused (exit 3)
    while a daemon serves the store: its writer is the store's only one. The
    imported rows are then covered by a signed checkpoint (docs/chain.md,
    "Checkpoints"; config checkpoint.enabled).
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.daemon.integrity import Exclusive
    from agentwatch.record import importer
    from agentwatch.record.adapters import HARNESSES
    from agentwatch.store import db

    if harness != "unknown" and harness not in HARNESSES:  # rows under a name no reader knows
        fail(f"unknown harness {harness!r} (one of: {', '.join(HARNESSES)}, or unknown)", 2)
    report = None
    try:
        cfg = config.load({"store": store})
        report = importer.ImportReport(store=cfg.store)
        with db.store_errors(cfg.store, "write"), Exclusive(cfg.store, "import") as writer, \
                render.import_progress(report, enabled=not json_out) as update:
            importer.import_lines(cfg.store, source, harness=harness, batch_size=batch_size, policy=cfg.policy(),
                                  progress=update, pack=cfg["packing"], writer=writer, report=report)
    except KeyboardInterrupt:
        done = report.stored if report is not None else 0
        interrupted(f"{done} events committed; importing the same input again adds only the rest")
    except AgentwatchError as exc:
        fail(exc)
    if report.stored and cfg["checkpoint.enabled"]:
        _sign_imported(cfg)
    render.emit_import(report, json_out)
    raise typer.Exit(1 if report.rejected else 0)


def setting_option(name: str) -> Any:
    """A command-line option for the setting config.KEYS[name]: its flag, help and default come from there.

    The option's default is None (not given), so the configuration file and environment
    still apply; config.load validates the value like any other source.
    """
    from agentwatch import config

    key = config.KEYS[name]
    return typer.Option(
        None, key.option, metavar=key.metavar, show_default=False,
        help=f"{key.doc[0].upper()}{key.doc[1:]} (config {name}, default {key.default()}).",
    )


SERVE_SETTINGS = (
    "serve.attest_interval_s", "serve.batch_max", "serve.idle_timeout_s", "serve.verify_interval_s",
    "serve.full_verify_interval_s", "serve.log_level", "serve.log_format", "ship.url",
    "checkpoint.interval_s", "checkpoint.enabled", "packing", "retention.payload_days", "serve.process_witness",
    "serve.normalize_workers",
)


def _sign_imported(cfg) -> None:
    """Cover imported rows with a signed checkpoint."""
    from agentwatch.evidence import checkpoints

    try:
        signed = checkpoints.sign_store(cfg.store, state_dir=cfg["state_dir"],
                                        witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])
    except Exception as exc:  # the rows are stored; verify will name them `unsigned`
        print(f"agentwatch: imported rows are not covered by a signed checkpoint: {exc}", file=sys.stderr)
        return
    print(f"agentwatch: signed checkpoint {signed.checkpoint.size}", file=sys.stderr)


@app.command("serve")
def serve_cmd(
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    spool: Optional[Path] = typer.Option(
        None, "--spool", help="Spool directory to drain (else AGENTWATCH_SPOOL, config `spool`, $XDG_DATA_HOME/agentwatch/spool)."
    ),
    attest_interval: Optional[float] = setting_option("serve.attest_interval_s"),
    batch_max: Optional[int] = setting_option("serve.batch_max"),
    idle_timeout: Optional[float] = setting_option("serve.idle_timeout_s"),
    verify_interval: Optional[float] = setting_option("serve.verify_interval_s"),
    full_verify_interval: Optional[float] = setting_option("serve.full_verify_interval_s"),
    log_level: Optional[str] = setting_option("serve.log_level"),
    log_format: Optional[str] = setting_option("serve.log_format"),
    ship_url: Optional[str] = setting_option("ship.url"),
    checkpoint_interval: Optional[float] = setting_option("checkpoint.interval_s"),
    checkpoints: Optional[bool] = setting_option("checkpoint.enabled"),
    packing: Optional[bool] = setting_option("packing"),
    process_witness: Optional[bool] = setting_option("serve.process_witness"),
    retention_days: Optional[float] = setting_option("retention.payload_days"),
    normalize_workers: Optional[int] = setting_option("serve.normalize_workers"),
) -> None:
    """Run the recorder daemon in the foreground until SIGTERM or Ctrl-C.

    Listens on the socket (0600, in a 0700 directory), commits each record
    before acknowledging it, drains the spool, and writes attestation rows at
    start, periodically and at stop. It signs checkpoints of the store's Merkle
    tree every checkpoint interval and at stop, and hands them to the witness
    directories (docs/chain.md). On SIGTERM it stops accepting, commits and
    answers what was already sent, writes the stop attestation, signs the last
    checkpoint and exits 0.
    Paths, privacy mode, redaction and serve.* settings come from the
    configuration (docs/config.md); flags override it. Logs go to stderr, as
    text or (--log-format json) one JSON object per line. Exit 3 when the store
    or socket is already served or cannot be opened, 2 for a configuration
    problem (e.g. a non-socket file at the socket path, an unsafe salt file).
    See docs/daemon.md and docs/protocol.md.
    """
    from agentwatch import config
    from agentwatch.daemon.server import serve
    from agentwatch.daemon.settings import ServeConfig

    given = (attest_interval, batch_max, idle_timeout, verify_interval, full_verify_interval, log_level, log_format,
             ship_url, checkpoint_interval, checkpoints, packing, retention_days, process_witness, normalize_workers)
    try:
        cfg = config.load({"store": store, "socket": socket_path, "spool": spool, **dict(zip(SERVE_SETTINGS, given))})
        code = serve(ServeConfig.from_config(cfg))
    except AgentwatchError as exc:
        fail(exc)
    raise typer.Exit(code)


@app.command("health")
def health_cmd(
    socket_path: Optional[Path] = SocketOpt,
    json_out: bool = JsonOpt,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also every field of the health document, grouped."),
    timeout: float = typer.Option(5.0, "--timeout", min=0.1, metavar="SECONDS", help="How long to wait for the daemon."),
) -> None:
    """Ask the running daemon how it is: a summary on one screen; --verbose adds every counter.

    `status` is recording (exit 0), degraded (exit 1: failing commits, a chain
    break, quarantined or stale spool files, a failed redaction self-test; the
    `reasons` say which) or stopped (exit 3: no daemon answers, or it is
    shutting down). The summary: the reasons, the writer, the last commit's age,
    the sweeper's lag and findings, the spool's backlog and oldest file, the WAL
    size, the redaction self-test (and shipping, when the daemon ships). On a
    terminal it is a table; otherwise plain `label: value` lines. --json prints
    the whole document (docs/daemon.md, "Health").
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.daemon import health

    try:
        cfg = config.load({"socket": socket_path})
    except AgentwatchError as exc:
        fail(exc)
    sock = cfg.socket
    try:
        report = health.query(sock, timeout, configured=cfg.sources["socket"] != "default")
        if "evidence_trust" in report:  # judged by the daemon's uid; the asker's is what counts here
            from agentwatch.evidence import trust

            report["evidence_trust"] = trust.as_seen_here(
                report["evidence_trust"], [Path(d) for d in cfg["checkpoint.witness_dirs"]], cfg["state_dir"])
    except health.DaemonUnreachable as exc:
        from agentwatch.readers import offline

        report = offline.report(sock, str(exc), cfg.spool)
        if json_out or not render.is_terminal():  # on a terminal the summary says it, once
            print(f"agentwatch: {exc}", file=sys.stderr)
    status = health.status_of(report)
    if json_out:
        render.emit_document(report)
    else:
        render.emit_health({"status": status, **report}, verbose=verbose, as_json=False)
    # The reasons also go to stderr for scripts; on a terminal the table already shows them.
    if report.get("reachable") is not False and (json_out or not render.is_terminal()):
        for problem in health.problems(report):
            print(f"agentwatch: {problem}", file=sys.stderr)
    raise typer.Exit(health.STATUS_EXIT.get(status, 1))


HOOK_HELP = """Record one hook invocation (input on stdin); always exits 0. See docs/hook.md.

    HARNESS is one of {harnesses}; --event NAME gives the event when the harness passes it outside
    the payload. Arguments are handed to the client unparsed, so even a malformed
    call exits 0 (a harness may read exit 2 as "block"). Same as
    `agentwatch-hook`; hooks should run the faster file form that `install`
    writes: `python -I -S /abs/path/agentwatch/hook.py HARNESS`.
    """.format(harnesses=", ".join(HARNESSES))


@app.command(
    "hook",
    help=HOOK_HELP,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="HARNESS [--event NAME] [ARG...]",
)
def hook_cmd(ctx: typer.Context) -> None:
    """Record one hook invocation (input on stdin); see HOOK_HELP."""
    from agentwatch import hook

    hook.run(list(ctx.args))


@app.command("erase")
def erase_cmd(
    seqs: list[int] = typer.Argument(..., metavar="SEQ...", min=1, help="Seq of each row whose payload to erase."),
    reason: str = typer.Option(..., "--reason", help="Why (stored in clear in the erasure row: do not quote the secret)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="NAME", help="Who asks for it, beside the uid and login name recorded anyway."),
    override_hold: Optional[str] = typer.Option(
        None, "--override-hold", metavar="REASON",
        help="Erase rows a legal hold covers anyway; the erasure rows record the holds and this reason."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Erase rows' payloads, keeping the chain verifiable (docs/erasure.md).

    Each row's payload becomes null and an `erasure` attestation row, naming the
    seq, the SHA-256 of the removed payload, the reason and who erased it, is
    appended in the same transaction; `verify` reports the row as erased. Freed
    space is overwritten and the WAL checkpointed and truncated, so the bytes leave
    the store's files. Refused while a daemon serves the store: stop it, erase,
    start it (hooks spool meanwhile). Only event and gap rows can be erased; a row
    under legal hold (`agentwatch hold`) only with --override-hold.
    Exit 0 done, 1 a row does not verify or a reader kept the WAL from being
    emptied (run erase again), 2 usage, 3 store unreachable or daemon running.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.daemon import erase

    try:
        cfg = config.load({"store": store})
        result = erase.erase_store(cfg.store, seqs, reason, by=by, override_hold=override_hold,
                                   state_dir=cfg["state_dir"],
                                   witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]],
                                   sign=cfg["checkpoint.enabled"])
    except AgentwatchError as exc:
        fail(exc)
    render.emit_erase(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("init")
def init_cmd(
    store: Optional[Path] = StoreOpt,
    new_store: bool = typer.Option(
        False, "--new-store",
        help="Accept the store at the path as it is now (create one if there is none), though it is not the "
        "one remembered there; the previous identity and what was lost are kept in the remembered state.",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Create the store if there is none, and remember which store this path holds.

    `serve` refuses a path whose store was replaced (another store_id, or none)
    or rolled back (a head below one seen earlier) until you choose here:
    `init --new-store` accepts what is there now, logged on stderr and in the
    remembered state's history (docs/reliability.md, "Store identity"). Without
    --new-store such a path is refused: exit 4 replaced, 5 rolled_back,
    7 schema_changed (1 for another finding); 0 otherwise.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.verify import identity

    try:
        result = identity.init_store(config.load({"store": store}).store, new_store=new_store)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_init(result, json_out)
    raise typer.Exit(result.exit_code)
