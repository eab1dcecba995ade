"""The redaction rules on a twenty-eighth held-out corpus, format x carrier (tests/support/redaction_corpus28.py).

Built for #33 from a project no earlier corpus read, fosscode/libreleak, a secret scanner whose
detector tests write a file holding a fake secret and assert the scanner reports it: each such
file (a positive whose secrets are the fixtures of `tests/common.rs` it holds; a file a test
asserts nothing is found in, an upstream negative), with ordinary files of the repository
(tests/support/redaction_corpus28_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty-seven corpora). No round of #33 read
it: it was committed before it was scored, then scored once with the rules as they were at
3f88c4f (figures28-before.json). figures28.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus28.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus28 as corpus28

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus28.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 205
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 90, "upstream-negative": 5, "benign": 110}
    assert carrier_corpus.by_source(SAMPLES) == {"libreleak": 205}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "python": 52, "env": 15, "javascript": 9, "yaml": 5, "properties": 3, "shell": 2, "token": 2, "text": 2}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-negative") == {"python": 4, "text": 1}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "benign") == {
        "shell": 86, "yaml": 12, "text": 5, "toml": 3, "dockerfile": 3, "command-output": 1}
    # the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"benign": 96}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 90
    assert DATA["upstream"] == ["fosscode/libreleak@9012c84b78fae8ada5cf9d3b20ce1582aa76f22f"]
    carrier_corpus.check_samples(DATA, 28, formats=11)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, "
               "twenty-first, twenty-second, twenty-third, twenty-fourth, twenty-fifth, twenty-sixth or "
               "twenty-seventh corpus")
    assert DATA["left_out"] == {
        "a positive with no secret left to judge": 2,
        "a secret already in an earlier corpus, dropped from a sample of several": 1,
        f"a secret already in the {earlier}": 7,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 4,
        "a test built another way (several files, a loop, a string built in code)": 85,
        "the same text twice in one set": 50,
    }


def test_no_text_or_secret_of_the_first_twenty_seven_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 28))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus28, SAMPLES, "python", "upstream-positive")


def test_twenty_eighth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 3f88c4f at the corpus's first scoring, per carrier."""
    before = json.loads(corpus28.BEFORE.read_text())
    assert corpus28.totals(before) == {"upstream-positive": (276, 360), "benign": (440, 440),
                                       "upstream-negative": (16, 20)}
    for carrier in corpus28.CARRIERS:
        got = corpus28.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (69, 90), (110, 110), (4, 5)), carrier
    # by format: the misses are spread over the formats the tests write
    assert corpus28.totals(before, fmt="python")["upstream-positive"] == (172, 208)
    assert corpus28.totals(before, fmt="env")["upstream-positive"] == (36, 60)
    assert corpus28.totals(before, fmt="javascript")["upstream-positive"] == (28, 36)
    assert corpus28.totals(before, fmt="yaml")["upstream-positive"] == (12, 20)
    assert corpus28.totals(before, fmt="properties")["upstream-positive"] == (8, 12)
    assert corpus28.totals(before, fmt="text")["upstream-positive"] == (4, 8)
    assert corpus28.totals(before, fmt="shell")["upstream-positive"] == (8, 8)
    assert corpus28.totals(before, fmt="token")["upstream-positive"] == (8, 8)
    assert corpus28.totals(before, fmt="python")["upstream-negative"] == (12, 16)
    assert len(before["failures"]) == len(set(before["failures"])) == (360 - 276) + (20 - 16)


def test_twenty_eighth_corpus_figures_are_the_before_ones():
    """Not tuned on: the rules in this tree score it as they did at its first scoring."""
    after = json.loads(corpus28.FIGURES.read_text())
    before = json.loads(corpus28.BEFORE.read_text())
    assert after == before


def test_twenty_eighth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus28, POLICY)


def test_twenty_eighth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus28, POLICY)
