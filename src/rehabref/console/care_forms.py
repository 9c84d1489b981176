"""Recording therapy sessions from the console through ``care.sessions``."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from litestar import Request, post
from litestar.response import Redirect, Template
from sqlalchemy import select

from rehabref import fields
from rehabref.audit.trail import entry, record
from rehabref.care import sessions as care
from rehabref.clock import utcnow
from rehabref.console.referral_view import MODALITIES, render_referral
from rehabref.console.render import Posted, form_text, guarded_form, page, see_other
from rehabref.console.session import Signed
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.services import services_of
from rehabref.tables.care import CareSession
from rehabref.workflows.sessions import complete_session, schedule_session

_sessions = table(CareSession)


def _invalid(message: str) -> ApiError:
    return ApiError(422, "validation_error", message)


def _time(form: Any, name: str, *, default_now: bool) -> datetime:
    raw = str(form.get(name) or "").strip()
    if not raw and default_now:
        return utcnow()
    try:
        value = datetime.fromisoformat(raw)
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value
        return fields.in_date_range(value)
    except ValueError:
        raise _invalid("Enter a date and time (UTC) in the years 2000 to 2099.") from None


def _booking(form: Any) -> datetime:
    when = _time(form, "scheduled_at", default_now=False)
    try:
        return fields.bookable(when, now=utcnow())
    except ValueError as exc:
        raise _invalid(str(exc)) from None


def _number(form: Any, name: str) -> float | None:
    raw = str(form.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # "nan" and "inf" parse as floats
        raise _invalid(f"{name.replace('_', ' ').capitalize()} must be a number.")
    return value


def _pain(form: Any, name: str) -> int:
    raw = str(form.get(name) or "").strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 2) or not 0 <= int(raw) <= 10:
        raise _invalid("Pain scores are whole numbers from 0 to 10.")
    return int(raw)


async def _fail(
    request: Request[Any, Any, Any], signed: Signed, referral_id: str, exc: ApiError
) -> Template:
    detail = "; ".join(exc.fields.values()) if exc.fields else ""
    return await render_referral(
        request, signed, referral_id, error=f"{exc.message} {detail}".strip(), status=exc.status
    )


@post("/console/referrals/{referral_id:str}/sessions", include_in_schema=False, status_code=200)
async def schedule(request: Request[Any, Any, Any], referral_id: str) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    try:
        modality = str(form.get("modality") or "")
        if modality not in MODALITIES:
            raise _invalid("Choose the session modality.")
        services = services_of(request)
        async with services.db.write() as conn:
            session_id = await schedule_session(
                conn,
                coverage=services.coverage,
                referral_id=referral_id,
                scheduled_at=_booking(form),
                modality=modality,
                session_type=form_text(form, "session_type", 80) or "treatment",
                actor=signed.operator.actor,
                physio_id=str(form.get("physio_id") or "") or None,
            )
            item = entry(
                signed.operator.actor,
                "session.scheduled",
                referral_id=referral_id,
                subject=session_id,
            )
            await record(conn, item)
    except ApiError as exc:
        return await _fail(request, signed, referral_id, exc)
    return see_other(f"/console/referrals/{referral_id}?notice=session_scheduled")


async def _referral_of(request: Request[Any, Any, Any], session_id: str) -> str | None:
    async with services_of(request).db.read() as conn:
        row = (
            await conn.execute(select(_sessions.c.referral_id).where(_sessions.c.id == session_id))
        ).first()
    return None if row is None else str(row.referral_id)


@post("/console/sessions/{session_id:str}/{action:str}", include_in_schema=False, status_code=200)
async def session_action(
    request: Request[Any, Any, Any], session_id: str, action: str
) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    signed, form = posted.signed, posted.form
    referral_id = await _referral_of(request, session_id)
    if referral_id is None or action not in {"start", "complete", "cancel"}:
        return page(
            "message",
            {"title": "Not found", "message": "No such session or action."},
            signed=signed,
            status=404,
        )
    actor = signed.operator.actor
    try:
        services = services_of(request)
        async with services.db.write() as conn:
            if action == "start":
                await care.start_session(
                    conn,
                    session_id=session_id,
                    check_in_at=_time(form, "at", default_now=True),
                    check_in_lat=_number(form, "lat"),
                    check_in_lng=_number(form, "lng"),
                    actor=actor,
                )
            elif action == "complete":
                await complete_session(
                    conn,
                    ring=services.box.ring,
                    coverage=services.coverage,
                    session_id=session_id,
                    pain_before=_pain(form, "pain_before"),
                    pain_after=_pain(form, "pain_after"),
                    notes_summary=form_text(form, "notes_summary", 2000),
                    check_out_at=_time(form, "at", default_now=True),
                    check_out_lat=_number(form, "lat"),
                    check_out_lng=_number(form, "lng"),
                    actor=actor,
                )
            else:
                await care.cancel_session(
                    conn,
                    session_id=session_id,
                    reason=form_text(form, "reason", 500) or "cancelled",
                    actor=actor,
                    ring=services.box.ring,
                )
            done = {"start": "started", "complete": "completed", "cancel": "cancelled"}[action]
            item = entry(actor, f"session.{done}", referral_id=referral_id, subject=session_id)
            await record(conn, item)
    except ApiError as exc:
        return await _fail(request, signed, referral_id, exc)
    return see_other(f"/console/referrals/{referral_id}?notice=session_{done}")


ROUTES = [schedule, session_action]
