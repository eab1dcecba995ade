"""Signed notes, checkpoints, witnesses and proof bundles (docs/chain.md, "Checkpoints", "Proof bundles").

The note format is checked against the example in the C2SP signed-note specification, the
standard-library Ed25519 in standalone_verify.py against RFC 8032's test vectors
(tests/vectors/rfc8032_ed25519.json) and against `cryptography`, and both proof verifiers
against the RFC 6962 vectors.
"""

from __future__ import annotations

import base64
import copy
import importlib.util
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import chain_tamper as t

from agentwatch.evidence import bundle as bundles
from agentwatch.evidence.checkpoints import CheckpointError, Notary, key_path, read_state
from agentwatch.evidence.note import Checkpoint, NoteError, Signer, Verifier, open_note
from agentwatch.evidence.witness import DirectoryWitness
from agentwatch.store.append import Store
from agentwatch.store.merkle import ProofError, verify_consistency

STANDALONE_PATH = t.STANDALONE
VECTORS = Path(__file__).parent / "vectors"
spec = importlib.util.spec_from_file_location("standalone_verify", STANDALONE_PATH)
standalone = importlib.util.module_from_spec(spec)
spec.loader.exec_module(standalone)

# The example of the C2SP signed-note specification (signed-note.md, "Verifier keys", "Example").
SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
SPEC_NOTE = (
    "This is an example message.\n\n"
    "\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)


# --- notes and Ed25519 -------------------------------------------------------------------------


def test_the_signed_note_specification_example_verifies_in_both_implementations():
    assert open_note(SPEC_NOTE, [Verifier.parse(SPEC_VKEY)]) == "This is an example message.\n"
    name, kid, public = standalone.parse_vkey(SPEC_VKEY)
    signature = base64.b64decode(SPEC_NOTE.rsplit(" ", 1)[1])
    assert (name, kid.hex()) == ("example.com/foo", "530d903a")
    assert standalone.ed25519_verify(public, b"This is an example message.\n", signature[4:]) is True
    assert standalone.ed25519_verify(public, b"This is an example message!\n", signature[4:]) is False
    with pytest.raises(NoteError):
        open_note(SPEC_NOTE.replace("example message", "example massage"), [Verifier.parse(SPEC_VKEY)])


@pytest.mark.parametrize("vector", json.loads((VECTORS / "rfc8032_ed25519.json").read_text())["vectors"],
                         ids=lambda v: v["name"])
def test_stdlib_ed25519_against_rfc8032(vector):
    public, message, signature = (bytes.fromhex(vector[k]) for k in ("public_key", "message", "signature"))
    assert standalone.ed25519_verify(public, message, signature) is True
    assert standalone.ed25519_verify(public, message + b"\x00", signature) is False
    bad = bytearray(signature)
    bad[40] ^= 0x01
    assert standalone.ed25519_verify(public, message, bytes(bad)) is False
    # The signer of this package derives the same public key and signature from the secret.
    signer = Signer("rfc8032.test/" + vector["name"].replace(" ", "-"), bytes.fromhex(vector["secret_key"]))
    assert signer.verifier.public_key == public


def test_stdlib_ed25519_agrees_with_cryptography_on_fresh_keys():
    for i in range(8):
        signer = Signer.generate(f"agentwatch.invalid/k{i}")
        note = signer.sign(f"message {i}\n")
        text, sig = note.split("\n\n")
        raw = base64.b64decode(sig.split(" ")[2])
        assert standalone.ed25519_verify(signer.verifier.public_key, text.encode() + b"\n", raw[4:]) is True
        assert standalone.ed25519_verify(signer.verifier.public_key, text.encode(), raw[4:]) is False


def test_checkpoint_text_round_trips_and_malformed_ones_are_refused():
    cp = Checkpoint("agentwatch.invalid/x", 12, bytes(range(32)))
    assert Checkpoint.parse(cp.text()) == cp
    for bad in ("a\n012\n" + base64.b64encode(bytes(32)).decode() + "\n", "a\n1\nAAAA\n", "a\n1\n", "a\n\n1\nx\n"):
        with pytest.raises(NoteError):
            Checkpoint.parse(bad)


# --- the notary and the witness ------------------------------------------------------------------


@pytest.fixture
def recorded(tmp_path):
    path = tmp_path / "store.db"
    with Store(path) as store:
        store.append(t.appends(1, 300))
        yield path, store, tmp_path / "state"


def test_the_notary_signs_once_per_size_and_refuses_a_fork(recorded):
    path, store, state = recorded
    notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state)
    first = notary.sign()
    assert (first.new, first.checkpoint.size) == (True, 300)
    again = notary.sign()
    assert (again.new, again.note) == (False, first.note)
    assert (key_path(store.store_id, state).stat().st_mode & 0o777) == 0o600
    # A second root for the same size is never signed.
    forged = (300, bytes(32))
    with pytest.raises(CheckpointError, match="second root"):
        Notary(path, store.store_id, lambda: forged, state_dir=state).sign()
    # Nor a larger tree that does not extend the signed one.
    with pytest.raises(CheckpointError, match="does not extend"):
        Notary(path, store.store_id, lambda: (301, bytes(32)), state_dir=state).sign()
    store.append(t.appends(301, 5))
    grown = notary.sign()
    assert (grown.new, grown.checkpoint.size) == (True, 305)
    assert read_state(store.store_id, state).size == 305


def test_a_witness_keeps_only_consistent_growth(recorded):
    path, store, state = recorded
    witness = DirectoryWitness(state / "w")
    notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state, witnesses=[witness])
    stranger = Signer.generate(notary.verifier.name)
    note300 = notary.sign().note
    assert witness.held_size(notary.verifier.name) == 0  # not trusted yet: unknown origin
    assert witness.add_checkpoint(0, [], note300).status == 404
    witness.trust(notary.verifier, str(path))
    assert witness.add_checkpoint(0, [], note300).status == 200
    assert witness.held_size(notary.verifier.name) == 300
    assert witness.add_checkpoint(0, [], note300).status == 409  # it holds 300, not 0
    reply = witness.add_checkpoint(0, [], note300)
    assert (reply.status, reply.body) == (409, "300\n")
    # Another key for the same origin is not trusted.
    other = stranger.sign(Checkpoint(notary.verifier.name, 301, bytes(32)).text())
    assert witness.add_checkpoint(300, [], other).status == 403
    store.append(t.appends(301, 20))
    signed = notary.sign()
    assert signed.witnesses == {witness.name: "accepted"}
    assert witness.held_size(notary.verifier.name) == 320
    # Rollback: an older (validly signed) checkpoint is refused.
    assert witness.add_checkpoint(320, [], note300).status == 400
    # A fork at the held size: same size, another root, validly signed by the log's key.
    fork = notary.signer.sign(Checkpoint(notary.verifier.name, 320, bytes(32)).text())
    assert witness.add_checkpoint(320, [], fork).status == 422
    # A larger tree with a proof that does not verify.
    bigger = notary.signer.sign(Checkpoint(notary.verifier.name, 330, bytes(32)).text())
    assert witness.add_checkpoint(320, [bytes(32)] * 3, bigger).status == 422
    assert witness.held_size(notary.verifier.name) == 320


# --- bundles -------------------------------------------------------------------------------------


@pytest.fixture
def signed(recorded):
    path, store, state = recorded
    notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state)
    notary.sign()
    return path, state, notary.verifier


def test_every_record_proves_offline_within_the_size_bound(signed):
    path, state, verifier = signed
    bound = 32 * math.ceil(math.log2(300))
    for seq in range(1, 301):
        doc = bundles.prove_inclusion(path, seq, state_dir=state)
        assert bundles.verify_bundle(doc, verifier).seq == seq
        if seq % 10 in (0, 1):  # pure-Python Ed25519 takes ~15 ms a check: a sample of every shape
            assert standalone.check_bundle(doc, verifier.encode()) == f"seq {seq} is in the signed tree of 300 rows"
        proof_bytes = sum(len(base64.b64decode(p)) for p in doc["inclusion_proof"])
        assert proof_bytes <= bound
    for old in (1, 2, 7, 128, 255, 256, 299, 300):
        doc = bundles.prove_consistency(path, old, state_dir=state)
        assert bundles.verify_bundle(doc, verifier).old_size == old
        assert standalone.check_bundle(doc, verifier.encode()).endswith(f"extends the tree of {old} rows")
        # RFC 6962 section 2.1.2: a consistency proof can take one hash more than a path.
        assert sum(len(base64.b64decode(p)) for p in doc["consistency_proof"]) <= bound + 32


def test_nothing_beyond_the_signed_size_is_proved(signed):
    path, state, _ = signed
    with pytest.raises(bundles.ProveError, match="not covered"):
        bundles.prove_inclusion(path, 301, state_dir=state)


def _mutations(doc):
    def flip_proof(d):
        h = bytearray(base64.b64decode(d["inclusion_proof"][0]))
        h[0] ^= 1
        d["inclusion_proof"][0] = base64.b64encode(bytes(h)).decode()

    def payload(d):
        d["record"]["payload"] = d["record"]["payload"].replace("echo", "rm -rf")

    def payload_and_digest(d):
        payload(d)
        import hashlib

        d["record"]["payload_sha256"] = "sha256:" + hashlib.sha256(d["record"]["payload"].encode()).hexdigest()

    def seq(d):
        d["record"]["seq"] += 1
        d["leaf_index"] += 1

    def size(d):
        d["tree_size"] += 1

    def drop_proof(d):
        d["inclusion_proof"].pop()

    def extra_proof(d):
        d["inclusion_proof"].append(d["inclusion_proof"][0])

    def checkpoint_root(d):
        lines = d["checkpoint"].split("\n")
        lines[2] = base64.b64encode(bytes(32)).decode()
        d["checkpoint"] = "\n".join(lines)

    def store_id(d):
        d["store_id"] = "0" * 32

    for fn in (flip_proof, payload, payload_and_digest, seq, size, drop_proof, extra_proof, checkpoint_root, store_id):
        bad = copy.deepcopy(doc)
        fn(bad)
        yield fn.__name__, bad


def test_a_changed_bundle_fails_in_both_verifiers(signed):
    path, state, verifier = signed
    doc = bundles.prove_inclusion(path, 77, state_dir=state)
    names = []
    for name, bad in _mutations(doc):
        names.append(name)
        with pytest.raises(bundles.BundleError):
            bundles.verify_bundle(bad, verifier)
        with pytest.raises(standalone.BadBundle):
            standalone.check_bundle(bad, verifier.encode())
    assert len(names) == 9
    other = Signer.generate(verifier.name)
    with pytest.raises(bundles.BundleError):
        bundles.verify_bundle(doc, other.verifier)
    with pytest.raises(standalone.BadBundle):
        standalone.check_bundle(doc, other.verifier.encode())


def test_the_cli_and_the_standalone_file_check_a_bundle(signed, tmp_path):
    path, state, verifier = signed
    out = tmp_path / "b.json"
    env = {"XDG_STATE_HOME": str(state.parent / "xdg-unused")}
    doc = bundles.prove_inclusion(path, 5, state_dir=state)
    out.write_text(json.dumps(doc))
    cli = subprocess.run([sys.executable, "-m", "agentwatch.cli", "verify-bundle", str(out), "--key", verifier.encode(),
                          "--json"], capture_output=True, text=True, env={**env, "PATH": "/usr/bin:/bin"})
    assert (cli.returncode, json.loads(cli.stdout)["seq"]) == (0, 5), cli.stderr
    alone = subprocess.run([sys.executable, "-I", "-S", str(STANDALONE_PATH), "--bundle", str(out), "--key",
                            verifier.encode(), "--json"], capture_output=True, text=True)
    assert (alone.returncode, json.loads(alone.stdout)["ok"]) == (0, True), alone.stderr
    doc["record"]["record_id"] += "x"
    out.write_text(json.dumps(doc))
    alone = subprocess.run([sys.executable, "-I", "-S", str(STANDALONE_PATH), "--bundle", str(out), "--key",
                            verifier.encode()], capture_output=True, text=True)
    assert (alone.returncode, alone.stdout) == (1, "INVALID: the record does not hash to its row hash\n")


# --- the standalone proof walkers against the RFC 6962 vectors ------------------------------------


def _b(text):
    return base64.b64decode(text) if text else b""


@pytest.mark.parametrize("path", sorted((VECTORS / "rfc6962" / "inclusion").rglob("*.json")),
                         ids=lambda p: str(p.relative_to(VECTORS)))
def test_standalone_inclusion_against_the_vectors(path):
    v = json.loads(path.read_text())
    try:
        leaf, root = _b(v["leafHash"]), _b(v["root"])
        if len(leaf) != 32 or len(root) != 32:
            raise standalone.BadBundle("not 32-byte hashes")
        ok = standalone.inclusion_root(v["leafIdx"], v["treeSize"], leaf, [_b(p) for p in v["proof"] or []]) == root
    except standalone.BadBundle:
        ok = False
    assert ok is (not v["wantErr"])


@pytest.mark.parametrize("path", sorted((VECTORS / "rfc6962" / "consistency").rglob("*.json")),
                         ids=lambda p: str(p.relative_to(VECTORS)))
def test_standalone_consistency_against_the_vectors(path):
    v = json.loads(path.read_text())
    old, new, r1, r2 = v["size1"], v["size2"], _b(v["root1"]), _b(v["root2"])
    proof = [_b(p) for p in v["proof"] or []]
    try:
        if old == new and old > 0:
            ok = not proof and r1 == r2
        else:
            ok = len(r1) == 32 and len(r2) == 32 and standalone.consistency_roots(old, new, r1, proof) == (r1, r2)
    except standalone.BadBundle:
        ok = False
    assert ok is (not v["wantErr"])
    # and the package's verifier agrees
    try:
        verify_consistency(old, new, r1, r2, proof)
        agree = True
    except ProofError:
        agree = False
    assert agree is ok


class ForgetfulWitness(DirectoryWitness):
    """A witness that does not say what it holds (as one reached only through add-checkpoint)."""

    def held_size(self, origin: str) -> int:
        return 0


def test_the_notary_proves_from_the_size_a_409_names(recorded):
    path, store, state = recorded
    witness = ForgetfulWitness(state / "w")
    notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state, witnesses=[witness])
    witness.trust(notary.verifier, str(path))
    assert notary.sign().witnesses == {witness.name: "accepted"}  # 0 -> 300: no proof needed
    store.append(t.appends(301, 3))
    assert notary.sign().witnesses == {witness.name: "accepted"}  # told 0, answered 409 "300", proved 300 -> 303
    assert DirectoryWitness(state / "w").held_size(notary.verifier.name) == 303


def test_the_pinned_bundle_vectors_verify_in_both_verifiers_and_regenerate_identically():
    import make_bundle_vector

    pinned = json.loads((VECTORS / "bundle_v1.json").read_text(encoding="utf-8"))
    assert pinned == json.loads(json.dumps(make_bundle_vector.build()))
    key = pinned["verifier_key"]
    assert base64.b64decode(key.split("+", 2)[2])[1:].hex() == (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"  # RFC 8032 TEST 1
    )
    verdicts = []
    for doc in pinned["bundles"]:
        verdicts.append((bundles.verify_bundle(doc, Verifier.parse(key)).type, standalone.check_bundle(doc, key)))
    assert [v[0] for v in verdicts] == ["inclusion"] * 5 + ["consistency"] * 5
    assert verdicts[2][1] == "seq 3 is in the signed tree of 5 rows"


# --- witness cosignatures (C2SP tlog-cosignature v1, Ed25519) --------------------------------------


def test_a_cosigning_witness_signs_what_it_accepted_and_bundles_carry_it(recorded):
    from agentwatch.evidence.cosign import CosignerKey, read_cosigner_key

    path, store, state = recorded
    witness = DirectoryWitness(state / "w", cosign=True)
    notary = Notary(path, store.store_id, lambda: store.tree_head, state_dir=state, witnesses=[witness])
    witness.trust(notary.verifier, str(path))
    before = int(time.time())
    assert notary.sign().witnesses == {witness.name: "accepted"}
    cosigner = read_cosigner_key(state / "w")
    assert (state / "w" / ".cosigner.key").stat().st_mode & 0o777 == 0o600
    note = read_state(store.store_id, state).note
    assert len(note.split("\n\n")[1].strip().split("\n")) == 2  # the log's signature and the cosignature
    assert before <= cosigner.timestamp_of(note) <= int(time.time())
    assert standalone.check_cosignature(note, cosigner.encode()) == cosigner.timestamp_of(note)
    # The next checkpoint replaces the witness's older cosignature instead of piling them up.
    store.append(t.appends(301, 2))
    notary.sign()
    assert len(read_state(store.store_id, state).note.split("\n\n")[1].strip().split("\n")) == 2

    doc = bundles.prove_inclusion(path, 9, state_dir=state)
    assert bundles.verify_bundle(doc, notary.verifier, [cosigner]).seq == 9
    assert standalone.check_bundle(doc, notary.verifier.encode(), [cosigner.encode()]).startswith("seq 9 ")
    stranger = CosignerKey("agentwatch.invalid/witness/other", Signer.generate("x.invalid/y").verifier.public_key)
    with pytest.raises(bundles.BundleError, match="no cosignature"):
        bundles.verify_bundle(doc, notary.verifier, [stranger])
    with pytest.raises(standalone.BadBundle, match="no cosignature"):
        standalone.check_bundle(doc, notary.verifier.encode(), [stranger.encode()])
    # A cosignature moved onto another checkpoint does not verify.
    sig_line = doc["checkpoint"].split("\n\n")[1].strip().split("\n")[1]
    other = notary.signer.sign(Checkpoint(notary.verifier.name, 1, bytes(32)).text()) + sig_line + "\n"
    with pytest.raises(NoteError, match="does not verify"):
        cosigner.timestamp_of(other)
    with pytest.raises(standalone.BadBundle, match="does not verify"):
        standalone.check_cosignature(other, cosigner.encode())
