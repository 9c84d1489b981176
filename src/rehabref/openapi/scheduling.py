"""OpenAPI description of availability and appointment (ops) operations."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rehabref.care.scheduling_schemas import (
    AppointmentList,
    AppointmentRecord,
    Availability,
    AvailabilityIn,
    BookingIn,
    CalendarFeedRecord,
    CancelIn,
    DaysOffIn,
    DaysOffRecord,
    FreeSlotList,
    RescheduleIn,
)
from rehabref.openapi.operations import REQUEST_ID, Operation, errors, query

_AUTH = (
    "Operator token only (`rehabref operators create`): `Authorization: Bearer op_...`. "
    "Partner API keys get 401."
)
_PERIOD = [
    query("from", {"type": "string", "maxLength": 10}, "First Lagos day, YYYY-MM-DD (today)."),
    query("days", {"type": "string", "maxLength": 3}, "Number of days, 1 to 31 (7)."),
]


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsGetAvailability",
        method="get",
        paths=("/api/v1/ops/physiotherapists/{physio_id}/availability",),
        summary="A physiotherapist's weekly windows and days off",
        description="Windows in Lagos time; days off from today on, with public holidays. " + _AUTH,
        tag="ops",
        parameters=[_path("physio_id")],
        responses={200: ("The availability.", Availability, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsSetAvailability",
        method="put",
        paths=("/api/v1/ops/physiotherapists/{physio_id}/availability",),
        summary="Replace a physiotherapist's weekly windows",
        description=(
            "Each window is cut into `slot_minutes` slots; `max_visits` caps the day's visits. "
            "Windows of one weekday must not overlap. Booked visits are kept. " + _AUTH
        ),
        tag="ops",
        request_model=AvailabilityIn,
        parameters=[_path("physio_id")],
        responses={
            200: ("The availability.", Availability, REQUEST_ID),
            **errors(400, 401, 404, 413, 422),
        },
    ),
    Operation(
        operation_id="opsAddLeave",
        method="post",
        paths=("/api/v1/ops/physiotherapists/{physio_id}/days-off",),
        summary="Record a physiotherapist's leave",
        description="Whole Lagos days, inclusive; the days offer no slots. " + _AUTH,
        tag="ops",
        request_model=DaysOffIn,
        parameters=[_path("physio_id")],
        responses={
            201: ("The days off.", DaysOffRecord, REQUEST_ID),
            **errors(400, 401, 404, 413, 422),
        },
    ),
    Operation(
        operation_id="opsAddPublicHoliday",
        method="post",
        paths=("/api/v1/ops/public-holidays",),
        summary="Record a public holiday",
        description="No physiotherapist offers slots on these days. " + _AUTH,
        tag="ops",
        request_model=DaysOffIn,
        responses={
            201: ("The holiday.", DaysOffRecord, REQUEST_ID),
            **errors(400, 401, 413, 422),
        },
    ),
    Operation(
        operation_id="opsRemoveDaysOff",
        method="delete",
        paths=("/api/v1/ops/days-off/{days_off_id}",),
        summary="Remove leave or a public holiday",
        description=_AUTH,
        tag="ops",
        parameters=[_path("days_off_id")],
        responses={204: ("Removed.", None, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsPhysioFreeSlots",
        method="get",
        paths=("/api/v1/ops/physiotherapists/{physio_id}/free-slots",),
        summary="A physiotherapist's free slots",
        description="Slots not booked, not on days off, under the day's cap, starting at least "
        "two hours from now. " + _AUTH,
        tag="ops",
        parameters=[_path("physio_id"), *_PERIOD],
        responses={200: ("Free slots.", FreeSlotList, REQUEST_ID), **errors(401, 404, 422)},
    ),
    Operation(
        operation_id="opsReferralFreeSlots",
        method="get",
        paths=("/api/v1/ops/referrals/{referral_id}/free-slots",),
        summary="Free slots of the referral's physiotherapist",
        description="409 `not_matched` while the referral has no physiotherapist. " + _AUTH,
        tag="ops",
        parameters=[_path("referral_id"), *_PERIOD],
        responses={
            200: ("Free slots.", FreeSlotList, REQUEST_ID),
            **errors(401, 404, 409, 422),
        },
    ),
    Operation(
        operation_id="opsBookVisit",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/appointments",),
        summary="Book a visit into a free slot",
        description=(
            "Moves the referral to `booked` (`appointment.booked`), schedules the care session, "
            "tells the patient and the physiotherapist and plans their reminders. A slot that "
            "is taken, not offered, on a day off or over the day's cap is 409 "
            "`slot_unavailable`; a referral with a booked visit is 409 (reschedule it). " + _AUTH
        ),
        tag="ops",
        request_model=BookingIn,
        parameters=[_path("referral_id")],
        responses={
            201: ("The appointment.", AppointmentRecord, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListAppointments",
        method="get",
        paths=("/api/v1/ops/referrals/{referral_id}/appointments",),
        summary="A referral's appointments",
        description="Every appointment, moved and cancelled ones too, by start. " + _AUTH,
        tag="ops",
        parameters=[_path("referral_id")],
        responses={200: ("Appointments.", AppointmentList, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsRescheduleVisit",
        method="post",
        paths=("/api/v1/ops/appointments/{appointment_id}/reschedule",),
        summary="Move a booked visit to another free slot",
        description="The old appointment becomes `rescheduled` with the reason; a new one is "
        "booked (`appointment.booked` with `rescheduled: true`). " + _AUTH,
        tag="ops",
        request_model=RescheduleIn,
        parameters=[_path("appointment_id")],
        responses={
            201: ("The new appointment.", AppointmentRecord, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsCancelVisit",
        method="post",
        paths=("/api/v1/ops/appointments/{appointment_id}/cancel",),
        summary="Cancel a booked visit",
        description="The slot is free again; the referral stays open for a new booking "
        "(`appointment.status: cancelled`). " + _AUTH,
        tag="ops",
        request_model=CancelIn,
        parameters=[_path("appointment_id")],
        responses={
            200: ("The appointment.", AppointmentRecord, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
)

_FEED = "/api/v1/ops/physiotherapists/{physio_id}/calendar-feed"
FEED_OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsCreateCalendarFeed",
        method="post",
        paths=(_FEED,),
        summary="A new secret calendar feed URL for a physiotherapist",
        description=(
            "An iCalendar (RFC 5545) feed of the physiotherapist's visits at "
            "`/calendar/{token}.ics` (256 random bits; only a digest is stored). The URL is "
            "in this answer once; the physiotherapist's previous feed stops working. Events "
            "carry the patient's first name, area and care mode only. " + _AUTH
        ),
        tag="ops",
        parameters=[_path("physio_id")],
        responses={
            201: ("The feed URL, shown once.", CalendarFeedRecord, REQUEST_ID),
            **errors(401, 404),
        },
    ),
    Operation(
        operation_id="opsRevokeCalendarFeed",
        method="delete",
        paths=(_FEED,),
        summary="Revoke a physiotherapist's calendar feed",
        description="The feed URL answers 404 from now on (204 also when none was on). " + _AUTH,
        tag="ops",
        parameters=[_path("physio_id")],
        responses={204: ("Revoked.", None, REQUEST_ID), **errors(401, 404)},
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    CalendarFeedRecord,
    AvailabilityIn,
    Availability,
    DaysOffIn,
    DaysOffRecord,
    FreeSlotList,
    BookingIn,
    RescheduleIn,
    CancelIn,
    AppointmentRecord,
    AppointmentList,
)
