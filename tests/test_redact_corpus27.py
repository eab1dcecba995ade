"""The redaction rules on a twenty-seventh held-out corpus, format x carrier (tests/support/redaction_corpus27.py).

Built for #33 from a project no earlier corpus read, keyshade-xyz/keyshade, a secret manager
whose secret-scan package tells a secret from a plain variable: the test cases of its rules (a
positive whose secret is what the rule's own patterns find in an input the case expects to be a
secret; an input it expects not to be, an upstream negative), with ordinary files of the
repository (tests/support/redaction_corpus27_extract.py, every sample naming its source and the
format of its text, none of its texts or secrets in the first twenty-six corpora). No round of
#33 read it: it was committed before it was scored, then scored once with the rules as they were
at f9df7be (figures27-before.json). figures27.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus27.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus27 as corpus27

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus27.load()
SAMPLES = DATA["samples"]


def _rule(sample: dict) -> str:
    """The rule file (under `packages/secret-scan/src/rules/`, without `.ts`) a sample's case is in."""
    return sample["source"].split(":", 1)[1].split("#", 1)[0].rsplit("/", 1)[1].removesuffix(".ts")


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 360
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 186, "upstream-negative": 89, "benign": 85}
    assert carrier_corpus.by_source(SAMPLES) == {"keyshade": 360}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "token": 151, "properties": 22, "env": 11, "text": 1, "javascript": 1}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-negative") == {
        "token": 62, "properties": 22, "text": 3, "javascript": 2}
    # the rules the positives come from
    assert Counter(_rule(s) for s in SAMPLES if s["set"] == "upstream-positive") == {
        "atlassian": 10, "authress": 10, "bitbucket": 10, "grafana": 9, "shopify": 8, "cloudflare": 6,
        "confluent": 6, "planetscale": 6, "aws": 5, "openAI": 5, "alibaba": 4, "harness": 4, "huggingface": 4,
        "twilio": 4, "algolia": 3, "beamer": 3, "bittrex": 3, "clojars": 3, "codecov": 3, "coinbase": 3,
        "contentful": 3, "databricks": 3, "datadog": 3, "definednetworking": 3, "digitalocean": 3, "doppler": 3,
        "dynatrace": 3, "facebook": 3, "flutterwave": 3, "frameio": 3, "gitlab": 3, "heroku": 3, "hubspot": 3,
        "adobe": 2, "airtable": 2, "asana": 2, "dropbox": 2, "duffel": 2, "hashicorp": 2, "infracost": 2,
        "intra42": 2, "linear": 2, "postman": 2, "prefect": 2, "pulumi": 2, "readme": 2, "rubygems": 2,
        "scalingo": 2, "sendinblue": 2, "sidekiq": 2, "square_OAuthts": 2, "adafruit": 1, "age": 1}
    # the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"benign": 51}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 186
    assert DATA["upstream"] == ["keyshade-xyz/keyshade@c518dd963fdd037af60c45140043ca2c4d826872"]
    carrier_corpus.check_samples(DATA, 27, formats=10)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, "
               "twenty-first, twenty-second, twenty-third, twenty-fourth, twenty-fifth or twenty-sixth corpus")
    assert DATA["left_out"] == {
        "a case built another way (a substitution, a name)": 2,
        "a case of the public-IP rule (an address is no secret)": 16,
        "a positive its rule's patterns find nothing in under Python's re": 4,
        "a positive with no secret left to judge": 12,
        f"a secret already in the {earlier}": 9,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 12,
        "an empty text": 1,
        f"text already in the {earlier}": 174,
        "the same text twice in one set": 36,
    }


def test_no_text_or_secret_of_the_first_twenty_six_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 27))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus27, SAMPLES, "token", "upstream-positive")


def test_twenty_seventh_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at f9df7be at the corpus's first scoring, per carrier."""
    before = json.loads(corpus27.BEFORE.read_text())
    assert corpus27.totals(before) == {"upstream-positive": (636, 744), "benign": (316, 340),
                                       "upstream-negative": (320, 356)}
    for carrier in corpus27.CARRIERS:
        got = corpus27.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (159, 186), (79, 85), (80, 89)), carrier
    # by format: a bare token holds most misses
    assert corpus27.totals(before, fmt="token")["upstream-positive"] == (536, 604)
    assert corpus27.totals(before, fmt="properties")["upstream-positive"] == (68, 88)
    assert corpus27.totals(before, fmt="env")["upstream-positive"] == (24, 44)
    assert corpus27.totals(before, fmt="text")["upstream-positive"] == (4, 4)
    assert corpus27.totals(before, fmt="javascript")["upstream-positive"] == (4, 4)
    # the benign files changed: the two Docker Compose files, whole and two lines of each
    assert corpus27.totals(before, fmt="yaml")["benign"] == (224, 248)
    assert corpus27.totals(before, fmt="token")["upstream-negative"] == (212, 248)
    assert len(before["failures"]) == len(set(before["failures"])) == (744 - 636) + (340 - 316) + (356 - 320)


def test_twenty_seventh_corpus_figures_after_it_was_tuned_on():
    """Held out through the whole sixteenth round (the before figures are at f9df7be, every rule of
    the round in), then tuned on: Defined Networking's `dnkey-` tokens and Dropbox's short-lived
    `sl.` tokens stand for themselves without the service's name beside them. Four positives more
    per carrier; benign text and the upstream negatives as before."""
    after = json.loads(corpus27.FIGURES.read_text())
    assert corpus27.totals(after) == {"upstream-positive": (652, 744), "benign": (316, 340),
                                      "upstream-negative": (320, 356)}
    for carrier in corpus27.CARRIERS:
        got = corpus27.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (163, 186), (79, 85), (80, 89)), carrier


def test_twenty_seventh_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus27, POLICY)


def test_twenty_seventh_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus27, POLICY)
