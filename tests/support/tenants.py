"""Four tenants with look-alike data, for tests that a store never crosses a tenant line.

Two partners, each in both environments, get the same data: a V1 referral with the same
external_ref, a Shape G referral with the same partner_reference (matched, intake done, one
session completed and one scheduled), a referral link with the same campaign, an event with a
delivery, and a webhook endpoint. A query that drops either tenant condition therefore finds
more than one candidate. Rows are written through the app's own tables (stored formats match).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, insert

from rehabref.db import sync_url
from rehabref.events.sealing import sealed_event_row
from rehabref.ids import new_id
from rehabref.referrals.sealing import stored_referral
from rehabref.referrals.tracking import new_tracking_code
from rehabref.tables import metadata
from tests.support.partners import TEST_RING

EXTERNAL_REF = "EXT-SAME-EVERYWHERE"
PARTNER_REFERENCE = "CASE-SAME-EVERYWHERE"
CAMPAIGN = "same-campaign"


@dataclass
class Tenant:
    partner_id: str
    environment: str
    v1_id: str = ""
    g_id: str = ""
    tracking_code: str = ""
    link_id: str = ""
    event_id: str = ""
    endpoint_id: str = ""
    session_ids: list[str] = field(default_factory=list)


def _referral(tenant: Tenant, now: datetime, **values: Any) -> dict[str, Any]:
    return {
        "id": new_id("ref"),
        "partner_id": tenant.partner_id,
        "environment": tenant.environment,
        "status": "received",
        "patient_first_name": "Ada",
        "patient_last_name": "Eze",
        "patient_phone": "+2348031234567",
        "patient_city": "Lagos",
        "created_at": now,
        "updated_at": now,
        **values,
    }


def _partner(conn: Any, name: str, now: datetime) -> str:
    partner_id = new_id("ptn")
    conn.execute(
        insert(metadata.tables["partners"]),
        {"id": partner_id, "name": name, "contract": "g", "created_at": now},
    )
    return partner_id


def _physio(conn: Any, now: datetime) -> str:
    physio_id = new_id("phy")
    conn.execute(
        insert(metadata.tables["physiotherapists"]),
        {
            "id": physio_id,
            "name": "Bola Ade",
            "license_number": f"MRTB-{physio_id[-8:]}",
            "specializations": ["orthopaedic"],
            "rating": 4.5,
            "phone": "+2348030000001",
            "city": "Lagos",
            "city_key": "lagos",
            "areas": ["surulere"],
            "modalities": ["home_visit"],
            "weekly_capacity": 10,
            "active": True,
            "created_at": now,
            "updated_at": now,
        },
    )
    return physio_id


def _fill(conn: Any, tenant: Tenant, physio_id: str, now: datetime) -> None:
    tables = metadata.tables
    scope = {"partner_id": tenant.partner_id, "environment": tenant.environment}
    v1 = _referral(tenant, now, shape="v1", external_ref=EXTERNAL_REF, route="contact")
    tenant.tracking_code = new_tracking_code()
    g = _referral(
        tenant,
        now + timedelta(seconds=1),
        shape="g",
        partner_reference=PARTNER_REFERENCE,
        tracking_code=tenant.tracking_code,
        recommended_sessions=4,
        assigned_physio_id=physio_id,
    )
    tenant.v1_id, tenant.g_id = v1["id"], g["id"]
    for row in (v1, g):
        conn.execute(insert(tables["referrals"]), stored_referral(TEST_RING, row))
    conn.execute(
        insert(tables["assistant_sessions"]),
        {
            "id": new_id("ast"),
            "referral_id": g["id"],
            "expires_at": now + timedelta(days=7),
            "completed_at": now,
            "created_at": now,
        },
    )
    tenant.session_ids = [new_id("ses"), new_id("ses")]
    for number, (session_id, status) in enumerate(
        zip(tenant.session_ids, ("completed", "scheduled"), strict=True), start=1
    ):
        at = now + timedelta(days=number - 2)
        conn.execute(
            insert(tables["care_sessions"]),
            {
                "id": session_id,
                "referral_id": g["id"],
                **scope,
                "physio_id": physio_id,
                "session_number": number,
                "session_type": "Exercise therapy",
                "modality": "home_visit",
                "status": status,
                "scheduled_at": at,
                "completed_at": at if status == "completed" else None,
                "created_by": "test",
                "updated_by": "test",
                "created_at": now,
                "updated_at": now,
            },
        )
    tenant.link_id = new_id("lnk")
    conn.execute(
        insert(tables["referral_links"]),
        {
            "id": tenant.link_id,
            **scope,
            "campaign": CAMPAIGN,
            "public_code": secrets.token_urlsafe(22),
            "active": True,
            "click_count": 0,
            "created_at": now,
        },
    )
    tenant.event_id = new_id("evt")
    conn.execute(
        insert(tables["events"]),
        sealed_event_row(
            TEST_RING,
            {
                "id": tenant.event_id,
                **scope,
                "type": "referral.created",
                "referral_id": g["id"],
                "data": {"referral_id": g["id"]},
                "body": "{}",
                "occurred_at": now,
            },
        ),
    )
    tenant.endpoint_id = new_id("whe")
    conn.execute(
        insert(tables["webhook_endpoints"]),
        {
            "id": tenant.endpoint_id,
            **scope,
            "url": "https://hooks.example.com/rehab",
            "enabled_events": None,
            "active": True,
            "created_at": now,
        },
    )
    conn.execute(
        insert(tables["deliveries"]),
        {
            "id": new_id("dlv"),
            "event_id": tenant.event_id,
            "endpoint_id": tenant.endpoint_id,
            "target_url": "https://hooks.example.com/rehab",
            "state": "succeeded",
            "attempt_count": 1,
            "next_attempt_at": now,
            "created_at": now,
            "completed_at": now,
        },
    )


def seed_tenants(database_url: str) -> list[Tenant]:
    """The four tenants: (partner A, test), (A, live), (B, test), (B, live)."""
    engine = create_engine(sync_url(database_url))
    now = datetime.now(UTC).replace(microsecond=0)
    tenants: list[Tenant] = []
    try:
        with engine.begin() as conn:
            physio_id = _physio(conn, now)
            for name in ("Tenant A", "Tenant B"):
                partner_id = _partner(conn, f"{name} {secrets.token_hex(3)}", now)
                for environment in ("test", "live"):
                    tenant = Tenant(partner_id, environment)
                    _fill(conn, tenant, physio_id, now)
                    tenants.append(tenant)
    finally:
        engine.dispose()
    return tenants
