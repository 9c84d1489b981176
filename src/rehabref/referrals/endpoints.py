"""Partner referral API: create (both paths), retrieve, and query."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, get, post
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import fields
from rehabref.cursors import page_params
from rehabref.errors import ApiError
from rehabref.idempotency import service as idempotency
from rehabref.idempotency.flow import create_idempotently
from rehabref.referrals import service, service_g
from rehabref.referrals.endpoints_g import create_referral_g
from rehabref.referrals.records import v1_record
from rehabref.referrals.records_g import g_record
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.referrals.shape import detect_shape
from rehabref.referrals.status import STATUSES
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of

CREATE_OPERATION = "referrals.create"


@post(["/api/v1/partners/referrals", "/v1/partner/referrals"], status_code=201)
async def create_referral(request: Request[Any, Any, Any]) -> Response[bytes]:
    services = services_of(request)
    principal = await services.auth.authenticate(request)
    body = await json_object(request)
    shape = detect_shape(body, contract=principal.contract)
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=shape == "v1")
    if shape == "g":
        return await create_referral_g(services, principal, body, key)
    payload = validate(ReferralCreateV1, body)
    settings = services.settings
    intake = service.IntakeSettings(
        box=services.box,
        base_url=settings.base_url,
        assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
    )

    async def create(conn: AsyncConnection) -> bytes:
        # A duplicate external_ref fails on the unique index (the conflict below); checking
        # first would cost a round trip on every create.
        created = await service.create_v1(conn, principal=principal, request=payload, intake=intake)
        return msgspec.json.encode(created)

    return await create_idempotently(
        services.db,
        principal=principal,
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        ttl_seconds=settings.idempotency_ttl_seconds,
        create=create,
        conflict=lambda: _duplicate(payload.external_ref),
        batch_inserts=True,
    )


def _duplicate(external_ref: str) -> ApiError:
    return ApiError(
        409,
        "duplicate_external_ref",
        "A referral with this external_ref already exists; retrieve it with "
        "GET /api/v1/partners/referrals?external_ref=...",
        fields={"external_ref": "Already used by another referral."},
    )


@get("/api/v1/partners/referrals/{referral_id:str}")
async def get_referral(request: Request[Any, Any, Any], referral_id: str) -> Response[bytes]:
    services = services_of(request)
    principal = await services.auth.authenticate(request)
    async with services.db.read() as conn:
        # Shape G: the key may be the referral id, the tracking code or the partner_reference.
        row = await service_g.resolve(conn, principal=principal, key=referral_id)
        if row is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        if row.shape == "g":
            return json_response(await g_record(conn, row, base_url=services.settings.base_url))
    return json_response(v1_record(row, principal))


@get("/api/v1/partners/referrals")
async def list_referrals(request: Request[Any, Any, Any]) -> Response[bytes]:
    services = services_of(request)
    principal = await services.auth.authenticate(request)
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, service.decode_cursor, problems)
    status = query.get("status")
    if status is not None and status not in STATUSES:
        problems["status"] = f"Must be one of: {', '.join(STATUSES)}."
    created_from = _timestamp(query.get("created_from"), "created_from", problems)
    created_to = _timestamp(query.get("created_to"), "created_to", problems)
    external_ref = query.get("external_ref")
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services.db.read() as conn:
        if external_ref is not None:
            row = await service.find_by_external_ref(
                conn, principal=principal, external_ref=external_ref
            )
            rows, has_more = ([row] if row is not None else []), False
        else:
            rows, has_more = await service.list_referrals(
                conn,
                principal=principal,
                status=status,
                created_from=created_from,
                created_to=created_to,
                before_id=before_id,
                limit=limit,
            )
        # Each referral in the shape it was created in (Shape G rows as the 2.4 record).
        data = [
            await g_record(conn, row, base_url=services.settings.base_url)
            if row.shape == "g"
            else v1_record(row, principal)
            for row in rows
        ]
    next_cursor = service.encode_cursor(rows[-1].id) if has_more and rows else None
    return json_response({"data": data, "has_more": has_more, "next_cursor": next_cursor})


def _timestamp(raw: str | None, name: str, problems: dict[str, str]) -> Any:
    if raw is None:
        return None
    try:
        return fields.utc_timestamp_any(raw)
    except ValueError as exc:
        problems[name] = str(exc)
        return None


ROUTES = [create_referral, get_referral, list_referrals]
