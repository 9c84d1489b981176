"""Care reads a partner makes: its therapy sessions (spec 4.5), each inside its scope.

Every statement starts from the caller's ``PartnerScope``. The outcome report reads its
referral through the referral store (``referrals.store``) and then that referral's sessions
and assessments (``outcomes.load_outcome``). Never commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.referrals.store import person_conditions
from rehabref.scope import PartnerScope
from rehabref.tables.care import CareSession
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral

_sessions = table(CareSession)
_referrals = table(Referral)
_physios = table(Physiotherapist)


class SessionListRow(Protocol):
    """A ``care_sessions`` row as the partner session list reads it, with its provider."""

    @property
    def id(self) -> str: ...

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
    def completed_at(self) -> datetime | None: ...

    @property
    def pain_before(self) -> int | None: ...

    @property
    def pain_after(self) -> int | None: ...

    @property
    def notes_summary(self) -> str | None: ...

    @property
    def provider_name(self) -> str: ...


@dataclass(frozen=True)
class SessionFilter:
    referral_id: str | None = None
    patient_phone: str | None = None
    status: str | None = None
    scheduled_from: datetime | None = None
    scheduled_to: datetime | None = None
    # Whether a session at exactly ``scheduled_to`` is in (a timestamp) or out (a whole day).
    scheduled_to_inclusive: bool = True


async def list_sessions(
    conn: AsyncConnection, *, scope: PartnerScope, where: SessionFilter, ring: KeyRing
) -> Sequence[SessionListRow]:
    """In schedule order (then session number, then id). A patient's phone is matched
    through the referral's blind index (``ring``), never compared as a value."""
    statement = (
        scope.select(_sessions, _sessions, _physios.c.name.label("provider_name"))
        .join(_referrals, _referrals.c.id == _sessions.c.referral_id)
        .join(_physios, _physios.c.id == _sessions.c.physio_id)
        .where(*scope.where(_referrals))
        .order_by(_sessions.c.scheduled_at, _sessions.c.session_number, _sessions.c.id)
    )
    if where.referral_id is not None:
        statement = statement.where(_sessions.c.referral_id == where.referral_id)
    if where.patient_phone is not None:
        statement = statement.where(*person_conditions(ring, phone=where.patient_phone, email=None))
    if where.status is not None:
        statement = statement.where(_sessions.c.status == where.status)
    if where.scheduled_from is not None:
        statement = statement.where(_sessions.c.scheduled_at >= where.scheduled_from)
    if where.scheduled_to is not None:
        column = _sessions.c.scheduled_at
        statement = statement.where(
            column <= where.scheduled_to
            if where.scheduled_to_inclusive
            else column < where.scheduled_to
        )
    rows: Sequence[SessionListRow] = (await conn.execute(statement)).all()
    return rows
