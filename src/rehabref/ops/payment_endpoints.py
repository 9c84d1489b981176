"""``POST /api/v1/ops/referrals/{referral_id}/payment-requests``: a coordinator asks the
patient to pay an amount by card (docs/payments.md).

Operator token and an Idempotency-Key (required: a retried request must not send the patient
a second link), scoped to the operator. Live referrals need Paystack configured (else 409);
test-key referrals get the sandbox checkout. The answer's ``authorization_url`` is our own
payment link, which redirects to Paystack's checkout once the worker has initialized it.
"""

from __future__ import annotations

import msgspec
from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.billing.schemas import PaymentRequestIn, request_view
from rehabref.clock import utcnow
from rehabref.errors import ApiError
from rehabref.idempotency import service as idempotency
from rehabref.idempotency.service import KeyOwner
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.services import services_of
from rehabref.workflows.payments import request_payment

OPERATION = "payment_requests.create"


async def create_payment_request(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    services = services_of(request)
    body = await json_object(request)
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=True)
    payload = validate(PaymentRequestIn, body)
    settings = services.settings

    async def create(conn: AsyncConnection) -> bytes:
        row = await request_payment(
            conn,
            referral_id=referral_id,
            amount_minor=payload.amount_minor,
            currency=payload.currency,
            actor=operator.actor,
            base_url=settings.base_url,
            channels=services.channels,
            ring=services.box.ring,
            now=utcnow(),
            live_payments=services.paystack is not None,
        )
        await record(
            conn,
            entry(
                operator.actor, "payment_request.created", referral_id=referral_id, subject=row.id
            ),
        )
        return msgspec.json.encode(request_view(row, settings.base_url))

    return await services.idempotency.create(
        owner=KeyOwner.operator(operator.operator_id),
        key=key,
        operation=f"{OPERATION}:{referral_id[:64]}",
        body=body,
        persist=services.idempotency.in_transaction(create),
        conflict=lambda: ApiError(409, "idempotency_in_flight", "Retry shortly with the same key."),
    )


ROUTES = [
    PlainRoute(
        "POST",
        "/api/v1/ops/referrals/{referral_id}/payment-requests",
        create_payment_request,
        auth=OPERATOR,
    ),
]
