"""A referral's card payments in the console: send the patient a payment link.

The same workflow as the ops API (``workflows.payments.request_payment``); the form is
CSRF-guarded like every console form. The amount is typed in major units (naira) and
checked like the manual payment's.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record
from rehabref.billing.policy import CURRENCIES
from rehabref.clock import utcnow
from rehabref.console.referral import payment_of_form
from rehabref.console.referral_view import render_referral
from rehabref.console.render import Posted, guarded_form, see_other
from rehabref.errors import ApiError
from rehabref.services import services_of
from rehabref.workflows.payments import request_payment


@post(
    "/console/referrals/{referral_id:str}/payment-request",
    include_in_schema=False,
    status_code=200,
)
async def send_payment_link(
    request: Request[Any, Any, Any], referral_id: str
) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    services = services_of(request)
    try:
        amount = payment_of_form(posted.form)
        if amount.currency not in CURRENCIES:
            raise ApiError(422, "validation_error", "Card payments are charged in NGN.")
        async with services.db.write() as conn:
            row = await request_payment(
                conn,
                referral_id=referral_id,
                amount_minor=amount.amount_minor,
                currency=amount.currency,
                actor=posted.signed.operator.actor,
                base_url=services.settings.base_url,
                channels=services.channels,
                ring=services.box.ring,
                now=utcnow(),
                live_payments=services.paystack is not None,
            )
            await record(
                conn,
                entry(
                    posted.signed.operator.actor,
                    "payment_request.created",
                    referral_id=referral_id,
                    subject=row.id,
                ),
            )
    except ApiError as exc:
        return await render_referral(
            request, posted.signed, referral_id, error=exc.message, status=exc.status
        )
    return see_other(f"/console/referrals/{referral_id}?notice=payment_link_sent")


ROUTES = [send_payment_link]
