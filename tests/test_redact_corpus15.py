"""The redaction rules on a fifteenth held-out corpus, format x carrier (tests/support/redaction_corpus15.py).

Built for #33 from the two projects every earlier corpus set aside (the fixtures of
Skyscanner/whispers' `test_detection_by_value`, labelled by the findings it expects, and the planted
secrets of Plazmaz/leaky-repo, labelled by its `.leaky-meta/secrets.csv`) and ordinary files of those
repositories (tests/support/redaction_corpus15_extract.py, every sample naming its source and the
format of its text, none of its texts or secrets in the first fourteen corpora). Issue #33's
description of misses came from scanners' runs on data like theirs, so the rules were tuned on misses
of that kind: this corpus is less held out than the others. It was committed before it was scored,
then scored once with the rules as they were on main at 71bfa7a (figures15-before.json). figures15.json holds
the figures of the rules in this tree; re-record with `python tests/support/redaction_corpus15.py
--write` after a deliberate change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus15 as corpus15

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus15.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 606
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 285, "upstream-negative": 268, "benign": 53}
    assert carrier_corpus.by_source(SAMPLES) == {"whispers": 469, "leaky-repo": 137}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {"whispers": 181, "leaky-repo": 104}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {"whispers": 268}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {"whispers": 20, "leaky-repo": 33}
    assert DATA["upstream"] == ["Plazmaz/leaky-repo@2e951359cac53addbee56437da3ffb546e3dfe24",
                                "Skyscanner/whispers@5832bf74dcb127128ba653ed87601c927124b5aa"]
    carrier_corpus.check_samples(DATA, 15, formats=20)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth or fourteenth corpus")
    assert DATA["left_out"] == {
        "a labelled value that is a placeholder or empty": 15,
        "a leaky-repo file with informative lines only": 2,
        "a positive with no secret left to judge": 6,
        "a risk line leaky-repo counts that holds no value of its own": 8,
        "a secret already in an earlier corpus, dropped from a sample of several": 2,
        f"a secret already in the {earlier}": 3,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 21,
        "a whispers fixture whose findings are HTML comments": 1,
        "an AWS access key id whispers finds (an identifier, as in the thirteenth corpus)": 1,
        f"text already in the {earlier}": 22,
        "the same text twice in one set": 125,
    }


def test_no_text_or_secret_of_the_first_fourteen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 15))


def test_fifteenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were on main (71bfa7a) at the corpus's first scoring, per carrier."""
    before = json.loads(corpus15.BEFORE.read_text())
    assert corpus15.totals(before) == {"upstream-positive": (876, 1140), "benign": (204, 212),
                                       "upstream-negative": (981, 1072)}
    for carrier, negatives in zip(corpus15.CARRIERS, (246, 245, 245, 245), strict=True):
        got = corpus15.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (219, 285), (51, 53), (negatives, 268)), carrier
    assert [corpus15.totals(before, source=s)["upstream-positive"] for s in corpus15.SOURCES] == [
        (520, 724), (356, 416)]
    assert [corpus15.totals(before, source=s)["benign"] for s in corpus15.SOURCES] == [(80, 80), (124, 132)]
    assert [corpus15.totals(before, source=s)["upstream-negative"] for s in corpus15.SOURCES] == [
        (981, 1072), (0, 0)]
    assert len(before["failures"]) == len(set(before["failures"])) == (1140 - 876) + (212 - 204) + (1072 - 981)


def test_fifteenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus15, POLICY)


def test_fifteenth_corpus_figures_after_the_round_that_held_it_out():
    """The tenth round of #33 (code is code beside a secret's name), tuned on corpora 1-14 and agent
    harnesses' source trees with this one unread, scored it once when it landed: every sample as
    before (figures15-heldout-after.json)."""
    held = json.loads((corpus15.HERE / "figures15-heldout-after.json").read_text())
    assert held == json.loads(corpus15.BEFORE.read_text())
    for carrier in corpus15.CARRIERS:
        got = corpus15.totals(held, carrier=carrier)
        negatives = (246, 268) if carrier == "command" else (245, 268)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((219, 285), (51, 53), negatives)


def test_fifteenth_corpus_figures_after_the_rounds_tuned_on_it():
    """The eleventh round read its misses (an earlier corpus by then, with no corpus held out): `pass`
    and `pwd` as the name of a name/value pair or of an XML element, Go's `a, b := "…", "…"` (226/285,
    227 in the command carrier). The twelfth (the seventeenth corpus held out): a filler word beside a
    secret no longer hides it (`ExamplePas123`), `<Pass>` reaches the format layer from the fast path, a
    call's argument is read when a callback follows it unclosed. 233/285 and 51/53 per carrier
    (figures15.json). What still passes through: values that hold a word of their name
    (`01_hardcoded_password: hardcoded0`, read as a label), `dummy-`/`sample` values made of words, card
    numbers. The fifteenth round's URL rule reads a user or password holding a raw `@` to the last `@`
    before the host, as URL parsers do: 234/285."""
    after = json.loads(corpus15.FIGURES.read_text())
    for carrier in corpus15.CARRIERS:
        got = corpus15.totals(after, carrier=carrier)
        recall = (234, 285)
        negatives = (246, 268) if carrier == "command" else (245, 268)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (recall, (51, 53), negatives)


def test_fifteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus15, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus15, SAMPLES, "yaml", "upstream-positive")
