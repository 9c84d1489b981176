"""Patients' rights on the ops API: data-subject requests and a withdrawal a coordinator
took by phone. Operator tokens only; both are logged in ``data_subject_requests``."""

from __future__ import annotations

import asyncio
import base64

from litestar import Response

from rehabref.clock import iso, utcnow
from rehabref.errors import ApiError
from rehabref.ops import service
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.ops.rights_schemas import ConsentWithdrawalIn, DataSubjectRequestIn
from rehabref.ops.views import referral_view
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.workflows import consent, data_subject
from rehabref.workflows.person_export_pdf import export_pdf


async def data_subject_request(
    request: PlainRequest, operator: OperatorPrincipal
) -> Response[bytes]:
    payload = validate(DataSubjectRequestIn, await json_object(request))
    try:
        who = data_subject.person(payload.phone, payload.email)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise ApiError(
            422,
            "validation_error",
            "Some fields are invalid; see error.fields.",
            fields={field: message},
        ) from None
    now = utcnow()
    services = services_of(request)
    async with services.db.write() as conn:
        outcome = await data_subject.handle(
            conn, ring=services.box.ring, kind=payload.kind, who=who, actor=operator.actor, now=now
        )
    # Rendering takes CPU time: off the event loop, as the discharge PDF.
    pdf = await asyncio.to_thread(export_pdf, outcome.export) if outcome.export else None
    return json_response(
        {
            "request_id": outcome.request_id,
            "kind": outcome.kind,
            "created_at": iso(now),
            "result": outcome.result,
            "export": outcome.export,
            "pdf_base64": base64.b64encode(pdf).decode() if pdf is not None else None,
        }
    )


async def record_withdrawal(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    payload = validate(ConsentWithdrawalIn, await json_object(request))
    services = services_of(request)
    async with services.db.write() as conn:
        done = await consent.withdraw_referral(
            conn,
            referral_id,
            ring=services.box.ring,
            actor=operator.actor,
            channel="phone",
            note=payload.note,
            now=utcnow(),
        )
        if done is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        row = await service.get_referral(conn, referral_id)
    assert row is not None  # withdrawn just now in this transaction
    return json_response(referral_view(services_of(request).box.ring, row))


ROUTES = [
    PlainRoute("POST", "/api/v1/ops/data-subject-requests", data_subject_request, auth=OPERATOR),
    PlainRoute(
        "POST",
        "/api/v1/ops/referrals/{referral_id}/consent-withdrawal",
        record_withdrawal,
        auth=OPERATOR,
    ),
]
