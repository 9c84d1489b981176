"""Signing and sealing with the instance secret (rehabref.instance_secret)."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.instance_secret import SecretBox


def reference_signature(secret_key: str, message: str) -> str:
    """The signature as RFC 2104 HMAC-SHA256 computed by the standard library."""
    signing_key = hmac.new(secret_key.encode(), b"rehabref/sign/v1", hashlib.sha256).digest()
    digest = hmac.new(signing_key, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode().rstrip("=")


@given(
    secret_key=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1),
    message=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300),
)
def test_a_signature_is_hmac_sha256_of_the_message(secret_key, message):
    box = SecretBox(secret_key)
    assert box.sign(message) == reference_signature(secret_key, message)
    # Signing does not disturb the prepared key states: the same message, the same signature.
    assert box.sign(message) == box.sign(message)


def test_signatures_are_32_url_safe_characters_and_verify():
    box = SecretBox("instance-secret")
    signature = box.sign("ast_01jd3k7v5n8q2w4e6r8t0y2u4i.1763900000")
    assert len(signature) == 32
    assert set(signature) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert box.verify("ast_01jd3k7v5n8q2w4e6r8t0y2u4i.1763900000", signature)


@pytest.mark.parametrize(
    "forged",
    ["", "x" * 32, "é" * 32, "\x00" * 32],
)
def test_a_wrong_or_hostile_signature_does_not_verify(forged):
    box = SecretBox("instance-secret")
    assert not box.verify("message", forged)


def test_another_instance_secret_signs_differently():
    assert SecretBox("one").sign("message") != SecretBox("two").sign("message")


def test_sealed_values_open_only_with_the_same_secret():
    sealed = SecretBox("one").seal("whsec_abc")
    assert SecretBox("one").unseal(sealed) == "whsec_abc"
    with pytest.raises(ValueError):
        SecretBox("two").unseal(sealed)
