"""Partner onboarding and key lifecycle. Functions flush through the given connection only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import fields
from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.partners.keys import KEY_TYPES, generate_key, generate_webhook_secret, hash_key
from rehabref.tables.partners import ApiKey, Partner, WebhookSecret

_partners = table(Partner)
_keys = table(ApiKey)
_secrets = table(WebhookSecret)

ISSUED_AT_ONBOARDING = ("sk_test", "sk_live", "pk_test")
MAX_ACTIVE_KEYS = 2  # the current key and its successor during rotation


class PartnerError(Exception):
    """An operator mistake in a CLI command."""


@dataclass(frozen=True)
class Onboarding:
    partner_id: str
    keys: dict[str, str]

    def as_dict(self, *, test_phones: Sequence[str]) -> dict[str, Any]:
        """The onboarding output, with the sandbox's test phones issued with the keys."""
        return {
            "partner_id": self.partner_id,
            "keys": self.keys,
            "sandbox": {"test_phones": list(test_phones)},
        }


async def create_partner(
    conn: AsyncConnection,
    *,
    box: SecretBox,
    name: str,
    contract: str = "v1",
    commission_bps: int | None = None,
    commission_fixed_minor: int | None = None,
    show_payments: bool = False,
    contact_email: str | None = None,
) -> Onboarding:
    if contract not in {"v1", "g"}:
        raise PartnerError("contract must be v1 or g")
    if commission_bps is not None and not 0 <= commission_bps <= 10_000:
        raise PartnerError("commission-bps must be between 0 and 10000")
    if not name.strip():
        raise PartnerError("name must not be empty")
    if contact_email is not None:
        try:
            contact_email = fields.email(contact_email.strip())
        except ValueError:
            raise PartnerError(
                "contact-email must be an e-mail address like ops@partner.example"
            ) from None
    now = utcnow()
    partner_id = new_id("ptn")
    await conn.execute(
        insert(_partners),
        {
            "id": partner_id,
            "name": name.strip(),
            "contract": contract,
            "commission_bps": commission_bps,
            "commission_fixed_minor": commission_fixed_minor,
            "show_payments": show_payments,
            "contact_email": contact_email,
            "created_at": now,
        },
    )
    keys: dict[str, str] = {}
    for key_type in ISSUED_AT_ONBOARDING:
        keys[key_type] = await _insert_key(conn, partner_id=partner_id, key_type=key_type, now=now)
    for environment in ("test", "live"):
        keys[f"whsec_{environment}"] = await issue_webhook_secret(
            conn, box=box, partner_id=partner_id, environment=environment, now=now
        )
    return Onboarding(partner_id=partner_id, keys=keys)


async def _insert_key(
    conn: AsyncConnection, *, partner_id: str, key_type: str, now: datetime
) -> str:
    environment, kind = KEY_TYPES[key_type]
    key = generate_key(key_type)
    await conn.execute(
        insert(_keys),
        {
            "id": new_id("key"),
            "partner_id": partner_id,
            "environment": environment,
            "kind": kind,
            "key_hash": hash_key(key),
            "display_prefix": key[: len(key_type) + 5],
            "created_at": now,
            "revoked_at": None,
        },
    )
    return key


async def issue_webhook_secret(
    conn: AsyncConnection, *, box: SecretBox, partner_id: str, environment: str, now: datetime
) -> str:
    """A new active signing secret, stored sealed; returned in clear to be shown once."""
    secret = generate_webhook_secret(environment)
    await conn.execute(
        insert(_secrets),
        {
            "id": new_id("whs"),
            "partner_id": partner_id,
            "environment": environment,
            "sealed_secret": box.seal(secret),
            "created_at": now,
            "expires_at": None,
        },
    )
    return secret


async def rotate_key(conn: AsyncConnection, *, partner_id: str, key_type: str) -> dict[str, str]:
    """Issue a second active key of the same type; the old one stays valid until revoked."""
    if key_type not in KEY_TYPES:
        raise PartnerError(f"key type must be one of {', '.join(KEY_TYPES)}")
    await _require_partner(conn, partner_id)
    environment, kind = KEY_TYPES[key_type]
    active = (
        await conn.execute(
            select(func.count())
            .select_from(_keys)
            .where(
                _keys.c.partner_id == partner_id,
                _keys.c.environment == environment,
                _keys.c.kind == kind,
                _keys.c.revoked_at.is_(None),
            )
        )
    ).scalar_one()
    if active >= MAX_ACTIVE_KEYS:
        raise PartnerError(
            f"{active} active {key_type} keys already; revoke the old one before rotating again"
        )
    key = await _insert_key(conn, partner_id=partner_id, key_type=key_type, now=utcnow())
    return {"key_type": key_type, "key": key}


async def revoke_key(conn: AsyncConnection, *, partner_id: str, key_id: str) -> None:
    result = await conn.execute(
        update(_keys)
        .where(_keys.c.id == key_id, _keys.c.partner_id == partner_id, _keys.c.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    if result.rowcount != 1:
        raise PartnerError(f"no active key {key_id} for partner {partner_id}")


async def list_keys(conn: AsyncConnection, *, partner_id: str) -> list[dict[str, Any]]:
    await _require_partner(conn, partner_id)
    rows = await conn.execute(
        select(
            _keys.c.id,
            _keys.c.display_prefix,
            _keys.c.environment,
            _keys.c.kind,
            _keys.c.created_at,
            _keys.c.revoked_at,
        )
        .where(_keys.c.partner_id == partner_id)
        .order_by(_keys.c.id)
    )
    return [
        {
            "key_id": row.id,
            "prefix": row.display_prefix + "...",
            "environment": row.environment,
            "kind": row.kind,
            "created_at": str(row.created_at),
            "revoked": row.revoked_at is not None,
        }
        for row in rows
    ]


async def _require_partner(conn: AsyncConnection, partner_id: str) -> None:
    found = (
        await conn.execute(select(_partners.c.id).where(_partners.c.id == partner_id))
    ).scalar_one_or_none()
    if found is None:
        raise PartnerError(f"no partner {partner_id}")


async def count_partners(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(_partners))).scalar_one())
