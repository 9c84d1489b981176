"""The typed row views mirror their tables: the same columns, the same types, read-only."""

from __future__ import annotations

import inspect

import pytest

from rehabref.audit.rows import AuditEventRow
from rehabref.billing.rows import PaymentRequestRow, PaymentRow
from rehabref.care.rows import (
    AppointmentRow,
    AvailabilityExceptionRow,
    AvailabilityRuleRow,
    BookablePhysio,
    CareSessionRow,
    SlotOfferRow,
)
from rehabref.db import Base
from rehabref.events.history import EventRow
from rehabref.events.subscriptions import EndpointRow
from rehabref.intake.rows import AssistantSessionRow
from rehabref.links.rows import LinkColumns
from rehabref.matching.rows import PhysioRow
from rehabref.referrals.rows import ContactTaskRow, PatientColumns, ReferralRow
from rehabref.tables.audit import AuditEvent
from rehabref.tables.billing import Payment, PaymentRequest
from rehabref.tables.care import CareSession
from rehabref.tables.events import Event, WebhookEndpoint
from rehabref.tables.intake import AssistantSession, ContactTask
from rehabref.tables.links import ReferralLink
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral
from rehabref.tables.scheduling import (
    Appointment,
    AvailabilityException,
    AvailabilityRule,
    SlotOffer,
)

VIEWS = [
    (ReferralRow, Referral),
    (LinkColumns, ReferralLink),
    (EventRow, Event),
    (EndpointRow, WebhookEndpoint),
    (AppointmentRow, Appointment),
    (CareSessionRow, CareSession),
    (PhysioRow, Physiotherapist),
    (PaymentRequestRow, PaymentRequest),
    (PaymentRow, Payment),
    (SlotOfferRow, SlotOffer),
    (AvailabilityRuleRow, AvailabilityRule),
    (AvailabilityExceptionRow, AvailabilityException),
    (AuditEventRow, AuditEvent),
    (AssistantSessionRow, AssistantSession),
    (ContactTaskRow, ContactTask),
]
# Views of the columns one reader needs: a subset of the table's, with the same types.
PARTIAL_VIEWS = [(BookablePhysio, Physiotherapist), (PatientColumns, Referral)]


def _members(view: type) -> dict[str, property]:
    """The view's properties, its own and those of the views it extends."""
    return {
        name: value
        for kind in reversed(view.__mro__)
        for name, value in vars(kind).items()
        if isinstance(value, property)
    }


def _check_types(members: dict[str, property], model: type[Base]) -> None:
    for name, member in members.items():
        returns = inspect.signature(member.fget).return_annotation
        assert f"Mapped[{returns}]" == model.__annotations__[name], name


@pytest.mark.parametrize(("view", "model"), VIEWS, ids=lambda item: item.__name__)
def test_the_view_has_exactly_the_tables_columns_and_types(view: type, model: type[Base]) -> None:
    members = _members(view)
    assert set(members) == set(model.__table__.columns.keys())
    _check_types(members, model)


@pytest.mark.parametrize(("view", "model"), PARTIAL_VIEWS, ids=lambda item: item.__name__)
def test_a_partial_view_names_only_the_tables_columns(view: type, model: type[Base]) -> None:
    members = _members(view)
    assert members and set(members) <= set(model.__table__.columns.keys())
    _check_types(members, model)
