"""Partner API for hosted referral links: create, list (with counts), get, deactivate."""

from __future__ import annotations

import msgspec
from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import fields
from rehabref.api.authentication import PARTNER_SECRET
from rehabref.cursors import page_params
from rehabref.errors import ApiError
from rehabref.idempotency import service as idempotency
from rehabref.idempotency.service import KeyOwner
from rehabref.links import service
from rehabref.links.responses import ReferralLinkList
from rehabref.links.schemas import ReferralLinkCreate
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.scope import PartnerScope
from rehabref.services import services_of

CREATE_OPERATION = "referral_links.create"
BASE_PATH = "/api/v1/partners/referral-links"


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "No referral link with this id for this key's environment.")


async def create_link(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    body = await json_object(request)
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=False)
    payload = validate(ReferralLinkCreate, body)
    expires_at = fields.utc_timestamp_any(payload.expires_at) if payload.expires_at else None

    async def create(conn: AsyncConnection) -> bytes:
        row = await service.create_link(
            conn,
            scope=PartnerScope.of(principal),
            campaign=payload.campaign,
            expires_at=expires_at,
        )
        return msgspec.json.encode(service.record(row, services.settings.base_url))

    return await services.idempotency.create(
        owner=KeyOwner.partner(principal),
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        persist=services.idempotency.in_transaction(create),
        # Links have no unique field of their own: a unique violation here is the key's race.
        conflict=lambda: ApiError(409, "idempotency_in_flight", "Retry shortly with the same key."),
    )


async def list_links(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, service.decode_cursor, problems)
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services.db.read() as conn:
        rows, has_more = await service.list_links(
            conn,
            scope=PartnerScope.of(principal),
            before_id=before_id,
            limit=limit,
        )
    base_url = services.settings.base_url
    return json_response(
        ReferralLinkList.after(
            [service.record(row, base_url) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=service.encode_cursor,
        )
    )


async def get_link(request: PlainRequest, principal: Principal, link_id: str) -> Response[bytes]:
    services = services_of(request)
    async with services.db.read() as conn:
        row = await service.get_link(
            conn,
            scope=PartnerScope.of(principal),
            link_id=link_id,
        )
    if row is None:
        raise _not_found()
    return json_response(service.record(row, services.settings.base_url))


async def deactivate_link(
    request: PlainRequest, principal: Principal, link_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.write() as conn:
        row = await service.deactivate_link(
            conn,
            scope=PartnerScope.of(principal),
            link_id=link_id,
        )
    if row is None:
        raise _not_found()
    return json_response(service.record(row, services.settings.base_url))


ROUTES = [
    PlainRoute("POST", BASE_PATH, create_link, auth=PARTNER_SECRET),
    PlainRoute("GET", BASE_PATH, list_links, auth=PARTNER_SECRET),
    PlainRoute("GET", f"{BASE_PATH}/{{link_id}}", get_link, auth=PARTNER_SECRET),
    PlainRoute("DELETE", f"{BASE_PATH}/{{link_id}}", deactivate_link, auth=PARTNER_SECRET),
]
