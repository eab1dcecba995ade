"""The `agentwatch` command: thin over the library.

Each command parses its options, calls one library function, renders the
result and maps errors to exit codes (0 ok, 1 a check found a problem, 2 usage
or config error, 3 store or daemon unreachable). Data goes to stdout,
diagnostics and progress to stderr. rich is imported only by `render`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from agentwatch import __version__, paths
from agentwatch.errors import AgentwatchError
from agentwatch.record.adapters import HARNESSES

app = typer.Typer(
    name="agentwatch",
    help="Tamper-evident flight recorder for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

StoreOpt = typer.Option(
    None, "--store", envvar="AGENTWATCH_STORE", help="Store path (default: $XDG_DATA_HOME/agentwatch/store.db)."
)
SocketOpt = typer.Option(
    None,
    "--socket",
    envvar="AGENTWATCH_SOCKET",
    help="Daemon socket (default: $XDG_RUNTIME_DIR/agentwatch/agentwatch.sock).",
)
JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")


def fail(error: AgentwatchError | str, code: int | None = None) -> NoReturn:
    """Print one clear line on stderr and exit with the error's code."""
    message = str(error)
    exit_code = code if code is not None else getattr(error, "exit_code", 2)
    print(f"agentwatch: {message}", file=sys.stderr)
    raise typer.Exit(exit_code)


def version_callback(value: bool) -> None:
    if value:
        print(f"agentwatch {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True, help="Print the version."),
) -> None:
    """Tamper-evident flight recorder for AI coding agents."""


@app.command("path")
def path_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the store path, to open it with other SQLite tools."""
    from agentwatch.readers import render

    resolved = paths.resolve_store(store)
    render.emit_path(resolved, json_out)


@app.command("sql")
def sql_cmd(
    query: str = typer.Argument(..., help="One read-only SQL statement, e.g. \"SELECT * FROM events LIMIT 5\"."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
    csv_out: bool = typer.Option(False, "--csv", help="CSV with a header row on stdout."),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.001, metavar="SECONDS", help="Stop the query after this long (reading its rows included)."
    ),
    max_memory: int = typer.Option(
        512, "--max-memory", min=1, metavar="MB", help="Stop the query when SQLite would need more memory than this."
    ),
    pg: Optional[str] = typer.Option(None, "--pg", metavar="URL", help="Query the fleet server instead (postgresql://..., a read-only login)."),
) -> None:
    """Run a read-only SQL query against the store (writes and ATTACH are refused).

    Tables and views: `events` (one row per harness event), `chain` (hashes as
    sha256:hex), `records` (every row, with forensic columns). See docs/schema.md.
    Exactly one statement: several are refused before any runs. A query that
    passes --timeout or --max-memory, or that Ctrl-C interrupts, is stopped
    and exits 2. Exit 3 when the store cannot be read.
    With --pg, the query runs on the fleet server, read-only by role: the login
    must be a reading one (a member of agentwatch_read), and `events`,
    `tool_calls`, `sources`, `findings` name the fleet's views (docs/fleet.md).
    """
    from agentwatch.readers import render
    from agentwatch.readers import sql as sqlquery
    from agentwatch.store import db

    if json_out and csv_out:
        fail("choose one of --json and --csv", 2)
    resolved = paths.resolve_store(store)
    try:
        if pg is not None:
            from agentwatch.fleet import sql as fleet_sql

            columns, rows = fleet_sql.run(pg, query)
            render.emit_rows(columns, rows, fmt="json" if json_out else "csv" if csv_out else "table")
        else:
            with db.store_errors(resolved):
                columns, rows = sqlquery.run(resolved, query, timeout=timeout, max_memory_mb=max_memory)
                render.emit_rows(columns, rows, fmt="json" if json_out else "csv" if csv_out else "table")
    except AgentwatchError as exc:
        fail(exc)


@app.command("import")
def import_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="JSON lines: harness payloads or append envelopes."),
    store: Optional[Path] = StoreOpt,
    harness: str = typer.Option("unknown", "--harness", help="Harness name for lines that are bare payloads."),
    batch_size: int = typer.Option(1000, "--batch-size", min=1, max=100_000, help="Rows per transaction."),
    json_out: bool = JsonOpt,
) -> None:
    """Append JSON lines to a store, in batches, creating it if needed.

    A line is either a wire-protocol append envelope (has "record_id",
    "harness" and one of "payload"/"payload_text"/"payload_b64") or a bare
    harness payload (wrapped with a fresh record_id and --harness). Malformed
    lines are reported with their line numbers on stderr and do not stop the
    good ones; the exit code is 1 when any line was rejected. Unless a daemon
    serves the store, the imported rows are then covered by a signed checkpoint
    (docs/chain.md, "Checkpoints"; config checkpoint.enabled).
    """
    from agentwatch import config
    from agentwatch.readers import render
    from agentwatch.record import importer
    from agentwatch.store import db

    try:
        cfg = config.load({"store": store})
        with db.store_errors(cfg.store, "write"), render.progress("importing", enabled=not json_out) as update:
            report = importer.import_lines(cfg.store, source, harness=harness, batch_size=batch_size,
                                           policy=cfg.policy(), progress=update, pack=cfg["packing"])
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
    "checkpoint.interval_s", "checkpoint.enabled", "packing",
)


def _sign_imported(cfg) -> None:
    """Cover imported rows with a signed checkpoint, unless a daemon serves the store (it signs them)."""
    from agentwatch.verify import checkpoints, evidence

    if evidence.daemon_serving(cfg.store):
        return
    try:
        signed = checkpoints.sign_store(cfg.store, state_dir=cfg["checkpoint.dir"],
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
        None, "--spool", envvar="AGENTWATCH_SPOOL", help="Spool directory to drain (default: $XDG_DATA_HOME/agentwatch/spool)."
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
             ship_url, checkpoint_interval, checkpoints, packing)
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
    from agentwatch.daemon import health
    from agentwatch.readers import render

    sock = Path(socket_path) if socket_path else paths.default_socket()
    try:
        report = health.query(sock, timeout)
    except health.DaemonUnreachable as exc:
        report = health.unreachable(sock, str(exc))
        print(f"agentwatch: {exc}", file=sys.stderr)
    status = health.status_of(report)
    if json_out:
        print(json.dumps(report))
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


@app.command("verify")
def verify_cmd(
    store: Optional[Path] = StoreOpt,
    full: bool = typer.Option(False, "--full", help="Re-verify the whole chain from genesis, not just rows after the anchor."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, metavar="N", help="Processes verifying segments at once (default: one per CPU, at most 2, from 200,000 rows)."),
    key: Optional[str] = typer.Option(None, "--key", help="The store's checkpoint verifier key, or a file holding it (default: keys/<store_id>.pub under checkpoint.dir)."),
    json_out: bool = JsonOpt,
) -> None:
    """Re-derive the hash chain, compare the store with its signed checkpoints, report every finding.

    Incremental by default: checks the row an earlier verify anchored (kept
    under $XDG_STATE_HOME/agentwatch/anchors/) and then only newer rows.
    Findings: payload_edited, hash_edited, edited, missing, reordered,
    inserted, truncated, rewritten, bad_genesis, malformed,
    store_id_changed (docs/chain.md); from the signed checkpoints (the signer's
    record under checkpoint.dir and each of checkpoint.witness_dirs): truncated,
    rolled_back, rewritten, unsigned, replaced, witness_missing, bad_checkpoint,
    tree_mismatch; and about the store as a whole, against what is remembered
    about its path (docs/reliability.md, "Store identity"): replaced,
    rolled_back, schema_changed. Exit 0 intact, 1 integrity problem, 2 usage,
    3 store unreachable, 4 replaced, 5 rolled_back, 6 truncated,
    7 schema_changed (several: the first of these four).
    """
    from agentwatch import config
    from agentwatch.readers import render
    from agentwatch.store import db
    from agentwatch.verify import check

    try:
        cfg = config.load({"store": store})
        with db.store_errors(cfg.store), render.progress("verifying", enabled=not json_out) as update:
            result = check.verify_store(cfg.store, full=full, progress=update, jobs=jobs, key=key,
                                        evidence_dir=cfg["checkpoint.dir"],
                                        witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])
    except AgentwatchError as exc:
        fail(exc)
    render.emit_verify(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("erase")
def erase_cmd(
    seqs: list[int] = typer.Argument(..., metavar="SEQ...", min=1, help="Seq of each row whose payload to erase."),
    reason: str = typer.Option(..., "--reason", help="Why (stored in clear in the erasure row: do not quote the secret)."),
    by: Optional[str] = typer.Option(None, "--by", metavar="NAME", help="Who asks for it, beside the uid and login name recorded anyway."),
    store: Optional[Path] = StoreOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Erase rows' payloads, keeping the chain verifiable (docs/erasure.md).

    Each row's payload becomes null and an `erasure` attestation row, naming the
    seq, the SHA-256 of the removed payload, the reason and who erased it, is
    appended in the same transaction; `verify` reports the row as erased. Freed
    space is overwritten and the WAL checkpointed and truncated, so the bytes leave
    the store's files. Refused while a daemon serves the store: stop it, erase,
    start it (hooks spool meanwhile). Only event and gap rows can be erased.
    Exit 0 done, 1 a row does not verify or a reader kept the WAL from being
    emptied (run erase again), 2 usage, 3 store unreachable or daemon running.
    """
    from agentwatch.daemon import erase
    from agentwatch.readers import render

    try:
        result = erase.erase_store(paths.resolve_store(store), seqs, reason, by=by)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_erase(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("key")
def key_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the store's checkpoint verifier key (a C2SP signed-note vkey).

    Give it to whoever checks your proof bundles (`verify-bundle --key`). The
    daemon makes the key pair the first time it signs; the private half stays
    in $XDG_STATE_HOME/agentwatch/keys/ (0600). Exit 1 when the store has no
    key yet, 3 when the store cannot be opened. See docs/chain.md.
    """
    from agentwatch import config
    from agentwatch.verify import checkpoints

    try:
        cfg = config.load({"store": store})
        info = checkpoints.key_info(cfg.store, cfg["checkpoint.dir"])
    except AgentwatchError as exc:
        fail(exc)
    if info["verifier_key"] is None:
        fail("no checkpoint key for this store yet: the daemon makes one when it first signs", 1)
    print(json.dumps(info) if json_out else info["verifier_key"])


@app.command("checkpoint")
def checkpoint_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the latest signed checkpoint of the store (a C2SP tlog-checkpoint note).

    With --json: origin, tree size, root, the note and which witnesses hold it.
    Exit 1 when none is signed yet or it does not verify with the store's key.
    """
    from agentwatch import config
    from agentwatch.verify import checkpoints

    try:
        cfg = config.load({"store": store})
        info = checkpoints.checkpoint_info(cfg.store, cfg["checkpoint.dir"])
    except AgentwatchError as exc:
        fail(exc)
    if json_out:
        print(json.dumps(info))
    else:
        sys.stdout.write(info["note"])


@app.command("prove")
def prove_cmd(
    seq: Optional[int] = typer.Argument(None, min=1, help="The record's seq to prove included."),
    consistency: Optional[int] = typer.Option(None, "--consistency", min=1, metavar="OLD_SIZE",
                                              help="Prove the latest checkpoint extends the tree of OLD_SIZE rows."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the bundle here (default: stdout)."),
    store: Optional[Path] = StoreOpt,
) -> None:
    """Write a proof bundle that anyone can check offline with the verifier key.

    `prove SEQ`: the record's stored fields and payload, its RFC 6962
    inclusion proof and the latest signed checkpoint. `prove --consistency
    OLD_SIZE`: a consistency proof from the tree of OLD_SIZE rows to the latest
    checkpoint. Check either with `agentwatch verify-bundle FILE --key KEY` or
    `python standalone_verify.py --bundle FILE --key KEY`. Exit 1 when no
    signed checkpoint covers what was asked.
    """
    from agentwatch.verify import bundle as bundles

    if (seq is None) == (consistency is None):
        fail("give a SEQ or --consistency OLD_SIZE (one of them)", 2)
    from agentwatch import config

    try:
        cfg = config.load({"store": store})
        path, evidence_dir = cfg.store, cfg["checkpoint.dir"]
        doc = (bundles.prove_inclusion(path, seq, state_dir=evidence_dir) if seq is not None
               else bundles.prove_consistency(path, consistency, state_dir=evidence_dir))
    except AgentwatchError as exc:
        fail(exc)
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        print(f"agentwatch: wrote {output}", file=sys.stderr)


@app.command("verify-bundle")
def verify_bundle_cmd(
    bundle: Path = typer.Argument(..., help="A bundle written by `agentwatch prove`."),
    key: str = typer.Option(..., "--key", help="The log's verifier key (as `agentwatch key` prints it), or a file holding it."),
    witness_key: Optional[list[str]] = typer.Option(
        None, "--witness-key", help="A witness's cosigner key (its cosigner.pub); the checkpoint must carry its "
        "valid cosignature. Repeatable."),
    json_out: bool = JsonOpt,
) -> None:
    """Check a proof bundle offline, with nothing but the bundle and the key.

    Verifies the checkpoint's Ed25519 signature, recomputes the record's
    chain v1 row hash from its fields and payload, and walks the RFC 6962
    inclusion (or consistency) proof to the signed root. Exit 0 valid, 1 not.
    """
    from agentwatch.verify import bundle as bundles
    from agentwatch.verify.checkpoints import read_verifier

    try:
        verifier = read_verifier(b"", None, key)
        cosigners = [bundles.cosigner_key(k) for k in witness_key or []]
        doc = bundles.load_bundle(bundle)
        result = bundles.verify_bundle(doc, verifier, cosigners)
    except bundles.BundleError as exc:
        if json_out:
            print(json.dumps({"ok": False, "detail": str(exc)}))
        fail(f"{bundle}: does not verify: {exc}", 1)
    except AgentwatchError as exc:
        fail(exc)
    print(json.dumps(result.to_json()) if json_out else f"ok: {result.detail}")


@app.command("tail")
def tail_cmd(
    store: Optional[Path] = StoreOpt,
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep following new commits until Ctrl-C."),
    from_seq: Optional[int] = typer.Option(None, "--from", min=1, metavar="SEQ", help="Start at this seq (default: the last 10 rows, or the consumer's cursor)."),
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Durable named consumer: resume after its acknowledged seq, and acknowledge what is printed."),
    kind: Optional[list[str]] = typer.Option(None, "--kind", help="Only rows of this kind (event, attestation, gap); repeatable."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object per record (seq, record_id, kind, hash, payload)."),
    socket_path: Optional[Path] = SocketOpt,
) -> None:
    """Print committed records in seq order, and follow new ones with -f.

    Subscribes on the daemon's socket when a daemon answers there (records are
    pushed as they commit), else reads the store directly (read-only); either
    way never ahead of what is committed. With --consumer NAME, each printed batch is logged and acknowledged in the
    consumer's durable cursor, so a killed consumer resumes after its last
    acknowledged seq (at-least-once delivery, exactly-once accounting by seq;
    see `agentwatch reconcile --consumer`). Ctrl-C exits cleanly (0).
    """
    from agentwatch.readers import render, tail
    from agentwatch.store import db

    resolved = paths.resolve_store(store)
    try:
        # A catch-up bar only when the records go elsewhere (a pipe), never into the screen it draws on.
        with db.store_errors(resolved), \
                render.progress("catching up", enabled=not json_out and not render.is_terminal()) as update:
            tail.run_tail(
                resolved, follow=follow, from_seq=from_seq, consumer=consumer,
                kinds=kind, emit=render.tail_printer(json_out),
                socket_path=Path(socket_path) if socket_path else paths.default_socket(), progress=update,
            )
    except (KeyboardInterrupt, BrokenPipeError):
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)


@app.command("reconcile")
def reconcile_cmd(
    store: Optional[Path] = StoreOpt,
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Check this consumer's deliveries against the store."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", metavar="FILE", help="Sender ledger (JSON lines: record_id, outcome, seq)."),
    pg: Optional[str] = typer.Option(None, "--pg", metavar="URL", help="Reconcile the fleet server's copy instead (postgresql://...)."),
    source: Optional[str] = typer.Option(None, "--source", metavar="STORE_ID", help="With --pg: only this source."),
    json_out: bool = JsonOpt,
) -> None:
    """Account for every record at every boundary, exactly.

    Predicates: chain_ok, contiguous, no_loss (every ledger record_id stored,
    acked at the stored seq), exactly_once (no record_id twice; the consumer's
    delivered set equals the stored set over its range), within_bounds (all
    hold), store_identity (the store remembered at this path, its schema as
    shipped). Counts by kind keep the recorder's own rows apart from events.
    With --pg, each source on the fleet server instead: chain_ok (every hash
    recomputed in PostgreSQL), contiguous, head, lag, last checkpoint and
    findings; within bounds when the chain verifies, it is contiguous and it
    has no findings (docs/fleet.md).
    Exit 0 within bounds, 1 a predicate failed, 2 usage, 3 store or server unreachable,
    4 replaced, 5 rolled_back, 6 truncated, 7 schema_changed.
    """
    from agentwatch.readers import reconcile, render
    from agentwatch.store import db

    if pg is not None:
        from agentwatch.fleet import reconcile as fleet_reconcile

        if consumer is not None or ledger is not None:
            fail("--consumer and --ledger reconcile a local store; not with --pg", 2)
        try:
            central = fleet_reconcile.reconcile(pg, source)
        except AgentwatchError as exc:
            fail(exc)
        render.emit_fleet_reconcile(central, json_out)
        raise typer.Exit(0 if central.within_bounds else 1)
    if source is not None:
        fail("--source names a source on the fleet server; use it with --pg", 2)
    resolved = paths.resolve_store(store)
    try:
        with db.store_errors(resolved), render.progress("verifying the chain", enabled=not json_out) as update:
            result = reconcile.reconcile(resolved, consumer=consumer, ledger=ledger, progress=update)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_reconcile(result, json_out)
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
    from agentwatch.readers import render
    from agentwatch.verify import identity

    try:
        result = identity.init_store(paths.resolve_store(store), new_store=new_store)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_init(result, json_out)
    raise typer.Exit(result.exit_code)


@app.command("ship")
def ship_cmd(
    to: Optional[str] = typer.Option(None, "--to", metavar="URL", help="The fleet server: postgresql://user@host/db (no password: libpq reads PGPASSFILE, PGSERVICE or PGPASSWORD); default: config ship.url."),
    store: Optional[Path] = StoreOpt,
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME", help="This machine's name on the server (config ship.host: the host name)."),
    batch_rows: Optional[int] = typer.Option(None, "--batch-rows", min=1, max=10_000, metavar="N", help="Rows per ingest call (config ship.batch_rows, 1000)."),
    once: bool = typer.Option(False, "--once", help="Ship what the store holds now and exit, instead of following new commits."),
    json_out: bool = JsonOpt,
) -> None:
    """Ship the store's records to the fleet server in seq order, verified there.

    Resumes from the server's own head for this store (idempotent by store_id
    and seq), sends batches through the server's ingest function, backs off on
    errors and follows new commits until Ctrl-C or SIGTERM; it only reads the
    store. The daemon does the same by itself when ship.url is set. Exit 0
    caught up (or stopped), 1 the server refused a row (a finding is recorded
    there), 2 usage, 3 the store or the server is unreachable. See docs/fleet.md.
    """
    import signal
    import threading

    from agentwatch import config
    from agentwatch.fleet import ship
    from agentwatch.fleet.connect import check_target
    from agentwatch.readers import render

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        if to is not None:
            check_target(to)
        cfg = config.load({"store": store, "ship.url": to, "ship.host": host, "ship.batch_rows": batch_rows})
        if not cfg["ship.url"]:
            fail("no fleet server: give --to URL or set ship.url (docs/fleet.md)", 2)
        shipper = ship.Shipper(cfg.store, cfg["ship.url"], host=cfg["ship.host"], batch_rows=cfg["ship.batch_rows"],
                               on_status=None if json_out else render.ship_progress,
                               state_dir=cfg["checkpoint.dir"])
        status = shipper.run(stop, follow=not once)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_ship(status, json_out)
    if status.refused or status.checkpoint_refused:
        raise typer.Exit(1)
    raise typer.Exit(3 if status.last_error and status.failing_since_ns else 0)


fleet_app = typer.Typer(name="fleet", help="Set up the fleet server (PostgreSQL).", no_args_is_help=True)
app.add_typer(fleet_app)


@fleet_app.command("init")
def fleet_init_cmd(
    url: str = typer.Argument(..., metavar="URL", help="The fleet database, as a login that may create roles (postgresql://admin@host/db)."),
    json_out: bool = JsonOpt,
) -> None:
    """Install or upgrade the fleet schema: tables, the ingest function, views, roles.

    Applies the pending migrations (migrations/postgres/), each in one
    transaction with its bookkeeping row; running it again applies nothing.
    Creates the roles agentwatch_owner, agentwatch_ship (may only call the
    ingest function) and agentwatch_read (may only read). Exit 0 done, 2
    usage, 3 the server is unreachable or the schema cannot be installed.
    See docs/fleet.md.
    """
    from agentwatch.fleet import schema
    from agentwatch.readers import render

    try:
        result = schema.init(url)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_fleet_init(result, json_out)


HarnessArg = typer.Argument(
    None, metavar="HARNESS", help=", ".join(HARNESSES) + "."
)
ScopeOpt = typer.Option(
    None, "--scope", metavar="user|project",
    help="Whose config: user (home directory) or project (the project directory). Default: user, or project "
    "for harnesses with project hooks only (openhands).",
)
ProjectOpt = typer.Option(
    None, "--project-dir", metavar="DIR", help="Project directory for --scope project (default: the current directory)."
)
DryRunOpt = typer.Option(False, "--dry-run", help="Print a unified diff of what would change; change nothing.")


@app.command("install")
def install_cmd(
    harness: Optional[str] = HarnessArg,
    scope: Optional[str] = ScopeOpt,
    project_dir: Optional[Path] = ProjectOpt,
    dry_run: bool = DryRunOpt,
    list_: bool = typer.Option(False, "--list", help="Show, per harness and scope, whether agentwatch is installed."),
    json_out: bool = JsonOpt,
) -> None:
    """Add agentwatch's hook to a harness's own config, touching nothing else.

    Merges one observe-only entry per event (async where the harness offers
    it) running `python -I -S /abs/agentwatch/hook.py HARNESS --via CONFIG`:
    the pre-tool, post-tool and failure events wherever the harness has them,
    and only the events the installed harness version has (read from its own
    `--version`; the notes say what was left out and why). Keeps a backup of
    the file before changing it; a second install changes nothing
    (already_installed). A malformed config, or an install that would make
    one harness run agentwatch twice for each event, is refused and left
    unchanged (exit 2); an unwritable location exits 3. `--list` shows what is
    installed where. See docs/install.md.
    """
    from agentwatch import install
    from agentwatch.readers import render

    try:
        if list_:
            if harness is not None or scope is not None or dry_run:
                fail("--list takes no HARNESS, --scope or --dry-run", 2)
            render.emit_install_list(install.list_installed(project_dir), json_out)
            return
        if harness is None:
            fail(f"missing HARNESS (one of: {', '.join(install.HARNESSES)}), or use --list", 2)
        result = install.install(harness, scope, project_dir, dry_run=dry_run)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_install(result, json_out)


@app.command("uninstall")
def uninstall_cmd(
    harness: str = typer.Argument(
        ..., metavar="HARNESS", help=", ".join(HARNESSES) + "."
    ),
    scope: Optional[str] = ScopeOpt,
    project_dir: Optional[Path] = ProjectOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Remove exactly agentwatch's hook entries from a harness's config.

    Everything else in the file stays as it was; a backup of the file is kept
    before the change. Exit 2 for a malformed config, 3 when it cannot be
    written. See docs/install.md.
    """
    from agentwatch import install
    from agentwatch.readers import render

    try:
        result = install.uninstall(harness, scope, project_dir, dry_run=dry_run)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_install(result, json_out)


config_app = typer.Typer(name="config", help="Show the effective configuration.", no_args_is_help=True)
app.add_typer(config_app)


@config_app.command("show")
def config_show_cmd(
    store: Optional[Path] = typer.Option(None, "--store", help="Store path, as the other commands take it."),
    socket_path: Optional[Path] = typer.Option(None, "--socket", help="Daemon socket, as the other commands take it."),
    json_out: bool = JsonOpt,
) -> None:
    """Print every configuration key, its effective value and where it came from.

    Sources: default, file:PATH ($XDG_CONFIG_HOME/agentwatch/config.toml or
    AGENTWATCH_CONFIG), env:AGENTWATCH_*, flag:--NAME, project:PATH (a
    .agentwatch.toml in this directory or a parent, which may only tighten).
    Exit 2 when a file, variable or flag is invalid. See docs/config.md.
    """
    from agentwatch import config

    try:
        cfg = config.load({"store": store, "socket": socket_path})
    except AgentwatchError as exc:
        fail(exc)
    if json_out:
        doc = {"config": cfg.as_dict(), "sources": dict(cfg.sources), "files": list(cfg.files), "digest": cfg.digest()}
        print(json.dumps(doc, indent=2))
        return
    width = max(map(len, cfg.values))
    for key, value in cfg.as_dict().items():
        print(f"{key:<{width}}  {json.dumps(value)}  ({cfg.sources[key]})")
    print(f"{'digest':<{width}}  {cfg.digest()}")


service_app = typer.Typer(name="service", help="Run the recorder as a login service.", no_args_is_help=True)
app.add_typer(service_app)


@service_app.command("print")
def service_print_cmd(
    kind: str = typer.Argument(..., metavar="systemd|launchd", help="systemd user unit or launchd LaunchAgent."),
    store: Optional[Path] = StoreOpt,
    socket_path: Optional[Path] = SocketOpt,
    system: bool = typer.Option(False, "--system", help="A system service run by a dedicated user that owns the "
                                "store, the key and the witness; developers' hooks connect through a group "
                                "socket (docs/deployment.md)."),
    user: str = typer.Option("agentwatch", "--user", help="With --system: the service's user (and group)."),
) -> None:
    """Print a service definition that runs `agentwatch serve` with this installation.

    With --system: a system unit (LaunchDaemon) that runs the daemon as a
    dedicated user owning the store, the checkpoint key and the witness, so the
    recorded agent's own user cannot rewrite the evidence (docs/deployment.md).

    The definition runs the current interpreter (`python -m agentwatch.cli
    serve`), restarts it when it fails, and sets AGENTWATCH_STORE and
    AGENTWATCH_SOCKET to the effective store and socket. Where to save it goes
    to stderr. Nothing is installed or started.
    """
    from agentwatch import config
    from agentwatch.daemon import service

    if kind not in ("systemd", "launchd"):
        fail(f"unknown service kind {kind!r} (expected systemd or launchd)", 2)
    if system:
        layout = (service.SystemLayout(user=user, group=user) if kind == "systemd" else
                  service.SystemLayout(user=user, group=user, base=Path("/usr/local/var/agentwatch"),
                                       runtime=Path("/var/run/agentwatch")))
        text = service.systemd_system_unit(layout) if kind == "systemd" else service.launchd_daemon_plist(layout)
        sys.stdout.write(text)
        print(f"agentwatch: {service.system_install_hint(kind)}", file=sys.stderr)
        return
    try:
        cfg = config.load({"store": store, "socket": socket_path})
    except AgentwatchError as exc:
        fail(exc)
    path, explicit = config.user_config_path()
    config_file = path if explicit else None
    render_fn = service.systemd_unit if kind == "systemd" else service.launchd_plist
    sys.stdout.write(render_fn(cfg.store, cfg.socket, config_file=config_file))
    print(f"agentwatch: {service.install_hint(kind)}", file=sys.stderr)


@app.command("sessions")
def sessions_cmd(
    store: Optional[Path] = StoreOpt,
    since: Optional[str] = typer.Option(None, "--since", metavar="AGE|TIME", help="Only sessions active since then: an age (30m, 2h, 7d) or an ISO 8601 time (UTC unless it names a zone)."),
    harness: Optional[str] = typer.Option(None, "--harness", metavar="HARNESS", help="Only sessions of this harness (claude-code, codex, ...)."),
    json_out: bool = JsonOpt,
) -> None:
    """List recorded sessions: one row per session, oldest first.

    Columns: harness, session id, working directory, start (UTC), duration
    (first to last event), prompts, tool calls, failed calls, denials
    (permission decisions `deny` and denied calls) and the last event's name.
    `agentwatch show SESSION` prints one session's timeline.
    """
    from agentwatch.readers import render, sessions

    try:
        since_ns = sessions.parse_since(since) if since is not None else None
        found = sessions.list_sessions(paths.resolve_store(store), since_ns=since_ns, harness=harness)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_sessions(found, json_out)


@app.command("show")
def show_cmd(
    session: str = typer.Argument(..., metavar="SESSION", help="A session id, or an unambiguous prefix of one (see `agentwatch sessions`)."),
    store: Optional[Path] = StoreOpt,
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep printing new lines as the session goes on, until Ctrl-C."),
    harness: Optional[str] = typer.Option(None, "--harness", metavar="HARNESS", help="The session's harness, when two harnesses used the same id."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document (with -f: one JSON object per line)."),
) -> None:
    """Print a session's timeline: one line per prompt, per tool call and per notable event.

    Each line: time (UTC), seq, the tool or event, a short summary of the input
    (long ones folded), the outcome and the duration. A tool call's start and end
    are one line; with -f a call still running shows `open` and is printed again
    when it ends. Redaction masks stay visible; a line whose record an integrity
    finding names is marked `!KIND`. Recorded text is printed with control and
    bidi characters made visible, so it cannot drive the terminal.
    """
    from agentwatch.readers import render, sessions

    try:
        harness, session_id, head, items = sessions.timeline(paths.resolve_store(store), session, harness)
        if json_out and not follow:
            render.print_json({"harness": harness, "session_id": session_id, "items": [i.to_json() for i in items]})
            return
        render.emit_timeline_header(harness, session_id, json_out)
        emit = render.timeline_printer(json_out)
        emit(items)
        if follow:
            for batch in sessions.follow_timeline(paths.resolve_store(store), harness, session_id, after_seq=head):
                emit(batch)
    except (KeyboardInterrupt, BrokenPipeError):
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)


@app.command("export")
def export_cmd(
    fmt: str = typer.Option(..., "--format", metavar="jsonl|otlp", help="jsonl: one record per line on stdout; otlp: OpenTelemetry traces over OTLP/HTTP."),
    store: Optional[Path] = StoreOpt,
    from_seq: Optional[int] = typer.Option(None, "--from", min=1, metavar="SEQ", help="Start at this seq (default 1, or the consumer's cursor)."),
    consumer: Optional[str] = typer.Option(None, "--consumer", metavar="NAME", help="Durable named consumer: resume after what it acknowledged; bound to its format and endpoint."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", metavar="URL", help="OTLP/HTTP endpoint, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)."),
    content: bool = typer.Option(False, "--content", help="otlp: also send tool arguments and results and prompt text (off by default: they may hold what a telemetry backend should not)."),
    resend_uncertain: bool = typer.Option(False, "--resend-uncertain", help="Send again a batch whose answer was never logged (same span ids)."),
    skip_uncertain: bool = typer.Option(False, "--skip-uncertain", help="Acknowledge such a batch without sending it."),
    json_out: bool = typer.Option(False, "--json", help="otlp: a JSON report on stdout (jsonl writes records there)."),
) -> None:
    """Export committed records, up to the head at the start, as JSON lines or OTLP traces.

    otlp follows the OpenTelemetry GenAI semantic conventions: a trace per
    session, an `invoke_agent` span per turn with the prompt, permission
    decisions and compactions as span events, and an `execute_tool` span per
    tool call (`gen_ai.tool.name`, `gen_ai.tool.call.id`). With --consumer NAME
    each run resumes after the last batch the endpoint acknowledged, so no
    record is sent twice to one endpoint. Exit 0 done, 1 an unsettled batch
    (see --resend-uncertain), 2 usage, 3 store or endpoint unreachable.
    See docs/export.md.
    """
    from agentwatch.readers import export, render

    if fmt == "jsonl" and json_out:
        fail("--json is for --format otlp (jsonl already writes JSON lines)", 2)
    try:
        with render.progress("exporting", enabled=not json_out and fmt == "otlp") as update:
            report = export.export(
                paths.resolve_store(store), fmt=fmt, out=sys.stdout.buffer, endpoint=endpoint or export.default_endpoint(),
                from_seq=from_seq, consumer=consumer, content=content, resend_uncertain=resend_uncertain,
                skip_uncertain=skip_uncertain, progress=update,
            )
    except BrokenPipeError:
        raise typer.Exit(0) from None
    except AgentwatchError as exc:
        fail(exc)
    render.emit_export(report, json_out)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
