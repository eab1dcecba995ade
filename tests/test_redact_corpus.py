"""The redaction rules on a corpus they were not written from: upstream samples and real public files.

Figures are recorded in tests/fixtures/redaction/figures.json (and in docs/redaction.md);
a change in what the rules catch or leave alone shows here as a difference, sample by sample.
Re-record with `python tests/support/redaction_corpus.py --write` after a deliberate change.
"""

from __future__ import annotations

import json

from support import redaction_corpus as corpus

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))


def test_every_sample_names_its_source():
    data = corpus.load()
    assert len(data["samples"]) == 9621
    assert all(s["source"] and s["text"] for s in data["samples"])
    upstream = [s for s in data["samples"] if s["set"] != "benign"]
    assert all(s["source"].startswith(("gitleaks/gitleaks@", "Yelp/detect-secrets@")) for s in upstream)


def test_corpus_figures_are_the_recorded_ones():
    recorded = json.loads(corpus.FIGURES.read_text())
    measured = corpus.score(POLICY)
    assert measured["failures"] == recorded["failures"]
    assert measured["counts"] == recorded["counts"]


def test_recorded_figures_meet_the_aims():
    totals = corpus.totals(json.loads(corpus.FIGURES.read_text()))
    # 6162 before #33's third round; comparisons with a password's literal and quoted weak words add 15
    # and the ninth round's password shape one (a Microsoft Entra client secret, `...8Q~...`)
    # and the twelfth six: a filler word beside a secret no longer hides it, `secrete` names one
    assert totals["upstream-positive"] == (6184, 6216)  # recall 99.49%
    # the tenth round keeps three more: code beside a secret's name (a keyword argument, an attribute chain)
    assert totals["benign"] == (2971, 2976)  # benign intact 99.83%
    for ok, n in (totals["upstream-positive"], totals["benign"]):
        assert ok * 100 >= 99 * n


def test_a_secret_is_caught_only_when_no_12_character_piece_is_left():
    assert corpus.leaked("key=abcdefghijklmnop", "abcdefghijklmnop")
    assert corpus.leaked("key=...ijklmnopqrst", "abcdefghijklmnopqrst")
    assert not corpus.leaked("key=[REDACTED:x:hmac-sha256:0]", "abcdefghijklmnop")
    assert corpus.leaked("pw hunter2", "hunter2") and not corpus.leaked("pw [REDACTED]", "hunter2")
