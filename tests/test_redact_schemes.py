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
