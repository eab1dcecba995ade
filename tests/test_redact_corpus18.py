"""The redaction rules on an eighteenth held-out corpus, format x carrier (tests/support/redaction_corpus18.py).

Built for #33 from two projects no earlier corpus read (anchore/syft's secrets cataloger tests,
labelled by the findings its Go tests expect per fixture and line, and IBM/detect-secrets' Box,
DB2 and GitHub Enterprise plugin tests, labelled by each payload's `should_flag`) and ordinary
files of those repositories (tests/support/redaction_corpus18_extract.py, every sample naming its
source and the format of its text, none of its texts or secrets in the first seventeen corpora).
No round of #33 read it: it was committed before it was scored, then scored once with the rules
as they were at d46b9e8 (figures18-before.json). figures18.json holds the figures of the rules
in this tree; re-record with `python tests/support/redaction_corpus18.py --write` after a
deliberate change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus18 as corpus18

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus18.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 187
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 37, "upstream-negative": 16, "benign": 134}
    assert carrier_corpus.by_source(SAMPLES) == {"syft": 60, "ibm-detect-secrets": 127}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {"syft": 16, "ibm-detect-secrets": 21}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {"syft": 3, "ibm-detect-secrets": 13}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {"syft": 41, "ibm-detect-secrets": 93}
    # syft's cataloger at its last commit and its ordinary files at the mirror's head; detect-secrets at one commit
    assert DATA["upstream"] == ["IBM/detect-secrets@076672a9a01abdfc7ecee2e7d14f08cdccb73976",
                                "anchore/syft@3f13d209a5a3fddb2e616b190576d8ae1d9f1133",
                                "anchore/syft@bf82010f3c38508e30dd01ed8053f158513c0c9d"]
    carrier_corpus.check_samples(DATA, 18, formats=14)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth or seventeenth corpus")
    assert DATA["left_out"] == {
        "a labelled value that is a placeholder or empty": 11,
        "a positive with no secret left to judge": 2,
        "a secret already in an earlier corpus, dropped from a sample of several": 1,
        f"a secret already in the {earlier}": 38,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 7,
        "a syft case whose pattern takes the name with the value (or hides the value)": 3,
        f"text already in the {earlier}": 7,
        "the same text twice in one set": 8,
    }


def test_no_text_or_secret_of_the_first_seventeen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 18))


def test_eighteenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at d46b9e8 at the corpus's first scoring, per carrier."""
    before = json.loads(corpus18.BEFORE.read_text())
    assert corpus18.totals(before) == {"upstream-positive": (132, 148), "benign": (528, 536),
                                       "upstream-negative": (12, 64)}
    for carrier in corpus18.CARRIERS:
        got = corpus18.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((33, 37), (132, 134), (3, 16)), (
            carrier)
    assert [corpus18.totals(before, source=s)["upstream-positive"] for s in corpus18.SOURCES] == [(56, 64), (76, 84)]
    assert [corpus18.totals(before, source=s)["benign"] for s in corpus18.SOURCES] == [(164, 164), (364, 372)]
    assert [corpus18.totals(before, source=s)["upstream-negative"] for s in corpus18.SOURCES] == [(0, 12), (12, 52)]
    assert len(before["failures"]) == len(set(before["failures"])) == (148 - 132) + (536 - 528) + (64 - 12)


def test_eighteenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus18, POLICY)


def test_eighteenth_corpus_figures_after_the_round_that_held_it_out():
    """The thirteenth round of #33 (a secret's word numbered, request's `.auth`, HTTP authentication
    schemes), tuned on corpora 1-17 with this one unread, scored it once when it landed: recall and
    benign as before, one upstream negative more intact in every carrier (syft's
    not-docker-config.json line 3: `"auth": "…"` whose value is a scheme's name), the rest sample for
    sample as before (figures18-heldout-after.json)."""
    held = json.loads((corpus18.HERE / "figures18-heldout-after.json").read_text())
    before = json.loads(corpus18.BEFORE.read_text())
    assert sorted(set(before["failures"]) - set(held["failures"])) == sorted(
        f"upstream-negative syft:json {carrier} anchore/syft@3f13d209a5a3fddb2e616b190576d8ae1d9f1133:"
        "syft/file/cataloger/secrets/test-fixtures/secrets/default/not-docker-config.json#line-3"
        for carrier in corpus18.CARRIERS)
    assert set(held["failures"]) < set(before["failures"])
    for carrier in corpus18.CARRIERS:
        got = corpus18.totals(held, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((33, 37), (132, 134), (4, 16))


def test_eighteenth_corpus_figures_after_the_round_tuned_on_it():
    """The fourteenth round read its misses (an earlier corpus by then; the nineteenth held out): `pwd`
    at the end of a longer name (`dbpwd`; not `nopwd`, `RESETPWD`), a name that says it detects, scans,
    finds or audits secrets (`detect-secrets:redhat-ubi`, an image and its tag) is no secret's name.
    34/37 and 134/134 per carrier (figures18.json). What still passes through: a key written as a
    counting run (`12345A7a901b3456789…`, read as an alphabet written out), `pwd::value`. The fifteenth
    keeps an auth scheme's name alone as a name/value pair's value (`"auth" : "basic"` in JSON text), one
    upstream negative more per carrier."""
    after = json.loads(corpus18.FIGURES.read_text())
    for carrier in corpus18.CARRIERS:
        got = corpus18.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((34, 37), (134, 134), (5, 16))


def test_eighteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus18, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus18, SAMPLES, "pem", "upstream-positive")
