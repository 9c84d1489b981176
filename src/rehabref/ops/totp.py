"""Optional second factor for console sign-in: time-based one-time codes (RFC 6238, pyotp).

Threat: a copied operator token alone opening the console. An operator enrolled with
``rehabref operators enrol-totp`` also types the six-digit code of their authenticator app.
The shared secret is stored sealed with the instance secret, never in the clear. A code is
accepted for its 30-second step and one step either side (clock drift). The ops API's bearer
tokens are machine credentials and are not asked for codes (docs/security.md).
"""

from __future__ import annotations

from datetime import datetime

import pyotp
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.instance_secret import SecretBox
from rehabref.ops.auth import active
from rehabref.tables.operators import Operator

_operators = table(Operator)
ISSUER = "rehabref console"


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, account: str) -> str:
    """The ``otpauth://`` URI an authenticator app enrols from (as text or a QR code)."""
    return pyotp.TOTP(secret).provisioning_uri(name=account, issuer_name=ISSUER)


def code_ok(secret: str, code: str, now: datetime) -> bool:
    """Six ASCII digits matching the code of ``now``'s step or a neighbouring one."""
    code = code.strip()
    if len(code) != 6 or not (code.isascii() and code.isdigit()):
        return False
    return pyotp.TOTP(secret).verify(code, for_time=now, valid_window=1)


async def enrol(conn: AsyncConnection, box: SecretBox, operator_id: str) -> str | None:
    """Give an active operator a new TOTP secret; its provisioning URI, or None when there
    is no such active operator. Enrolling again replaces the secret (a lost phone)."""
    row = (
        await conn.execute(
            select(_operators.c.name).where(_operators.c.id == operator_id, active(utcnow()))
        )
    ).first()
    if row is None:
        return None
    secret = new_secret()
    await conn.execute(
        update(_operators)
        .where(_operators.c.id == operator_id)
        .values(totp_secret=box.seal(secret))
    )
    return provisioning_uri(secret, f"{row.name} ({operator_id})")


async def sealed_secret(conn: AsyncConnection, operator_id: str) -> str | None:
    secret: str | None = (
        await conn.execute(select(_operators.c.totp_secret).where(_operators.c.id == operator_id))
    ).scalar_one_or_none()
    return secret
