"""API key material: format, entropy, hashing and parsing (rehabref.partners.keys)."""

from __future__ import annotations

import hashlib
import math
import string

import pytest

from rehabref.partners import keys

BASE62 = set(string.ascii_letters + string.digits)


@pytest.mark.parametrize("key_type", ["sk_test", "sk_live", "pk_test", "pk_live"])
def test_generated_keys_carry_at_least_192_random_bits(key_type):
    key = keys.generate_key(key_type)
    prefix, _, random_part = key.rpartition("_")
    assert prefix == key_type
    assert set(random_part) <= BASE62
    assert len(random_part) * math.log2(62) >= 192


def test_generated_keys_do_not_repeat():
    assert len({keys.generate_key("sk_test") for _ in range(2000)}) == 2000


def test_random_part_uses_the_whole_alphabet():
    seen = set("".join(keys.random_part() for _ in range(200)))
    assert seen == BASE62


@pytest.mark.parametrize("environment", ["test", "live"])
def test_webhook_secrets(environment):
    secret = keys.generate_webhook_secret(environment)
    assert secret.startswith(f"whsec_{environment}_")
    assert len(secret.rpartition("_")[2]) * math.log2(62) >= 192


def test_unknown_key_type_is_refused():
    with pytest.raises(ValueError):
        keys.generate_key("rk_test")


def test_hash_is_sha256_hex():
    key = keys.generate_key("sk_test")
    assert keys.hash_key(key) == hashlib.sha256(key.encode()).hexdigest()
    assert keys.hash_key(key) != keys.hash_key(keys.generate_key("sk_test"))


@pytest.mark.parametrize(
    ("key_type", "environment", "kind"),
    [
        ("sk_test", "test", "secret"),
        ("sk_live", "live", "secret"),
        ("pk_test", "test", "public"),
        ("pk_live", "live", "public"),
    ],
)
def test_environment_and_kind_come_from_the_prefix(key_type, environment, kind):
    parsed = keys.parse_key(keys.generate_key(key_type))
    assert parsed == keys.ParsedKey(key_type=key_type, environment=environment, kind=kind)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "sk_test_",
        "sk_test_" + "a" * 42,  # one character short
        "sk_test_" + "a" * 44,  # one too many
        "sk_test_" + "a" * 42 + "-",
        "sk_prod_" + "a" * 43,
        "whsec_test_" + "a" * 43,  # a webhook secret is not an API key
        "op_" + "a" * 43,  # nor is an operator token
        "Bearer sk_test_" + "a" * 43,
        "sk_test_" + "\u00e9" * 43,
    ],
)
def test_malformed_keys_do_not_parse(text):
    assert keys.parse_key(text) is None
