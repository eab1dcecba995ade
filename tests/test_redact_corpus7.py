"""The redaction rules on a seventh held-out corpus, format x carrier (tests/support/redaction_corpus7.py).

Built for #33 from four projects no earlier corpus reads (GitGuardian/ggshield's unit-test
texts and recorded API exchanges, awslabs/git-secrets' AWS credential test,
nickdeis/eslint-plugin-no-secrets' rule tests, microsoft/DevSkim's secrets rule examples)
and ordinary files of those repositories (tests/support/redaction_corpus7_extract.py,
every sample naming its source and the format of its text, none of its texts or secrets
in the first six corpora). It was committed before it was scored, then scored once with
the rules as they were (figures7-before.json), while the rules were being changed for
#33 without it in view. figures7.json holds the figures of the rules in this tree; a
change in what they catch or leave alone shows here as a difference, sample by sample.
Re-record with `python tests/support/redaction_corpus7.py --write` after a deliberate
change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus7 as corpus7

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus7.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 227
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 44, "upstream-negative": 16, "benign": 167}
    assert carrier_corpus.by_source(SAMPLES) == {"ggshield": 145, "no-secrets": 35, "git-secrets": 27, "devskim": 20}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {
        "ggshield": 23, "git-secrets": 11, "no-secrets": 8, "devskim": 2}
    assert DATA["upstream"] == ["GitGuardian/ggshield@eaa3e43b1ae1", "awslabs/git-secrets@7d6b970cbd3c",
                                "microsoft/DevSkim@a452aa506f80", "nickdeis/eslint-plugin-no-secrets@fe95b10ac26b"]
    carrier_corpus.check_samples(DATA, 7, formats=17, uses=lambda text, secret: 1)


def test_what_was_left_out_is_counted():
    assert DATA["left_out"] == {
        "a secret already in the first, second, third, fourth, fifth or sixth corpus": 5,
        "no-secrets valid case only because an option switches the rule off": 4,
        "text already in the first, second, third, fourth, fifth or sixth corpus": 6,
        "the same text twice in one set": 58,
    }


def test_no_text_or_secret_of_the_first_six_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 7))


def test_seventh_corpus_figures_before_the_round_of_rule_changes():
    """The held-out figure: the rules as they were at the corpus's first scoring (f8beb48), per carrier."""
    before = json.loads(corpus7.BEFORE.read_text())
    assert corpus7.totals(before) == {"upstream-positive": (128, 176), "benign": (664, 668),
                                      "upstream-negative": (64, 64)}
    for carrier in corpus7.CARRIERS:
        got = corpus7.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (32, 44), (166, 167), (16, 16)), carrier
    assert [corpus7.totals(before, source=s)["upstream-positive"] for s in corpus7.SOURCES] == [
        (84, 92), (12, 44), (32, 32), (0, 8)]
    assert len(before["failures"]) == len(set(before["failures"])) == 48 + 4


def test_seventh_corpus_figures_after_the_changes_of_default():
    """The round tuned on the sixth corpus left this one as it was (its figures were the "before"
    ones, docs/redaction.md). The rounds that changed defaults, with this corpus among the earlier
    ones, took it to 42/44 and 167/167 per carrier: figures7.json."""
    after = json.loads(corpus7.FIGURES.read_text())
    for carrier in corpus7.CARRIERS:
        got = corpus7.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((42, 44), (167, 167), (16, 16))
    assert [corpus7.totals(after, source=s)["upstream-positive"] for s in corpus7.SOURCES] == [
        (92, 92), (44, 44), (32, 32), (0, 8)]


def test_seventh_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus7, POLICY)


def test_seventh_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus7, POLICY)


def test_a_shell_sample_is_the_command_line_itself():
    shell = next(s for s in SAMPLES if s["format"] == "shell" and s["set"] == "upstream-positive")
    assert corpus7.payload("command", shell["path"], shell["text"], "shell")["tool_input"]["command"] == shell["text"]
    carrier_corpus.check_command_writes(corpus7, SAMPLES, "diff")
