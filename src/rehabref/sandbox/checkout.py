"""The sandbox's card checkout: test-key payment links show a local page with Pay and
Decline buttons instead of Paystack's checkout.

Threat: test keys must never charge a card or reach Paystack. The buttons (POST only) drive
the same handling as ``POST /webhooks/paystack`` (``workflows.paystack_events.receive``): a
``charge.success`` event signed with the instance's sandbox secret, verified against the
charge this page just made (``SandboxCharge``) instead of Paystack's verify. Pay verifies
as ``success``; Decline verifies as ``failed``, so, as with a live charge Paystack does not
confirm, nothing is recorded and the link stays payable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from litestar import Request, post
from litestar.response import Template

from rehabref.billing import policy, store
from rehabref.billing.signature import sign
from rehabref.clock import as_utc, utcnow
from rehabref.instance_secret import SecretBox
from rehabref.pages.assistant import PRIVATE_PAGE_HEADERS, message_page
from rehabref.pages.forms import posted_form
from rehabref.services import services_of
from rehabref.workflows import paystack_events

OUTCOMES = {"pay": "success", "decline": "failed"}


def sandbox_secret(box: SecretBox) -> str:
    """The key sandbox checkout events are signed with (derived from the instance secret)."""
    return box.sign("paystack/sandbox-webhook/v1")


@dataclass(frozen=True)
class SandboxCharge:
    """Paystack's verify, answered by the sandbox checkout for the one charge it made."""

    charge: policy.Charge

    async def verify(self, reference: str) -> policy.Charge:
        if reference != self.charge.reference:
            return policy.Charge(reference, "abandoned", 0, self.charge.currency)
        return self.charge


def checkout_page(row: Any) -> Template:
    return Template(
        template_name="pay/sandbox_checkout.html",
        context={
            "amount": policy.naira(row.amount_minor, row.currency),
            "reference": row.reference,
            "token": row.pay_token,
        },
        headers=PRIVATE_PAGE_HEADERS,
    )


@post("/pay/{token:str}/sandbox", include_in_schema=False, status_code=200)
async def sandbox_checkout(request: Request[Any, Any, Any], token: str) -> Template:
    services = services_of(request)
    form = await posted_form(request)
    outcome = OUTCOMES.get(str(form.get("outcome") or ""))
    async with services.db.read() as conn:
        row = await store.request_by_token(conn, token)
    if row is None or row.environment == "live" or outcome is None:
        return message_page("Link not recognised", "This payment link is not valid.", 404)
    if row.status != "pending" or policy.is_expired(as_utc(row.expires_at), utcnow()):
        return message_page("Nothing to pay", "This payment link is no longer payable.", 409)
    charge = policy.Charge(row.reference, outcome, row.amount_minor, row.currency)
    raw = json.dumps(
        {
            "event": "charge.success",
            "data": {
                "reference": row.reference,
                "status": outcome,
                "amount": row.amount_minor,
                "currency": row.currency,
                "metadata": {"referral_id": row.referral_id, "payment_request_id": row.id},
            },
        }
    ).encode()
    secret = sandbox_secret(services.box)
    await paystack_events.receive(
        services.db,
        ring=services.box.ring,
        raw=raw,
        signature=sign(secret, raw),
        secret=secret,
        gateway=SandboxCharge(charge),
        environment=row.environment,
        provider="sandbox",
    )
    if outcome == "failed":
        return message_page(
            "Payment declined",
            "The sandbox declined this card. No payment was recorded; the link still works.",
            200,
        )
    return message_page("Payment received", "Thank you. Your care team has your payment.", 200)


ROUTES = [sandbox_checkout]
