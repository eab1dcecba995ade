"""The redaction rules on a twenty-fourth held-out corpus, format x carrier (tests/support/redaction_corpus24.py).

Built for #33 from a project no earlier corpus read, npm/redact, the library the npm CLI masks
its logs and errors with: the strings of its test examples (an npm token, a JSON Web Token, an
authorization header's credential, a URL's password: positives whose secret is what the library
masks; a URL without credentials, an upstream negative), with ordinary files of the repository
(tests/support/redaction_corpus24_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty-three corpora). No round of #33 read
it: it was committed before it was scored, then scored once with the rules as they were at
46ba2f9 (figures24-before.json). figures24.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus24.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus24 as corpus24

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus24.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 171
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 136, "upstream-negative": 1, "benign": 34}
    assert carrier_corpus.by_source(SAMPLES) == {"redact": 171}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "properties": 92, "text": 36, "token": 8}
    # the upstream groups the positives come from
    assert Counter(s["source"].split("#")[1].split("/")[0] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "HTTP_URL_NPM": 72, "AUTH_HEADER_NPM": 24, "HTTP_URL_CORE": 20, "AUTH_HEADER_JWT": 8, "NPM_SECRET": 6,
        "AUTH_HEADER_CORE": 4, "JSON_WEB_TOKEN": 2}
    # the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"benign": 11}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 136
    assert DATA["upstream"] == ["npm/redact@df9d4daa4d90432a471906761890c1ada661f349"]
    carrier_corpus.check_samples(DATA, 24, formats=8)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, "
               "twenty-first, twenty-second or twenty-third corpus")
    assert DATA["left_out"] == {
        "a UUID example: an identifier, no secret": 5,
        "a non-string example (a number, an array, an object, a getter, an error): no one text": 26,
        "a positive with no secret left to judge": 4,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 4,
        f"text already in the {earlier}": 8,
        "the same text twice in one set": 15,
    }


def test_no_text_or_secret_of_the_first_twenty_three_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 24))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus24, SAMPLES, "properties", "upstream-positive")


def test_twenty_fourth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 46ba2f9 at the corpus's first scoring, per carrier."""
    before = json.loads(corpus24.BEFORE.read_text())
    assert corpus24.totals(before) == {"upstream-positive": (412, 544), "benign": (136, 136),
                                       "upstream-negative": (4, 4)}
    for carrier in corpus24.CARRIERS:
        got = corpus24.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (103, 136), (34, 34), (1, 1)), carrier
    # by format: URLs (read as properties lines) are mostly caught; bare authorization headers and
    # bare tokens hold the most misses
    assert corpus24.totals(before, fmt="properties")["upstream-positive"] == (328, 368)
    assert corpus24.totals(before, fmt="text")["upstream-positive"] == (72, 144)
    assert corpus24.totals(before, fmt="token")["upstream-positive"] == (12, 32)
    assert len(before["failures"]) == len(set(before["failures"])) == (544 - 412) + (136 - 136) + (4 - 4)


def test_twenty_fourth_corpus_figures_after_the_sixteenth_round():
    """Tuned on once it was scored (the sixteenth round of #33): the Bearer scheme's token of 8 or
    more characters holding a digit and a letter, "Basic" and such a token where a header value
    stands, npm tokens (`npm_`, `npms_`) of 36 to 48 characters, and a password holding `[` or `]`
    after a scheme catch every positive, in every carrier; benign text and the upstream negative
    are left as they were."""
    after = json.loads(corpus24.FIGURES.read_text())
    assert after["failures"] == []
    for carrier in corpus24.CARRIERS:
        got = corpus24.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (136, 136), (34, 34), (1, 1)), carrier


def test_twenty_fourth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus24, POLICY)


def test_twenty_fourth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus24, POLICY)
