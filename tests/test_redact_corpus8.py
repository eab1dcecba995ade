"""The redaction rules on an eighth held-out corpus, format x carrier (tests/support/redaction_corpus8.py).

Built for #33 from four projects no earlier corpus reads (the hard-coded password, secret
and credential checks' tests of SonarSource/sonar-java, sonar-python and sonar-php, and
americanexpress/earlybird's false-positive tests and rule examples) and ordinary files of
those repositories (tests/support/redaction_corpus8_extract.py, every sample naming its
source and the format of its text, none of its texts or secrets in the first seven
corpora). It was committed before it was scored, then scored once with the rules as they
were (figures8-before.json), while the rules were being changed for #33 without it in
view. figures8.json holds the figures of the rules in this tree; a change in what they
catch or leave alone shows here as a difference, sample by sample. Re-record with
`python tests/support/redaction_corpus8.py --write` after a deliberate change (the
"after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus8 as corpus8

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus8.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 816
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 310, "upstream-negative": 370, "benign": 136}
    assert carrier_corpus.by_source(SAMPLES) == {
        "sonar-java": 252, "sonar-python": 238, "sonar-php": 230, "earlybird": 96}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {
        "sonar-php": 101, "sonar-python": 94, "sonar-java": 76, "earlybird": 39}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {
        "sonar-java": 119, "sonar-python": 109, "sonar-php": 102, "earlybird": 40}
    assert DATA["upstream"] == ["SonarSource/sonar-java@3f13e227ff14557e877674b6696af6faa049eeb9",
                                "SonarSource/sonar-php@582e2e4d6f0d778dc083e399cd4110e0a048fe0d",
                                "SonarSource/sonar-python@bc7197219001ec84b7ed59d8ea44ceede9c3b1e0",
                                "americanexpress/earlybird@573753e6f39a02293d4a250878e66664aefa674a"]
    carrier_corpus.check_samples(DATA, 8, formats=20, uses=str.count)


def test_what_was_left_out_is_counted():
    assert DATA["left_out"] == {
        "a noncompliant heredoc line (its value is on the lines below)": 1,
        "a noncompliant line that holds no literal secret (a variable set elsewhere)": 28,
        "a noncompliant line whose value is a placeholder": 1,
        "a positive with no secret left to judge": 8,
        "a secret already in an earlier corpus, dropped from a sample of several": 2,
        "a secret already in the first, second, third, fourth, fifth, sixth or seventh corpus": 21,
        "a secret that also stands on an unlabelled line of the whole file": 10,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 10,
        "an earlybird example whose value is a placeholder or missing": 38,
        "an earlybird finding that holds no secret by this project's threat model": 3,
        "an earlybird text whose value is a placeholder or missing": 3,
        "an upstream compliant line its comment says holds a credential all the same": 7,
        "text already in the first, second, third, fourth, fifth, sixth or seventh corpus": 15,
        "the same text twice in one set": 132,
    }


def test_no_text_or_secret_of_the_first_seven_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 8))


def test_eighth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at the corpus's first scoring (9461583), per carrier."""
    before = json.loads(corpus8.BEFORE.read_text())
    assert corpus8.totals(before) == {"upstream-positive": (956, 1240), "benign": (528, 544),
                                      "upstream-negative": (1096, 1480)}
    for carrier in corpus8.CARRIERS:
        got = corpus8.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (239, 310), (132, 136), (274, 370)), carrier
    assert [corpus8.totals(before, source=s)["upstream-positive"] for s in corpus8.SOURCES] == [
        (212, 304), (348, 376), (276, 404), (120, 156)]
    assert len(before["failures"]) == len(set(before["failures"])) == 4 * (71 + 4 + 96)


def test_eighth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus8, POLICY)


def test_eighth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus8, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus8, SAMPLES, "php")


def test_eighth_corpus_figures_after_the_round_that_held_it_out():
    """Scored once more when the change-of-default round (tuned on corpora 1-7) landed: 248/310 and
    132/136 per carrier (docs/redaction.md, "Figures on an eighth held-out corpus"):
    figures8-heldout-after.json."""
    after = json.loads((corpus8.HERE / "figures8-heldout-after.json").read_text())
    for carrier in corpus8.CARRIERS:
        got = corpus8.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((248, 310), (132, 136),
                                                                                      (270, 370)), carrier


def test_eighth_corpus_figures_after_the_round_tuned_on_it():
    """The next rounds studied its misses (an earlier corpus by then): 290/310 and 136/136 per carrier
    after the fifth, 294/310 after the seventh (a secret-naming statement's literals), 295/310 after the ninth
    (a value shaped like a strong password, `1qaz@WSX`), figures8.json. What still passes through: bare weak passwords with no name beside them, names that only contain
    a secret's word (`Secretary`), `oauth`."""
    after = json.loads(corpus8.FIGURES.read_text())
    for carrier in corpus8.CARRIERS:
        got = corpus8.totals(after, carrier=carrier)
        # a command line's here-document body is read as its file by the format layer, not by the line
        # rules, so four Sonar negatives (pairs in a literal) differ from the other carriers
        # (the tenth round keeps one more in the other carriers: code beside a secret's name)
        # (the twelfth round masks Sonar's `secret003 = "examples/commit/<hex>"` in Java and PHP: a hex
        # id beside a filler word)
        negatives = (256, 370) if carrier == "command" else (253, 370)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((295, 310), (136, 136),
                                                                                      negatives), carrier
