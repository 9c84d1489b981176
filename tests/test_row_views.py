"""The typed row views mirror their tables: the same columns, the same types, read-only."""

from __future__ import annotations

import inspect

import pytest

from rehabref.db import Base
from rehabref.events.history import EventRow
from rehabref.events.subscriptions import EndpointRow
from rehabref.links.rows import LinkColumns
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.events import Event, WebhookEndpoint
from rehabref.tables.links import ReferralLink
from rehabref.tables.referrals import Referral

VIEWS = [
    (ReferralRow, Referral),
    (LinkColumns, ReferralLink),
    (EventRow, Event),
    (EndpointRow, WebhookEndpoint),
]


@pytest.mark.parametrize(("view", "model"), VIEWS, ids=lambda item: item.__name__)
def test_the_view_has_exactly_the_tables_columns_and_types(view: type, model: type[Base]) -> None:
    members = {name: value for name, value in vars(view).items() if isinstance(value, property)}
    assert set(members) == set(model.__table__.columns.keys())
    for name, member in members.items():
        returns = inspect.signature(member.fget).return_annotation
        assert f"Mapped[{returns}]" == model.__annotations__[name], name
