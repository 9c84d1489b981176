"""Each partner-facing store, called directly, returns and changes only its own tenant's rows.

Four tenants (two partners, each in both environments) hold look-alike data with the same
external_ref, partner_reference and campaign (``tests/support/tenants.py``); each store is
asked, in each tenant's scope, for every tenant's rows. Runs on the selected database; the
referral reads also on the raw hot-path connection (``Database.fast_read``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from rehabref.care import store as care_store
from rehabref.db import Database
from rehabref.events import history, subscriptions
from rehabref.links import service as links
from rehabref.referrals import records_g
from rehabref.referrals import store as referral_store
from rehabref.scope import OperatorScope, PartnerScope
from tests.support.partners import TEST_RING
from tests.support.tenants import EXTERNAL_REF, PARTNER_REFERENCE, Tenant, seed_tenants


@pytest.fixture(scope="module")
def tenants(database_url: str) -> list[Tenant]:
    return seed_tenants(database_url)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url, pool_size=2)
    yield database
    await database.dispose()


def _scope(tenant: Tenant) -> PartnerScope:
    return PartnerScope(tenant.partner_id, tenant.environment)


async def test_referral_store_finds_only_its_tenants_referrals(
    db: Database, tenants: list[Tenant]
) -> None:
    for tenant in tenants:
        scope = _scope(tenant)
        async with db.fast_read() as conn:
            for other in tenants:
                mine = other is tenant
                for referral_id in (other.v1_id, other.g_id):
                    found = await referral_store.get_referral(
                        conn, scope=scope, referral_id=referral_id
                    )
                    assert (found is not None) == mine
                for key in (other.g_id, other.tracking_code, other.tracking_code.lower()):
                    found = await referral_store.find_by_key(conn, scope=scope, key=key)
                    assert (found is not None) == mine
            by_ref = await referral_store.find_by_external_ref(
                conn, scope=scope, external_ref=EXTERNAL_REF
            )
            by_reference = await referral_store.find_by_key(
                conn, scope=scope, key=PARTNER_REFERENCE
            )
            reference_id = await referral_store.find_id_by_partner_reference(
                conn, scope=scope, partner_reference=PARTNER_REFERENCE
            )
            rows, has_more = await referral_store.list_referrals(
                conn,
                scope=scope,
                status=None,
                created_from=None,
                created_to=None,
                before_id=None,
                limit=100,
            )
        assert by_ref is not None and by_ref.id == tenant.v1_id
        assert by_reference is not None and by_reference.id == tenant.g_id
        assert reference_id == tenant.g_id
        assert [row.id for row in rows] == [tenant.g_id, tenant.v1_id]
        assert not has_more


async def test_g_records_count_only_the_tenants_sessions(
    db: Database, tenants: list[Tenant]
) -> None:
    tenant = tenants[0]
    scope = _scope(tenant)
    async with db.read() as conn:
        row = await referral_store.get_referral(conn, scope=scope, referral_id=tenant.g_id)
        assert row is not None
        progress = await records_g.progress_of(conn, scope, [row])
        # Rows of another tenant handed to this scope find none of their sessions.
        other = tenants[1]
        foreign = await referral_store.get_referral(
            conn, scope=_scope(other), referral_id=other.g_id
        )
        assert foreign is not None
        foreign_progress = await records_g.progress_of(conn, scope, [foreign])
    assert (progress[tenant.g_id].sessions_completed, progress[tenant.g_id].sessions_active) == (
        1,
        2,
    )
    assert foreign_progress[other.g_id].sessions_active == 0


async def test_link_store_reads_and_changes_only_its_tenants_links(
    db: Database, tenants: list[Tenant]
) -> None:
    owner, *others = tenants
    for tenant in tenants:
        async with db.read() as conn:
            rows, _ = await links.list_links(conn, scope=_scope(tenant), before_id=None, limit=100)
            assert [row.id for row in rows] == [tenant.link_id]
            for other in tenants:
                found = await links.get_link(conn, scope=_scope(tenant), link_id=other.link_id)
                assert (found is not None) == (other is tenant)
    for other in others:
        async with db.write() as conn:
            refused = await links.deactivate_link(conn, scope=_scope(other), link_id=owner.link_id)
        assert refused is None
    async with db.read() as conn:
        still = await links.get_link(conn, scope=_scope(owner), link_id=owner.link_id)
    assert still is not None and still.active and still.deactivated_at is None


async def test_event_history_shows_only_its_tenants_events(
    db: Database, tenants: list[Tenant]
) -> None:
    for tenant in tenants:
        async with db.read() as conn:
            rows, _ = await history.list_events(
                conn,
                scope=_scope(tenant),
                event_type=None,
                referral_id=None,
                before_id=None,
                limit=100,
            )
            assert [row.id for row in rows] == [tenant.event_id]
            for other in tenants:
                found = await history.get_event(conn, scope=_scope(tenant), event_id=other.event_id)
                assert (found is not None) == (other is tenant)
    # Coordinators see every partner, or the one they name (in both environments).
    partner = tenants[0].partner_id
    async with db.read() as conn:
        rows, _ = await history.list_events(
            conn,
            scope=OperatorScope(partner_id=partner),
            event_type=None,
            referral_id=None,
            before_id=None,
            limit=100,
        )
        everyone = [
            await history.get_event(conn, scope=OperatorScope(), event_id=t.event_id)
            for t in tenants
        ]
    assert {row.id for row in rows} == {t.event_id for t in tenants if t.partner_id == partner}
    assert all(row is not None for row in everyone)


async def test_webhook_endpoints_only_in_their_tenant(db: Database, tenants: list[Tenant]) -> None:
    owner, *others = tenants
    for tenant in tenants:
        async with db.read() as conn:
            listed = await subscriptions.list_endpoints(conn, scope=_scope(tenant))
            assert [item.endpoint_id for item in listed] == [tenant.endpoint_id]
            assert await subscriptions.count_active(conn, scope=_scope(tenant)) == 1
            for other in tenants:
                found = await subscriptions.get_endpoint(
                    conn, scope=_scope(tenant), endpoint_id=other.endpoint_id
                )
                assert (found is not None) == (other is tenant)
    for other in others:
        async with db.write() as conn:
            deleted = await subscriptions.delete_endpoint(
                conn, scope=_scope(other), endpoint_id=owner.endpoint_id
            )
        assert not deleted
    async with db.read() as conn:
        kept = await subscriptions.get_endpoint(
            conn, scope=_scope(owner), endpoint_id=owner.endpoint_id
        )
    assert kept is not None and kept.active


async def test_session_list_only_in_its_tenant(db: Database, tenants: list[Tenant]) -> None:
    for tenant in tenants:
        async with db.read() as conn:
            everything = await care_store.list_sessions(
                conn, scope=_scope(tenant), where=care_store.SessionFilter(), ring=TEST_RING
            )
            assert [row.id for row in everything] == tenant.session_ids
            for other in tenants:
                by_referral = await care_store.list_sessions(
                    conn,
                    scope=_scope(tenant),
                    where=care_store.SessionFilter(referral_id=other.g_id),
                    ring=TEST_RING,
                )
                assert bool(by_referral) == (other is tenant)
