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


# Random bytes for ids, read from the OS about 4 KiB at a time: a getrandom() system call per
# id was a visible share of a create, which makes five ids. Taken under the lock; a forked
# child starts with none, so parent and child never hand out the same bytes.
_RANDOM_BYTES = _RANDOM_BITS // 8
_REFILL_BYTES = _RANDOM_BYTES * 400
_random_pool = b""
_random_offset = 0


def _forget_random_pool() -> None:
    global _random_pool, _random_offset
    _random_pool, _random_offset = b"", 0


os.register_at_fork(after_in_child=_forget_random_pool)


def _random_value(millis: int) -> int:
    global _random_pool, _random_offset
    with _lock:
        start = _random_offset
        if start >= len(_random_pool):
            _random_pool, start = os.urandom(_REFILL_BYTES), 0
        _random_offset = end = start + _RANDOM_BYTES
        chunk = _random_pool[start:end]
    return (millis << _RANDOM_BITS) | int.from_bytes(chunk, "big")


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
