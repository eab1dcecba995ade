"""The redaction rules on a sixteenth held-out corpus, format x carrier (tests/support/redaction_corpus16.py).

Built for #33 from two projects no earlier corpus read (the tests of prowler-cloud/prowler's checks
that look for secrets in a cloud resource's text, labelled by the variable or line their expected
FAIL message names, and dotnet/roslyn-analyzers' CA5390/CA5403 tests, labelled by the diagnostics
they expect) and ordinary files of those repositories (tests/support/redaction_corpus16_extract.py,
every sample naming its source and the format of its text, none of its texts or secrets in the first
fifteen corpora). No round of #33 read it: it was committed before it was scored, then scored once
with the rules as they were on main at 7173320 (figures16-before.json). figures16.json holds the figures
of the rules in this tree; re-record with `python tests/support/redaction_corpus16.py --write` after
a deliberate change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus16 as corpus16

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus16.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 179
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 24, "upstream-negative": 85, "benign": 70}
    assert carrier_corpus.by_source(SAMPLES) == {"prowler": 118, "roslyn-analyzers": 61}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {"prowler": 13, "roslyn-analyzers": 11}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {"prowler": 64, "roslyn-analyzers": 21}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {"prowler": 41, "roslyn-analyzers": 29}
    assert DATA["upstream"] == ["dotnet/roslyn-analyzers@d45048f958379c63acfc716136a5e2466f21c5d4",
                                "prowler-cloud/prowler@3e000faa3109230b748e4418a13c11c9e59f5cfb"]
    carrier_corpus.check_samples(DATA, 16, formats=12)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth or fifteenth corpus")
    assert DATA["left_out"] == {
        "a prowler FAIL test whose expected message names no variable or line": 32,
        "a prowler PASS test that passes because it ignores or excludes what it finds": 9,
        "a prowler variable named by a FAIL test with no literal value in the test": 6,
        "a roslyn-analyzers source expecting a diagnostic with no string literal (a byte array)": 21,
        f"text already in the {earlier}": 2,
        "the same text twice in one set": 46,
    }


def test_no_text_or_secret_of_the_first_fifteen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 16))


def test_sixteenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were on main (7173320) at the corpus's first scoring, per carrier."""
    before = json.loads(corpus16.BEFORE.read_text())
    assert corpus16.totals(before) == {"upstream-positive": (52, 96), "benign": (268, 280),
                                       "upstream-negative": (332, 340)}
    for carrier in corpus16.CARRIERS:
        got = corpus16.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (13, 24), (67, 70), (83, 85)), carrier
    assert [corpus16.totals(before, source=s)["upstream-positive"] for s in corpus16.SOURCES] == [(52, 52), (0, 44)]
    assert [corpus16.totals(before, source=s)["benign"] for s in corpus16.SOURCES] == [(152, 164), (116, 116)]
    assert [corpus16.totals(before, source=s)["upstream-negative"] for s in corpus16.SOURCES] == [
        (248, 256), (84, 84)]
    assert len(before["failures"]) == len(set(before["failures"])) == (96 - 52) + (280 - 268) + (340 - 332)


def test_sixteenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus16, POLICY)


def test_sixteenth_corpus_figures_after_the_round_tuned_on_it():
    """The twelfth round read its misses (an earlier corpus by then; the seventeenth was held out): a
    literal decoded into a key's variable (`byte[] key = Convert.FromBase64String("…")`, also through
    a variable given the literal before), and `testing` as a stand-in. 19/24 and 70/70 per carrier
    (figures16.json). What still passes through: a certificate's bytes written to a file and read
    back, and `GetBytes(literal, 0, 3, key, 0)` filling a key's buffer."""
    after = json.loads(corpus16.FIGURES.read_text())
    for carrier in corpus16.CARRIERS:
        got = corpus16.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == ((19, 24), (70, 70), (85, 85))


def test_sixteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus16, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus16, SAMPLES, "python", "upstream-positive")
