"""OpenAPI description of the card payment operations (docs/payments.md)."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.billing.schemas import PaymentRequestIn, PaymentRequestOut
from rehabref.openapi.operations import REQUEST_ID, Operation, errors, header

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsCreatePaymentRequest",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/payment-requests",),
        summary="Ask the patient to pay by card (Paystack)",
        description=(
            "Creates a payment request for a self-pay referral and sends the patient the link "
            "on their channel. `authorization_url` is our own link: it redirects to Paystack's "
            "checkout once the worker has initialized the transaction (test keys: the sandbox "
            "checkout, no Paystack call). A verified payment moves an attended referral to "
            "`paid` (`payment.completed`). A paid, closed or cancelled referral, or one billed "
            "to an HMO or employer, is 409 `invalid_transition`; a live referral on a server "
            "without Paystack is 409 `payments_not_configured`. Operator token only."
        ),
        tag="ops",
        request_model=PaymentRequestIn,
        parameters=[
            {"name": "referral_id", "in": "path", "required": True, "schema": {"type": "string"}},
            header(
                "Idempotency-Key",
                "Required: one unique value per payment request.",
                required=True,
            ),
        ],
        responses={
            201: ("The payment request.", PaymentRequestOut, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (PaymentRequestIn, PaymentRequestOut)
