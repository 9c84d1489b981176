"""The ops API's payment-request body and answer."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from rehabref.clock import iso
from rehabref.referrals.commission import MAX_AMOUNT_MINOR


class PaymentRequestIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={"examples": [{"amount_minor": 2000000, "currency": "NGN"}]},
    )

    amount_minor: Annotated[StrictInt, Field(ge=100, le=MAX_AMOUNT_MINOR)] = Field(
        description="Integer minor units (kobo); at least 100 (NGN 1)."
    )
    currency: Literal["NGN"] = Field(description="ISO 4217; Paystack charges NGN.")


def pay_url(base_url: str, pay_token: str) -> str:
    """Our hosted payment link: it redirects to Paystack's checkout once initialized."""
    return f"{base_url}/pay/{pay_token}"


def request_view(row: Any, base_url: str) -> dict[str, Any]:
    expires: datetime = row.expires_at
    return {
        "payment_request_id": row.id,
        "reference": row.reference,
        "authorization_url": pay_url(base_url, row.pay_token),
        "status": row.status,
        "amount_minor": row.amount_minor,
        "currency": row.currency,
        "expires_at": iso(expires),
    }


class PaymentRequestOut(BaseModel):
    """A payment request as the ops API answers it."""

    payment_request_id: str = Field(examples=["prq_01jd3k8e5v0m2c7h4q9w1x6y3z"])
    reference: str = Field(
        examples=["rr_4f1c0a9b2d3e5f6a7b8c9d0e"], description="Our Paystack transaction reference."
    )
    authorization_url: str = Field(
        description="The patient's payment link (ours): it redirects to Paystack's checkout "
        "once initialized; test keys get the sandbox checkout."
    )
    status: Literal["pending", "paid", "held", "refunded"]
    amount_minor: int
    currency: str = Field(examples=["NGN"])
    expires_at: str = Field(examples=["2026-12-01T09:00:00.000Z"])
