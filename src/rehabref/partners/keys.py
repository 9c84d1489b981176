"""API key and webhook secret material: generation, hashing and parsing."""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass

_ALPHABET = string.ascii_letters + string.digits
_RANDOM_CHARS = 43  # 43 base62 characters = 256 bits

KEY_TYPES = {
    "sk_test": ("test", "secret"),
    "sk_live": ("live", "secret"),
    "pk_test": ("test", "public"),
    "pk_live": ("live", "public"),
}


def random_part() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM_CHARS))


def generate_key(key_type: str) -> str:
    if key_type not in KEY_TYPES:
        raise ValueError(f"unknown key type {key_type}")
    return f"{key_type}_{random_part()}"


def generate_webhook_secret(environment: str) -> str:
    return f"whsec_{environment}_{random_part()}"


def hash_key(key: str) -> str:
    # Keys carry 256 random bits, so a fast hash cannot be brute-forced; no salt or KDF needed.
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class ParsedKey:
    key_type: str
    environment: str
    kind: str


def parse_key(key: str) -> ParsedKey | None:
    prefix, _, rest = key.rpartition("_")
    if (
        prefix not in KEY_TYPES
        or len(rest) != _RANDOM_CHARS
        or not (rest.isascii() and rest.isalnum())
    ):
        return None
    environment, kind = KEY_TYPES[prefix]
    return ParsedKey(key_type=prefix, environment=environment, kind=kind)
