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
import re
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus15 as corpus15
from support.redaction_corpus6_extract import scorable

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus15.load()
SAMPLES = DATA["samples"]


def _words(text: str, secret: str) -> int:
    return len(re.findall(rf"(?<![A-Za-z0-9_]){re.escape(secret)}(?![A-Za-z0-9_])", text))


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 606
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 285, "upstream-negative": 268, "benign": 53}
    assert Counter(s["type"].split(":")[0] for s in SAMPLES) == {"whispers": 469, "leaky-repo": 137}
    assert Counter(s["type"].split(":")[0] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "whispers": 181, "leaky-repo": 104}
    assert Counter(s["type"].split(":")[0] for s in SAMPLES if s["set"] == "upstream-negative") == {"whispers": 268}
    assert Counter(s["type"].split(":")[0] for s in SAMPLES if s["set"] == "benign") == {
        "whispers": 20, "leaky-repo": 33}
    assert DATA["upstream"] == ["Plazmaz/leaky-repo@2e951359cac53addbee56437da3ffb546e3dfe24",
                                "Skyscanner/whispers@5832bf74dcb127128ba653ed87601c927124b5aa"]
    assert all(s["source"].startswith(tuple(u + ":" for u in DATA["upstream"])) for s in SAMPLES)
    assert len({s["source"] for s in SAMPLES}) == len(SAMPLES)  # one source, one sample
    assert all(s["type"] == s["type"].split(":")[0] + ":" + s["format"] for s in SAMPLES)
    assert len({s["format"] for s in SAMPLES}) == 20
    for s in SAMPLES:
        if s["set"] == "upstream-positive":
            # every secret is in its text, and masking it there would leave none of it in the carrier
            assert s["secrets"] and all(scorable(s["text"], s["path"], x, _words(s["text"], x)) for x in s["secrets"]), (
                s["source"])
            assert "corpus15" not in s["secrets"]


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
    from support import (
        redaction_corpus,
        redaction_corpus2,
        redaction_corpus3,
        redaction_corpus4,
        redaction_corpus5,
        redaction_corpus6,
        redaction_corpus7,
        redaction_corpus8,
        redaction_corpus9,
        redaction_corpus10,
        redaction_corpus11,
        redaction_corpus12,
        redaction_corpus13,
        redaction_corpus14,
    )

    before = "\n\x00\n".join(s["text"] for c in (redaction_corpus, redaction_corpus2, redaction_corpus3,
                                                redaction_corpus4, redaction_corpus5, redaction_corpus6,
                                                redaction_corpus7, redaction_corpus8, redaction_corpus9,
                                                redaction_corpus10, redaction_corpus11, redaction_corpus12,
                                                redaction_corpus13, redaction_corpus14)
                             for s in c.load()["samples"])
    assert not [s["source"] for s in SAMPLES if s["text"] in before]
    assert not [s["source"] for s in SAMPLES for x in s.get("secrets", []) if len(x) >= 8 and x in before]


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
    numbers, a URL whose user name holds an `@`."""
    after = json.loads(corpus15.FIGURES.read_text())
    for carrier in corpus15.CARRIERS:
        got = corpus15.totals(after, carrier=carrier)
        recall = (233, 285)
        negatives = (246, 268) if carrier == "command" else (245, 268)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (recall, (51, 53), negatives)


def test_fifteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus15, POLICY)


def test_the_command_carrier_writes_the_file():
    sample = next(s for s in SAMPLES if s["format"] == "yaml" and s["set"] == "upstream-positive")
    command = corpus15.payload("command", sample["path"], sample["text"], "yaml")["tool_input"]["command"]
    assert command == f"cat > /home/dev/project/{sample['path']} <<'EOF'\n{sample['text']}\nEOF"
