"""The redaction rules on a twenty-sixth held-out corpus, format x carrier (tests/support/redaction_corpus26.py).

Built for #33 from a project no earlier corpus read, 1Password/shell-plugins, whose plugins hand
a CLI its credential and import one found on the machine: the texts of its plugins' importer and
provisioner test cases (the environment, each file, the arguments; a positive whose secrets are
the values of the credential fields the plugin marks secret; an importer case that expects no
credential, an upstream negative), with ordinary files of the repository
(tests/support/redaction_corpus26_extract.py, every sample naming its source and the format of
its text, none of its texts or secrets in the first twenty-five corpora). No round of #33 read
it: it was committed before it was scored, then scored once with the rules as they were at
7fc7853 (figures26-before.json). figures26.json holds the figures of the rules in this tree;
re-record with `python tests/support/redaction_corpus26.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus26 as corpus26

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus26.load()
SAMPLES = DATA["samples"]


def _plugin(sample: dict) -> str:
    """The plugin's folder under `plugins/` a sample's test file is in."""
    return sample["source"].split(":", 1)[1].split("/")[1]


def _text(sample: dict) -> str:
    """Which text of its test case a sample is: the environment, the arguments or a file."""
    last = sample["source"].split("#", 1)[1].rsplit("/", 1)[1]
    return last if last in ("environment", "arguments") else "file"


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 219
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 136, "upstream-negative": 4, "benign": 79}
    assert carrier_corpus.by_source(SAMPLES) == {"plugins": 219}
    assert Counter(s["format"] for s in SAMPLES if s["set"] == "upstream-positive") == {
        "env": 84, "json": 25, "yaml": 11, "properties": 4, "ini": 4, "toml": 3, "token": 3, "netrc": 1, "text": 1}
    assert Counter(_text(s) for s in SAMPLES if s["set"] == "upstream-positive") == {
        "environment": 82, "file": 53, "arguments": 1}
    # the plugins the positives come from (the folder of their test file)
    assert Counter(_plugin(s) for s in SAMPLES if s["set"] == "upstream-positive") == {
        "npm": 12, "github": 9, "pypi": 6, "aws": 4, "gitlab": 4, "cachix": 3, "pulumi": 3, "readme": 3,
        "treasuredata": 3, "akamai": 2, "argocd": 2, "cargo": 2, "circleci": 2, "civo": 2, "datadog": 2,
        "digitalocean": 2, "fastly": 2, "flyctl": 2, "heroku": 2, "huggingface": 2, "kaggle": 2, "lacework": 2,
        "laravelforge": 2, "laravelvapor": 2, "linode": 2, "ngrok": 2, "octopus": 2, "ohdear": 2, "okta": 2,
        "pipedream": 2, "scaleway": 2, "sentry": 2, "snyk": 2, "stripe": 2, "twilio": 2, "upstash": 2,
        "vercel": 2, "vultr": 2, "zapier": 2, "anthropic": 1, "atlas": 1, "axiom": 1, "copilot": 1, "cratedb": 1,
        "crowdin": 1, "cursor": 1, "descope": 1, "doppler": 1, "exercism": 1, "expo": 1, "gemini": 1,
        "influxdb": 1, "junie": 1, "kiro": 1, "localstack": 1, "mysql": 1, "openai": 1, "opencode": 1,
        "postgresql": 1, "redis": 1, "rediscloud": 1, "snowflake": 1, "sourcegraph": 1, "todoist": 1,
        "upcloud": 1, "vault": 1, "vertica": 1, "zendesk": 1}
    # the benign files' secret-word lines
    assert Counter(s["set"] for s in SAMPLES if "#line-" in s["source"]) == {"benign": 58}
    assert sum(len(s["secrets"]) for s in SAMPLES if s["set"] == "upstream-positive") == 153
    assert DATA["upstream"] == ["1Password/shell-plugins@0ef2fedededd7e72c6f6607b7553757b89e1a251"]
    carrier_corpus.check_samples(DATA, 26, formats=12)


def test_what_was_left_out_is_counted():
    earlier = ("first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth, eleventh, twelfth, "
               "thirteenth, fourteenth, fifteenth, sixteenth, seventeenth, eighteenth, nineteenth, twentieth, "
               "twenty-first, twenty-second, twenty-third, twenty-fourth or twenty-fifth corpus")
    assert DATA["left_out"] == {
        "a case built another way (a helper of the test, a value computed at run time)": 6,
        "a field that is not secret (a host, a region, a user name, an organization)": 243,
        "a positive with no secret left to judge": 10,
        f"a secret already in the {earlier}": 5,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 18,
        "a text of a positive case holding none of its secrets": 42,
        "an empty text": 1,
        f"text already in the {earlier}": 2,
        "the same text twice in one set": 70,
    }


def test_no_text_or_secret_of_the_first_twenty_five_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 26))


def test_the_command_carrier_writes_the_file():
    carrier_corpus.check_command_writes(corpus26, SAMPLES, "env", "upstream-positive")


def test_twenty_sixth_corpus_figures_before_any_rule_change_made_with_it_in_view():
    """The held-out figure: the rules as they were at 7fc7853 at the corpus's first scoring, per carrier."""
    before = json.loads(corpus26.BEFORE.read_text())
    assert corpus26.totals(before) == {"upstream-positive": (344, 544), "benign": (308, 316),
                                       "upstream-negative": (0, 16)}
    for carrier in corpus26.CARRIERS:
        got = corpus26.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (86, 136), (77, 79), (0, 4)), carrier
    # by format: a key in an environment holds most misses (most of its values end in `EXAMPLE`)
    assert corpus26.totals(before, fmt="env")["upstream-positive"] == (196, 336)
    assert corpus26.totals(before, fmt="json")["upstream-positive"] == (76, 100)
    assert corpus26.totals(before, fmt="yaml")["upstream-positive"] == (28, 44)
    assert corpus26.totals(before, fmt="properties")["upstream-positive"] == (12, 16)
    assert corpus26.totals(before, fmt="ini")["upstream-positive"] == (16, 16)
    assert corpus26.totals(before, fmt="toml")["upstream-positive"] == (4, 12)
    assert corpus26.totals(before, fmt="token")["upstream-positive"] == (4, 12)
    # the one benign file changed: the Go module file, whole and one of its lines
    assert corpus26.totals(before, fmt="text")["benign"] == (12, 20)
    assert len(before["failures"]) == len(set(before["failures"])) == (544 - 344) + (316 - 308) + (16 - 0)


def test_twenty_sixth_corpus_figures_with_the_sixteenth_round_still_held_out():
    """Scored again with every rule of the sixteenth round, the ones tuned on the twenty-fifth corpus
    included, none made with this corpus in view (figures26-held-out.json, at the merge of corpus 26):
    one positive more per carrier, an environment's key; benign text and negatives as before."""
    before = json.loads(corpus26.BEFORE.read_text())
    held_out = json.loads((corpus26.BEFORE.parent / "figures26-held-out.json").read_text())
    assert corpus26.totals(held_out) == {"upstream-positive": (348, 544), "benign": (308, 316),
                                         "upstream-negative": (0, 16)}
    for carrier in corpus26.CARRIERS:
        got = corpus26.totals(held_out, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (87, 136), (77, 79), (0, 4)), carrier
    assert corpus26.totals(held_out, fmt="env")["upstream-positive"] == (200, 336)
    assert set(held_out["failures"]) < set(before["failures"])


def test_twenty_sixth_corpus_figures_after_it_was_tuned_on():
    """Tuned on once it was scored twice: only a short stem before EXAMPLE (or EXAMPLEKEY at the end)
    is a published example, so a long random run marked EXAMPLE is masked; a semantic version after
    a module's name (`go-libsecret v0.0.0-2016…-a6f4afe4910c`) is no key. 36 positives more per
    carrier, and the Go module file is left intact."""
    after = json.loads(corpus26.FIGURES.read_text())
    assert corpus26.totals(after) == {"upstream-positive": (492, 544), "benign": (316, 316),
                                      "upstream-negative": (0, 16)}
    for carrier in corpus26.CARRIERS:
        got = corpus26.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"], got["upstream-negative"]) == (
            (123, 136), (79, 79), (0, 4)), carrier
    assert corpus26.totals(after, fmt="env")["upstream-positive"] == (300, 336)


def test_twenty_sixth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus26, POLICY)


def test_twenty_sixth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus26, POLICY)
