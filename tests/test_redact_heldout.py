"""What every held-out corpus (tests/support/heldout_corpus.py) must show, the same way for each.

The recorded figures are the measured ones, sample by sample (a change in what the rules
catch or leave alone shows here as a difference; re-record with
`python tests/support/redaction_corpusN.py --write` after a deliberate change), and the
fast path, the full rule walk and every keyword index agree on every text. What is
particular to a corpus (its sources, its before and after figures) is in its own module,
tests/test_redact_corpusN.py.
"""

from __future__ import annotations

import json

import pytest
from support.redaction_corpus2 import CORPUS_2
from support.redaction_corpus3 import CORPUS_3
from support.redaction_corpus4 import CORPUS_4

from agentwatch.record import redact
from agentwatch.record.redact import rules
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
CORPORA = pytest.mark.parametrize("corpus", [CORPUS_2, CORPUS_3, CORPUS_4], ids=lambda c: f"corpus{c.number}")


@CORPORA
def test_held_out_figures_are_the_recorded_ones(corpus):
    recorded = json.loads(corpus.figures.read_text())
    measured = corpus.score(POLICY)
    assert measured["failures"] == recorded["failures"]
    assert measured["counts"] == recorded["counts"]


@CORPORA
def test_fast_path_rule_walk_and_every_keyword_index_agree_on_the_corpus(corpus):
    ruleset = rules.builtin()
    indexes = [rules.load(backend=b).index for b in rules.KeywordIndex.BACKENDS]
    for sample in corpus.load()["samples"]:
        text = sample["text"]
        if ruleset.redact(text, POLICY.mask) != text:
            assert ruleset.suspicious(text, json=False), sample["source"]
            assert ruleset.suspicious(canonical_json({"k": [text]}).decode()), sample["source"]
        doc = {"k": text, text[:200]: [text]}
        assert POLICY.encode(doc) == canonical_json(POLICY.apply(doc)), sample["source"]
        data = text.encode("utf-8", "surrogatepass")
        assert len({tuple(index.hits(data)) for index in indexes}) == 1, sample["source"]
