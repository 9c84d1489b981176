"""``GET /api/v1/ops/audit-events``: the audit trail, for admin operators only.

Filters ``referral_id``, ``actor_id``, ``since`` (ISO 8601 UTC); the list envelope, newest
first, keyset pages by record id (time-ordered). Listing the trail is itself
recorded (``audit_events.listed``).
"""

from __future__ import annotations

from litestar import Response

from rehabref.audit.listing import AuditQuery, encode, event_view, list_events
from rehabref.cursors import page_envelope
from rehabref.errors import ApiError
from rehabref.ops.auth import ADMIN, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.responses import json_response
from rehabref.services import services_of


async def list_audit_events(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    problems: dict[str, str] = {}
    where = AuditQuery(request.query_params, problems)
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services_of(request).db.read() as conn:
        rows, has_more = await list_events(conn, where)
    return json_response(
        page_envelope(
            [event_view(row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=encode,
        )
    )


ROUTES = [
    PlainRoute(
        "GET",
        "/api/v1/ops/audit-events",
        list_audit_events,
        auth=ADMIN,
        audit="audit_events.listed",
    ),
]
