"""The redaction rules on a seventeenth held-out corpus, format x carrier (tests/support/redaction_corpus17.py).

Built for #33 from two projects no earlier corpus read (the tests of Checkmarx/kics's
`passwords_and_secrets` query, labelled by its positive expected results where the version read
agrees with them, and github/codeql's CWE-798 query tests, labelled by their inline `$ Alert`
annotations and the Ruby test's expected results) and ordinary files of those repositories
(tests/support/redaction_corpus17_extract.py, every sample naming its source and the format of its
text, none of its texts or secrets in the first sixteen corpora). No round of #33 read it: it was
committed before it was scored (fb5164e), then scored once with the rules as they were on main at 15a9844
(figures17-before.json). figures17.json holds the figures of the rules in this tree; re-record with
`python tests/support/redaction_corpus17.py --write` after a deliberate change (the "after" figure of
docs/redaction.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus17 as corpus17

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus17.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 186
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 69, "upstream-negative": 91, "benign": 26}
    assert carrier_corpus.by_source(SAMPLES) == {"kics": 47, "codeql": 139}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {"kics": 15, "codeql": 54}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {"kics": 15, "codeql": 76}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {"kics": 17, "codeql": 9}
    # each file was read at its own commit: 29 of them, each naming its repository
    assert len(DATA["upstream"]) == 29
    assert all(re.fullmatch(r"(Checkmarx/kics|github/codeql)@[0-9a-f]{40}", u) for u in DATA["upstream"])
    carrier_corpus.check_samples(DATA, 17, formats=10)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth or sixteenth corpus")
    assert DATA["left_out"] == {
        "a codeql file with no label left to judge": 1,
        "a codeql label on a literal written over several lines": 2,
        "a codeql label on a sink (the credential reaches it from another line)": 3,
        "a codeql labelled literal that holds a space (a phrase, not one value)": 2,
        "a codeql line that differs from one taken only in its identifiers": 122,
        "a kics positive file named by the expected results and not read here": 23,
        "a kics positive file whose version read agrees with no expected-results version": 23,
        "a positive with no secret left to judge": 2,
        "a secret already in an earlier corpus, dropped from a sample of several": 6,
        f"a secret already in the {earlier}": 29,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 7,
        "an unlabelled line where upstream labels a sink (it may hold the credential)": 6,
        f"text already in the {earlier}": 9,
        "the same text twice in one set": 22,
    }


def test_no_text_or_secret_of_the_first_sixteen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 17))


def test_seventeenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were on main (15a9844) at the corpus's first scoring, per carrier."""
    before = json.loads(corpus17.BEFORE.read_text())
    assert corpus17.totals(before) == {"upstream-positive": (172, 276), "benign": (104, 104),
                                       "upstream-negative": (271, 364)}
    for carrier in corpus17.CARRIERS:
        got = corpus17.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (43, 69), (26, 26), (67 if carrier == "command" else 68, 91)), carrier
    assert [corpus17.totals(before, source=s)["upstream-positive"] for s in corpus17.SOURCES] == [(60, 60), (112, 216)]
    assert [corpus17.totals(before, source=s)["benign"] for s in corpus17.SOURCES] == [(68, 68), (36, 36)]
    assert [corpus17.totals(before, source=s)["upstream-negative"] for s in corpus17.SOURCES] == [
        (60, 60), (211, 304)]
    assert len(before["failures"]) == len(set(before["failures"])) == (276 - 172) + (104 - 104) + (364 - 271)


def test_seventeenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus17, POLICY)


def test_seventeenth_corpus_figures_after_the_round_tuned_on_it():
    """The thirteenth round read its misses (an earlier corpus by then; the eighteenth held out): a
    secret's word numbered is no label (`secretAccessKey: "NotSoSecretKey1"`), request's and
    superagent's `.auth(user, password, …, bearer)`, an HTTP authentication scheme's name alone kept
    (`foo ? 'Bearer' : 'OAuth'`). 45/69, 26/26 and 69-70/91 per carrier (figures17.json). What still
    passes through: user names (codeql counts them as half of a credential), values that repeat
    their name (`privateKey = "myHardCodedPrivateKey"`), two-character values, `client('TOKEN')`."""
    after = json.loads(corpus17.FIGURES.read_text())
    for carrier in corpus17.CARRIERS:
        got = corpus17.totals(after, carrier=carrier)
        negatives = (69, 91) if carrier == "command" else (70, 91)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((45, 69), (26, 26), negatives)


def test_seventeenth_corpus_figures_after_the_round_that_held_it_out():
    """The twelfth round of #33 (a filler word beside a secret, literals decoded into keys, a call's
    variable argument followed to its literal), tuned on corpora 1-16 with this one unread, scored it
    once when it landed: every sample as before (figures17-heldout-after.json)."""
    held = json.loads((corpus17.HERE / "figures17-heldout-after.json").read_text())
    assert held == json.loads(corpus17.BEFORE.read_text())
    for carrier in corpus17.CARRIERS:
        got = corpus17.totals(held, carrier=carrier)
        negatives = (67, 91) if carrier == "command" else (68, 91)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((43, 69), (26, 26), negatives)


def test_seventeenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus17, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus17, SAMPLES, "hcl", "upstream-positive")
