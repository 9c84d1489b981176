"""The instance key ring: sealing (AES-GCM) and blind indexes for data at rest.

Threat: a copy of the database or of a backup (a stolen dump, a leaked snapshot, a curious
reviewer) must not reveal patients nor let its holder forge anything. The keys therefore live
outside the database (a key file or ``REHABREF_SECRET_KEY``, read in ``config.py``), and what
is stored is sealed with keys derived from them.

A ring holds one or more keys, each with a short id; the newest (last) one seals and signs,
every one opens and verifies, so rotating is adding a key (docs/security.md). A sealed value
names the key that sealed it: ``s1.<key id>.<base64url(nonce || ciphertext+tag)>``. Per-purpose
keys are derived with HKDF-SHA256 once per ring and purpose, and one ``AESGCM`` object is kept
for each: sealing is a nonce and one AES-GCM call.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
from typing import overload

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
# A key written by this code: 32 random bytes, base64url without padding (43 characters).
MIN_KEY_CHARS = 32
SEALED_PREFIX = "s1."
_NONCE_BYTES = 12


class KeyRingError(ValueError):
    """A key ring text that cannot be used; the message says why (never the key itself)."""


class SealedValueError(ValueError):
    """A sealed value that is malformed, sealed under a key not in the ring, or altered."""


def new_key() -> str:
    """A fresh key's text: 32 random bytes, base64url."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")


def _derive(material: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(material)


class KeyRing:
    """Keys in the order they were added; the last one is current.

    Each key's material is the text after ``id:`` as bytes (a key from before key rings, one
    bare secret, keeps its exact bytes so what it signed stays valid).
    """

    def __init__(self, keys: list[tuple[str, bytes]]) -> None:
        if not keys:
            raise KeyRingError("the key ring holds no key")
        ids = [key_id for key_id, _ in keys]
        if len(set(ids)) != len(ids):
            raise KeyRingError("a key id appears twice in the key ring")
        self.keys: tuple[tuple[str, bytes], ...] = tuple(keys)
        self.current_id: str = keys[-1][0]
        self._materials = dict(keys)
        self._aeads: dict[tuple[str, str], AESGCM] = {}
        self._index_macs: dict[tuple[str, str], hmac.HMAC] = {}

    def aead(self, key_id: str, purpose: str) -> AESGCM | None:
        """The AES-GCM object for a key and purpose, made once; None for an id not in the
        ring (nothing is cached for ids read from stored values)."""
        found = self._aeads.get((key_id, purpose))
        if found is None:
            material = self._materials.get(key_id)
            if material is None:
                return None
            found = AESGCM(_derive(material, b"rehabref/seal/" + purpose.encode()))
            self._aeads[(key_id, purpose)] = found
        return found

    def index_mac(self, key_id: str, purpose: str) -> hmac.HMAC:
        """An HMAC-SHA256 keyed for ``purpose``, never updated: callers update a copy (the
        key schedule is then done once, not per index)."""
        found = self._index_macs.get((key_id, purpose))
        if found is None:
            key = _derive(self._materials[key_id], b"rehabref/blind-index/" + purpose.encode())
            found = self._index_macs[(key_id, purpose)] = hmac.new(key, digestmod=hashlib.sha256)
        return found


def parse_key_ring(text: str) -> KeyRing:
    """Keys as ``id:key`` separated by commas or new lines, oldest first; ``#`` starts a
    comment line. A text without any ``id:`` (one bare secret, as before key rings) is one key
    with id ``k0``."""
    entries = [
        part.strip()
        for line in text.splitlines()
        if not line.strip().startswith("#")
        for part in line.split(",")
        if part.strip()
    ]
    if not entries:
        raise KeyRingError("no key given")
    if len(entries) == 1 and ":" not in entries[0]:
        return KeyRing([("k0", entries[0].encode())])
    keys: list[tuple[str, bytes]] = []
    for number, entry in enumerate(entries, start=1):
        key_id, colon, key = entry.partition(":")
        if not colon or not KEY_ID.match(key_id):
            raise KeyRingError(
                f"key {number} is not written as id:key (id of letters, digits, - or _)"
            )
        if len(key) < MIN_KEY_CHARS:
            raise KeyRingError(f"key {key_id!r} is shorter than {MIN_KEY_CHARS} characters")
        keys.append((key_id, key.encode()))
    return KeyRing(keys)


def seal(ring: KeyRing, purpose: str, plaintext: str) -> str:
    """``plaintext`` encrypted and authenticated under the current key for ``purpose`` (a
    value sealed for one purpose does not open as another: the purpose is the AAD too)."""
    return seal_bytes(ring, purpose, plaintext.encode()).decode()


def seal_bytes(ring: KeyRing, purpose: str, plaintext: bytes) -> bytes:
    """``seal`` for bytes; the result is ASCII bytes of the same form."""
    aead = ring.aead(ring.current_id, purpose)
    assert aead is not None  # the current key is always in the ring
    nonce = os.urandom(_NONCE_BYTES)
    sealed = aead.encrypt(nonce, plaintext, purpose.encode())
    body = base64.urlsafe_b64encode(nonce + sealed).rstrip(b"=")
    return b"%s%s.%s" % (SEALED_PREFIX.encode(), ring.current_id.encode(), body)


def seal_optional(ring: KeyRing, purpose: str, plaintext: str | None) -> str | None:
    return None if plaintext is None else seal(ring, purpose, plaintext)


def open_sealed(ring: KeyRing, purpose: str, sealed: str) -> str:
    """The plaintext of a ``seal`` result; ``SealedValueError`` when it is not one of ours."""
    try:
        return open_sealed_bytes(ring, purpose, sealed.encode()).decode()
    except UnicodeError as exc:
        raise SealedValueError("sealed value is damaged") from exc


def is_sealed(value: bytes) -> bool:
    return value.startswith(SEALED_PREFIX.encode())


def open_sealed_bytes(ring: KeyRing, purpose: str, sealed: bytes) -> bytes:
    """The plaintext of a ``seal_bytes`` result; ``SealedValueError`` when it is not ours."""
    if not is_sealed(sealed):
        raise SealedValueError("not a sealed value")
    key_id, dot, body = sealed[len(SEALED_PREFIX) :].partition(b".")
    try:
        aead = ring.aead(key_id.decode(), purpose) if dot else None
    except UnicodeError:
        aead = None
    if aead is None:
        raise SealedValueError("sealed under a key that is not in the key ring")
    try:
        raw = base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        return aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], purpose.encode())
    except (InvalidTag, binascii.Error, ValueError) as exc:
        raise SealedValueError("sealed value is damaged or was sealed for another use") from exc


def open_optional(ring: KeyRing, purpose: str, sealed: str | None) -> str | None:
    return None if sealed is None else open_sealed(ring, purpose, sealed)


@overload
def open_stored(ring: KeyRing, purpose: str, stored: str) -> str: ...
@overload
def open_stored(ring: KeyRing, purpose: str, stored: None) -> None: ...
@overload
def open_stored(ring: KeyRing, purpose: str, stored: str | None) -> str | None: ...
def open_stored(ring: KeyRing, purpose: str, stored: str | None) -> str | None:
    """A stored column's text: a sealed value opened; a value written before its column was
    sealed (no envelope) read as it is."""
    if stored is None or not stored.startswith(SEALED_PREFIX):
        return stored
    return open_sealed(ring, purpose, stored)


def normalise_for_index(value: str) -> str:
    """Phones arrive in E.164 already; e-mail addresses compare without case or spaces."""
    return value.strip().lower()


def blind_index(ring: KeyRing, purpose: str, value: str, *, key_id: str | None = None) -> str:
    """A keyed HMAC-SHA256 of the normalised value: equal values give equal indexes, and
    without the key an index cannot be tested against guessed phone numbers."""
    mac = ring.index_mac(key_id or ring.current_id, purpose).copy()
    mac.update(normalise_for_index(value).encode())
    return base64.urlsafe_b64encode(mac.digest()[:24]).decode()


def blind_indexes(ring: KeyRing, purpose: str, value: str) -> list[str]:
    """The value's index under every key of the ring: rows written before a rotation carry
    the older key's index, so a lookup matches any of them."""
    return [blind_index(ring, purpose, value, key_id=key_id) for key_id, _ in ring.keys]
