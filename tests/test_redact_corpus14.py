"""The redaction rules on a fourteenth held-out corpus, format x carrier (tests/support/redaction_corpus14.py).

Built for #33 from four projects no earlier corpus reads (the literals astral-sh/ruff's
flake8-bandit rules S105-S107 report in their fixtures and the lines they pass, biomejs/biome's
noSecrets rule tests, security-code-scan's hard-coded password analyzer tests, stackrox/kube-linter's
env-var-secret test manifest) and ordinary files of those repositories
(tests/support/redaction_corpus14_extract.py, every sample naming its source and the format of its
text, none of its texts or secrets in the first thirteen corpora). It was committed before it was
scored (bf94f19), then scored once with the rules as they were at 0c7c7c1 (figures14-before.json),
while the rules were being changed for #33 without it in view. figures14.json holds the figures of
the rules in this tree; a change in what they catch or leave alone shows here as a difference,
sample by sample. Re-record with `python tests/support/redaction_corpus14.py --write` after a
deliberate change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus14 as corpus14

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus14.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 314
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 84, "upstream-negative": 51, "benign": 179}
    assert carrier_corpus.by_source(SAMPLES) == {"ruff": 104, "biome": 66, "security-code-scan": 84, "kube-linter": 60}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {
        "ruff": 45, "biome": 24, "security-code-scan": 12, "kube-linter": 3}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {
        "ruff": 27, "biome": 20, "security-code-scan": 2, "kube-linter": 2}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {
        "ruff": 32, "biome": 22, "security-code-scan": 70, "kube-linter": 55}
    assert DATA["upstream"] == ["astral-sh/ruff@fca5c7cf2cd2f8338f18b9485f936b8e9f07bd0b",
                                "biomejs/biome@18883b7dafb8f9581534508fdd5b1e34632f2724",
                                "security-code-scan/security-code-scan@815046d24e49cec43469f4852d19562a916541eb",
                                "stackrox/kube-linter@35de568d49825fe0278d25d7fca5aa2467f9dd00"]
    # a short secret counts as a word: `password="posonly"` in `def default_posonly(...)` is labelled once
    carrier_corpus.check_samples(DATA, 14, formats=12)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth or "
               "thirteenth corpus")
    assert DATA["left_out"] == {
        "a positive with no secret left to judge": 3,
        "a secret already in an earlier corpus, dropped from a sample of several": 6,
        f"a secret already in the {earlier}": 4,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 10,
        "a security-code-scan literal that is a placeholder or empty": 4,
        "a security-code-scan positive with no string literal or several": 2,
        "a security-code-scan program filled from DataRows": 6,
        "a security-code-scan test upstream ignores": 3,
        f"text already in the {earlier}": 18,
        "the same text twice in one set": 145,
    }


def test_no_text_or_secret_of_the_first_thirteen_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 14))


def test_fourteenth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at the corpus's first scoring (0c7c7c1), per carrier."""
    before = json.loads(corpus14.BEFORE.read_text())
    assert corpus14.totals(before) == {"upstream-positive": (249, 336), "benign": (552, 716),
                                       "upstream-negative": (184, 204)}
    for carrier, recall in zip(corpus14.CARRIERS, (63, 62, 62, 62), strict=True):
        got = corpus14.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (recall, 84), (138, 179), (46, 51)), carrier
    assert [corpus14.totals(before, source=s)["upstream-positive"] for s in corpus14.SOURCES] == [
        (136, 180), (68, 96), (37, 48), (8, 12)]
    assert [corpus14.totals(before, source=s)["benign"] for s in corpus14.SOURCES] == [
        (124, 128), (88, 88), (120, 280), (220, 220)]
    assert [corpus14.totals(before, source=s)["upstream-negative"] for s in corpus14.SOURCES] == [
        (104, 108), (64, 80), (8, 8), (8, 8)]
    assert len(before["failures"]) == len(set(before["failures"])) == (336 - 249) + (716 - 552) + (204 - 184)


def test_fourteenth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus14, POLICY)


def test_fourteenth_corpus_figures_after_the_round_that_held_it_out():
    """The ninth round of #33 (a value shaped like a strong password, password names in other
    languages, a Secret's `data:` before its `kind:`), tuned on corpora 1-13 with this one unread,
    scored it once when it landed: every sample as before (figures14-heldout-after.json)."""
    held = json.loads((corpus14.HERE / "figures14-heldout-after.json").read_text())
    assert held == json.loads(corpus14.BEFORE.read_text())
    for carrier in corpus14.CARRIERS:
        got = corpus14.totals(held, carrier=carrier)
        recall = (63, 84) if carrier == "command" else (62, 84)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (recall, (138, 179), (46, 51))


def test_fourteenth_corpus_figures_after_the_round_tuned_on_it():
    """The tenth round read its misses (an earlier corpus by then; the fifteenth held out): `pass` and
    `pwd` under a private name or compared with a literal, .NET's public key tokens kept (one file of
    security-code-scan held 40 of the benign samples). 65/84 (66 in the command carrier) and 178/179
    per carrier (figures14.json). What still passes through: names that only contain a secret's word
    (`secrete`), values with no name beside them, a shared cache key named `shared-key`. The twelfth round
    (the seventeenth corpus held out): `secrete` (ruff's own word) and VB's `With {.Password = "…"}`
    are caught, a name that says "not a secret" (`nonSecret`, `NO_SECRETS`) or a check (`otpCheck`) is
    not one, and a filler word beside a secret no longer hides it (but AWS's documented example keys,
    ending in EXAMPLE, stay): 71/84 (72 in the command carrier), 178/179, 50/51 negatives."""
    after = json.loads(corpus14.FIGURES.read_text())
    for carrier in corpus14.CARRIERS:
        got = corpus14.totals(after, carrier=carrier)
        recall = (72, 84) if carrier == "command" else (71, 84)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (recall, (178, 179), (50, 51))


def test_fourteenth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus14, POLICY)


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus14, SAMPLES, "yaml", "upstream-positive")
