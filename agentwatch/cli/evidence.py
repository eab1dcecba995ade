"""Commands that check the store and the evidence outside it: `verify`, `key`, `checkpoint`, `prove`, `verify-bundle`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import JsonOpt, StoreOpt, app, fail
from agentwatch.errors import AgentwatchError


@app.command("verify")
def verify_cmd(
    store: Optional[Path] = StoreOpt,
    full: bool = typer.Option(False, "--full", help="Re-verify the whole chain from genesis, not just rows after the anchor."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, metavar="N", help="Processes verifying segments at once (default: one per CPU, at most 2, from 200,000 rows)."),
    key: Optional[str] = typer.Option(None, "--key", help="The store's checkpoint verifier key, or a file holding it (default: keys/<store_id>.pub under state_dir)."),
    json_out: bool = JsonOpt,
) -> None:
    """Re-derive the hash chain, compare the store with its signed checkpoints, report every finding.

    Incremental by default: checks the row an earlier verify anchored (kept
    under $XDG_STATE_HOME/agentwatch/anchors/) and then only newer rows.
    Findings: payload_edited, hash_edited, edited, missing, reordered,
    inserted, truncated, rewritten, bad_genesis, malformed,
    store_id_changed (docs/chain.md); from the signed checkpoints (the signer's
    record under state_dir and each of checkpoint.witness_dirs): truncated,
    rolled_back, rewritten, unsigned, replaced, witness_missing, bad_checkpoint,
    tree_mismatch; and about the store as a whole, against what is remembered
    about its path (docs/reliability.md, "Store identity"): replaced,
    rolled_back, schema_changed. Exit 0 intact, 1 integrity problem, 2 usage,
    3 store unreachable, 4 replaced, 5 rolled_back, 6 truncated,
    7 schema_changed (several: the first of these four).
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.evidence import audit
    from agentwatch.store import db

    try:
        cfg = config.load({"store": store})
        with db.store_errors(cfg.store), render.progress("verifying", enabled=not json_out) as update:
            result = audit.verify_store(cfg.store, full=full, progress=update, jobs=jobs, key=key,
                                        signer_dir=cfg["state_dir"],
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
    from agentwatch.cli import render
    from agentwatch.evidence import checkpoints

    try:
        cfg = config.load({"store": store})
        info = checkpoints.key_info(cfg.store, cfg["state_dir"])
    except AgentwatchError as exc:
        fail(exc)
    if info["verifier_key"] is None:
        fail("no checkpoint key for this store yet: the daemon makes one when it first signs", 1)
    render.emit_text_or_json(info, info["verifier_key"] + "\n", json_out)


@app.command("checkpoint")
def checkpoint_cmd(store: Optional[Path] = StoreOpt, json_out: bool = JsonOpt) -> None:
    """Print the latest signed checkpoint of the store (a C2SP tlog-checkpoint note).

    With --json: origin, tree size, root, the note and which witnesses hold it.
    Exit 1 when none is signed yet or it does not verify with the store's key.
    """
    from agentwatch import config
    from agentwatch.cli import render
    from agentwatch.evidence import checkpoints

    try:
        cfg = config.load({"store": store})
        info = checkpoints.checkpoint_info(cfg.store, cfg["state_dir"])
    except AgentwatchError as exc:
        fail(exc)
    render.emit_text_or_json(info, info["note"], json_out)


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
    from agentwatch.cli import render
    from agentwatch.evidence import bundle as bundles

    if (seq is None) == (consistency is None):
        fail("give a SEQ or --consistency OLD_SIZE (one of them)", 2)
    from agentwatch import config

    try:
        cfg = config.load({"store": store})
        path, signer_dir = cfg.store, cfg["state_dir"]
        if seq is not None:
            doc = bundles.prove_inclusion(path, seq, state_dir=signer_dir)
        else:
            assert consistency is not None  # one of the two, checked above
            doc = bundles.prove_consistency(path, consistency, state_dir=signer_dir)
    except AgentwatchError as exc:
        fail(exc)
    text = render.bundle_text(doc)
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"{output}: cannot write the bundle ({exc.strerror or exc})", 2)
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
    from agentwatch.cli import render
    from agentwatch.evidence import bundle as bundles
    from agentwatch.evidence.checkpoints import read_verifier

    try:
        verifier = read_verifier(b"", None, key)
        if verifier is None:
            fail("--key: give the verifier key (a vkey, or a file holding one)", 2)
        cosigners = [bundles.cosigner_key(k) for k in witness_key or []]
        doc = bundles.load_bundle(bundle)
        result = bundles.verify_bundle(doc, verifier, cosigners)
    except bundles.BundleError as exc:
        if json_out:
            render.emit_document({"ok": False, "detail": str(exc)})
        fail(f"{bundle}: does not verify: {exc}", 1)
    except AgentwatchError as exc:
        fail(exc)
    render.emit_text_or_json(result.to_json(), f"ok: {result.detail}\n", json_out)
