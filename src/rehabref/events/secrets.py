"""Webhook signing secrets per partner and environment: lookup (cached) and rotation."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import Database, table
from rehabref.expiring_cache import ExpiringCache
from rehabref.instance_secret import SecretBox
from rehabref.partners.service import issue_webhook_secret
from rehabref.tables.partners import Partner, WebhookSecret

_secrets = table(WebhookSecret)
_partners = table(Partner)


class SecretRotationError(Exception):
    """An operator mistake in the rotate command."""


async def active_secrets(
    conn: AsyncConnection, *, box: SecretBox, partner_id: str, environment: str, now: datetime
) -> list[str]:
    """Secrets that sign now, newest first (two during a rotation overlap)."""
    rows = await conn.execute(
        select(_secrets.c.sealed_secret)
        .where(
            _secrets.c.partner_id == partner_id,
            _secrets.c.environment == environment,
            or_(_secrets.c.expires_at.is_(None), _secrets.c.expires_at > now),
        )
        .order_by(_secrets.c.created_at.desc(), _secrets.c.id.desc())
    )
    return [box.unseal(row.sealed_secret) for row in rows]


async def rotate_secret(
    conn: AsyncConnection,
    *,
    box: SecretBox,
    partner_id: str,
    environment: str,
    overlap_hours: float,
) -> dict[str, str]:
    """Issue a new secret; the current ones keep signing for ``overlap_hours``."""
    if environment not in {"test", "live"}:
        raise SecretRotationError("env must be test or live")
    if overlap_hours < 0 or overlap_hours > 24 * 30:
        raise SecretRotationError("overlap-hours must be between 0 and 720")
    exists = (
        await conn.execute(select(_partners.c.id).where(_partners.c.id == partner_id))
    ).first()
    if exists is None:
        raise SecretRotationError(f"no partner {partner_id}")
    now = utcnow()
    ends = now + timedelta(hours=overlap_hours)
    await conn.execute(
        update(_secrets)
        .where(
            _secrets.c.partner_id == partner_id,
            _secrets.c.environment == environment,
            or_(_secrets.c.expires_at.is_(None), and_(_secrets.c.expires_at > ends)),
        )
        .values(expires_at=ends)
    )
    secret = await issue_webhook_secret(
        conn, box=box, partner_id=partner_id, environment=environment, now=now
    )
    return {
        "partner_id": partner_id,
        "environment": environment,
        "secret": secret,
        "previous_secrets_expire_at": ends.isoformat(),
    }


class SecretCache:
    """Unsealed secrets kept a few seconds: a rotation is picked up within ``ttl``."""

    def __init__(self, db: Database, box: SecretBox, *, ttl: float = 5.0) -> None:
        self._db = db
        self._box = box
        self._secrets: ExpiringCache[tuple[str, str], list[str]] = ExpiringCache(ttl_seconds=ttl)

    async def get(self, partner_id: str, environment: str, now: datetime) -> list[str]:
        async def look_up(key: tuple[str, str]) -> list[str]:
            async with self._db.read() as conn:
                return await active_secrets(
                    conn, box=self._box, partner_id=key[0], environment=key[1], now=now
                )

        return await self._secrets.get((partner_id, environment), look_up)
