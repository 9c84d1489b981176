"""ReferralRow mirrors the referrals table: same columns, same types, nothing assignable."""

from __future__ import annotations

import inspect

from rehabref.referrals.rows import ReferralRow
from rehabref.tables.referrals import Referral


def test_referral_row_has_exactly_the_tables_columns_and_types() -> None:
    members = {
        name: value for name, value in vars(ReferralRow).items() if isinstance(value, property)
    }
    declared = {name: annotation for name, annotation in Referral.__annotations__.items()}
    assert set(members) == set(Referral.__table__.columns.keys())
    for name, member in members.items():
        returns = inspect.signature(member.fget).return_annotation
        assert f"Mapped[{returns}]" == declared[name], name
