"""The redaction rules on a twenty-second held-out corpus, format x carrier (tests/support/redaction_corpus22.py).

Built for #33 from a project no earlier corpus read (Samsung/CredSweeper: its test sample files,
labelled by the findings its tests require of them: a file the default scan's findings name is a
positive, whole or by the runs of lines holding its values; a file no default, deep or
documentation finding names, and a line of a positive file the rules alone report that none of
them names, an upstream negative) and ordinary files of that repository
(tests/support/redaction_corpus22_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty-one corpora). No round of #33 read it:
it was committed before it was scored, then scored once with the rules as they were at 9ece093
(figures22-before.json). figures22.json holds the figures of the rules in this tree; re-record
with `python tests/support/redaction_corpus22.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus22 as corpus22

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus22.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 237
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 124, "upstream-negative": 84, "benign": 29}
    assert carrier_corpus.by_source(SAMPLES) == {"credsweeper": 237}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "text": 35, "token": 15, "python": 13, "json": 10, "yaml": 8, "java-like": 8, "xml": 6, "go": 5,
        "javascript": 5, "shell": 3, "properties": 3, "env": 2, "toml": 2, "url": 2, "pem": 2, "code": 1,
        "markdown": 1, "php": 1, "java": 1, "gradle": 1}
    assert sum("#lines-" in s["source"] for s in SAMPLES) == 0  # no labelled file is longer than 200 lines
    # the reported lines the filters or the validation set aside, and the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"upstream-negative": 73, "benign": 9}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 579
    assert DATA["upstream"] == ["Samsung/CredSweeper@1ed2ca5cdd480667b938024464a37589b9af8564"]
    carrier_corpus.check_samples(DATA, 22, formats=22)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth or "
               "twenty-first corpus")
    assert DATA["left_out"] == {
        "a file only the deep scan's or the documentation mode's findings name": 18,
        "a file that is not UTF-8 text": 47,
        "a labelled file with no value written out in it": 2,
        "a labelled value that is a placeholder or empty": 6,
        "a positive with no secret left to judge": 26,
        "a reported line holding a labelled value": 7,
        "a secret already in an earlier corpus, dropped from a sample of several": 23,
        f"a secret already in the {earlier}": 1,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 114,
        f"text already in the {earlier}": 3,
    }


def test_no_text_or_secret_of_the_first_twenty_one_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 22))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus22, SAMPLES, "json", "upstream-positive")


def test_twenty_second_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 9ece093 at the corpus's first scoring, per carrier."""
    before = json.loads(corpus22.BEFORE.read_text())
    assert corpus22.totals(before) == {"upstream-positive": (356, 496), "benign": (116, 116),
                                       "upstream-negative": (180, 336)}
    for carrier in corpus22.CARRIERS:
        got = corpus22.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (89, 124), (29, 29), (45, 84)), carrier
    # by format, every carrier alike: plain text holds the most misses and the most changed
    # negatives; every token-shaped file is caught
    assert corpus22.totals(before, fmt="text")["upstream-positive"] == (92, 140)
    assert corpus22.totals(before, fmt="token")["upstream-positive"] == (60, 60)
    assert corpus22.totals(before, fmt="json")["upstream-positive"] == (24, 40)
    assert corpus22.totals(before, fmt="text")["upstream-negative"] == (76, 120)
    assert corpus22.totals(before, fmt="token")["upstream-negative"] == (40, 76)
    assert corpus22.totals(before, fmt="yaml")["upstream-negative"] == (12, 52)
    assert len(before["failures"]) == len(set(before["failures"])) == (496 - 356) + (116 - 116) + (336 - 180)


def test_twenty_second_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus22, POLICY)


def test_twenty_second_corpus_figures_after_the_fifteenth_round():
    """Scored again once the blob cut was in (nothing changed), then tuned on this corpus once it was
    scored: a terminal's colours blanked before the rules read, libcurl's credential options, MySQL's
    `IDENTIFIED WITH plugin AS 'hash'`, `pswd`, Postman collection keys, WunderGraph Cosmo keys and
    Twitter bearer tokens catch 4 positives more per carrier; one upstream negative in Cosmo's key
    format (`cosmo_abcdef1234…`) is masked, benign texts as before. The sixteenth round's Supabase
keys (`sbp_`, `sb_secret_`) mask two upstream negatives more per carrier, keys upstream's own
filters set aside."""
    after = json.loads(corpus22.FIGURES.read_text())
    assert corpus22.totals(after) == {"upstream-positive": (372, 496), "benign": (116, 116),
                                      "upstream-negative": (168, 336)}
    for carrier in corpus22.CARRIERS:
        got = corpus22.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (93, 124), (29, 29), (42, 84)), carrier
    assert corpus22.totals(after, fmt="java-like")["upstream-positive"] == (32, 32)
    assert corpus22.totals(after, fmt="text")["upstream-positive"] == (96, 140)


def test_twenty_second_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus22, POLICY)
