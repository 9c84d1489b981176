"""Partner referral API: create (both paths), retrieve, and query.

The hottest routes of the service: served as plain ASGI (``rehabref.plain_asgi``), not by
Litestar; ``ROUTES`` lists them for the router and the documentation check.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from litestar import Response

from rehabref import fields
from rehabref.api.audit_reads import name_read_referral
from rehabref.api.authentication import PARTNER_SECRET
from rehabref.api.referrals_g import create_referral_g
from rehabref.api_request import ApiRequest
from rehabref.clock import utcnow
from rehabref.cursors import page_params
from rehabref.errors import ApiError
from rehabref.idempotency import service as idempotency
from rehabref.idempotency.service import KeyOwner
from rehabref.plain_asgi import PlainRoute
from rehabref.principal import Principal
from rehabref.referrals import store
from rehabref.referrals.records import v1_record
from rehabref.referrals.records_g import g_records
from rehabref.referrals.responses import ReferralListEither, ReferralRecordEither
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.referrals.shape import detect_shape
from rehabref.referrals.status import STATUSES
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.scope import PartnerScope
from rehabref.services import Services, services_of
from rehabref.workflows import referral_created as created

CREATE_OPERATION = "referrals.create"


async def create_referral(request: ApiRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    body = await json_object(request)
    shape = detect_shape(body, contract=principal.contract)
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=shape == "v1")
    if shape == "g":
        return await create_referral_g(services, principal, body, key)
    payload = validate(ReferralCreateV1, body)
    settings = services.settings
    plan = created.plan_v1(
        principal=principal,
        request=payload,
        intake=created.IntakeSettings(
            box=services.box,
            base_url=settings.base_url,
            assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
            channels=services.channels,
        ),
        now=utcnow(),
        on_created=services.created_hooks(principal.environment),
    )
    # A duplicate external_ref fails on the unique index (the conflict below); checking
    # first would cost a round trip on every create.
    return await services.idempotency.create(
        owner=KeyOwner.partner(principal),
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        persist=partial(services.create_store.persist, plan),
        conflict=lambda: _duplicate(payload.external_ref),
    )


def _duplicate(external_ref: str) -> ApiError:
    return ApiError(
        409,
        "duplicate_external_ref",
        "A referral with this external_ref already exists; retrieve it with "
        "GET /api/v1/partners/referrals?external_ref=...",
        fields={"external_ref": "Already used by another referral."},
    )


async def get_referral(
    request: ApiRequest, principal: Principal, referral_id: str
) -> Response[bytes]:
    services = services_of(request)
    scope = PartnerScope.of(principal)
    async with services.db.fast_read() as fast:
        # By id (one indexed read), or for Shape G the tracking code or partner_reference.
        row = await store.find_by_key(fast, scope=scope, key=referral_id)
    if row is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    name_read_referral(request, row.id)
    if row.shape == "g":
        async with services.db.read() as conn:
            records = await g_records(
                conn, scope, [row], ring=services.box.ring, base_url=services.settings.base_url
            )
        return json_response(records[0])
    return json_response(v1_record(services.box.ring, row, principal))


async def list_referrals(request: ApiRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    scope = PartnerScope.of(principal)
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, store.decode_cursor, problems)
    status = query.get("status")
    if status is not None and status not in STATUSES:
        problems["status"] = f"Must be one of: {', '.join(STATUSES)}."
    created_from = _timestamp(query.get("created_from"), "created_from", problems)
    created_to = _timestamp(query.get("created_to"), "created_to", problems)
    external_ref = query.get("external_ref")
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    rows: Sequence[ReferralRow]
    async with services.db.fast_read() as fast:
        if external_ref is not None:
            row = await store.find_by_external_ref(fast, scope=scope, external_ref=external_ref)
            rows, has_more = ([row] if row is not None else []), False
        else:
            rows, has_more = await store.list_referrals(
                fast,
                scope=scope,
                status=status,
                created_from=created_from,
                created_to=created_to,
                before_id=before_id,
                limit=limit,
            )
    return json_response(
        ReferralListEither.after(
            await _records(services, principal, scope, rows),
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=store.encode_cursor,
        )
    )


async def _records(
    services: Services, principal: Principal, scope: PartnerScope, rows: Sequence[ReferralRow]
) -> list[ReferralRecordEither]:
    """Each referral in the shape it was created in (Shape G rows as the 2.4 record); the
    Shape G rows of a page are completed together, in a fixed number of queries."""
    g_rows = [row for row in rows if row.shape == "g"]
    if not g_rows:
        return [v1_record(services.box.ring, row, principal) for row in rows]
    async with services.db.read() as conn:
        g_by_id = {
            record.referral_id: record
            for record in await g_records(
                conn, scope, g_rows, ring=services.box.ring, base_url=services.settings.base_url
            )
        }
    return [
        g_by_id[row.id] if row.shape == "g" else v1_record(services.box.ring, row, principal)
        for row in rows
    ]


def _timestamp(raw: str | None, name: str, problems: dict[str, str]) -> Any:
    if raw is None:
        return None
    try:
        return fields.utc_timestamp_any(raw)
    except ValueError as exc:
        problems[name] = str(exc)
        return None


REFERRALS = "/api/v1/partners/referrals"
ROUTES = [
    PlainRoute("POST", REFERRALS, create_referral, auth=PARTNER_SECRET),
    PlainRoute("POST", "/v1/partner/referrals", create_referral, auth=PARTNER_SECRET),
    PlainRoute("GET", REFERRALS, list_referrals, auth=PARTNER_SECRET, audit="referrals.listed"),
    PlainRoute(
        "GET",
        REFERRALS + "/{referral_id}",
        get_referral,
        auth=PARTNER_SECRET,
        audit="referral.read",
    ),
]
