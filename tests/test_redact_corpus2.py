"""The redaction rules on a held-out corpus: noseyparker's rule examples and trufflehog's detector tests.

The rules were written from gitleaks and detect-secrets; this corpus was built from two
other scanners (tests/support/redaction_corpus2_extract.py, every sample naming its
source) and first scored with the rules as they were (figures2-before.json). Figures are
recorded in tests/fixtures/redaction/figures2.json (and in docs/redaction.md); a change in
what the rules catch or leave alone shows in
tests/test_redact_heldout.py as a difference, sample by sample.
Re-record with `python tests/support/redaction_corpus2.py --write` after a deliberate change.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from support import redaction_corpus2 as corpus2
from support.redaction_corpus import leaked, stored_text

from agentwatch.record import redact
from agentwatch.record.redact import rules
from agentwatch.record.redact.corpus import ALNUM, HEX, fake

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
SAMPLES = corpus2.load()["samples"]


def test_every_sample_names_its_source_and_its_secret():
    assert len(SAMPLES) == 3175
    assert Counter(s["set"] for s in SAMPLES) == {"upstream-positive": 1877, "upstream-negative": 1261,
                                                  "not-secret": 37}
    assert Counter(s["type"].split(":")[0] for s in SAMPLES) == {"noseyparker": 555, "trufflehog": 2620}
    assert all(s["source"].startswith(("praetorian-inc/noseyparker@2e6e7f36ce36:",
                                       "trufflesecurity/trufflehog@3ab759fef4bb:")) for s in SAMPLES)
    positives = [s for s in SAMPLES if s["set"] == "upstream-positive"]
    assert all(s["secrets"] and all(secret in s["text"] for secret in s["secrets"]) for s in positives)
    assert all(s["reason"] for s in SAMPLES if s["set"] == "not-secret")


def test_recorded_figures_before_and_after_the_rules_learned_from_the_corpus():
    before = json.loads((corpus2.HERE / "figures2-before.json").read_text())
    after = json.loads(corpus2.FIGURES.read_text())
    assert corpus2.totals(before) == {"upstream-positive": (1312, 1877), "upstream-negative": (618, 1261),
                                      "not-secret": (30, 37)}
    # after the rounds of the earlier corpora and the format-aware layer of #33; its second round adds
    # noseyparker's `PASS = '...'` in a configuration text (`pass` naming a pair) and its Postmark
    # server token (a UUID after the service's name); its third round (tuned on the sixth corpus)
    # two more by a literal compared with a password and quoted weak words, one by a setter's
    # (name, value) arguments (1630 before it); the rounds that changed defaults mask one more
    # upstream negative, trufflehog's buttercms `?auth_token=` with a value upstream calls malformed, and
    # the seventh its browserstack `access_key` literal on a line naming the key
    # (the eighth round: three refresh tokens, RFC 6749's credential, under `refresh_token`; the ninth,
    # a value shaped like a strong password: two more, and six upstream negatives, trufflehog's
    # "invalid pattern" values that hold one such as `KEY=VmFYK7WG3CkgVmTl:c*X`)
    # (the twelfth: eight more, filler words beside a secret no longer hide it; the fifteenth, trufflehog's
    # meraki `apiKey |e9e0…` in a table of variables, as a positive and as the negative that moves its keyword,
    # and a postgres URL whose password holds a raw `@`; the sixteenth, two upstream negatives that are
    # Shippo tokens longer than the format, run on after their distinctive prefix)
    assert corpus2.totals(after) == {"upstream-positive": (1648, 1877), "upstream-negative": (459, 1261),
                                     "not-secret": (34, 37)}
    assert corpus2.totals(before, "noseyparker:")["upstream-positive"] == (292, 391)
    assert corpus2.totals(after, "noseyparker:")["upstream-positive"] == (348, 391)


KEY36 = fake("base36-key", "abcdefghijklmnopqrstuvwxyz" + "0123456789", 32)
PASSWORD = fake("heldout-password", ALNUM, 12)

# What the held-out corpus taught the rules: each form with the secret it must not leave.
CAUGHT = [
    (f"svc token = '{KEY36}' | '{KEY36}'", KEY36),  # a value masked once is masked where it recurs
    (f"[DEBUG] Using Key={KEY36}", KEY36),  # a long base-36 run in one case
    (f"[DEBUG] Using Key={KEY36.upper()}", KEY36.upper()),
    (f"psexec \\\\10.0.0.5 -u Administrator -p {PASSWORD} cmd", PASSWORD),
    (f"Connect-VIServer -Server vc.lab -User admin -Password {PASSWORD}", PASSWORD),
    (f"keytool -list -keystore ks.jks -storepass {PASSWORD}", PASSWORD),
    (f'new NetworkCredential("builder@example.com", "{PASSWORD}");', PASSWORD),
    (f'new DirectoryEntry("LDAP://10.0.0.1", "domain\\\\user", "{PASSWORD}")', PASSWORD),
    (f'<add key="SmtpPassword" value="{PASSWORD}"/>', PASSWORD),
    (f"The default password for the user 'deploy' is '{PASSWORD}'.", PASSWORD),
    (f":password        => '{PASSWORD}',", PASSWORD),
    ("root:$6$" + fake("salt", ALNUM, 16) + "$" + fake("sha512crypt", ALNUM, 86) + ":19000:0:99999:7:::",
     fake("sha512crypt", ALNUM, 86)),
    ("$2b$12$" + fake("bcrypt", ALNUM, 53), fake("bcrypt", ALNUM, 53)),
    ("license_key: " + fake("nral", HEX, 36) + "NRAL", fake("nral", HEX, 36)),
    (fake("azdo-a", ALNUM, 76) + "AZDO" + fake("azdo-b", ALNUM, 4), fake("azdo-a", ALNUM, 76)),
    ("https://outlook.office.com/webhook/" + fake("teams", HEX, 40) + "/IncomingWebhook/x", fake("teams", HEX, 40)),
    ("lsv2_pt_" + fake("ls1", HEX, 32) + "_" + fake("ls2", HEX, 10), fake("ls1", HEX, 32)),
    ("rootly_" + fake("rootly", HEX, 64), fake("rootly", HEX, 64)),
    ("sandbox_sk_pr_default_" + fake("photoroom", HEX, 40), fake("photoroom", HEX, 40)),
    ("MAILGUN_API || 'key-" + fake("mailgun", HEX, 32) + "'", fake("mailgun", HEX, 32)),
]


@pytest.mark.parametrize(("text", "secret"), CAUGHT)
def test_forms_the_held_out_corpus_showed_are_caught(text, secret):
    assert not leaked(stored_text(POLICY, text), secret)


@pytest.mark.parametrize("text", [
    'ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"',  # an alphabet written out, not a key
    "digest 3bdaacfbb85ee2febeb2b82f37a11d0935992abe3b6b861c66d4e1d668ac9367",  # hex stays
    'sb.append("MasterUserPassword: " + getMasterUserPassword() + ",");',  # strings glued around code
    'usernameLabel:"Username or email:",passwordLabel:"Password:",rememberMeLabel:"Remember me:"',
    'DbPasswordArn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"',  # a name
    "recipient age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj",  # a public key
    "the password is required",  # prose without a quoted value
    "PsExec -accepteula -s cmd",  # no -p
    "REACT_APP_AUTH_USER=postgres",  # a user name under an auth-named variable
])
def test_code_and_names_near_the_new_rules_stay_intact(text):
    assert stored_text(POLICY, text) == text


def test_a_masked_value_is_masked_again_only_where_it_recurs_whole():
    out = POLICY.redact_text(f"token = '{PASSWORD}' then {PASSWORD}, not x{PASSWORD}")
    assert out.count("[REDACTED:assignment:") == 2
    assert out.endswith(f", not x{PASSWORD}")  # inside a longer word: another value


def test_only_the_first_64_distinct_values_of_a_string_are_looked_for_again():
    values = [fake(f"repeat-{i}", ALNUM, 12) for i in range(70)]
    text = " ".join(f"password{i}='{v}'" for i, v in enumerate(values)) + "\n" + " ".join(values)
    out = POLICY.redact_text(text)
    assert out.count("[REDACTED:assignment:") == 70 + rules.REPEAT_MAX_VALUES
    assert out.split("\n")[1].split(" ")[rules.REPEAT_MAX_VALUES:] == values[rules.REPEAT_MAX_VALUES:]
