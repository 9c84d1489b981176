"""``POST /api/v1/partners/eligibility``: an HMO member's physiotherapy coverage."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response, post

from rehabref.eligibility import service
from rehabref.eligibility.schemas import EligibilityRequest
from rehabref.request_body import json_object, validate
from rehabref.services import services_of


@post("/api/v1/partners/eligibility", status_code=200)
async def check_eligibility(request: Request[Any, Any, Any]) -> Response[bytes]:
    services = services_of(request)
    principal = await services.auth.authenticate(request)
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


ROUTES = [check_eligibility]
