"""Coordinator (ops) API for availability and appointments. Operator tokens only.

Weekly windows and days off per physiotherapist, public holidays for everyone, the free
slots of a physiotherapist or of a referral's physiotherapist, and booking, moving and
cancelling visits (``workflows.booking``).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from litestar import Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.care import appointments
from rehabref.care.availability import LAGOS, DaysOff, overlapping
from rehabref.care.availability_store import (
    add_days_off,
    days_off_rows,
    remove_days_off,
    replace_windows,
    schedule_of,
    windows_of,
)
from rehabref.care.scheduling_schemas import (
    AvailabilityIn,
    BookingIn,
    CancelIn,
    DaysOffIn,
    RescheduleIn,
    clock,
)
from rehabref.care.schemas import parse_time
from rehabref.clock import as_utc, iso, utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.fields import calendar_date
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral
from rehabref.workflows import booking

_physios = table(Physiotherapist)
_referrals = table(Referral)
MAX_DAYS = 31


def _invalid(problems: dict[str, str]) -> ApiError:
    return ApiError(
        422, "validation_error", "Some fields are invalid; see error.fields.", fields=problems
    )


async def _require_physio(conn: AsyncConnection, physio_id: str) -> None:
    found = (await conn.execute(select(_physios.c.id).where(_physios.c.id == physio_id))).first()
    if found is None:
        raise ApiError(404, "not_found", "No physiotherapist with this identifier.")


def _days_off_view(row: Any) -> dict[str, Any]:
    return {
        "days_off_id": row.id,
        "physio_id": row.physio_id,
        "kind": row.kind,
        "starts_on": row.starts_on.isoformat(),
        "ends_on": row.ends_on.isoformat(),
        "reason": row.reason,
    }


async def _availability(conn: AsyncConnection, physio_id: str) -> dict[str, Any]:
    today = utcnow().astimezone(LAGOS).date()
    return {
        "physio_id": physio_id,
        "time_zone": "Africa/Lagos",
        "windows": [
            {
                "weekday": row.weekday,
                "start": clock(row.start_minute),
                "end": clock(row.end_minute),
                "slot_minutes": row.slot_minutes,
                "max_visits": row.max_visits,
            }
            for row in await windows_of(conn, physio_id)
        ],
        "days_off": [
            _days_off_view(row)
            for row in await days_off_rows(conn, physio_id=physio_id, since=today)
        ],
    }


async def get_availability(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        await _require_physio(conn, physio_id)
        view = await _availability(conn, physio_id)
    return json_response(view)


async def put_availability(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    payload = validate(AvailabilityIn, await json_object(request))
    problems = {
        f"windows.{n}": problem
        for n, item in enumerate(payload.windows)
        if (problem := item.problem()) is not None
    }
    windows = [item.window() for item in payload.windows]
    if not problems and overlapping(windows):
        problems["windows"] = "Two windows of the same weekday overlap."
    if problems:
        raise _invalid(problems)
    async with services_of(request).db.write() as conn:
        await _require_physio(conn, physio_id)
        await replace_windows(
            conn, physio_id=physio_id, windows=windows, actor=operator.actor, now=utcnow()
        )
        await record(conn, entry(operator.actor, "availability.changed", subject=physio_id))
        view = await _availability(conn, physio_id)
    return json_response(view)


def _days_off(payload: DaysOffIn, kind: str) -> DaysOff:
    starts_on, ends_on = payload.days()
    if ends_on < starts_on:
        raise _invalid({"ends_on": "Must not be before starts_on."})
    if (ends_on - starts_on).days > 366:
        raise _invalid({"ends_on": "At most a year at a time."})
    return DaysOff(starts_on=starts_on, ends_on=ends_on, kind=kind, reason=payload.reason)


async def add_leave(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    off = _days_off(validate(DaysOffIn, await json_object(request)), "leave")
    async with services_of(request).db.write() as conn:
        await _require_physio(conn, physio_id)
        days_off_id = await add_days_off(
            conn, physio_id=physio_id, off=off, actor=operator.actor, now=utcnow()
        )
        await record(conn, entry(operator.actor, "availability.days_off_added", subject=physio_id))
    return json_response(_off_view(days_off_id, physio_id, off), 201)


async def add_public_holiday(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    off = _days_off(validate(DaysOffIn, await json_object(request)), "public_holiday")
    async with services_of(request).db.write() as conn:
        days_off_id = await add_days_off(
            conn, physio_id=None, off=off, actor=operator.actor, now=utcnow()
        )
        await record(conn, entry(operator.actor, "availability.holiday_added", subject=days_off_id))
    return json_response(_off_view(days_off_id, None, off), 201)


def _off_view(days_off_id: str, physio_id: str | None, off: DaysOff) -> dict[str, Any]:
    return {
        "days_off_id": days_off_id,
        "physio_id": physio_id,
        "kind": off.kind,
        "starts_on": off.starts_on.isoformat(),
        "ends_on": off.ends_on.isoformat(),
        "reason": off.reason,
    }


async def delete_days_off(
    request: PlainRequest, operator: OperatorPrincipal, days_off_id: str
) -> Response[bytes]:
    async with services_of(request).db.write() as conn:
        if not await remove_days_off(conn, days_off_id):
            raise ApiError(404, "not_found", "No days off with this identifier.")
        await record(
            conn, entry(operator.actor, "availability.days_off_removed", subject=days_off_id)
        )
    return Response(content=b"", status_code=204)


def _period(query: Any) -> tuple[datetime, datetime]:
    """``from`` (a Lagos date, default today) and ``days`` (1..31, default 7)."""
    problems: dict[str, str] = {}
    start_day = utcnow().astimezone(LAGOS).date()
    raw_from = query.get("from")
    if raw_from is not None:
        try:
            start_day = calendar_date(raw_from)
        except ValueError as error:
            problems["from"] = str(error)
    raw_days = query.get("days") or "7"
    days = int(raw_days) if raw_days.isascii() and raw_days.isdigit() else 0
    if not 1 <= days <= MAX_DAYS:
        problems["days"] = f"Must be 1 to {MAX_DAYS}."
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    start = datetime.combine(start_day, time(0), tzinfo=LAGOS)
    return as_utc(start), as_utc(start + timedelta(days=days))


async def _free_slots(conn: AsyncConnection, physio_id: str, query: Any) -> dict[str, Any]:
    start, end = _period(query)
    schedule = await schedule_of(conn, physio_id=physio_id, start=start, end=end)
    slots = schedule.free_slots(start=start, end=end, now=utcnow())
    return {
        "data": [
            {"physio_id": physio_id, "starts_at": iso(s.starts_at), "ends_at": iso(s.ends_at)}
            for s in slots
        ]
    }


async def physio_free_slots(
    request: PlainRequest, operator: OperatorPrincipal, physio_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        await _require_physio(conn, physio_id)
        view = await _free_slots(conn, physio_id, request.query_params)
    return json_response(view)


async def referral_free_slots(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        physio_id = (
            await conn.execute(
                select(_referrals.c.assigned_physio_id).where(_referrals.c.id == referral_id)
            )
        ).first()
        if physio_id is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        if physio_id[0] is None:
            raise ApiError(
                409, "not_matched", "The referral has no physiotherapist yet; match it first."
            )
        view = await _free_slots(conn, physio_id[0], request.query_params)
    return json_response(view)


async def book(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    payload = validate(BookingIn, await json_object(request))
    services = services_of(request)
    async with services.db.write() as conn:
        row = await booking.book_visit(
            conn,
            coverage=services.coverage,
            referral_id=referral_id,
            physio_id=payload.physio_id,
            starts_at=parse_time(payload.starts_at),
            care_mode=payload.care_mode,
            actor=operator.actor,
            reason=payload.reason,
            ring=services_of(request).box.ring,
            now=utcnow(),
        )
        await record(
            conn,
            entry(operator.actor, "appointment.booked", referral_id=referral_id, subject=row.id),
        )
    return json_response(appointments.appointment_view(services_of(request).box.ring, row), 201)


async def list_for_referral(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        found = (
            await conn.execute(select(_referrals.c.id).where(_referrals.c.id == referral_id))
        ).first()
        if found is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        rows = await appointments.for_referral(conn, referral_id)
    ring = services_of(request).box.ring
    return json_response({"data": [appointments.appointment_view(ring, row) for row in rows]})


async def reschedule(
    request: PlainRequest, operator: OperatorPrincipal, appointment_id: str
) -> Response[bytes]:
    payload = validate(RescheduleIn, await json_object(request))
    async with services_of(request).db.write() as conn:
        row = await booking.reschedule_visit(
            conn,
            appointment_id=appointment_id,
            starts_at=parse_time(payload.starts_at),
            reason=payload.reason,
            actor=operator.actor,
            ring=services_of(request).box.ring,
            now=utcnow(),
        )
        await record(
            conn,
            entry(
                operator.actor,
                "appointment.rescheduled",
                referral_id=row.referral_id,
                subject=row.id,
            ),
        )
    return json_response(appointments.appointment_view(services_of(request).box.ring, row), 201)


async def cancel(
    request: PlainRequest, operator: OperatorPrincipal, appointment_id: str
) -> Response[bytes]:
    payload = validate(CancelIn, await json_object(request))
    async with services_of(request).db.write() as conn:
        row = await booking.cancel_visit(
            conn,
            appointment_id=appointment_id,
            reason=payload.reason,
            actor=operator.actor,
            ring=services_of(request).box.ring,
            now=utcnow(),
        )
        await record(
            conn,
            entry(
                operator.actor, "appointment.cancelled", referral_id=row.referral_id, subject=row.id
            ),
        )
    return json_response(appointments.appointment_view(services_of(request).box.ring, row))


_PHYSIO = "/api/v1/ops/physiotherapists/{physio_id}"
ROUTES = [
    PlainRoute("GET", f"{_PHYSIO}/availability", get_availability, auth=OPERATOR),
    PlainRoute("PUT", f"{_PHYSIO}/availability", put_availability, auth=OPERATOR),
    PlainRoute("POST", f"{_PHYSIO}/days-off", add_leave, auth=OPERATOR),
    PlainRoute("GET", f"{_PHYSIO}/free-slots", physio_free_slots, auth=OPERATOR),
    PlainRoute("POST", "/api/v1/ops/public-holidays", add_public_holiday, auth=OPERATOR),
    PlainRoute("DELETE", "/api/v1/ops/days-off/{days_off_id}", delete_days_off, auth=OPERATOR),
    PlainRoute(
        "GET", "/api/v1/ops/referrals/{referral_id}/free-slots", referral_free_slots, auth=OPERATOR
    ),
    PlainRoute("POST", "/api/v1/ops/referrals/{referral_id}/appointments", book, auth=OPERATOR),
    PlainRoute(
        "GET",
        "/api/v1/ops/referrals/{referral_id}/appointments",
        list_for_referral,
        auth=OPERATOR,
        audit="appointments.listed",
    ),
    PlainRoute(
        "POST", "/api/v1/ops/appointments/{appointment_id}/reschedule", reschedule, auth=OPERATOR
    ),
    PlainRoute("POST", "/api/v1/ops/appointments/{appointment_id}/cancel", cancel, auth=OPERATOR),
]
