"""Webhook signature checks against signatures made by the independent test helpers (and
Twilio's documented example)."""

from __future__ import annotations

import re

import pytest

from rehabref.channels.signatures import (
    meta_signature_valid,
    twilio_signature_valid,
    whatsapp_handshake,
)
from tests.support.graph_api import inbound_text, signed_headers
from tests.support.twilio_api import sign

SECRET = "app-secret-1"
# A fixed message id: parameter ids must be the same in every xdist worker.
BODY = re.sub(rb"wamid\.[\w-]+", b"wamid.fixed", inbound_text("+2348031234567", "yes"))


def meta_header(secret: str = SECRET, body: bytes = BODY) -> str:
    return signed_headers(secret, body)["X-Hub-Signature-256"]


def test_meta_signature_valid():
    assert meta_signature_valid(SECRET, BODY, meta_header())


def test_meta_signature_hex_case_does_not_matter():
    header = meta_header()
    assert meta_signature_valid(SECRET, BODY, "sha256=" + header[7:].upper())


@pytest.mark.parametrize(
    ("secret", "body", "header"),
    [
        ("other-secret", BODY, meta_header()),
        (SECRET, BODY + b" ", meta_header()),
        (SECRET, BODY.replace(b"yes", b"no!"), meta_header()),
        (SECRET, BODY, None),
        (SECRET, BODY, ""),
        (SECRET, BODY, "sha256="),
        (SECRET, BODY, "sha256=zz"),
        (SECRET, BODY, "sha256=é" + meta_header()[8:]),
        (SECRET, BODY, "sha1=" + meta_header()[7:]),
        (SECRET, BODY, meta_header()[7:]),
        ("", BODY, meta_header("")),
    ],
)
def test_meta_signature_invalid(secret, body, header):
    assert not meta_signature_valid(secret, body, header)


TOKEN = "12345"
URL = "https://mycompany.com/myapp.php?foo=1&bar=2"
PARAMS = {
    "CallSid": "CA1234567890ABCDE",
    "Caller": "+12349013030",
    "Digits": "1234",
    "From": "+12349013030",
    "To": "+18005551212",
}


def test_twilio_documented_example():
    assert sign(TOKEN, URL, PARAMS) == "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
    assert twilio_signature_valid(TOKEN, URL, PARAMS, "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")


def test_twilio_accepts_pairs_in_any_order():
    pairs = list(reversed(PARAMS.items()))
    assert twilio_signature_valid(TOKEN, URL, pairs, sign(TOKEN, URL, PARAMS))


def test_twilio_sms_form_with_unicode_body():
    form = {"MessageSid": "SM" + "a" * 32, "From": "+2348031234567", "Body": "Ọjọ́ 2 ✓"}
    url = "https://rehabref.example/hooks/twilio/sms"
    assert twilio_signature_valid("tok", url, form, sign("tok", url, form))


@pytest.mark.parametrize(
    ("token", "url", "params", "header"),
    [
        ("54321", URL, PARAMS, sign(TOKEN, URL, PARAMS)),
        (TOKEN, URL + "&x=1", PARAMS, sign(TOKEN, URL, PARAMS)),
        (TOKEN, URL, {**PARAMS, "Digits": "1235"}, sign(TOKEN, URL, PARAMS)),
        (TOKEN, URL, {**PARAMS, "Extra": ""}, sign(TOKEN, URL, {**PARAMS, "Extra": "x"})),
        (TOKEN, URL, PARAMS, None),
        (TOKEN, URL, PARAMS, ""),
        (TOKEN, URL, PARAMS, "not base64 ✗"),
        ("", URL, PARAMS, sign("", URL, PARAMS)),
    ],
)
def test_twilio_signature_invalid(token, url, params, header):
    assert not twilio_signature_valid(token, url, params, header)


def handshake(mode: str = "subscribe", token: str = "verify-me") -> dict[str, str]:
    return {"hub.mode": mode, "hub.verify_token": token, "hub.challenge": "1158201444"}


def test_handshake_echoes_the_challenge():
    assert whatsapp_handshake(handshake(), "verify-me") == "1158201444"


@pytest.mark.parametrize(
    ("params", "configured"),
    [
        (handshake(token="wrong"), "verify-me"),
        (handshake(mode="unsubscribe"), "verify-me"),
        (handshake(), None),
        (handshake(token=""), ""),
        ({"hub.mode": "subscribe", "hub.challenge": "1"}, "verify-me"),
        ({"hub.mode": "subscribe", "hub.verify_token": "verify-me"}, "verify-me"),
        ({}, "verify-me"),
        (handshake(token="vérify"), "verify-me"),
    ],
)
def test_handshake_refused(params, configured):
    assert whatsapp_handshake(params, configured) is None
