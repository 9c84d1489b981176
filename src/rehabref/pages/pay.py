"""The patient's payment link ``/pay/<token>`` (also Paystack's ``callback_url``).

Threat: the link travels by SMS and WhatsApp and may be forwarded; it holds no patient data
(an unguessable token, not logged: the access log writes the route template) and shows only
the amount and our reference. Live requests redirect to Paystack's checkout once the worker
has initialized them (a short "preparing" page that refreshes until then); test-key requests
show the sandbox checkout (``sandbox/checkout.py``), which never reaches Paystack.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Redirect, Template

from rehabref.billing import policy, store
from rehabref.clock import as_utc, utcnow
from rehabref.pages.assistant import PRIVATE_PAGE_HEADERS, message_page
from rehabref.sandbox.checkout import checkout_page
from rehabref.services import services_of

DONE = {
    "paid": ("Payment received", "Thank you. Your care team has your payment."),
    "held": ("Payment received", "Thank you. Your care team will confirm your payment."),
    "refunded": ("Payment refunded", "This payment was refunded to your card."),
}


@get("/pay/{token:str}", include_in_schema=False)
async def pay_page(request: Request[Any, Any, Any], token: str) -> Template | Redirect:
    async with services_of(request).db.read() as conn:
        row = await store.request_by_token(conn, token)
    if row is None:
        return message_page("Link not recognised", "This payment link is not valid.", 404)
    if row.status in DONE:
        title, message = DONE[row.status]
        return message_page(title, message, 200)
    if policy.is_expired(as_utc(row.expires_at), utcnow()):
        return message_page(
            "This payment link has expired",
            "Ask your care team for a new payment link.",
            410,
        )
    if row.environment != "live":
        return checkout_page(row)
    if row.init_state == "done" and row.authorization_url:
        return Redirect(path=row.authorization_url, status_code=303, headers=PRIVATE_PAGE_HEADERS)
    if row.init_state == "failed":
        return message_page(
            "Payment is not available right now",
            "Please contact your care team: they will send you a new payment link.",
            503,
        )
    return Template(
        template_name="pay/preparing.html",
        context={"amount": policy.naira(row.amount_minor, row.currency)},
        headers=PRIVATE_PAGE_HEADERS,
    )


ROUTES = [pay_page]
