"""Booking into a physiotherapist's free slot from the console's referral page: the free
slots of the referral's physiotherapist, week by week in Lagos time, and the book,
reschedule and cancel forms, all through ``workflows.booking`` (the ops API's code).

Threat: a coordinator booking a slot someone else took a second earlier. The slot offered on
the page is only a suggestion: the booking re-checks it in the transaction (and the database's
unique index has the last word), and a taken slot answers 409 with the reason on the page,
never a 500.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Request, post
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record
from rehabref.care import appointments
from rehabref.care.schemas import parse_time
from rehabref.clock import utcnow
from rehabref.console.referral_view import render_referral
from rehabref.console.render import Posted, form_text, guarded_form, page, see_other
from rehabref.errors import ApiError
from rehabref.services import services_of
from rehabref.workflows import booking


def _starts_at(form: Any) -> datetime:
    try:
        return parse_time(str(form.get("starts_at") or ""))
    except ValueError:
        message = "Choose one of the free slots."
        raise ApiError(422, "validation_error", message, fields={"starts_at": message}) from None


def _reason(form: Any) -> str:
    reason = form_text(form, "reason", 500)
    if not reason:
        message = "Write the reason."
        raise ApiError(422, "validation_error", message, fields={"reason": message})
    return reason


async def _refused(
    request: Request[Any, Any, Any], posted: Posted, referral_id: str, exc: ApiError
) -> Template:
    # Field messages that only repeat the message (a taken slot's reason) are not repeated.
    detail = "; ".join(v for v in exc.fields.values() if v not in exc.message)
    return await render_referral(
        request,
        posted.signed,
        referral_id,
        error=f"{exc.message} {detail}".strip(),
        status=exc.status,
    )


@post("/console/referrals/{referral_id:str}/appointments", include_in_schema=False, status_code=200)
async def book_slot(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    actor = posted.signed.operator.actor
    try:
        starts_at = _starts_at(posted.form)
        reason = form_text(posted.form, "reason", 500) or None
        services = services_of(request)
        async with services.db.write() as conn:
            row = await booking.book_visit(
                conn,
                coverage=services.coverage,
                ring=services.box.ring,
                referral_id=referral_id,
                physio_id=None,
                starts_at=starts_at,
                care_mode=str(posted.form.get("care_mode") or ""),
                actor=actor,
                reason=reason,
                now=utcnow(),
            )
            await record(
                conn, entry(actor, "appointment.booked", referral_id=referral_id, subject=row.id)
            )
    except ApiError as exc:
        return await _refused(request, posted, referral_id, exc)
    return see_other(f"/console/referrals/{referral_id}?notice=slot_booked#appointment-h")


async def _referral_of(request: Request[Any, Any, Any], appointment_id: str) -> str | None:
    async with services_of(request).db.read() as conn:
        try:
            row = await appointments.get_appointment(conn, appointment_id)
        except ApiError:
            return None
    return str(row.referral_id)


@post(
    "/console/appointments/{appointment_id:str}/{action:str}",
    include_in_schema=False,
    status_code=200,
)
async def change_appointment(
    request: Request[Any, Any, Any], appointment_id: str, action: str
) -> Template | Redirect:
    """``reschedule`` (to another free slot) or ``cancel``; both need a reason."""
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    referral_id = await _referral_of(request, appointment_id)
    if referral_id is None or action not in {"reschedule", "cancel"}:
        return page(
            "message",
            {"title": "Not found", "message": "No such appointment or action."},
            signed=posted.signed,
            status=404,
        )
    actor = posted.signed.operator.actor
    try:
        reason = _reason(posted.form)
        now = utcnow()
        services = services_of(request)
        async with services.db.write() as conn:
            if action == "reschedule":
                row = await booking.reschedule_visit(
                    conn,
                    appointment_id=appointment_id,
                    starts_at=_starts_at(posted.form),
                    reason=reason,
                    actor=actor,
                    ring=services.box.ring,
                    now=now,
                )
            else:
                row = await booking.cancel_visit(
                    conn,
                    appointment_id=appointment_id,
                    reason=reason,
                    actor=actor,
                    ring=services.box.ring,
                    now=now,
                )
            done = "rescheduled" if action == "reschedule" else "cancelled"
            await record(
                conn, entry(actor, f"appointment.{done}", referral_id=referral_id, subject=row.id)
            )
    except ApiError as exc:
        return await _refused(request, posted, referral_id, exc)
    return see_other(f"/console/referrals/{referral_id}?notice=slot_{done}#appointment-h")


ROUTES = [book_slot, change_appointment]
