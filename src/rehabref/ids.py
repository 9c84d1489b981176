"""Opaque, prefixed identifiers that sort by creation time (like ULIDs).

48 bits of milliseconds followed by 80 random bits, Crockford base32: ordering by id is
ordering by creation, which keyset pagination relies on. Within one process ids are also
strictly increasing inside the same millisecond (the "monotonic" ULID rule: the random part
of the previous id plus one), so events written in one transaction keep their order.
"""

from __future__ import annotations

import os
import secrets
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_RANDOM_BITS = 80
_RANDOM_MASK = (1 << _RANDOM_BITS) - 1


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
    """A 128-bit id value in 26 characters: 10 for the 48-bit time, 16 for the 80 random bits
    (eight ten-bit steps, unrolled: the loop was most of an id's cost)."""
    global _time_part
    millis = value >> _RANDOM_BITS
    cached = _time_part
    if cached[0] != millis:
        cached = _time_part = (millis, _base32(millis, 10))
    pairs = _PAIRS
    low = value & _RANDOM_MASK
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


_lock = threading.Lock()
_last = 0


def _random_value(millis: int) -> int:
    # os.urandom directly: secrets.randbits adds a Python-level call around the same bytes.
    return (millis << _RANDOM_BITS) | int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")


def _claim(value: int, *, block_bits: int = 0) -> int:
    """``value``, or the next free one after the last claimed: ids of this process strictly
    increase. ``block_bits``: claim the whole block of ``2**block_bits`` values it starts."""
    global _last
    with _lock:
        if value <= _last:
            value = ((_last >> block_bits) + 1) << block_bits
        _last = value | ((1 << block_bits) - 1)
    return value


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    if now_ms is not None:
        return f"{prefix}_{_encode(_random_value(now_ms))}"
    return f"{prefix}_{_encode(_claim(_random_value(time.time_ns() // 1_000_000)))}"


BLOCK_BITS = 10


def new_id_block(prefix: str) -> str:
    """The stem of 1024 consecutive ids: the n-th is the stem followed by ``ALPHABET[n // 32]``
    and ``ALPHABET[n % 32]``; all of them sort after every id made before and before every id
    made after.

    For rows numbered inside one SQL statement (a delivery per subscribed endpoint).
    """
    start = _random_value(time.time_ns() // 1_000_000) >> BLOCK_BITS << BLOCK_BITS
    value = _claim(start, block_bits=BLOCK_BITS)
    return f"{prefix}_{_base32(value >> BLOCK_BITS, 24)}"


ALPHABET = _ALPHABET


def random_token(nbytes: int = 32) -> str:
    """URL-safe random text; 32 bytes = 256 bits."""
    return secrets.token_urlsafe(nbytes)
