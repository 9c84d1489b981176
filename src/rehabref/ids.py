"""Opaque, prefixed identifiers that sort by creation time (like ULIDs).

48 bits of milliseconds followed by 80 random bits, Crockford base32: ordering by id is
ordering by creation, which keyset pagination relies on. Within one process ids are also
strictly increasing inside the same millisecond (the "monotonic" ULID rule: the random part
of the previous id plus one), so events written in one transaction keep their order.
"""

from __future__ import annotations

import secrets
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


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


_lock = threading.Lock()
_last = 0
_RANDOM_BITS = 80


def _random_value(millis: int) -> int:
    return (millis << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)


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
        return f"{prefix}_{_base32(_random_value(now_ms), 26)}"
    return f"{prefix}_{_base32(_claim(_random_value(int(time.time() * 1000))), 26)}"


BLOCK_BITS = 10


def new_id_block(prefix: str) -> str:
    """The stem of 1024 consecutive ids: the n-th is the stem followed by ``ALPHABET[n // 32]``
    and ``ALPHABET[n % 32]``; all of them sort after every id made before and before every id
    made after.

    For rows numbered inside one SQL statement (a delivery per subscribed endpoint).
    """
    start = _random_value(int(time.time() * 1000)) >> BLOCK_BITS << BLOCK_BITS
    value = _claim(start, block_bits=BLOCK_BITS)
    return f"{prefix}_{_base32(value >> BLOCK_BITS, 24)}"


ALPHABET = _ALPHABET


def random_token(nbytes: int = 32) -> str:
    """URL-safe random text; 32 bytes = 256 bits."""
    return secrets.token_urlsafe(nbytes)
