"""The instance secret: signs patient tokens and seals webhook secrets at rest.

Taken from ``REHABREF_SECRET_KEY`` when set; otherwise generated on first run and kept in
the database, so every API node and worker on the same database share it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import String, Text, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base, Database, table

_NAME = "secret_key"


class InstanceSetting(Base):
    __tablename__ = "instance_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


_settings = table(InstanceSetting)


async def load_secret_key(db: Database, configured: str | None) -> str:
    if configured:
        return configured
    async with db.read() as conn:
        stored = (
            await conn.execute(select(_settings.c.value).where(_settings.c.name == _NAME))
        ).scalar_one_or_none()
    if stored:
        return str(stored)
    try:
        async with db.write() as conn:
            await conn.execute(
                insert(_settings), {"name": _NAME, "value": secrets.token_urlsafe(48)}
            )
    except IntegrityError:
        pass  # another process created it first; read theirs
    async with db.read() as conn:
        return str(
            (
                await conn.execute(select(_settings.c.value).where(_settings.c.name == _NAME))
            ).scalar_one()
        )


class SecretBox:
    """Signing and sealing with keys derived from the instance secret, one per purpose."""

    def __init__(self, secret_key: str) -> None:
        root = secret_key.encode()
        signing_key = hmac.new(root, b"rehabref/sign/v1", hashlib.sha256).digest()
        # HMAC-SHA256 with its two padded key blocks hashed once, here: each signature then
        # copies the two states (RFC 2104). hmac.digest set the key up on every call, over
        # half of a signature's cost, and a create signs a patient link.
        key_block = signing_key.ljust(hashlib.sha256().block_size, b"\0")
        self._inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in key_block))
        self._outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in key_block))
        sealing_key = hmac.new(root, b"rehabref/seal/v1", hashlib.sha256).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(sealing_key))

    def sign(self, message: str) -> str:
        inner = self._inner.copy()
        inner.update(message.encode())
        outer = self._outer.copy()
        outer.update(inner.digest())
        digest = outer.digest()
        return base64.urlsafe_b64encode(digest[:24]).decode().rstrip("=")

    def verify(self, message: str, signature: str) -> bool:
        # Compared as bytes: compare_digest refuses non-ASCII str (TypeError, a 500), and a
        # signature from a URL, cookie or form field can hold any character.
        return hmac.compare_digest(
            self.sign(message).encode(), signature.encode("utf-8", "replace")
        )

    def seal(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def unseal(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken as exc:
            raise ValueError("sealed value does not match the instance secret") from exc
