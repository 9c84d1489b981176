"""A Shape G list page costs the same number of queries for 1 referral as for 20.

``records_g.g_records`` loads sessions, completed intakes and physiotherapists for the whole
page with IN lists; each record is the same as when that referral is rendered alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, event, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import Database, sync_url
from rehabref.ids import new_id
from rehabref.referrals import store
from rehabref.referrals.records_g import g_records
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.tracking import new_tracking_code
from rehabref.scope import PartnerScope
from rehabref.tables import metadata
from tests.support.partners import TEST_RING
from tests.support.tenants import Tenant, seed_tenants

BASE_URL = "http://rehabref.test"


def _add_g_referrals(database_url: str, tenant: Tenant, count: int) -> None:
    """``count`` more Shape G referrals in varied states: some matched (the same or another
    physiotherapist), some with the intake done, some with sessions, one cancelled."""
    tables = metadata.tables
    now = datetime.now(UTC).replace(microsecond=0)
    engine = create_engine(sync_url(database_url))
    physio_id = new_id("phy")
    with engine.begin() as conn:
        conn.execute(
            insert(tables["physiotherapists"]),
            {
                "id": physio_id,
                "name": "Ngozi Bello",
                "license_number": f"MRTB-{physio_id[-8:]}",
                "specializations": ["orthopaedic"],
                "rating": 4,
                "phone": "+2348030000002",
                "city": "Abuja",
                "city_key": "abuja",
                "areas": [],
                "modalities": ["in_clinic"],
                "weekly_capacity": 5,
                "active": True,
                "created_at": now,
                "updated_at": now,
            },
        )
        for n in range(count):
            referral_id = new_id("ref")
            conn.execute(
                insert(tables["referrals"]),
                {
                    "id": referral_id,
                    "partner_id": tenant.partner_id,
                    "environment": tenant.environment,
                    "shape": "g",
                    "status": "cancelled" if n == 5 else "received",
                    "partner_reference": f"PAGE-{n}",
                    "tracking_code": new_tracking_code(),
                    "patient_first_name": f"Patient {n}",
                    "patient_city": "Abuja",
                    "recommended_sessions": 1 + n % 3,
                    "assigned_physio_id": physio_id if n % 2 else None,
                    "created_at": now + timedelta(seconds=10 + n),
                    "updated_at": now,
                },
            )
            if n % 3 == 0:
                conn.execute(
                    insert(tables["assistant_sessions"]),
                    {
                        "id": new_id("ast"),
                        "referral_id": referral_id,
                        "expires_at": now + timedelta(days=7),
                        "completed_at": now,
                        "created_at": now,
                    },
                )
            for number in range(1, n % 5 + 1):
                status = ("completed", "scheduled", "in_progress")[number % 3]
                at = now + timedelta(days=number - 2, hours=n)
                conn.execute(
                    insert(tables["care_sessions"]),
                    {
                        "id": new_id("ses"),
                        "referral_id": referral_id,
                        "partner_id": tenant.partner_id,
                        "environment": tenant.environment,
                        "physio_id": physio_id,
                        "session_number": number,
                        "session_type": "Exercise therapy",
                        "modality": "clinic",
                        "status": status,
                        "scheduled_at": at,
                        "completed_at": at if status == "completed" else None,
                        "created_by": "test",
                        "updated_by": "test",
                        "created_at": now,
                        "updated_at": now,
                    },
                )
    engine.dispose()


@pytest.fixture(scope="module")
def tenant(database_url: str) -> Tenant:
    tenant = seed_tenants(database_url)[0]
    _add_g_referrals(database_url, tenant, 19)
    return tenant


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url, pool_size=2)
    yield database
    await database.dispose()


@contextmanager
def counted(conn: AsyncConnection) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(*args: Any) -> None:
        # SQLite's read connection sends its own BEGIN before the first query.
        if args[2] != "BEGIN":
            statements.append(args[2])

    event.listen(conn.sync_connection, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(conn.sync_connection, "before_cursor_execute", count)


async def _page(db: Database, scope: PartnerScope, limit: int) -> Sequence[ReferralRow]:
    async with db.fast_read() as fast:
        rows, _ = await store.list_referrals(
            fast,
            scope=scope,
            status=None,
            created_from=None,
            created_to=None,
            before_id=None,
            limit=limit,
        )
    return [row for row in rows if row.shape == "g"]


async def test_a_page_of_twenty_costs_what_a_page_of_one_costs(
    db: Database, tenant: Tenant
) -> None:
    scope = PartnerScope(tenant.partner_id, tenant.environment)
    twenty = await _page(db, scope, 21)  # the tenant's 20 Shape G referrals and its V1 one
    assert len(twenty) == 20
    # A page of one that needs every kind of extra (sessions, intake, physiotherapist).
    one = [row for row in twenty if row.assigned_physio_id is not None][:1]
    async with db.read() as conn:
        with counted(conn) as one_page:
            await g_records(conn, scope, one, ring=TEST_RING, base_url=BASE_URL)
        with counted(conn) as twenty_page:
            records = await g_records(conn, scope, twenty, ring=TEST_RING, base_url=BASE_URL)
    assert len(one_page) == len(twenty_page) == 3
    assert [record.referral_id for record in records] == [row.id for row in twenty]


async def test_a_record_on_a_page_is_the_record_rendered_alone(
    db: Database, tenant: Tenant
) -> None:
    scope = PartnerScope(tenant.partner_id, tenant.environment)
    rows = await _page(db, scope, 21)
    async with db.read() as conn:
        page = await g_records(conn, scope, rows, ring=TEST_RING, base_url=BASE_URL)
        alone = [
            (await g_records(conn, scope, [row], ring=TEST_RING, base_url=BASE_URL))[0]
            for row in rows
        ]
    assert page == alone
    statuses = {record.current_status for record in page}
    # The seeded states reach every branch that depends on the loaded extras.
    assert {"cancelled", "completed", "in_treatment", "matched", "intake_completed"} <= statuses
    assert any(record.assigned_physiotherapist for record in page)
    assert any(record.next_session_at for record in page)
    assert any(record.last_session_at for record in page)
