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
