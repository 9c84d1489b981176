"""Operator authentication: ``Authorization: Bearer op_...`` tokens, their expiry and role.

Threat: a leaked or forgotten operator token reading patient data indefinitely, or every
coordinator reading the audit trail. Tokens can carry an expiry (``expires_at``; after it
the token is 401 like a revoked one) and a role: ``coordinator`` (the day-to-day ops API and
console) or ``admin`` (also the audit trail: routes with ``auth=ADMIN``). Partner API keys never
authenticate here: they fail the ``op_`` prefix check (401).

Ops routes declare ``auth=OPERATOR`` (any operator) or ``auth=ADMIN``; the router runs
``AUTHENTICATIONS`` (wired in app.py) once per request and hands the handler the
``OperatorPrincipal``.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.api_request import ApiRequest
from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.plain_asgi import Authentication, PlainRequest, RouteAuth
from rehabref.services import services_of
from rehabref.tables.operators import Operator

_operators = table(Operator)
_ALPHABET = string.ascii_letters + string.digits
TOKEN_PREFIX = "op_"  # noqa: S105 (a prefix, not a secret)


ROLES = ("coordinator", "admin")


@dataclass(frozen=True)
class OperatorPrincipal:
    operator_id: str
    name: str
    role: str = "coordinator"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def actor(self) -> str:
        return f"operator:{self.operator_id}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def create_operator(
    conn: AsyncConnection,
    *,
    name: str,
    role: str = "coordinator",
    expires_at: datetime | None = None,
) -> dict[str, str]:
    if role not in ROLES:
        raise ValueError(f"role must be one of: {', '.join(ROLES)}")
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
            "role": role,
            "expires_at": expires_at,
        },
    )
    return {"operator_id": operator_id, "token": token}


async def count_operators(conn: AsyncConnection) -> int:
    """Every operator ever created, revoked or not (the demo creates one only on a new
    database, so a revoked demo token is never silently replaced)."""
    return int((await conn.execute(select(func.count()).select_from(_operators))).scalar_one())


async def revoke_operator(conn: AsyncConnection, *, operator_id: str) -> bool:
    """Revoke an operator's token; their API calls and console sessions stop at once."""
    result = await conn.execute(
        update(_operators)
        .where(_operators.c.id == operator_id, _operators.c.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    return bool(result.rowcount)


def active(now: datetime) -> ColumnElement[bool]:
    """An operator whose token is neither revoked nor expired at ``now``."""
    return and_(
        _operators.c.revoked_at.is_(None),
        or_(_operators.c.expires_at.is_(None), _operators.c.expires_at > now),
    )


def principal_of(row: Any) -> OperatorPrincipal:
    return OperatorPrincipal(operator_id=row.id, name=row.name, role=row.role)


async def operator_by_token(
    conn: AsyncConnection, token: str, *, now: datetime | None = None
) -> OperatorPrincipal | None:
    if not token.startswith(TOKEN_PREFIX) or len(token) != len(TOKEN_PREFIX) + 43:
        return None
    row = (
        await conn.execute(
            select(_operators.c.id, _operators.c.name, _operators.c.role).where(
                _operators.c.token_hash == hash_token(token), active(now or utcnow())
            )
        )
    ).first()
    return None if row is None else principal_of(row)


async def authenticate_operator(request: ApiRequest, *, admin: bool = False) -> OperatorPrincipal:
    """For ops API routes: a valid, unrevoked, unexpired operator token or 401; with
    ``admin``, an admin's (403 for a coordinator)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        raise ApiError(401, "unauthenticated", "Send an operator token as a Bearer token.")
    async with services_of(request).db.read() as conn:
        principal = await operator_by_token(conn, token.strip())
    if principal is None:
        raise ApiError(401, "unauthenticated", "Missing, invalid or expired operator token.")
    if admin and not principal.is_admin:
        raise ApiError(403, "forbidden", "Only an admin operator can do this.")
    return principal


OPERATOR: RouteAuth[OperatorPrincipal] = RouteAuth("operator token")
ADMIN: RouteAuth[OperatorPrincipal] = RouteAuth("admin operator token")


async def _operator(request: PlainRequest, params: Mapping[str, str]) -> OperatorPrincipal:
    return await authenticate_operator(request)


async def _admin(request: PlainRequest, params: Mapping[str, str]) -> OperatorPrincipal:
    return await authenticate_operator(request, admin=True)


AUTHENTICATIONS = (Authentication(OPERATOR, _operator), Authentication(ADMIN, _admin))
