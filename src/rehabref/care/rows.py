"""The typed views of care rows (appointments, care sessions, slot offers, availability), as
the care stores return them.

Stores hand back SQLAlchemy rows; typing them lets mypy check each attribute a reader uses
(a misspelt column fails the type check, not a request) and that nothing assigns to a row.
The members mirror their tables one for one (``tests/test_row_views.py`` compares them).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Protocol


class AppointmentRow(Protocol):
    """One row of ``appointments``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def physio_id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def starts_at(self) -> datetime: ...

    @property
    def ends_at(self) -> datetime: ...

    @property
    def care_mode(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def change_reason(self) -> str | None: ...

    @property
    def replaced_by(self) -> str | None: ...

    @property
    def attended_via(self) -> str | None: ...

    @property
    def attended_at(self) -> datetime | None: ...

    @property
    def created_by(self) -> str: ...

    @property
    def updated_by(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...


class CareSessionRow(Protocol):
    """One row of ``care_sessions``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def physio_id(self) -> str: ...

    @property
    def session_number(self) -> int: ...

    @property
    def session_type(self) -> str: ...

    @property
    def modality(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def scheduled_at(self) -> datetime: ...

    @property
    def location_lat(self) -> float | None: ...

    @property
    def location_lng(self) -> float | None: ...

    @property
    def check_in_at(self) -> datetime | None: ...

    @property
    def check_in_lat(self) -> float | None: ...

    @property
    def check_in_lng(self) -> float | None: ...

    @property
    def check_in_accuracy_m(self) -> float | None: ...

    @property
    def check_in_refusal(self) -> str | None: ...

    @property
    def check_out_accuracy_m(self) -> float | None: ...

    @property
    def check_out_at(self) -> datetime | None: ...

    @property
    def check_out_lat(self) -> float | None: ...

    @property
    def check_out_lng(self) -> float | None: ...

    @property
    def completed_at(self) -> datetime | None: ...

    @property
    def pain_before(self) -> int | None: ...

    @property
    def pain_after(self) -> int | None: ...

    @property
    def notes_summary(self) -> str | None: ...

    @property
    def gps_check(self) -> dict[str, Any] | None: ...

    @property
    def invoice_reference(self) -> str | None: ...

    @property
    def cancel_reason(self) -> str | None: ...

    @property
    def created_by(self) -> str: ...

    @property
    def updated_by(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...


class SlotOfferRow(Protocol):
    """One row of ``slot_offers``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def physio_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def channel(self) -> str: ...

    @property
    def language(self) -> str: ...

    @property
    def care_mode(self) -> str: ...

    @property
    def slots(self) -> list[Any]: ...

    @property
    def status(self) -> str: ...

    @property
    def appointment_id(self) -> str | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def expires_at(self) -> datetime: ...

    @property
    def answered_at(self) -> datetime | None: ...


class AvailabilityRuleRow(Protocol):
    """One row of ``availability_rules``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def physio_id(self) -> str: ...

    @property
    def weekday(self) -> int: ...

    @property
    def start_minute(self) -> int: ...

    @property
    def end_minute(self) -> int: ...

    @property
    def slot_minutes(self) -> int: ...

    @property
    def max_visits(self) -> int | None: ...

    @property
    def created_by(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


class AvailabilityExceptionRow(Protocol):
    """One row of ``availability_exceptions``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def physio_id(self) -> str | None: ...

    @property
    def kind(self) -> str: ...

    @property
    def starts_on(self) -> date: ...

    @property
    def ends_on(self) -> date: ...

    @property
    def reason(self) -> str: ...

    @property
    def created_by(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


class BookablePhysio(Protocol):
    """What a booking reads of the physiotherapist's row (``physiotherapists``)."""

    @property
    def id(self) -> str: ...

    @property
    def partner_id(self) -> str | None: ...

    @property
    def environment(self) -> str: ...

    @property
    def active(self) -> bool: ...
