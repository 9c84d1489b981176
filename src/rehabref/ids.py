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


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    global _last
    millis = int(time.time() * 1000) if now_ms is None else now_ms
    value = (millis << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
    if now_ms is None:
        with _lock:
            if value <= _last:
                value = _last + 1
            _last = value
    return f"{prefix}_{_base32(value, 26)}"


BLOCK_BITS = 10


def new_id_block(prefix: str) -> str:
    """The stem of 1024 consecutive ids: ``stem + two characters`` (``block_suffix(n)``) is
    the n-th; all of them sort after every id made before and before every id made after.

    For rows numbered inside one SQL statement (a delivery per subscribed endpoint).
    """
    global _last
    millis = int(time.time() * 1000)
    value = ((millis << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)) >> BLOCK_BITS << BLOCK_BITS
    with _lock:
        if value <= _last:
            value = ((_last >> BLOCK_BITS) + 1) << BLOCK_BITS
        _last = value | ((1 << BLOCK_BITS) - 1)
    return f"{prefix}_{_base32(value >> BLOCK_BITS, 24)}"


def block_suffix(n: int) -> str:
    return _PAIRS[n]


ALPHABET = _ALPHABET


def random_token(nbytes: int = 32) -> str:
    """URL-safe random text; 32 bytes = 256 bits."""
    return secrets.token_urlsafe(nbytes)
