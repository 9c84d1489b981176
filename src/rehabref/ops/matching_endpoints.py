"""Coordinator (ops) API for the physiotherapist registry and manual matching.

Operator tokens only (``rehabref.ops.auth``); partner API keys get 401.
"""

from __future__ import annotations

from litestar import Response
from sqlalchemy import select

from rehabref.clock import iso, utcnow
from rehabref.cursors import page_envelope, page_params
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.matching import registry
from rehabref.matching.schemas import PhysioCreate, PhysioUpdate
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.tables.referrals import Referral
from rehabref.workflows.assignment import match_now

_referrals = table(Referral)


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "No physiotherapist with this identifier.")


async def create_physio(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    payload = validate(PhysioCreate, await json_object(request))
    async with services_of(request).db.write() as conn:
        row = await registry.create_physio(conn, data=payload, now=utcnow())
    return json_response(registry.record(row), 201)


async def list_physios(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    query = request.query_params
    problems: dict[str, str] = {}
    limit, after_id = page_params(query, registry.decode_cursor, problems)
    active: bool | None = None
    raw_active = query.get("active")
    if raw_active is not None:
        if raw_active not in {"true", "false"}:
            problems["active"] = "Must be true or false."
        active = raw_active == "true"
    city = query.get("city")
    if city is not None and not 1 <= len(city.strip()) <= 100:
        problems["city"] = "Must be 1 to 100 characters."
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services_of(request).db.read() as conn:
        rows, has_more = await registry.list_physios(
            conn, city=city, active=active, after_id=after_id, limit=limit
        )
    return json_response(
        page_envelope(
            [registry.record(row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=registry.encode_cursor,
        )
    )


async def get_physio(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        row = await registry.get_physio(conn, physio_id=physio_id)
    if row is None:
        raise _not_found()
    return json_response(registry.record(row))


async def update_physio(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    payload = validate(PhysioUpdate, await json_object(request))
    async with services_of(request).db.write() as conn:
        row = await registry.update_physio(conn, physio_id=physio_id, changes=payload, now=utcnow())
    return json_response(registry.record(row))


async def deactivate_physio(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    """Deactivated physiotherapists are never matched; existing assignments stay."""
    async with services_of(request).db.write() as conn:
        row = await registry.update_physio(
            conn, physio_id=physio_id, changes=PhysioUpdate(active=False), now=utcnow()
        )
    return json_response(registry.record(row))


async def match(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    """Run matching now (e.g. after an ``unmatched`` task was resolved by adding capacity)."""
    services = services_of(request)
    async with services.db.write() as conn:
        physio_id = await match_now(
            conn,
            roster=services.roster,
            ring=services.box.ring,
            referral_id=referral_id,
            actor=operator.actor,
            now=utcnow(),
        )
        matched_at = (
            await conn.execute(
                select(_referrals.c.matched_at).where(_referrals.c.id == referral_id)
            )
        ).scalar_one()
    return json_response(
        {
            "referral_id": referral_id,
            "matched": physio_id is not None,
            "physio_id": physio_id,
            "matched_at": iso(matched_at),
        }
    )


ROUTES = [
    PlainRoute("POST", "/api/v1/ops/physiotherapists", create_physio, auth=OPERATOR),
    PlainRoute("GET", "/api/v1/ops/physiotherapists", list_physios, auth=OPERATOR),
    PlainRoute("GET", "/api/v1/ops/physiotherapists/{physio_id}", get_physio, auth=OPERATOR),
    PlainRoute("PATCH", "/api/v1/ops/physiotherapists/{physio_id}", update_physio, auth=OPERATOR),
    PlainRoute(
        "POST",
        "/api/v1/ops/physiotherapists/{physio_id}/deactivate",
        deactivate_physio,
        auth=OPERATOR,
    ),
    PlainRoute("POST", "/api/v1/ops/referrals/{referral_id}/match", match, auth=OPERATOR),
]
