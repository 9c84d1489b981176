"""One referral in the console: details, timeline, status moves, a consent withdrawal
taken by phone, event redelivery."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from rehabref import fields
from rehabref.clock import utcnow
from rehabref.console.audit_page import viewed
from rehabref.console.referral_view import render_referral
from rehabref.console.render import (
    Posted,
    form_text,
    guarded_form,
    page,
    see_other,
    to_login,
)
from rehabref.console.session import signed_in
from rehabref.errors import ApiError
from rehabref.events import history
from rehabref.fields import plain_text
from rehabref.referrals.transitions import AppointmentChange, PaymentChange
from rehabref.scope import OperatorScope
from rehabref.services import services_of
from rehabref.workflows.consent import withdraw_referral
from rehabref.workflows.moves import move_referral


@get("/console/referrals/{referral_id:str}", include_in_schema=False)
async def referral_page(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    answer = await render_referral(request, signed, referral_id)
    if answer.status_code == 200:
        await viewed(request, signed, "referral.read", referral_id)
    return answer


def _appointment(form: Any) -> AppointmentChange:
    raw = form.get("scheduled_at") or ""
    try:
        scheduled = datetime.fromisoformat(raw)
        scheduled = scheduled.replace(tzinfo=UTC) if scheduled.tzinfo is None else scheduled
        fields.bookable(fields.in_date_range(scheduled), now=utcnow())
    except ValueError:
        raise ApiError(
            422,
            "validation_error",
            "Enter the appointment date and time, at most two years ahead.",
        ) from None
    return AppointmentChange(scheduled_at=scheduled, care_mode=str(form.get("care_mode") or ""))


def payment_of_form(form: Any) -> PaymentChange:
    """An amount typed in major units (and its currency) as minor units; 422 otherwise."""
    try:
        amount = Decimal(str(form.get("amount") or "").replace(",", "").strip())
        minor = amount * 100
        # NaN, infinities and huge exponents raise (InvalidOperation, Overflow) or fail here.
        valid = (
            amount.is_finite()
            and amount > 0
            and minor == minor.to_integral_value()
            and 1 <= minor <= 2_000_000_000
        )
    except ArithmeticError:
        valid = False
    if not valid:
        raise ApiError(422, "validation_error", "Enter the amount paid, e.g. 20000 or 20000.50.")
    currency = str(form.get("currency") or "NGN").strip().upper()
    if len(currency) != 3 or not (currency.isascii() and currency.isalpha()):
        raise ApiError(422, "validation_error", "The currency is a 3-letter code such as NGN.")
    return PaymentChange(amount_minor=int(minor), currency=currency)


@post("/console/referrals/{referral_id:str}/transition", include_in_schema=False, status_code=200)
async def move(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    to = str(form.get("to") or "")
    try:
        reason = form_text(form, "reason", 500) or None
        appointment = _appointment(form) if to == "booked" else None
        payment = payment_of_form(form) if to == "paid" else None
        async with services_of(request).db.write() as conn:
            await move_referral(
                conn,
                referral_id=referral_id,
                to=to,
                actor=signed.operator.actor,
                reason=reason,
                appointment=appointment,
                payment=payment,
                ring=services_of(request).box.ring,
            )
    except ApiError as exc:
        detail = "; ".join(exc.fields.values()) if exc.fields else ""
        message = f"{exc.message} {detail}".strip()
        return await render_referral(request, signed, referral_id, error=message, status=exc.status)
    return see_other(f"/console/referrals/{referral_id}?notice=moved")


@post(
    "/console/referrals/{referral_id:str}/consent-withdrawal",
    include_in_schema=False,
    status_code=200,
)
async def record_withdrawal(
    request: Request[Any, Any, Any], referral_id: str
) -> Template | Redirect:
    """A withdrawal the patient gave by phone, with the coordinator's note."""
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    note = " ".join(str(form.get("note") or "").split())[:1000]
    try:
        note = plain_text(note) if note else ""
    except ValueError:
        note = ""
    if not note:
        return await render_referral(
            request, signed, referral_id, error="Write what the patient said.", status=422
        )
    services = services_of(request)
    async with services.db.write() as conn:
        done = await withdraw_referral(
            conn,
            referral_id,
            ring=services.box.ring,
            actor=signed.operator.actor,
            channel="phone",
            note=note,
            now=utcnow(),
        )
    if done is None:
        return await render_referral(request, signed, referral_id)
    return see_other(f"/console/referrals/{referral_id}?notice=withdrawn")


@post("/console/events/{event_id:str}/redeliver", include_in_schema=False, status_code=200)
async def redeliver(request: Request[Any, Any, Any], event_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    async with services_of(request).db.write() as conn:
        event = await history.get_event(conn, scope=OperatorScope(), event_id=event_id)
        queued = await history.redeliver(conn, event=event) if event is not None else []
    if event is None:
        return page(
            "message",
            {"title": "Not found", "message": "No event with this identifier."},
            signed=signed,
            status=404,
        )
    if not queued:
        return page(
            "message",
            {
                "title": "Nothing to deliver to",
                "message": "The partner has no active webhook endpoint for this event now.",
            },
            signed=signed,
            status=409,
        )
    back = form.get("back")
    if back == "deliveries":
        return see_other("/console/deliveries?notice=redelivered")
    if back == "queues":
        return see_other("/console/queues?queue=failed_deliveries&notice=redelivered")
    if event.referral_id:
        return see_other(f"/console/referrals/{event.referral_id}?notice=redelivered")
    return see_other("/console/deliveries?notice=redelivered")


ROUTES = [referral_page, move, record_withdrawal, redeliver]
