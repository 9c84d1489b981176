"""Every statement of the partner-facing stores carries its tenant scope.

Each public coroutine of ``STORE_MODULES`` is run here and every statement it executes is
inspected (``tests/support/scoping.py``): for each partner-owned table it touches, it must
compare ``partner_id`` and ``environment`` with bound values. The stores run on a SQLite
database of their own, where every statement, the compiled-once ``fastsql`` ones included,
goes through SQLAlchemy and can be seen.

A coroutine added to one of these modules fails ``test_every_store_function_is_checked``
until it is exercised below, unless it is named ``unscoped_*`` (a read by a public credential,
such as a tracking code) or takes an ``OperatorScope`` (a coordinator's read across partners):
both say in their signature that they cross tenants.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sqlalchemy import select

from rehabref.care import store as care_store
from rehabref.db import Database, table
from rehabref.events import history, subscriptions
from rehabref.links import service as links
from rehabref.referrals import records_g
from rehabref.referrals import store as referral_store
from rehabref.scope import PartnerScope
from rehabref.tables.links import ReferralLink
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral
from tests.support.databases import fresh_database
from tests.support.partners import TEST_RING
from tests.support.scoping import recorded_statements, unscoped_tables
from tests.support.tenants import EXTERNAL_REF, PARTNER_REFERENCE, Tenant, seed_tenants

STORE_MODULES: tuple[ModuleType, ...] = (
    referral_store,
    records_g,
    links,
    history,
    subscriptions,
    care_store,
)


@dataclass(frozen=True)
class Exercise:
    run: Callable[[Any, PartnerScope, Tenant], Awaitable[object]]
    writes: bool = False


async def _referral(conn: Any, scope: PartnerScope, tenant: Tenant) -> Any:
    return await referral_store.get_referral(conn, scope=scope, referral_id=tenant.g_id)


async def _link(conn: Any, scope: PartnerScope, tenant: Tenant) -> Any:
    return await links.get_link(conn, scope=scope, link_id=tenant.link_id)


async def _event(conn: Any, scope: PartnerScope, tenant: Tenant) -> Any:
    return await history.get_event(conn, scope=scope, event_id=tenant.event_id)


EXERCISES: dict[Callable[..., Any], Exercise] = {
    referral_store.get_referral: Exercise(_referral),
    referral_store.find_by_external_ref: Exercise(
        lambda c, s, t: referral_store.find_by_external_ref(c, scope=s, external_ref=EXTERNAL_REF)
    ),
    referral_store.find_id_by_partner_reference: Exercise(
        lambda c, s, t: referral_store.find_id_by_partner_reference(
            c, scope=s, partner_reference=PARTNER_REFERENCE
        )
    ),
    referral_store.find_by_key: Exercise(
        lambda c, s, t: referral_store.find_by_key(c, scope=s, key=t.tracking_code)
    ),
    referral_store.list_referrals: Exercise(
        lambda c, s, t: referral_store.list_referrals(
            c,
            scope=s,
            status="received",
            created_from=None,
            created_to=None,
            before_id="ref_zzzzzzzzzzzzzzzzzzzzzzzzzz",
            limit=20,
        )
    ),
    records_g.progress_of: Exercise(
        lambda c, s, t: _then(_referral(c, s, t), lambda row: records_g.progress_of(c, s, [row]))
    ),
    records_g.g_records: Exercise(
        lambda c, s, t: _then(
            _referral(c, s, t),
            lambda row: records_g.g_records(c, s, [row], ring=TEST_RING, base_url="http://x"),
        )
    ),
    links.create_link: Exercise(
        lambda c, s, t: links.create_link(c, scope=s, campaign="checked", expires_at=None),
        writes=True,
    ),
    links.get_link: Exercise(_link),
    links.list_links: Exercise(
        lambda c, s, t: links.list_links(c, scope=s, before_id=None, limit=5)
    ),
    links.deactivate_link: Exercise(
        lambda c, s, t: links.deactivate_link(c, scope=s, link_id=t.link_id), writes=True
    ),
    links.count_click: Exercise(
        lambda c, s, t: _then(_link(c, s, t), lambda row: links.count_click(c, link=row)),
        writes=True,
    ),
    history.list_events: Exercise(
        lambda c, s, t: history.list_events(
            c, scope=s, event_type="referral.created", referral_id=t.g_id, before_id=None, limit=5
        )
    ),
    history.get_event: Exercise(_event),
    history.deliveries_of: Exercise(
        lambda c, s, t: _then(
            _event(c, s, t), lambda row: history.deliveries_of(c, TEST_RING, events=[row])
        )
    ),
    history.redeliver: Exercise(
        lambda c, s, t: _then(_event(c, s, t), lambda row: history.redeliver(c, event=row)),
        writes=True,
    ),
    subscriptions.count_active: Exercise(lambda c, s, t: subscriptions.count_active(c, scope=s)),
    subscriptions.create_endpoint: Exercise(
        lambda c, s, t: subscriptions.create_endpoint(
            c, scope=s, url="https://hooks.example.com/new", enabled_events=None
        ),
        writes=True,
    ),
    subscriptions.list_endpoints: Exercise(
        lambda c, s, t: subscriptions.list_endpoints(c, scope=s)
    ),
    subscriptions.get_endpoint: Exercise(
        lambda c, s, t: subscriptions.get_endpoint(c, scope=s, endpoint_id=t.endpoint_id)
    ),
    subscriptions.delete_endpoint: Exercise(
        lambda c, s, t: subscriptions.delete_endpoint(c, scope=s, endpoint_id=t.endpoint_id),
        writes=True,
    ),
    subscriptions.enable_endpoint: Exercise(
        lambda c, s, t: subscriptions.enable_endpoint(c, scope=s, endpoint_id=t.endpoint_id),
        writes=True,
    ),
    care_store.list_sessions: Exercise(
        lambda c, s, t: care_store.list_sessions(
            c,
            scope=s,
            where=care_store.SessionFilter(
                referral_id=t.g_id, patient_phone="+2348031234567", status="completed"
            ),
            ring=TEST_RING,
        )
    ),
}


async def _then(first: Awaitable[Any], then: Callable[[Any], Awaitable[object]]) -> object:
    row = await first
    assert row is not None
    return await then(row)


def _crosses_tenants_by_signature(function: Callable[..., Any]) -> bool:
    if function.__name__.startswith("unscoped_"):
        return True
    scope = inspect.signature(function).parameters.get("scope")
    return scope is not None and "OperatorScope" in str(scope.annotation)


def _store_coroutines() -> Iterator[Callable[..., Any]]:
    for module in STORE_MODULES:
        for name, function in vars(module).items():
            if (
                not name.startswith("_")
                and inspect.iscoroutinefunction(function)
                and function.__module__ == module.__name__
            ):
                yield function


def test_every_store_function_is_checked() -> None:
    unchecked = {
        f"{function.__module__}.{function.__name__}"
        for function in _store_coroutines()
        if function not in EXERCISES and not _crosses_tenants_by_signature(function)
    }
    assert not unchecked, f"add these to EXERCISES (each must take a PartnerScope): {unchecked}"


@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("scopes"), backend="sqlite") as url:
        yield url


@pytest.mark.parametrize("function", list(EXERCISES), ids=lambda f: f"{f.__module__}.{f.__name__}")
async def test_store_statements_carry_the_scope(
    sqlite_url: str, function: Callable[..., Any]
) -> None:
    tenant = seed_tenants(sqlite_url)[0]
    scope = PartnerScope(tenant.partner_id, tenant.environment)
    exercise = EXERCISES[function]
    db = Database(sqlite_url, pool_size=1)
    try:
        connection = db.write() if exercise.writes else db.read()
        async with connection as conn:
            with recorded_statements() as statements:
                await exercise.run(conn, scope, tenant)
    finally:
        await db.dispose()
    assert statements, "the exercise ran no statement"
    for statement in statements:
        assert not unscoped_tables(statement), f"unscoped: {statement}"


def test_the_check_sees_a_missing_condition() -> None:
    referrals, partners, links_table = table(Referral), table(Partner), table(ReferralLink)
    scope = PartnerScope("ptn_x", "test")
    assert unscoped_tables(select(referrals).where(referrals.c.id == "ref_x")) == {"referrals"}
    assert unscoped_tables(
        select(referrals).where(referrals.c.partner_id == "ptn_x", referrals.c.id == "x")
    ) == {"referrals"}
    assert not unscoped_tables(scope.select(referrals).where(referrals.c.id == "ref_x"))
    # A join on partner ids is not a scope; partners (no environment) is not partner-owned.
    joined = select(links_table, partners.c.name).join(
        partners, partners.c.id == links_table.c.partner_id
    )
    assert unscoped_tables(joined) == {"referral_links"}
    # A scoped outer query does not scope an unscoped subquery of another table.
    counted = select(referrals.c.id).where(referrals.c.link_id == links_table.c.id)
    outer = scope.select(links_table, links_table.c.id, counted.scalar_subquery())
    assert unscoped_tables(outer) == {"referrals"}


def test_store_modules_write_no_tenant_filter_by_hand() -> None:
    """Stores build their conditions from a scope, not by comparing tenant columns by hand."""
    for module in STORE_MODULES:
        source = Path(inspect.getfile(module)).read_text()
        for needle in (".c.partner_id ==", ".c.environment =="):
            assert needle not in source, f"{module.__name__} filters by hand: {needle}"
