"""The redaction rules on a sixth held-out corpus, format x carrier (tests/support/redaction_corpus6.py).

Built for #33 from six projects no earlier corpus reads (SonarSource/sonar-text's rule
examples, SonarSource/sonar-iac's hard-coded secret check tests, gosec's G101 samples,
bandit's hard-coded password example, horusec's leak samples, talisman's pattern tests)
and ordinary files of those repositories (tests/support/redaction_corpus6_extract.py,
every sample naming its source and the format of its text, none of its texts or secrets
in the first five corpora). It was committed before it was scored, then scored once with
the rules as they were (figures6-before.json), while the rules were being changed for
#33 without it in view. figures6.json holds the figures of the rules in this tree; a
change in what they catch or leave alone shows here as a difference, sample by sample.
Re-record with `python tests/support/redaction_corpus6.py --write` after a deliberate
change (the "after" figure of docs/redaction.md).
"""

from __future__ import annotations

import json
from collections import Counter

from support import carrier_corpus
from support import redaction_corpus6 as corpus6
from support.redaction_corpus6_extract import format_of, leaked, scorable

from agentwatch.record import redact

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
DATA = corpus6.load()
SAMPLES = DATA["samples"]


def test_every_sample_names_its_source_its_format_and_its_secrets():
    assert len(SAMPLES) == 1468
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 544, "upstream-negative": 755,
                                                  "benign": 165, "not-secret": 4}
    assert carrier_corpus.by_source(SAMPLES) == {
        "sonar": 503, "sonar-iac": 656, "gosec": 74, "bandit": 40, "horusec": 93, "talisman": 102}
    assert carrier_corpus.by_source(SAMPLES, "upstream-positive") == {
        "sonar-iac": 235, "sonar": 160, "talisman": 81, "gosec": 31, "horusec": 22, "bandit": 15}
    assert DATA["upstream"] == ["PyCQA/bandit@920805426889", "SonarSource/sonar-iac@77ed2c294636",
                                "SonarSource/sonar-text@bb9c06ece15c", "ZupIT/horusec@873d4104a6aa",
                                "securego/gosec@45b083a0cb42", "thoughtworks/talisman@efcb1a3629f6"]
    assert all(s["reason"] for s in SAMPLES if s["set"] == "not-secret")
    carrier_corpus.check_samples(DATA, 6, formats=26, sets=("upstream-positive", "not-secret"))


def test_what_was_left_out_is_counted():
    assert DATA["left_out"] == {
        "a positive with no secret left to judge": 10,
        "a secret already in an earlier corpus, dropped from a sample of several": 2,
        "a secret already in the first, second, third, fourth or fifth corpus": 8,
        "a secret the scoring cannot judge (also a user name, a word of the text or of the carrier)": 14,
        "gosec negative only because a comment switches the rule off": 7,
        "horusec finding of a placeholder (`put your unique phrase here`)": 1,
        "sonar-iac issue on a name whose value is empty or a reference (no secret)": 7,
        "talisman input with no value (`AWS key :`)": 1,
        "text already in the first, second, third, fourth or fifth corpus": 5,
        "the same text twice in one set": 86,
    }


def test_no_text_or_secret_of_the_first_five_corpora_is_in_this_one():
    carrier_corpus.check_none_earlier(SAMPLES, range(1, 6))


def test_the_judge_reads_long_secrets_by_pieces_and_short_ones_as_words():
    key = "a3gd54hw6a53gds3ha3we5r43h51trg1"
    assert leaked(f"x={key[5:20]}", key)  # a 12-character piece left
    assert not leaked(f"x={key[:11]}", key)
    assert leaked("password: blerg", "blerg") and not leaked("blergh", "blerg")
    assert not leaked("[REDACTED:assignment:hmac-sha256:0123456789ab]", "assignment")  # masks set aside
    # a password that is also the user's name cannot be judged, nor a word of the carrier around it
    assert not scorable("mysql://airflow:airflow@db/airflow", "x.txt", "airflow")
    assert not scorable("password=project", "x.txt", "project")
    assert scorable("password=blerg", "x.txt", "blerg")
    assert format_of("config/app.yml", "") == "yaml" and format_of("Dockerfile", "") == "dockerfile"


def test_sixth_corpus_figures_before_the_round_of_rule_changes():
    """The held-out figure: the rules as they were at the corpus's first scoring, per carrier."""
    before = json.loads(corpus6.BEFORE.read_text())
    assert corpus6.totals(before) == {"upstream-positive": (1756, 2176), "benign": (588, 660),
                                      "upstream-negative": (2338, 3020), "not-secret": (16, 16)}
    for carrier in corpus6.CARRIERS:
        got = corpus6.totals(before, carrier=carrier)
        assert (got["upstream-positive"], got["benign"]) == ((439, 544), (147, 165)), carrier
        assert got["upstream-negative"] == ((586, 755) if carrier == "command" else (584, 755)), carrier
    assert [corpus6.totals(before, source=s)["upstream-positive"] for s in corpus6.SOURCES] == [
        (548, 640), (928, 940), (100, 124), (44, 60), (88, 88), (48, 324)]
    assert len(before["failures"]) == len(set(before["failures"])) == 420 + 72 + 682


def test_sixth_corpus_figures_after_the_first_round_of_rule_changes():
    """The "after" figure, scored once when #33's first round of rule changes landed (with this
    corpus held out; figures6-round1.json): recall and benign as before it, 35 more upstream
    negatives intact."""
    after = json.loads(corpus6.ROUND1.read_text())
    assert corpus6.totals(after) == {"upstream-positive": (1756, 2176), "benign": (588, 660),
                                     "upstream-negative": (2373, 3020), "not-secret": (16, 16)}
    for carrier in corpus6.CARRIERS:
        got = corpus6.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"]) == ((439, 544), (147, 165)), carrier
        assert got["upstream-negative"] == ((594, 755) if carrier == "command" else (593, 755)), carrier


def test_sixth_corpus_figures_after_the_round_tuned_on_it():
    """#33's second round (after the one this corpus first measured) studied its misses (it is an
    earlier corpus now, no longer held out) and fixed them by class (docs/redaction.md, "Benign by
    principle" and "The third round of #33"): figures6-round2.json."""
    after = json.loads((corpus6.HERE / "figures6-round2.json").read_text())
    assert corpus6.totals(after) == {"upstream-positive": (1824, 2176), "benign": (660, 660),
                                     "upstream-negative": (2357, 3020), "not-secret": (16, 16)}
    for carrier in corpus6.CARRIERS:
        got = corpus6.totals(after, carrier=carrier)
        assert (got["upstream-positive"], got["benign"]) == ((456, 544), (165, 165)), carrier
        assert got["upstream-negative"] == ((590, 755) if carrier == "command" else (589, 755)), carrier
    assert [corpus6.totals(after, source=s)["upstream-positive"] for s in corpus6.SOURCES] == [
        (592, 640), (928, 940), (108, 124), (60, 60), (88, 88), (48, 324)]
    assert [corpus6.totals(after, source=s)["benign"] for s in corpus6.SOURCES] == [
        (204, 204), (0, 0), (132, 132), (100, 100), (156, 156), (68, 68)]


def test_sixth_corpus_figures_after_the_changes_of_default():
    """The round that changed defaults (docs/redaction.md, "Changes of default"), tuned on corpora
    1-7 with the eighth held out: figures6.json. Sonar's DER keys and talisman's one-line `.txt`
    assignments are caught; benign text stays intact. The eleventh round (`pass`/`pwd` as a pair's name)
    masks Sonar's Kubernetes `- name: pwd` / `value: pwd1234`, which Sonar's own check passes: two more
    positives in the command carrier, 32 upstream negatives fewer. The twelfth (filler words beside a
    secret, `secrete`, names saying "not a secret") masks 15 more; the thirteenth (a secret's word
    numbered is no label) four more upstream negatives (Sonar passes `ENV MY_SECRET_TOKEN=realVerySecretValue123`).
    The fifteenth (a credential header named as a pair) masks Sonar's Kubernetes `- name: authorization`
    / `value: "<40 hex>"`: one more positive in each carrier."""
    after = json.loads(corpus6.FIGURES.read_text())
    assert corpus6.totals(after) == {"upstream-positive": (1877, 2176), "benign": (660, 660),
                                     "upstream-negative": (2334, 3020), "not-secret": (16, 16)}
    for carrier in corpus6.CARRIERS:
        got = corpus6.totals(after, carrier=carrier)
        recall = (467, 544) if carrier == "command" else (470, 544)
        assert (got["upstream-positive"], got["benign"]) == (recall, (165, 165)), carrier
    assert [corpus6.totals(after, source=s)["upstream-positive"] for s in corpus6.SOURCES] == [
        (612, 640), (932, 940), (108, 124), (60, 60), (88, 88), (77, 324)]


def test_sixth_corpus_figures_are_the_recorded_ones():
    carrier_corpus.check_recorded(corpus6, POLICY)


def test_sixth_corpus_fast_path_and_walk_agree_in_every_carrier():
    carrier_corpus.check_fast_path(corpus6, POLICY)


def test_a_shell_sample_is_the_command_line_itself():
    shell = next(s for s in SAMPLES if s["format"] == "shell" and s["set"] == "upstream-positive")
    assert corpus6.payload("command", shell["path"], shell["text"], "shell")["tool_input"]["command"] == shell["text"]
    carrier_corpus.check_command_writes(corpus6, SAMPLES, "yaml")
