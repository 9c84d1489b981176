"""Opaque, prefixed identifiers that sort by creation time (like ULIDs).

The value is a UUIDv7 from uuid-utils: 48 bits of milliseconds, then (around the version and
variant bits) a 42-bit counter and 32 random bits. Its process-wide generator makes every id
larger than the one before, across threads, inside one millisecond and when the system clock
steps back: each id raises the counter or the time, never only the random bits. Ids are the
26-character Crockford base32 text of that value (lower case), so the first ten characters
are the milliseconds and ordering by id is ordering by creation, which keyset pagination
relies on; events written in one transaction keep their order.
"""

from __future__ import annotations

import secrets

from uuid_utils import uuid7

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_TIME_SHIFT = 80


# Ids are made several times per request: two characters (ten bits) per step halves the
# encoding cost (base64.b32encode, pure Python here, was slower still).
_PAIRS = [high + low for high in _ALPHABET for low in _ALPHABET]


def _base32(value: int, length: int) -> str:
    """``value`` in ``length`` characters, most significant first."""
    chars = []
    for _ in range(length // 2):
        chars.append(_PAIRS[value & 1023])
        value >>= 10
    if length % 2:
        chars.append(_ALPHABET[value & 31])
    return "".join(reversed(chars))


# The leading ten characters (the milliseconds) of the ids made last; ids of one millisecond
# share them, so they are encoded once. A tuple, replaced whole: threads may race harmlessly.
_time_part: tuple[int, str] = (-1, "")


def _encode(value: int) -> str:
    """A 128-bit id value in 26 characters: 10 for the 48-bit time, 16 for the 80 bits after
    it (eight ten-bit steps, unrolled: the loop was most of an id's cost)."""
    global _time_part
    millis = value >> _TIME_SHIFT
    cached = _time_part
    if cached[0] != millis:
        cached = _time_part = (millis, _base32(millis, 10))
    pairs = _PAIRS
    low = value & ((1 << _TIME_SHIFT) - 1)
    return (
        cached[1]
        + pairs[low >> 70]
        + pairs[(low >> 60) & 1023]
        + pairs[(low >> 50) & 1023]
        + pairs[(low >> 40) & 1023]
        + pairs[(low >> 30) & 1023]
        + pairs[(low >> 20) & 1023]
        + pairs[(low >> 10) & 1023]
        + pairs[low & 1023]
    )


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    """``now_ms``: an id of that time instead of now, outside the ordering of this process."""
    if now_ms is not None:
        return f"{prefix}_{_encode(uuid7(nanoseconds=now_ms * 1_000_000).int)}"
    return f"{prefix}_{_encode(uuid7().int)}"


def random_token(nbytes: int = 32) -> str:
    """URL-safe random text; 32 bytes = 256 bits."""
    return secrets.token_urlsafe(nbytes)
