"""Operator (coordinator) authentication: ``Authorization: Bearer op_...`` tokens.

Partner API keys never authenticate here: they fail the ``op_`` prefix check (401).
"""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.api_request import ApiRequest
from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.services import services_of
from rehabref.tables.operators import Operator

_operators = table(Operator)
_ALPHABET = string.ascii_letters + string.digits
TOKEN_PREFIX = "op_"  # noqa: S105 (a prefix, not a secret)


@dataclass(frozen=True)
class OperatorPrincipal:
    operator_id: str
    name: str

    @property
    def actor(self) -> str:
        return f"operator:{self.operator_id}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create_operator(conn: AsyncConnection, *, name: str) -> dict[str, str]:
    token = TOKEN_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(43))
    operator_id = new_id("opr")
    await conn.execute(
        insert(_operators),
        {
            "id": operator_id,
            "name": name.strip(),
            "token_hash": hash_token(token),
            "created_at": utcnow(),
            "revoked_at": None,
        },
    )
    return {"operator_id": operator_id, "token": token}


async def revoke_operator(conn: AsyncConnection, *, operator_id: str) -> bool:
    """Revoke an operator's token; their API calls and console sessions stop at once."""
    result = await conn.execute(
        update(_operators)
        .where(_operators.c.id == operator_id, _operators.c.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    return bool(result.rowcount)


async def operator_by_token(conn: AsyncConnection, token: str) -> OperatorPrincipal | None:
    if not token.startswith(TOKEN_PREFIX) or len(token) != len(TOKEN_PREFIX) + 43:
        return None
    row = (
        await conn.execute(
            select(_operators.c.id, _operators.c.name).where(
                _operators.c.token_hash == hash_token(token), _operators.c.revoked_at.is_(None)
            )
        )
    ).first()
    return None if row is None else OperatorPrincipal(operator_id=row.id, name=row.name)


async def authenticate_operator(request: ApiRequest) -> OperatorPrincipal:
    """For ops API endpoints: a valid, unrevoked operator token or 401."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        raise ApiError(401, "unauthenticated", "Send an operator token as a Bearer token.")
    async with services_of(request).db.read() as conn:
        principal = await operator_by_token(conn, token.strip())
    if principal is None:
        raise ApiError(401, "unauthenticated", "Missing or invalid operator token.")
    return principal
