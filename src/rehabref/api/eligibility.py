"""``POST /api/v1/partners/eligibility``: an HMO member's physiotherapy coverage."""

from __future__ import annotations

import msgspec
from litestar import Response

from rehabref.api.authentication import PARTNER_SECRET
from rehabref.eligibility import service
from rehabref.eligibility.schemas import EligibilityRequest
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.request_body import json_object, validate
from rehabref.services import services_of


async def check_eligibility(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    payload = validate(EligibilityRequest, await json_object(request))
    async with services.db.read() as conn:
        status, body = await service.check(
            conn,
            principal=principal,
            request=payload,
            box=services.box,
            adapter=services.coverage.for_environment(principal.environment),
        )
    return Response(
        content=msgspec.json.encode(body),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


ROUTES = [
    PlainRoute(
        "POST",
        "/api/v1/partners/eligibility",
        check_eligibility,
        auth=PARTNER_SECRET,
        audit="eligibility.checked",
    ),
]
