"""The instance key ring's signatures and sealed secrets, and where the ring is kept.

Threat: whoever holds a copy of the database (or a backup) must not be able to forge a
console session, a patient or PDF link, a form or assistant token, nor read webhook secrets.
So the keys are never in the database: they come from ``REHABREF_SECRET_KEY`` or from a key
file (created on first run, mode 0600). Every key of the ring verifies and opens; the newest
signs and seals, so a rotation keeps what was issued before it valid (docs/security.md).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from rehabref.config import Settings
from rehabref.crypto import KeyRing, KeyRingError, new_key, parse_key_ring

KEY_FILE_HEADER = (
    "# rehabref instance keys, oldest first; the last one signs and seals.\n"
    "# Keep this file out of database backups (docs/security.md).\n"
)


def secret_box(settings: Settings) -> SecretBox:
    """The box every process builds at start-up, before and without any database access."""
    return SecretBox(load_key_ring(settings.secret_key, Path(settings.secret_key_file)))


def load_key_ring(configured: str | None, key_file: Path) -> KeyRing:
    """The ring from ``REHABREF_SECRET_KEY`` when set, else from ``key_file``, which is
    created with one new key when it does not exist yet (never touching the database).
    ``KeyRingError`` names the file when it cannot be read or used."""
    if configured:
        return parse_key_ring(configured)
    try:
        return parse_key_ring(ensure_key_file(key_file))
    except (OSError, UnicodeError, KeyRingError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise KeyRingError(f"REHABREF_SECRET_KEY_FILE: {key_file}: {reason}") from None


def ensure_key_file(
    key_file: Path, first_key: str | None = None, first_id: str = "k1", *, then_new: str = ""
) -> str:
    """The key file's text, creating it (mode 0600) with ``first_key`` or a new key when it
    is missing; ``then_new``: the id of a new key written after ``first_key``, which then
    only verifies and opens. Written aside and linked into place: two processes starting at
    once both end up with the one key that was linked first, never with an empty file."""
    try:
        return key_file.read_text()
    except FileNotFoundError:
        pass
    key_file.parent.mkdir(parents=True, exist_ok=True)
    aside = key_file.with_name(f".{key_file.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(f"{KEY_FILE_HEADER}{first_id}:{first_key or new_key()}\n")
            if then_new:
                handle.write(f"{then_new}:{new_key()}\n")
            handle.flush()
            os.fsync(handle.fileno())
        # Another process that linked its key first wins: this one then reads that key.
        with contextlib.suppress(FileExistsError):
            os.link(aside, key_file)
    finally:
        aside.unlink(missing_ok=True)
    return key_file.read_text()


class _Signer:
    """HMAC-SHA256 with its two padded key blocks hashed once: each signature then copies
    the two states (RFC 2104). Setting the key up on every call was over half of a
    signature's cost, and a create signs a patient link."""

    def __init__(self, material: bytes) -> None:
        signing_key = hmac.new(material, b"rehabref/sign/v1", hashlib.sha256).digest()
        key_block = signing_key.ljust(hashlib.sha256().block_size, b"\0")
        self._inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in key_block))
        self._outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in key_block))

    def sign(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return base64.urlsafe_b64encode(outer.digest()[:24]).rstrip(b"=")


class SecretBox:
    """Signing and sealing with the ring: the current key signs, every key verifies.

    A plain string is a ring of that one key, used as is (tests, one-key set-ups)."""

    def __init__(self, ring: KeyRing | str) -> None:
        self.ring = KeyRing([("k0", ring.encode())]) if isinstance(ring, str) else ring
        # Newest first: the order verification tries them in, the current key being likeliest.
        materials = [material for _, material in reversed(self.ring.keys)]
        self._signers = [_Signer(material) for material in materials]
        self._fernet = MultiFernet(
            [
                Fernet(
                    base64.urlsafe_b64encode(
                        hmac.new(material, b"rehabref/seal/v1", hashlib.sha256).digest()
                    )
                )
                for material in materials
            ]
        )

    def sign(self, message: str) -> str:
        return self._signers[0].sign(message.encode()).decode()

    def verify(self, message: str, signature: str) -> bool:
        # Compared as bytes: compare_digest refuses non-ASCII str (TypeError, a 500), and a
        # signature from a URL, cookie or form field can hold any character.
        given = signature.encode("utf-8", "replace")
        encoded = message.encode()
        matched = False
        for signer in self._signers:
            matched |= hmac.compare_digest(signer.sign(encoded), given)
        return matched

    def seal(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def unseal(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken as exc:
            raise ValueError("sealed value does not match the instance key ring") from exc


def adopt_legacy_secret(key_file: Path, legacy: str) -> None:
    """Move a secret that releases before 0014 kept in the database into the key file, as its
    oldest key: links and webhook secrets it signed and sealed stay valid, but a new key signs
    from now on, because every database copy taken before the upgrade holds the old one. A
    key file that exists already keeps signing with its own newest key."""
    text = ensure_key_file(key_file, first_key=legacy, first_id="k0", then_new="k1")
    ring = parse_key_ring(text)
    if any(material == legacy.encode() for _, material in ring.keys):
        return
    ids = {key_id for key_id, _ in ring.keys}
    legacy_id = next(name for name in ("k0", "legacy", "legacy0", "legacy1") if name not in ids)
    body = "".join(line + "\n" for line in text.splitlines() if not line.startswith("#"))
    temporary = key_file.with_name(key_file.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{KEY_FILE_HEADER}{legacy_id}:{legacy}\n{body}")
    os.replace(temporary, key_file)
