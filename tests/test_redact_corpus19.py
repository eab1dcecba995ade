"""The redaction rules on a nineteenth held-out corpus, format x carrier (tests/support/redaction_corpus19.py).

Built for #33 from a project no earlier corpus read (advanced-security/secret-scanning-custom-patterns,
labelled by the matches its unit test expects each pattern to find, file by file and offset by
offset, and by the files of a pattern directory it expects none in) and ordinary files of that
repository (tests/support/redaction_corpus19_extract.py, every sample naming its source and the
format of its text, none of its texts or secrets in the first eighteen corpora). No round of #33
read it: it was committed before it was scored, then scored once with the rules as they were at
8fbe617 (figures19-before.json). figures19.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus19.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus19 as corpus19

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus19.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 101
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 61, "upstream-negative": 8, "benign": 32}
    assert carrier_corpus.by_source(SAMPLES) == {"secret-scanning-custom-patterns": 101}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "text": 31, "properties": 8, "javascript": 7, "xml": 4, "python": 4, "yaml": 3, "json": 2, "sql": 1, "pem": 1}
    assert DATA["upstream"] == ["advanced-security/secret-scanning-custom-patterns@9b84660dfcad6cc3d0e2c40a1a5f61dd7edca4b9"]
    carrier_corpus.check_samples(DATA, 19, formats=12)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth or eighteenth corpus")
    assert DATA["left_out"] == {
        "a file only patterns set aside (not secrets) expect a match in": 9,
        "a labelled value that is a placeholder or empty": 1,
        "a positive with no secret left to judge": 5,
        "a secret already in an earlier corpus, dropped from a sample of several": 1,
        f"a secret already in the {earlier}": 21,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 14,
        f"text already in the {earlier}": 4,
        "the same text twice in one set": 8,
    }


def test_no_text_or_secret_of_the_first_eighteen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 19))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus19, SAMPLES, "pem", "upstream-positive")


def test_nineteenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 8fbe617 at the corpus's first scoring, per carrier."""
    before = json.loads(corpus19.BEFORE.read_text())
    assert corpus19.totals(before) == {"upstream-positive": (192, 244), "benign": (128, 128),
                                       "upstream-negative": (24, 32)}
    for carrier in corpus19.CARRIERS:
        got = corpus19.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((48, 61), (32, 32), (6, 8)), (
            carrier)
    # by format, every carrier alike: the plain-text positives hold every miss, two JSON files every negative changed
    assert corpus19.totals(before, fmt="text")["upstream-positive"] == (72, 124)
    assert corpus19.totals(before, fmt="json")["upstream-negative"] == (0, 8)
    assert len(before["failures"]) == len(set(before["failures"])) == (244 - 192) + (32 - 24)


def test_nineteenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus19, POLICY)


def test_nineteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus19, POLICY)


def test_nineteenth_corpus_figures_after_the_round_that_held_it_out():
    """The fourteenth round of #33 (tuned on corpora 1-18 with this one unread) and the URL-credential
    fix after it, scored when merged: the same figures as before, sample for sample."""
    assert json.loads(corpus19.FIGURES.read_text()) == json.loads(corpus19.BEFORE.read_text())
