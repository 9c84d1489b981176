"""scope: the tenant conditions partner-facing statements are built from."""

from __future__ import annotations

import pytest
from sqlalchemy.dialects import postgresql

from rehabref.db import table
from rehabref.principal import Principal
from rehabref.scope import OperatorScope, PartnerScope, in_scope
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral

referrals = table(Referral)


def _sql(statement: object) -> str:
    compiled = statement.compile(
        dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}
    )
    return " ".join(str(compiled).split())


def test_a_partner_scope_is_made_from_the_principal() -> None:
    principal = Principal(
        key_id="key_1",
        partner_id="ptn_1",
        partner_name="Clinic",
        environment="live",
        kind="secret",
        contract="v1",
        show_payments=False,
        commission_bps=None,
        commission_fixed_minor=None,
    )
    assert PartnerScope.of(principal) == PartnerScope("ptn_1", "live")


def test_partner_statements_carry_both_conditions() -> None:
    scope = PartnerScope("ptn_1", "test")
    query = _sql(scope.select(referrals, referrals.c.id).where(referrals.c.status == "booked"))
    assert query == (
        "SELECT referrals.id FROM referrals WHERE referrals.partner_id = 'ptn_1' "
        "AND referrals.environment = 'test' AND referrals.status = 'booked'"
    )
    change = _sql(scope.update(referrals).values(status="closed"))
    assert change.endswith(
        "WHERE referrals.partner_id = 'ptn_1' AND referrals.environment = 'test'"
    )
    assert scope.columns() == {"partner_id": "ptn_1", "environment": "test"}


def test_compiled_once_statements_take_the_scope_as_parameters() -> None:
    scope = PartnerScope("ptn_1", "test")
    conditions = in_scope(referrals)
    assert [c.right.key for c in conditions] == ["scope_partner_id", "scope_environment"]
    assert scope.bind(id="ref_1") == {
        "scope_partner_id": "ptn_1",
        "scope_environment": "test",
        "id": "ref_1",
    }


def test_a_table_without_tenant_columns_cannot_be_scoped() -> None:
    partners = table(Partner)
    with pytest.raises(TypeError, match="partner_id and environment"):
        PartnerScope("ptn_1", "test").select(partners)
    with pytest.raises(TypeError):
        in_scope(partners)
    with pytest.raises(TypeError):
        OperatorScope().select(partners)


def test_an_operator_scope_crosses_partners_unless_narrowed() -> None:
    assert _sql(OperatorScope().select(referrals, referrals.c.id)) == (
        "SELECT referrals.id FROM referrals"
    )
    narrowed = _sql(OperatorScope(environment="live").select(referrals, referrals.c.id))
    assert narrowed == "SELECT referrals.id FROM referrals WHERE referrals.environment = 'live'"


def test_the_owner_scope_of_a_row_found_by_a_public_code() -> None:
    class Row:
        partner_id = "ptn_2"
        environment = "live"

    assert PartnerScope.owning(Row()) == PartnerScope("ptn_2", "live")
