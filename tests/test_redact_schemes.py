"""Credentials known by their scheme or their issuer's format, wherever they stand in text.

- The Basic scheme (RFC 7617, section 2): credentials are the base64 (RFC 4648, padded) of
  `user-id ":" password`. The RFC's own example is `Aladdin` / `open sesame`, sent as
  `Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==`. Only a token that decodes so is masked after a bare
  "basic": the word opens prose too.
- An AWS secret access key (AWS IAM docs, "Manage access keys"): 40 characters of
  [A-Za-z0-9+/]; quoted within 20 characters after "aws", as detect-secrets' AWSKeyDetector
  looks for it. The docs' own example secret ends in `EXAMPLEKEY` and stays.
- An Amazon MWS auth token (Amazon MWS Developer Guide, MWSAuthToken): `amzn.mws.` and a UUID.
"""

from __future__ import annotations

import base64

import pytest

from agentwatch.record import redact
from agentwatch.record.redact import rules
from agentwatch.store.chain import canonical_json

POLICY = redact.Policy(redact.REDACTED, bytes(range(32)))
RFC7617 = "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="  # RFC 7617 section 2: Aladdin / open sesame
AWS_SECRET = "k3Vq9XzP2mR7wT4yB8nL1cF6hJ0sD5gA+e/uYi2o"  # 40 of [A-Za-z0-9+/], both cases and digits
MWS = "amzn.mws.4ea38b7b-f563-7709-4bae-87aea15c4a92"


def stored(text: str) -> str:
    doc = {"schema": 1, "raw": {"tool_name": "Bash", "tool_input": {"command": "cat notes.txt"},
                                "tool_response": {"stdout": text, "stderr": ""}}}
    fast = POLICY.encode(doc)
    assert fast == canonical_json(POLICY.apply(doc))  # the fast path and the walk agree
    return POLICY.apply(doc)["raw"]["tool_response"]["stdout"]


def test_the_rfc_example_decodes_as_basic_credentials():
    assert base64.b64decode(RFC7617) == b"Aladdin:open sesame"
    assert rules.basic_credentials(RFC7617)


@pytest.mark.parametrize("text", [
    f"Authorization: Basic {RFC7617}",
    f"const header = 'Basic {RFC7617}';",
    f"2026-12-04 sent basic {RFC7617} to the proxy",
    f"proxy said: BASIC {RFC7617}",
])
def test_basic_credentials_are_masked_wherever_they_stand(text):
    out = stored(text)
    assert RFC7617 not in out
    assert out.count("[REDACTED:authorization:") == 1


@pytest.mark.parametrize("token", [
    "dXNlcg==",          # `user`: no colon, no credentials
    "dXNlcjo=",          # `user:`: no password to hide
    "OnBhc3M=",          # `:pass`: no user id
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ",  # unpadded: not what a client sends
    "AAECAwQF",          # control bytes
])
def test_a_token_that_is_not_basic_credentials_is_not_taken_for_them(token):
    assert not rules.basic_credentials(token)


@pytest.mark.parametrize("text", [
    "This covers basic usage, basic auth and a Basic test.",
    "Use basic mode; see basic/README.md and the basic xy=z case.",
    "basic dXNlcjo= means a user with no password",
])
def test_prose_after_basic_keeps_its_bytes(text):
    assert stored(text) == text


@pytest.mark.parametrize("text", [
    f'aws_secret = "{AWS_SECRET}"',
    f"AWS('{AWS_SECRET}')",
    f'aws_creds = ("AKIA", "{AWS_SECRET}")',
])
def test_a_quoted_aws_secret_after_aws_is_masked(text):
    out = stored(text)
    assert AWS_SECRET not in out
    assert out.count("[REDACTED:aws_secret_access_key:") == 1


@pytest.mark.parametrize("text", [
    'aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',  # AWS IAM docs' example
    'aws-sdk at commit "2f1c0a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39"',  # hex, one case: a digest
    'see the aws docs, then "abcdefghijklmnopqrstuvwxyzabcdefghijklmn"',  # no digit, one case
])
def test_what_is_not_an_aws_secret_after_aws_keeps_its_bytes(text):
    assert stored(text) == text


def test_an_amazon_mws_token_is_masked_and_the_docs_example_kept():
    assert stored(f"MWSAuthToken={MWS}") == f"MWSAuthToken={stored(MWS)}"
    assert stored(MWS).startswith("[REDACTED:amazon_mws_token:") and stored(MWS).endswith("]")
    example = "amzn.mws.4ea38b7b-f563-7709-4bae-87aeaEXAMPLE"
    assert stored(f"e.g. {example}") == f"e.g. {example}"


# -- tuned on the twenty-first corpus once it was scored -----------------------------------------------

SUN_MD5 = "$md5,rounds=5000$GUBv0xjJ$$mSwgIswdjlTY0YxV7HBVm0"  # passlib docs, sun_md5_crypt's example hash
SUN_MD5_PLAIN = "$md5$3UqYqndY$$6P.aaWOoucxxq.l00SS9k0"  # the same format without rounds


@pytest.mark.parametrize("hashed", [SUN_MD5, SUN_MD5_PLAIN])
def test_a_sun_md5_crypt_hash_is_masked(hashed):
    assert stored(f"root:{hashed}:19000::::::") == f"root:{stored(hashed)}:19000::::::"
    assert stored(hashed).startswith("[REDACTED:password_hash:")


def test_a_tines_webhook_keeps_its_path_and_loses_its_secret():
    path, secret = "0f" * 16, "4a" * 16
    out = stored(f"curl -X POST https://acme-1.tines.com/webhook/{path}/{secret}")
    assert secret not in out and path in out
    assert out.count("[REDACTED:webhook_url:") == 1


@pytest.mark.parametrize("text", [
    # vault's CLI (Vault docs, AppRole auth method, "Via the CLI")
    "vault write auth/approle/login role_id=db02de05-fa39-4855-059b-67221c5c2f63 secret_id={s}",
    # a lookup's keyword argument under an AppRole path
    "x: \"{{{{ lookup('vault_read', 'auth/approle/role/r/role-id', secret_id='{s}') }}}}\"",
])
def test_approles_secret_id_is_masked(text):
    secret = "6a174c20-f6de-a53c-74d2-6018fcceff64"
    out = stored(text.format(s=secret))
    assert secret not in out
    assert "db02de05" in out or "role-id" in out  # the role id is an identifier and stays


def test_a_secret_id_without_approle_in_view_is_an_identifier():
    text = 'az ad app credential list --id 1234 # "secret_id": "6a174c20-f6de-a53c-74d2-6018fcceff64"'
    assert stored(text) == text


def test_wrapped_base64_of_a_pem_key_is_masked_whole():
    pem = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" * 3
           + "-----END OPENSSH PRIVATE KEY-----\n").encode()
    b64 = base64.encodebytes(pem).decode()  # lines of 76, as RFC 2045 writes them
    assert b64.count("\n") >= 3
    out = stored(f"key.b64:\n{b64}done\n")
    assert out.startswith("key.b64:\n[REDACTED:private_key:") and out.endswith("]\ndone\n")
    assert out.count("\n") == 3


@pytest.mark.parametrize("text", [
    'secret_key": "1b3d576ba5a108c3b7374142bfd02992",',  # `cut -c2-` of a JSON member's line
    '  client_secret": "Zm9vYmFyYmF6cXV4"',
])
def test_a_json_member_whose_line_lost_its_opening_quote_is_read_as_a_member(text):
    out = stored(text)
    assert out.count("[REDACTED:assignment:") == 1
    assert out.split("[REDACTED:")[0] == text.split('": "')[0] + '": "'


def test_a_quoted_name_inside_a_sentence_is_no_cut_member():
    text = '{"Enter your password": "Geben Sie Ihr Kennwort ein"}'
    assert stored(text) == text


@pytest.mark.parametrize(("text", "masked"), [
    ("<password>$A3ae68d9f8ccfc898ee2555a5f8f228b9</password>", True),  # a value that starts with `$`
    ("password: $DB_PASSWORD", False),      # references keep their bytes
    ("password: ${awsSecretKey2}", False),
    ("password=$PASSWORD_2024_01", False),
])
def test_a_dollar_before_a_key_shaped_run_is_a_value_not_a_reference(text, masked):
    assert (stored(text) != text) is masked


# -- tuned on the twenty-second corpus once it was scored ----------------------------------------------

GH = "gh" + "p_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"  # GitHub's token format: ghp_ and 36 of [A-Za-z0-9]


@pytest.mark.parametrize("text", [
    f"\x1b[1;32m{GH}\x1b[0m done",          # a colour around the token (ECMA-48 SGR)
    f">>>\x1b[93m{GH}\x1b[0m<<<",
    f"token:\x1b[2K\x1b[1G{GH}",            # erase-line and cursor moves, as progress bars write
])
def test_a_token_a_terminal_coloured_is_masked_and_the_colours_kept(text):
    out = stored(text)
    assert GH not in out
    assert out.count("[REDACTED:github_token:") == 1
    assert out.count("\x1b[") == text.count("\x1b[")


def test_coloured_text_without_a_secret_keeps_its_bytes():
    text = "\x1b[1mPASS\x1b[0m tests/test_a.py \x1b[32m12 passed\x1b[0m in 0.4s"
    assert stored(text) == text


def test_libcurl_credential_options_mask_their_parameter_and_leave_the_others():
    # curl.se/libcurl/c/CURLOPT_USERPWD.html: "user:password"; CURLOPT_PASSWORD takes the password alone
    text = ('curl_easy_setopt(curl, CURLOPT_URL, "https://example.com/");\n'
            'curl_easy_setopt(curl, CURLOPT_USERPWD, "ann:s3cr3t-Plum");\n'
            'curl_easy_setopt(curl, CURLOPT_PROXYPASSWORD, "Proxy-Plum-9");\n')
    out = stored(text)
    assert "s3cr3t-Plum" not in out and "Proxy-Plum-9" not in out
    assert 'CURLOPT_URL, "https://example.com/"' in out
    assert out.count("[REDACTED:") == 2


def test_mysql_identified_with_a_plugin_as_a_hash_masks_the_hash():
    # MySQL docs, CREATE USER: IDENTIFIED WITH auth_plugin AS 'auth_string' (the string as the plugin stores it)
    hashed = "*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4"
    for text in (f"CREATE USER 'jeffrey'@'localhost' IDENTIFIED WITH mysql_native_password AS '{hashed}';",
                 f"ALTER USER 'u'@'%' IDENTIFIED WITH 'mysql_native_password' AS '{hashed}' REQUIRE NONE"):
        out = stored(text)
        assert hashed not in out and out.count("[REDACTED:") == 1


@pytest.mark.parametrize(("text", "secret", "kind"), [
    ("X3_PSWD=d37Yt1Jnv0-z", "d37Yt1Jnv0-z", "assignment"),   # pswd: an abbreviation of password
    ("key: PMAT-9GP54SGZ7TS928P0BW1K3AN0WX", "PMAT-9GP54SGZ7TS928P0BW1K3AN0WX", "postman_token"),
    ("found cosmo_69b9f425705c10e576aa6ade81d91e1a", "cosmo_69b9f425705c10e576aa6ade81d91e1a", "wundergraph_key"),
    # X's developer docs: an app-only bearer token, 22 A and then [A-Za-z0-9%]
    ("sent AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBC"
     "hTYbJcE3F", "AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid", "twitter_token"),
])
def test_formats_and_names_learned_from_the_twenty_second_corpus(text, secret, kind):
    out = stored(text)
    assert secret not in out
    assert out.count("[REDACTED:") == 1
    if kind:
        assert f"[REDACTED:{kind}:" in out


# -- tuned on the twenty-third corpus once it was scored -----------------------------------------------

@pytest.mark.parametrize(("url", "password", "rest"), [
    ("mysql://app:m42p!o@2wd@db.internal:3306/shop", "m42p!o@2wd", "@db.internal:3306/shop"),  # the last `@` ends it
    ("https://user:pa@ss@word@git.example.com/r.git", "pa@ss@word", "@git.example.com/r.git"),
    ("postgres://u:p4ss@db.internal/app?x=a@b", "p4ss", "@db.internal/app?x=a@b"),  # an `@` after the host is not
])
def test_a_url_password_runs_to_the_last_at_before_the_host(url, password, rest):
    out = stored(f"DATABASE_URL={url}")
    assert password not in out
    assert out.endswith("]" + rest) and out.count("[REDACTED:") == 1


@pytest.mark.parametrize(("token", "kind"), [
    ("RGAPI-4db3f6a1-2941-5a81-9c23-4bf3a83c14f3", "riot_api_key"),            # Riot: RGAPI- and a UUID
    ("bkua_" + "3c7019c2e4b6e76fe2e8bdde7c154e3c1a211743", "buildkite_token"),  # Buildkite: bkua_ and 40 hex
    ("pat-na1-" + "3b124f92-f4cb-4d1d-8d1c-7fc3f3512dba", "hubspot_token"),     # HubSpot: pat-<region>-<uuid>
    ("sk_" + "2a30e5a0d39d5f2c5f6a9d2f95cd016049a6323985479bfd", "model_provider_key"),  # ElevenLabs: sk_ and 48 hex
])
def test_token_formats_learned_from_the_twenty_third_corpus(token, kind):
    assert stored(f"got {token} back") == f"got {stored(token)} back"
    assert stored(token).startswith(f"[REDACTED:{kind}:")


def test_a_mattermost_webhook_loses_its_id_and_other_hooks_paths_stay():
    hook = "tj4xmdnqpfbryx1gwkhge1ca9h"  # Mattermost ids: 26 of [a-z0-9]
    out = stored(f"curl -X POST https://chat.example.io/hooks/{hook} -d @msg.json")
    assert hook not in out and out.count("[REDACTED:webhook_url:") == 1
    text = "see https://github.com/org/repo/settings/hooks/123456 and /hooks/pre-commit"
    assert stored(text) == text


# -- tuned on the twenty-fourth corpus once it was scored ----------------------------------------------
# RFC 6750 section 2.1: credentials = "Bearer" 1*SP b64token; RFC 7235 section 2.1: token68 =
# 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". npm's tokens (npm docs, "About access
# tokens"): `npm_` and 36 letters and digits; npm's own log masker (npm/redact) takes `npm_`/`npms_`
# and 36 to 48.

NPM = "np" + "m_" + "k3Vq9XzP2mR7wT4yB8nL1cF6hJ0sD5gAeuYi"  # npm_ and 36 of [A-Za-z0-9]


@pytest.mark.parametrize(("text", "secret"), [
    ("Bearer t0k3n-9fz", "t0k3n-9fz"),              # 9 token68 characters with a digit and a letter
    ("log: sent bearer a1b2c3d4e5 upstream", "a1b2c3d4e5"),
    ("Basic u5er-pa55", "u5er-pa55"),               # alone on its line: a header value
    ("headers = {'Proxy': 'Basic s3cr3t.v4lue'}", "s3cr3t.v4lue"),  # after a quote
    ("proxy: Basic  x9_Yq2-Lm", "x9_Yq2-Lm"),       # after `:`
])
def test_a_scheme_and_its_token_of_eight_or_more_are_masked(text, secret):
    out = stored(text)
    assert secret not in out
    assert out.count("[REDACTED:authorization:") == 1


@pytest.mark.parametrize("text", [
    "Bearer tokens are sent in the Authorization header.",  # a word after the scheme
    "Bearer 3600 seconds",                                    # too short to be a token
    "use Basic x86_64-linux here",                           # "Basic" in prose: no header value stands there
    "Bearer ${API_TOKEN}",                                    # a reference
    "Bearer 1234567890",                                      # no letter: a number, not a token
])
def test_what_follows_a_scheme_and_is_no_token_keeps_its_bytes(text):
    assert stored(text) == text


@pytest.mark.parametrize("token", [NPM, NPM + "AbC123", "np" + "ms_" + "k3Vq9XzP2mR7wT4yB8nL1cF6hJ0sD5gAeuYiQ2w3"])
def test_npm_tokens_of_36_to_48_are_masked_wherever_they_stand(token):
    out = stored(f"//registry.npmjs.org/:_authToken={token}\nBasic {token}")
    assert token not in out
    assert out.count("[REDACTED:npm_token:") == 2


@pytest.mark.parametrize(("url", "password"), [
    ("https://ann:pass[word]@example.com/?a=1", "pass[word]"),   # WHATWG: `[` `]` are encoded into the userinfo
    ("http://ann:[s3cret]@localhost:3000", "[s3cret]"),
])
def test_a_password_holding_brackets_after_a_scheme_is_masked(url, password):
    out = stored(url)
    assert password not in out
    assert out.count("[REDACTED:url_password:") == 1 and out.startswith(url.split(password)[0])


def test_brackets_around_a_schemeless_pair_still_end_the_password():
    out = stored("see [ann:pw@host] for more")
    assert out.startswith("see [ann:[REDACTED:url_password:") and out.endswith("]@host] for more")


# -- a key's qualifier written as a word before it --------------------------------------------------
# A label a person reads spells the name as words (`API key:`, `Secret Key =`); the qualifier says
# what kind of key it is, as it does joined to it (`api_key`, `secretKey`).

KEY_HEX = "f3b0c2b92eca01472efe"  # 20 hex: taken after a qualified key, not after a lone one


@pytest.mark.parametrize("text", [
    f"API key: {KEY_HEX}",
    f"tracking api key: {KEY_HEX}",
    f"Secret Key = {KEY_HEX}",
    "acme.io api key Zq7XbR2mK9pLw4Tn",   # a label and a value with blanks between, no operator
])
def test_a_key_qualified_by_the_word_before_it_masks_a_key_shaped_value(text):
    out = stored(text)
    assert KEY_HEX not in out and "Zq7XbR2mK9pLw4Tn" not in out
    assert out.count("[REDACTED:assignment:") == 1


@pytest.mark.parametrize("text", [
    f"the key: {KEY_HEX}",              # no qualifier: a lone key, and hex after it is a digest as often
    f"Public key: {KEY_HEX}",           # public is no qualifier of a secret key
    "API key: see the settings page",   # words, not a key
    f'"api" "key": "{KEY_HEX}"',        # two quoted words: a list, no label
    f"signing key {KEY_HEX}",           # no operator: hex after words is a fingerprint as often
])
def test_a_lone_key_or_a_public_one_keeps_its_bytes(text):
    assert stored(text) == text


# -- tuned on the twenty-fifth corpus once it was scored ---------------------------------------------
# A distinctive prefix starts a token no identifier or word starts; what is glued to the token's
# body is part of the run, and copies glued together are one run (a log line that lost its
# separators). Formats below from their issuers' descriptions as osv-scalibr's detectors state them.

GHP = "gh" + "p_" + "Zq7XbR2mK9pLw4Tn8VcY3sHd6FjA1uEiOoGx"  # ghp_ and 36 of [A-Za-z0-9]


@pytest.mark.parametrize("text", [
    GHP + GHP + GHP,                 # three copies glued together
    GHP + "EXTRA",                   # a longer run than the format's
    GHP + "_old-copy",              # `_` and `-` glued on
])
def test_a_token_after_a_distinctive_prefix_runs_on_over_what_is_glued_to_it(text):
    out = stored(f"log: {text} end")
    assert out.startswith("log: [REDACTED:github_token:") and out.endswith("] end")
    assert out.count("[REDACTED:") == 1


@pytest.mark.parametrize("text", [
    "https://team.notion.site/API-BD80F56CDC1441E6BF6011AB6D852875",  # `API-` opens a page slug: no run-on
    "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",         # `hf_` is no distinctive prefix
])
def test_a_word_prefix_or_a_short_one_does_not_run_on(text):
    assert stored(text) == text


def test_an_octopus_key_keeps_its_length_and_its_glued_copies_mask_as_one():
    key = "API-" + "Q7XBR2MK9PLW4TN8VCY3SHD6FJ"  # API- and 26 of [A-Z0-9]
    out = stored(f"k={key}{key} end")
    assert key not in out and out.count("[REDACTED:octopus_key:") == 1


def test_a_token_followed_by_a_separator_keeps_what_follows():
    out = stored(f"TOKEN={GHP}, next=1")
    assert out.endswith("], next=1") and GHP not in out


@pytest.mark.parametrize(("token", "kind"), [
    ("SG." + "a" * 22 + "." + "b" * 43, "sendgrid_key"),                   # SendGrid: SG., 22, a dot, 43
    ("A3-" + "-".join(("XXXXXX", "YYYYYY", "ZZZZZ", "AAAAA", "BBBBB", "CCCCC")), "onepassword_key"),
    ("1PRK-" + "-".join(["AB12"] * 13), "onepassword_key"),                 # 1Password recovery code
    ("sk-pyx-" + "t3" * 32, "pyx_key"),                                      # pyx: sk-pyx- and 64
    ("sbp_" + "0a" * 20, "supabase_key"),                                    # Supabase PAT: sbp_ and 40 hex
    ("sb_secret_" + "Zq7XbR2mK9pLw4Tn8VcY3sHd6FjA1uEi", "supabase_key"),     # Supabase secret key
    ("essu_" + "QUJD" * 23, "elastic_key"),                                  # Elastic Cloud: essu_ and 92 base64
    ("packagist_ack_" + "7432cdc05ea3f83037723ff56638", "packagist_token"),  # Private Packagist API key
])
def test_formats_learned_from_the_twenty_fifth_corpus_are_masked_whatever_their_letters(token, kind):
    out = stored(f"found {token} in the output")
    assert token not in out
    assert out == f"found {stored(token)} in the output" and stored(token).startswith(f"[REDACTED:{kind}:")


def test_a_publishable_supabase_key_is_no_secret():
    text = "SUPABASE_ANON=sb_publishable_Zq7XbR2mK9pLw4Tn8VcY3sHd6FjA1uEi"
    assert "[REDACTED:supabase_key:" not in stored(text)


# -- tuned on the twenty-sixth corpus once it was scored ---------------------------------------------
# AWS's IAM User Guide ("Manage access keys") publishes example keys as a short stem before EXAMPLE
# (`AKIAIOSFODNN7EXAMPLE`) or a secret ending in EXAMPLEKEY; those stay. A long random run with the
# word glued to its end is how test suites mark a real-shaped key: the word does not hide it.

@pytest.mark.parametrize("text", [
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "password: EXAMPLE",
])
def test_a_published_example_key_keeps_its_bytes(text):
    assert stored(text) == text


@pytest.mark.parametrize(("text", "secret"), [
    ("FASTLY_API_TOKEN=q0V7Z3O8HIqUgOTB77ds4OncEXAMPLE", "q0V7Z3O8HIqUgOTB77ds4OncEXAMPLE"),
    ('{"token": "SZ5rluwzbtMyyQFQNoeqEFbpVbTL0ItsXEXAMPLE"}', "SZ5rluwzbtMyyQFQNoeqEFbpVbTL0ItsXEXAMPLE"),
])
def test_a_long_random_run_with_example_glued_to_it_is_masked(text, secret):
    out = stored(text)
    assert secret not in out and out.count("[REDACTED:") == 1


@pytest.mark.parametrize("line", [
    "\tgithub.com/acme/go-libsecret v0.0.0-20161001094733-a6f4afe4910c // indirect",  # a Go pseudo-version
    "secret-store 1.4.0-rc.1+build.20240101",                                        # semver 2.0.0
])
def test_a_version_after_a_secret_sounding_module_name_keeps_its_bytes(line):
    assert stored(line) == line
