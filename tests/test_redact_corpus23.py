"""The redaction rules on a twenty-third held-out corpus, format x carrier (tests/support/redaction_corpus23.py).

Built for #33 from nickdeis/eslint-plugin-no-secrets's rule tests read again at a later commit
(its RuleTester cases: an `invalid` case's code a positive, a `valid` case's code an upstream
negative; every positive there is in the seventh corpus already, so none is kept) and from a
project no earlier corpus read, praetorian-inc/titus (each rule's examples positives, its
negative examples upstream negatives), with ordinary files of both repositories
(tests/support/redaction_corpus23_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty-two corpora). No round of #33 read
it: it was committed before it was scored, then scored once with the rules as they were at
44e4d6b (figures23-before.json). figures23.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus23.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus23 as corpus23

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus23.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 654
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 424, "upstream-negative": 192, "benign": 38}
    assert carrier_corpus.by_source(SAMPLES) == {"no-secrets": 16, "titus": 638}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {"titus": 424}
    assert carrier_corpus.by_source(SAMPLES, "upstream-negative") == {"no-secrets": 6, "titus": 186}
    assert carrier_corpus.by_source(SAMPLES, "benign") == {"no-secrets": 10, "titus": 28}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "env": 113, "token": 90, "properties": 65, "yaml": 61, "text": 28, "shell": 22, "json": 18, "python": 14,
        "javascript": 8, "java-like": 2, "xml": 2, "dockerfile": 1}
    # the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"benign": 19}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 424
    assert DATA["upstream"] == ["nickdeis/eslint-plugin-no-secrets@fe95b10ac26be814327bb58ab97935c392adc4a1",
                                "praetorian-inc/titus@369d8dc4359a2d70629e0fe7732d3244a3315efc"]
    carrier_corpus.check_samples(DATA, 23, formats=16)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, "
               "twenty-first or twenty-second corpus")
    assert DATA["left_out"] == {
        "a positive with no secret left to judge": 9,
        f"a secret already in the {earlier}": 70,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 10,
        "a valid case only because an option switches the rule off": 8,
        "an empty case": 2,
        "an example its own pattern does not match under Python's re": 7,
        "an example of a rule the second corpus judged no secret": 39,
        "an example of a rule with several groups and none named the secret": 40,
        "an invalid case whose reported literal is a detector's own pattern source": 2,
        "an invalid no-pattern-match case whose errors name no one literal": 1,
        f"text already in the {earlier}": 661,
        "the same text twice in one set": 43,
    }


def test_no_text_or_secret_of_the_first_twenty_two_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 23))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus23, SAMPLES, "json", "upstream-positive")


def test_twenty_third_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 44e4d6b at the corpus's first scoring, per carrier."""
    before = json.loads(corpus23.BEFORE.read_text())
    assert corpus23.totals(before) == {"upstream-positive": (1299, 1696), "benign": (152, 152),
                                       "upstream-negative": (609, 768)}
    assert corpus23.totals(before, carrier="command") == {
        "upstream-positive": (324, 424), "benign": (38, 38), "upstream-negative": (153, 192)}
    for carrier in ("output", "file-read", "mcp-input"):
        got = corpus23.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (325, 424), (38, 38), (152, 192)), carrier
    # by format: tokens alone and properties lines hold the most misses, environment lines the
    # most changed negatives
    assert corpus23.totals(before, fmt="token")["upstream-positive"] == (212, 360)
    assert corpus23.totals(before, fmt="properties")["upstream-positive"] == (159, 260)
    assert corpus23.totals(before, fmt="env")["upstream-positive"] == (384, 452)
    assert corpus23.totals(before, fmt="yaml")["upstream-positive"] == (224, 244)
    assert corpus23.totals(before, fmt="env")["upstream-negative"] == (256, 340)
    assert corpus23.totals(before, fmt="token")["upstream-negative"] == (108, 132)
    assert corpus23.totals(before, fmt="properties")["upstream-negative"] == (97, 112)
    assert len(before["failures"]) == len(set(before["failures"])) == (1696 - 1299) + (152 - 152) + (768 - 609)


def test_twenty_third_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus23, POLICY)


def test_twenty_third_corpus_figures_after_it_was_tuned_on():
    """Tuned on once it was scored: Riot `RGAPI-`, Buildkite `bkua_`, HubSpot `pat-<region>-` and
    ElevenLabs `sk_` tokens, Mattermost webhook URLs, and a password with a raw `@` read to the last
    `@` before the host catch 6 positives more in every carrier; a webhook id
    under `/hooks/` on a host upstream does not take for Mattermost's is masked (one negative). A key's
    qualifier written as a word before it (`tracking api key: …`, the sixteenth round) catches one more."""
    after = json.loads(corpus23.FIGURES.read_text())
    assert corpus23.totals(after) == {"upstream-positive": (1327, 1696), "benign": (152, 152),
                                      "upstream-negative": (605, 768)}
    for carrier in corpus23.CARRIERS:
        got = corpus23.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            ((331, 424), (38, 38), (152, 192)) if carrier == "command" else ((332, 424), (38, 38), (151, 192))), carrier
    assert corpus23.totals(after, fmt="token")["upstream-positive"] == (232, 360)


def test_twenty_third_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus23, POLICY)
