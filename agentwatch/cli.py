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
from typing import NoReturn, Optional

import typer

from agentwatch import __version__, paths
from agentwatch.errors import AgentwatchError

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
) -> None:
    """Run a read-only SQL query against the store (writes and ATTACH are refused).

    Tables and views: `events` (one row per harness event), `chain` (hashes as
    sha256:hex), `records` (every row, with forensic columns). See docs/schema.md.
    """
    from agentwatch.readers import render
    from agentwatch.readers import sql as sqlquery

    if json_out and csv_out:
        fail("choose one of --json and --csv", 2)
    try:
        columns, rows = sqlquery.run(paths.resolve_store(store), query)
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

    try:
        cfg = config.load({"store": store})
        report = importer.import_lines(cfg.store, source, harness=harness, batch_size=batch_size, policy=cfg.policy())
    except AgentwatchError as exc:
        fail(exc)
    if report.stored and cfg["checkpoint.enabled"]:
        _sign_imported(cfg)
    render.emit_import(report, json_out)
    raise typer.Exit(1 if report.rejected else 0)


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
    attest_interval: Optional[float] = typer.Option(
        None,
        "--attest-interval",
        min=0,
        metavar="SECONDS",
        help="Seconds between periodic attestation rows; 0 turns them off (config serve.attest_interval_s, 60).",
    ),
    idle_timeout: float = typer.Option(
        30.0, "--idle-timeout", min=0.1, metavar="SECONDS", help="Close a connection that sends no complete line for this long."
    ),
    verify_interval: float = typer.Option(
        5.0,
        "--verify-interval",
        min=0,
        metavar="SECONDS",
        help="Seconds between background chain verification rounds (new rows only); 0 turns it off.",
    ),
    checkpoint_interval: Optional[float] = typer.Option(
        None,
        "--checkpoint-interval",
        min=0,
        metavar="SECONDS",
        help="Seconds between signed checkpoints of the Merkle tree (config checkpoint.interval_s, 10).",
    ),
    checkpoints: Optional[bool] = typer.Option(
        None, "--checkpoints/--no-checkpoints",
        help="Sign checkpoints while serving and at stop (config checkpoint.enabled, on).",
    ),
    full_verify_interval: float = typer.Option(
        3600.0,
        "--full-verify-interval",
        min=0,
        metavar="SECONDS",
        help="Seconds between full re-verification passes from genesis (a chunk per round); 0 turns them off.",
    ),
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
    configuration (docs/config.md); flags override it. Exit 3 when the store
    or socket is already served or cannot be opened, 2 for a configuration
    problem (e.g. a non-socket file at the socket path, an unsafe salt file).
    See docs/daemon.md and docs/protocol.md.
    """
    from agentwatch import config
    from agentwatch.daemon.server import ServeConfig, serve

    try:
        cfg = config.load(
            {"store": store, "socket": socket_path, "spool": spool, "serve.attest_interval_s": attest_interval,
             "checkpoint.interval_s": checkpoint_interval, "checkpoint.enabled": checkpoints}
        )
        options = {"idle_timeout": idle_timeout, "verify_interval": verify_interval}
        code = serve(ServeConfig.from_config(cfg, **options, full_verify_interval=full_verify_interval))
    except AgentwatchError as exc:
        fail(exc)
    raise typer.Exit(code)


@app.command("health")
def health_cmd(
    socket_path: Optional[Path] = SocketOpt,
    json_out: bool = JsonOpt,
    timeout: float = typer.Option(5.0, "--timeout", min=0.1, metavar="SECONDS", help="How long to wait for the daemon."),
) -> None:
    """Ask the running daemon how it is: status, writer, sweeper, spool, WAL, counters.

    `status` is recording (exit 0), degraded (exit 1: failing commits, a chain
    break, quarantined or stale spool files, a failed redaction self-test; the
    `reasons` say which) or stopped (exit 3: no daemon answers, or it is
    shutting down). See docs/daemon.md ("Health").
    """
    from agentwatch.daemon import health

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
        print("\n".join(health.format_text({"status": status, **report})))
    if report.get("reachable") is not False:
        for problem in health.problems(report):
            print(f"agentwatch: {problem}", file=sys.stderr)
    raise typer.Exit(health.STATUS_EXIT.get(status, 1))


@app.command(
    "hook",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="HARNESS [--event NAME] [ARG...]",
)
def hook_cmd(ctx: typer.Context) -> None:
    """Record one hook invocation (input on stdin); always exits 0. See docs/hook.md.

    HARNESS is claude-code, codex, gemini-cli, cursor, copilot, vscode, cline or
    openhands; --event NAME gives the event when the harness passes it outside
    the payload. Arguments are handed to the client unparsed, so even a malformed
    call exits 0 (a harness may read exit 2 as "block"). Same as
    `agentwatch-hook`; hooks should run the faster file form that `install`
    writes: `python -I -S /abs/path/agentwatch/hook.py HARNESS`.
    """
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
    inserted, truncated, rewritten, bad_genesis, malformed; and from the
    signed checkpoints (the signer's record under checkpoint.dir and each of
    checkpoint.witness_dirs): truncated, rolled_back, rewritten, unsigned,
    replaced, witness_missing, bad_checkpoint, tree_mismatch (docs/chain.md).
    Exit 0 intact, 1 integrity problem, 2 usage, 3 store unreachable.
    """
    from agentwatch import config
    from agentwatch.readers import render
    from agentwatch.verify import check

    try:
        cfg = config.load({"store": store})
        with render.progress("verifying", enabled=not json_out) as update:
            result = check.verify_store(cfg.store, full=full, progress=update, jobs=jobs, key=key,
                                        evidence_dir=cfg["checkpoint.dir"],
                                        witness_dirs=[Path(d) for d in cfg["checkpoint.witness_dirs"]])
    except AgentwatchError as exc:
        fail(exc)
    render.emit_verify(result, json_out)
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

    try:
        tail.run_tail(
            paths.resolve_store(store), follow=follow, from_seq=from_seq, consumer=consumer,
            kinds=kind, emit=render.tail_printer(json_out),
            socket_path=Path(socket_path) if socket_path else paths.default_socket(),
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
    json_out: bool = JsonOpt,
) -> None:
    """Account for every record at every boundary, exactly.

    Predicates: chain_ok, contiguous, no_loss (every ledger record_id stored,
    acked at the stored seq), exactly_once (no record_id twice; the consumer's
    delivered set equals the stored set over its range), within_bounds (all
    hold). Counts by kind keep the recorder's own rows apart from events.
    Exit 0 within bounds, 1 a predicate failed, 2 usage, 3 store unreachable.
    """
    from agentwatch.readers import reconcile, render

    try:
        result = reconcile.reconcile(paths.resolve_store(store), consumer=consumer, ledger=ledger)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_reconcile(result, json_out)
    raise typer.Exit(0 if result.within_bounds else 1)


HarnessArg = typer.Argument(
    None, metavar="HARNESS", help="claude-code, codex, gemini-cli, cursor, copilot, vscode, cline, openhands."
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
    it) running `python -I -S /abs/agentwatch/hook.py HARNESS`; keeps a
    backup of the file before changing it; a second install changes nothing
    (already_installed). A malformed config is refused and left unchanged
    (exit 2); an unwritable location exits 3. `--list` shows what is
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
        ..., metavar="HARNESS", help="claude-code, codex, gemini-cli, cursor, copilot, vscode, cline, openhands."
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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
