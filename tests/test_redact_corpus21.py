"""The redaction rules on a twenty-first held-out corpus, format x carrier (tests/support/redaction_corpus21.py).

Built for #33 from a project no earlier corpus read (leaktk: the fake leaks of leaktk/fake-leaks,
labelled by the findings leaktk/patterns' scanner test requires of them: a file a finding names is
a positive, whole or by the runs of lines holding its secrets, and a file of an `invalid/` or
`benign/` folder none names an upstream negative) and ordinary files of those two repositories
(tests/support/redaction_corpus21_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty corpora). No round of #33 read it: it
was committed before it was scored, then scored once with the rules as they were at 500eb6f
(figures21-before.json). figures21.json holds the figures of the rules in this tree; re-record
with `python tests/support/redaction_corpus21.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus21 as corpus21

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus21.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 407
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 211, "upstream-negative": 147, "benign": 49}
    assert carrier_corpus.by_source(SAMPLES) == {"fake-leaks": 364, "patterns": 43}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "env": 41, "token": 34, "yaml": 32, "text": 20, "python": 19, "json": 15, "php": 11, "properties": 10,
        "xml": 9, "shell": 7, "gradle": 5, "pem": 4, "javascript": 2, "hcl": 1, "ini": 1}
    assert sum("#lines-" in s["source"] for s in SAMPLES) == 94  # runs of the longer files
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 244
    assert DATA["upstream"] == ["leaktk/fake-leaks@7ba6ca3ea2f165ecd61276c7460f2facdb313c87",
                                "leaktk/patterns@55c7046d456b5420d8e83d4af53877752541ea6a"]
    carrier_corpus.check_samples(DATA, 21, formats=22)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth or twentieth corpus")
    assert DATA["left_out"] == {
        "a file no result names, outside the invalid and benign folders": 91,
        "a labelled file with no secret written out in it": 9,
        "a labelled secret not written out in its file (decoded or joined by the scanner)": 15,
        "a labelled value that is a placeholder or empty": 10,
        "a positive with no secret left to judge": 8,
        f"a secret already in the {earlier}": 14,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 22,
        "an empty file": 1,
        "an upstream negative of more than 200 lines": 2,
        f"text already in the {earlier}": 5,
        "the same text twice in one set": 23,
    }


def test_no_text_or_secret_of_the_first_twenty_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 21))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus21, SAMPLES, "yaml", "upstream-positive")


def test_twenty_first_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 500eb6f at the corpus's first scoring, per carrier."""
    before = json.loads(corpus21.BEFORE.read_text())
    assert corpus21.totals(before) == {"upstream-positive": (676, 844), "benign": (188, 196),
                                       "upstream-negative": (256, 588)}
    for carrier in corpus21.CARRIERS:
        got = corpus21.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (169, 211), (47, 49), (64, 147)), carrier
    # by format, every carrier alike: YAML holds the most misses and the most changed negatives,
    # the rule configuration every benign change
    assert corpus21.totals(before, fmt="yaml")["upstream-positive"] == (72, 128)
    assert corpus21.totals(before, fmt="token")["upstream-positive"] == (96, 136)
    assert corpus21.totals(before, fmt="toml")["benign"] == (36, 44)
    assert corpus21.totals(before, fmt="yaml")["upstream-negative"] == (40, 132)
    assert corpus21.totals(before, fmt="pem")["upstream-negative"] == (4, 68)
    assert len(before["failures"]) == len(set(before["failures"])) == (844 - 676) + (196 - 188) + (588 - 256)


def test_twenty_first_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus21, POLICY)


def test_twenty_first_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus21, POLICY)


def test_twenty_first_corpus_figures_after_the_fifteenth_round():
    """Scored again after the rest of the fifteenth round (the Basic scheme anywhere, a quoted AWS
    secret after `aws`, Amazon MWS tokens: nothing changed here), then tuned on this corpus once it
    was scored: a JSON member whose line lost its opening quote, a value that starts with `$` before
    a key-shaped run, AppRole's secret_id, SunMD5 hashes, wrapped base64 of a PEM key and Tines
    webhooks catch 23 positives more in every carrier; benign texts and upstream negatives as before."""
    after = json.loads(corpus21.FIGURES.read_text())
    assert corpus21.totals(after) == {"upstream-positive": (768, 844), "benign": (188, 196),
                                      "upstream-negative": (256, 588)}
    for carrier in corpus21.CARRIERS:
        got = corpus21.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (192, 211), (47, 49), (64, 147)), carrier
    assert corpus21.totals(after, fmt="yaml")["upstream-positive"] == (128, 128)
    assert corpus21.totals(after, fmt="xml")["upstream-positive"] == (36, 36)
    assert corpus21.totals(after, fmt="token")["upstream-positive"] == (100, 136)
