"""Request and response models for availability and appointments (ops API)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from rehabref import fields
from rehabref.care.availability import SLOT_MINUTES, WeeklyWindow, window_problem
from rehabref.care.schemas import BookableUtc

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)
ClockTime = Annotated[str, StringConstraints(pattern=r"^([01]\d|2[0-3]):[0-5]\d$|^24:00$")]
Reason = fields.text(500)


def _day(value: str) -> str:
    fields.calendar_date(value)
    return value


Day = Annotated[str, StringConstraints(max_length=10), AfterValidator(_day)]


def minutes(clock: str) -> int:
    hours, mins = clock.split(":")
    return int(hours) * 60 + int(mins)


def clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


class WindowIn(BaseModel):
    model_config = _strict

    weekday: Annotated[int, Field(ge=0, le=6, strict=True)] = Field(
        description="0 = Monday .. 6 = Sunday."
    )
    start: ClockTime = Field(examples=["09:00"], description="Lagos time, HH:MM.")
    end: ClockTime = Field(examples=["13:00"], description="Lagos time, HH:MM (24:00 allowed).")
    slot_minutes: Annotated[int, Field(strict=True)] = Field(
        60, description=f"One of {sorted(SLOT_MINUTES)}."
    )
    max_visits: Annotated[int, Field(ge=1, le=50, strict=True)] | None = Field(
        None, description="At most this many visits that day (the smallest cap of the day)."
    )

    def window(self) -> WeeklyWindow:
        return WeeklyWindow(
            weekday=self.weekday,
            start_minute=minutes(self.start),
            end_minute=minutes(self.end),
            slot_minutes=self.slot_minutes,
            max_visits=self.max_visits,
        )

    def problem(self) -> str | None:
        return window_problem(self.window())


class AvailabilityIn(BaseModel):
    model_config = _strict

    windows: list[WindowIn] = Field(max_length=50, description="Replaces every weekly window.")


class Window(BaseModel):
    weekday: int
    start: str
    end: str
    slot_minutes: int
    max_visits: int | None


class DaysOffRecord(BaseModel):
    days_off_id: str
    physio_id: str | None
    kind: str
    starts_on: str
    ends_on: str
    reason: str


class Availability(BaseModel):
    physio_id: str
    time_zone: Literal["Africa/Lagos"]
    windows: list[Window]
    days_off: list[DaysOffRecord]


class DaysOffIn(BaseModel):
    model_config = _strict

    starts_on: Day = Field(examples=["2026-12-24"])
    ends_on: Day = Field(examples=["2026-12-26"], description="Inclusive.")
    reason: Reason  # type: ignore[valid-type]

    def days(self) -> tuple[date, date]:
        return fields.calendar_date(self.starts_on), fields.calendar_date(self.ends_on)


class FreeSlot(BaseModel):
    physio_id: str
    starts_at: str
    ends_at: str


class FreeSlotList(BaseModel):
    data: list[FreeSlot]


class BookingIn(BaseModel):
    model_config = _strict

    starts_at: BookableUtc = Field(
        examples=["2026-11-30T09:00:00Z"], description="The start of a free slot (ISO 8601 UTC)."
    )
    care_mode: Literal["remote", "face_to_face"]
    physio_id: str | None = Field(
        None, max_length=40, description="Defaults to the referral's assigned physiotherapist."
    )
    reason: Reason | None = None  # type: ignore[valid-type]


class RescheduleIn(BaseModel):
    model_config = _strict

    starts_at: BookableUtc = Field(description="The start of another free slot.")
    reason: Reason  # type: ignore[valid-type]


class CancelIn(BaseModel):
    model_config = _strict

    reason: Reason  # type: ignore[valid-type]


class AppointmentRecord(BaseModel):
    appointment_id: str
    referral_id: str
    physio_id: str
    starts_at: str
    ends_at: str
    care_mode: str
    status: Literal["booked", "attended", "cancelled", "rescheduled"]
    session_id: str | None
    change_reason: str | None
    replaced_by: str | None
    attended_via: Literal["check_in", "override"] | None
    attended_at: str | None


class AppointmentList(BaseModel):
    data: list[AppointmentRecord]


class CalendarFeedRecord(BaseModel):
    physio_id: str = Field(examples=["phy_01m809eknq9reqrh1q9yd8kast"])
    url: str = Field(
        description="The feed's secret address, shown this once (only its digest is kept).",
        examples=["http://127.0.0.1:8000/calendar/3q2-7wEXAMPLEexampleEXAMPLEexampleEXAMPLE12.ics"],
    )
    created_at: str = Field(examples=["2026-11-24T19:30:00.000Z"])
    replaced_previous: bool = Field(
        description="Whether a feed was on before (its address stopped working).",
        examples=[False],
    )
