"""A created referral's events get one pending delivery per subscribed endpoint.

Every emitter picks them with ``outbox.fan_out``; a create's store checks, in the statement that
writes it, that the endpoints it planned with are still the active ones.
"""

from __future__ import annotations

import re

from sqlalchemy import text

from tests.conftest import auth
from tests.events.conftest import register
from tests.support.payloads import v1_referral

REFERRALS = "/api/v1/partners/referrals"
DELIVERY_ID = re.compile(r"^dlv_[0-9a-z]{26}$")


def deliveries_by_url(
    sql, referral_id: str, state: str = "pending"
) -> dict[str, list[tuple[str, str, str]]]:
    with sql.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT d.id, d.target_url, e.type, d.state, d.attempt_count, e.id"
                " FROM deliveries d JOIN events e ON e.id = d.event_id"
                " WHERE e.referral_id = :r ORDER BY d.id"
            ),
            {"r": referral_id},
        ).all()
    found: dict[str, list[tuple[str, str, str]]] = {}
    for delivery_id, url, event_type, found_state, attempts, event_id in rows:
        assert DELIVERY_ID.match(delivery_id), delivery_id
        assert (found_state, attempts) == (state, 0)
        found.setdefault(url, []).append((event_type, event_id, delivery_id))
    return found


def test_each_event_reaches_exactly_its_subscribed_active_endpoints(client, partner, sql):
    key = partner["keys"]["sk_test"]
    every = register(client, key, "http://127.0.0.1:9/every")
    created_only = register(
        client, key, "http://127.0.0.1:9/created", enabled_events=["referral.created"]
    )
    contact_only = register(
        client, key, "http://127.0.0.1:9/contact", enabled_events=["contact.requested"]
    )
    register(client, key, "http://127.0.0.1:9/payments", enabled_events=["payment.completed"])
    removed = register(client, key, "http://127.0.0.1:9/removed")
    assert (
        client.delete(
            f"/api/v1/partners/webhook-endpoints/{removed['endpoint_id']}", headers=auth(key)
        ).status_code
        == 204
    )
    # Another environment's endpoint never hears of a test referral.
    register(client, partner["keys"]["sk_live"], "https://127.0.0.1:9/live")

    body = v1_referral(route="contact")
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(key, idempotency_key=body["external_ref"]),
    )
    assert response.status_code == 201, response.text
    found = deliveries_by_url(sql, response.json()["referral_id"])

    assert sorted(found) == sorted([every["url"], created_only["url"], contact_only["url"]])
    assert [t for t, _, _ in found[every["url"]]] == ["referral.created", "contact.requested"]
    assert [t for t, _, _ in found[created_only["url"]]] == ["referral.created"]
    assert [t for t, _, _ in found[contact_only["url"]]] == ["contact.requested"]
    ids = [d for rows in found.values() for _, _, d in rows]
    assert len(set(ids)) == len(ids)
    # Deliveries of one event sort together, after the event's own id.
    for rows in found.values():
        for _, event_id, delivery_id in rows:
            assert delivery_id[4:] > event_id[4:]


def test_a_partner_without_endpoints_gets_events_and_no_deliveries(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral()
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(key, idempotency_key=body["external_ref"]),
    )
    assert response.status_code == 201
    referral_id = response.json()["referral_id"]
    assert deliveries_by_url(sql, referral_id) == {}
    with sql.connect() as conn:
        events = (
            conn.execute(text("SELECT type FROM events WHERE referral_id = :r"), {"r": referral_id})
            .scalars()
            .all()
        )
    assert events == ["referral.created"]


def test_endpoints_registered_or_removed_between_creates_are_seen_by_the_next_one(
    client, partner, sql
):
    """The create store keeps each partner's endpoints between creates; the statement that
    writes a create checks them, so a change made since is never missed."""
    key = partner["keys"]["sk_test"]

    def create() -> str:
        body = v1_referral()
        response = client.post(
            REFERRALS, json=body, headers=auth(key, idempotency_key=body["external_ref"])
        )
        assert response.status_code == 201, response.text
        return str(response.json()["referral_id"])

    before = create()
    added = register(client, key, "http://127.0.0.1:9/added-later")
    with_endpoint = create()
    assert (
        client.delete(
            f"/api/v1/partners/webhook-endpoints/{added['endpoint_id']}", headers=auth(key)
        ).status_code
        == 204
    )
    after_removal = create()

    assert added["url"] not in deliveries_by_url(sql, before)
    # deleting the endpoint cancelled what it was owed
    owed = deliveries_by_url(sql, with_endpoint, state="cancelled")
    assert [t for t, _, _ in owed[added["url"]]] == ["referral.created"]
    assert added["url"] not in deliveries_by_url(sql, after_removal)


def test_a_disabled_endpoint_is_not_planned_for_until_enabled(client, partner, sql):
    key = partner["keys"]["sk_test"]
    endpoint = register(client, key, "http://127.0.0.1:9/disabled-later")

    def create() -> str:
        body = v1_referral()
        response = client.post(
            REFERRALS, json=body, headers=auth(key, idempotency_key=body["external_ref"])
        )
        assert response.status_code == 201, response.text
        return str(response.json()["referral_id"])

    create()  # the create store now knows the endpoint
    with sql.begin() as conn:
        conn.execute(
            text(
                "UPDATE webhook_endpoints SET disabled_at = CURRENT_TIMESTAMP, "
                "disabled_reason = 'failing' WHERE id = :e"
            ),
            {"e": endpoint["endpoint_id"]},
        )
    assert endpoint["url"] not in deliveries_by_url(sql, create())
    enabled = client.post(
        f"/api/v1/partners/webhook-endpoints/{endpoint['endpoint_id']}/enable", headers=auth(key)
    )
    assert enabled.status_code == 200, enabled.text
    assert endpoint["url"] in deliveries_by_url(sql, create())
