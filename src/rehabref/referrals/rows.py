"""The typed views of a ``referrals`` row, as every referral store returns it, and of a
``contact_tasks`` row (the coordinator's queue).

Stores hand back ``result_rows.Record`` objects (or SQLAlchemy rows); typing them as
``ReferralRow`` lets mypy check each attribute a renderer reads (a misspelt column fails
the type check, not a request) and that nothing assigns to a row. The members mirror
``tables.referrals.Referral`` one for one (a test compares them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class PatientColumns(Protocol):
    """The patient's columns of a referral (sealed where ``referrals.sealing`` says), as a
    referral row or a row joined with them carries them."""

    @property
    def patient_first_name(self) -> str: ...

    @property
    def patient_last_name(self) -> str | None: ...

    @property
    def patient_phone(self) -> str | None: ...

    @property
    def patient_email(self) -> str | None: ...

    @property
    def patient_city(self) -> str: ...

    @property
    def patient_area(self) -> str | None: ...


class ReferralRow(PatientColumns, Protocol):
    """One row of ``referrals``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def shape(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def external_ref(self) -> str | None: ...

    @property
    def partner_reference(self) -> str | None: ...

    @property
    def tracking_code(self) -> str | None: ...

    @property
    def patient_phone_index(self) -> str | None: ...

    @property
    def patient_email_index(self) -> str | None: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def care_mode(self) -> str | None: ...

    @property
    def preferred_contact(self) -> str | None: ...

    @property
    def route(self) -> str | None: ...

    @property
    def consent_accepted(self) -> bool | None: ...

    @property
    def consent_accepted_at(self) -> datetime | None: ...

    @property
    def consent_version(self) -> str | None: ...

    @property
    def consent_source(self) -> str | None: ...

    @property
    def partner_metadata(self) -> str | None: ...

    @property
    def diagnosis(self) -> str | None: ...

    @property
    def recommended_sessions(self) -> int | None: ...

    @property
    def priority(self) -> str | None: ...

    @property
    def referring_doctor(self) -> str | None: ...

    @property
    def billing_mode(self) -> str | None: ...

    @property
    def callback_url(self) -> str | None: ...

    @property
    def appointment_status(self) -> str | None: ...

    @property
    def appointment_scheduled_at(self) -> datetime | None: ...

    @property
    def appointment_care_mode(self) -> str | None: ...

    @property
    def payment_currency(self) -> str | None: ...

    @property
    def payment_amount_minor(self) -> int | None: ...

    @property
    def commission_minor(self) -> int | None: ...

    @property
    def commission_status(self) -> str | None: ...

    @property
    def assigned_physio_id(self) -> str | None: ...

    @property
    def matched_at(self) -> datetime | None: ...

    @property
    def link_id(self) -> str | None: ...

    @property
    def campaign(self) -> str | None: ...

    @property
    def consent_withdrawn_at(self) -> datetime | None: ...

    @property
    def erased_at(self) -> datetime | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...


class ContactTaskRow(Protocol):
    """One row of ``contact_tasks``, read-only."""

    @property
    def id(self) -> str: ...

    @property
    def referral_id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def channel(self) -> str: ...

    @property
    def purpose(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def claimed_by(self) -> str | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...

    @property
    def outcome(self) -> str | None: ...

    @property
    def note(self) -> str | None: ...

    @property
    def completed_at(self) -> datetime | None: ...
