"""Retrieving and querying Shape V1 referrals (spec 4.2, 4.3): by id, by external_ref, by
status and creation time, keyset pagination, partner and environment scoping, data boundary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.support.api import REFERRALS, bearer, created, error_of
from tests.support.rows import update_rows

RECORD_FIELDS = {
    "referral_id",
    "external_ref",
    "status",
    "care_mode",
    "route",
    "preferred_contact",
    "next_action",
    "patient",
    "consent",
    "metadata",
    "appointment",
    "payment",
    "created_at",
    "updated_at",
}


def get(client, key, path=REFERRALS, **params):
    return client.get(path, params=params, headers=bearer(key))


def test_record_by_id_carries_referral_and_contact_status_only(client, partner):
    key = partner["keys"]["sk_test"]
    body = created(client, key, route="contact", metadata={"campaign": "spring"})
    response = get(client, key, f"{REFERRALS}/{body['referral_id']}")
    assert response.status_code == 200
    record = response.json()
    assert set(record) == RECORD_FIELDS
    assert record["referral_id"] == body["referral_id"]
    assert record["external_ref"] == body["external_ref"]
    assert record["status"] == "contact_pending"
    assert record["next_action"] == "await_contact"
    assert record["route"] == "contact"
    assert record["preferred_contact"] == "messaging"
    assert record["patient"] == {"first_name": "Amaka", "city": "Lagos"}
    assert record["consent"] == {
        "accepted": True,
        "accepted_at": "2026-11-20T09:30:00.000Z",
        "version": "2026-01",
        "source": "clinic_form",
    }
    assert record["metadata"] == {"campaign": "spring"}
    assert record["appointment"] is None
    assert record["payment"] is None
    assert record["created_at"] == body["created_at"]


def test_record_never_contains_reason_contact_details_or_clinical_data(client, partner):
    key = partner["keys"]["sk_test"]
    body = created(
        client,
        key,
        reason="Knee pain after ACL repair CANARY-REASON",
        patient={
            "first_name": "Amaka",
            "phone": "+2348031234567",
            "email": "amaka.canary@example.com",
            "city": "Lagos",
        },
    )
    by_id = get(client, key, f"{REFERRALS}/{body['referral_id']}").text
    listed = get(client, key, external_ref=body["external_ref"]).text
    for text_body in (by_id, listed):
        for secret in ("CANARY-REASON", "+2348031234567", "amaka.canary", "diagnosis", "reason"):
            assert secret not in text_body
        assert "assistant_session_url" not in text_body and "/a/" not in text_body


def test_external_ref_query_returns_the_identical_record(client, partner):
    key = partner["keys"]["sk_test"]
    body = created(client, key)
    by_id = get(client, key, f"{REFERRALS}/{body['referral_id']}").json()
    page = get(client, key, external_ref=body["external_ref"])
    assert page.status_code == 200
    assert page.json() == {"data": [by_id], "has_more": False, "next_cursor": None}


def test_unknown_external_ref_is_an_empty_page(client, partner):
    page = get(client, partner["keys"]["sk_test"], external_ref="never-sent")
    assert page.json() == {"data": [], "has_more": False, "next_cursor": None}


@pytest.mark.parametrize("referral_id", ["ref_00000000000000000000000000", "nope", "x" * 300])
def test_unknown_referral_id_is_404(client, partner, referral_id):
    error = error_of(get(client, partner["keys"]["sk_test"], f"{REFERRALS}/{referral_id}"), 404)
    assert error["code"] == "not_found"


def test_nul_in_the_url_is_a_400_not_a_server_error(client, partner):
    key = partner["keys"]["sk_test"]
    error_of(get(client, key, f"{REFERRALS}/ref%00x"), 400, "malformed_request")
    error_of(get(client, key, external_ref="a\x00b"), 400, "malformed_request")


def test_another_partners_referral_is_404_by_id_and_invisible_in_queries(
    client, partner, make_partner
):
    other = make_partner(name="Other Clinic")
    body = created(client, other["keys"]["sk_test"])
    key = partner["keys"]["sk_test"]
    error_of(get(client, key, f"{REFERRALS}/{body['referral_id']}"), 404, "not_found")
    assert get(client, key, external_ref=body["external_ref"]).json()["data"] == []
    listed = get(client, key, limit=100).json()["data"]
    assert body["referral_id"] not in {item["referral_id"] for item in listed}


def test_test_and_live_data_are_isolated(client, partner):
    test_key, live_key = partner["keys"]["sk_test"], partner["keys"]["sk_live"]
    in_test = created(client, test_key)
    in_live = created(client, live_key)
    error_of(get(client, live_key, f"{REFERRALS}/{in_test['referral_id']}"), 404)
    error_of(get(client, test_key, f"{REFERRALS}/{in_live['referral_id']}"), 404)
    assert get(client, live_key, external_ref=in_test["external_ref"]).json()["data"] == []
    live_ids = [item["referral_id"] for item in get(client, live_key).json()["data"]]
    assert live_ids == [in_live["referral_id"]]


def test_the_same_external_ref_may_exist_once_per_environment_and_partner(
    client, partner, make_partner
):
    ref = "SHARED-REF-1"
    created(client, partner["keys"]["sk_test"], external_ref=ref)
    created(client, partner["keys"]["sk_live"], external_ref=ref)
    created(client, make_partner()["keys"]["sk_test"], external_ref=ref)


def test_status_filter(client, partner):
    key = partner["keys"]["sk_test"]
    assistant = created(client, key, route="assistant")
    contact = created(client, key, route="contact")
    received = get(client, key, status="received").json()["data"]
    pending = get(client, key, status="contact_pending").json()["data"]
    assert [item["referral_id"] for item in received] == [assistant["referral_id"]]
    assert [item["referral_id"] for item in pending] == [contact["referral_id"]]
    assert get(client, key, status="paid").json()["data"] == []


def test_created_from_filter(client, partner, sql):
    key = partner["keys"]["sk_test"]
    old = created(client, key)
    new = created(client, key)
    update_rows(
        sql, "referrals", {"id": old["referral_id"]}, created_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    since = get(client, key, created_from="2026-06-01T00:00:00Z").json()["data"]
    assert [item["referral_id"] for item in since] == [new["referral_id"]]
    everything = get(client, key, created_from="2025-12-31T23:59:59Z").json()["data"]
    assert {item["referral_id"] for item in everything} == {
        old["referral_id"],
        new["referral_id"],
    }
    at_instant = get(client, key, created_from="2026-01-01T00:00:00.000Z").json()["data"]
    assert old["referral_id"] in {item["referral_id"] for item in at_instant}
    combined = get(client, key, status="received", created_from=new["created_at"]).json()
    assert [item["referral_id"] for item in combined["data"]] == [new["referral_id"]]


def test_pagination_walks_every_referral_once_newest_first(client, partner):
    key = partner["keys"]["sk_test"]
    made = [created(client, key)["referral_id"] for _ in range(23)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 5, **({"cursor": cursor} if cursor else {})}
        page = get(client, key, **params).json()
        pages += 1
        assert len(page["data"]) <= 5
        seen.extend(item["referral_id"] for item in page["data"])
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        assert len(page["data"]) == 5
        cursor = page["next_cursor"]
    assert pages == 5
    assert seen == list(reversed(made))


def test_pagination_with_a_filter_and_the_default_page_size(client, partner):
    key = partner["keys"]["sk_test"]
    made = [created(client, key, route="contact")["referral_id"] for _ in range(21)]
    created(client, key, route="assistant")
    first = get(client, key, status="contact_pending").json()
    assert len(first["data"]) == 20 and first["has_more"] is True
    second = get(client, key, status="contact_pending", cursor=first["next_cursor"]).json()
    assert second == {"data": second["data"], "has_more": False, "next_cursor": None}
    ids = [item["referral_id"] for item in first["data"] + second["data"]]
    assert ids == list(reversed(made))


def test_a_page_that_ends_exactly_has_no_next_cursor(client, partner):
    key = partner["keys"]["sk_test"]
    for _ in range(3):
        created(client, key)
    page = get(client, key, limit=3).json()
    assert len(page["data"]) == 3
    assert page["has_more"] is False and page["next_cursor"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"limit": ""}, "limit"),
        ({"limit": "\u00b2"}, "limit"),  # a Unicode digit that int() rejects
        ({"limit": "\uff11"}, "limit"),  # a full-width 1
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "djE6ZXZ0XzEyMw"}, "cursor"),  # base64 of "v1:evt_123"
        ({"status": "in_treatment"}, "status"),
        ({"status": ""}, "status"),
        ({"created_from": "2026-01-01"}, "created_from"),
        ({"created_from": "2026-01-01T00:00:00+01:00"}, "created_from"),
        ({"created_from": "2026-01-01T00:00:00"}, "created_from"),
        ({"created_from": "last week"}, "created_from"),
    ],
)
def test_invalid_query_parameters_are_422(client, partner, params, field):
    error = error_of(get(client, partner["keys"]["sk_test"], **params), 422, "validation_error")
    assert list(error["fields"]) == [field]


def test_all_invalid_query_parameters_are_reported_together(client, partner):
    response = get(client, partner["keys"]["sk_test"], limit="0", status="x", cursor="y")
    assert set(error_of(response, 422)["fields"]) == {"limit", "status", "cursor"}


def test_another_partners_cursor_reveals_nothing(client, partner, make_partner):
    other_key = make_partner()["keys"]["sk_test"]
    for _ in range(3):
        created(client, other_key)
    cursor = get(client, other_key, limit=1).json()["next_cursor"]
    page = get(client, partner["keys"]["sk_test"], cursor=cursor).json()
    assert page["data"] == []


def set_payment(sql, referral_id: str) -> None:
    update_rows(
        sql,
        "referrals",
        {"id": referral_id},
        status="paid",
        appointment_status="attended",
        appointment_scheduled_at=datetime.now(UTC) - timedelta(days=1),
        appointment_care_mode="face_to_face",
        payment_currency="NGN",
        payment_amount_minor=2000000,
        commission_minor=200000,
        commission_status="pending_settlement",
    )


def test_payments_are_shown_when_the_agreement_allows(client, make_partner, sql):
    key = make_partner(show_payments=True, commission_bps=1000)["keys"]["sk_test"]
    body = created(client, key)
    set_payment(sql, body["referral_id"])
    record = get(client, key, f"{REFERRALS}/{body['referral_id']}").json()
    assert record["status"] == "paid"
    assert record["next_action"] == "close_referral"
    assert record["payment"] == {
        "currency": "NGN",
        "amount_minor": 2000000,
        "partner_commission_minor": 200000,
        "commission_status": "pending_settlement",
    }
    assert record["appointment"]["status"] == "attended"
    assert record["appointment"]["care_mode"] == "face_to_face"
    assert record["appointment"]["scheduled_at"].endswith("Z")
    assert get(client, key, external_ref=body["external_ref"]).json()["data"] == [record]


def test_payments_are_hidden_without_show_payments(client, make_partner, sql):
    key = make_partner(show_payments=False)["keys"]["sk_test"]
    body = created(client, key)
    set_payment(sql, body["referral_id"])
    record = get(client, key, f"{REFERRALS}/{body['referral_id']}").json()
    assert record["payment"] is None
    assert "2000000" not in get(client, key, f"{REFERRALS}/{body['referral_id']}").text
    assert record["appointment"]["status"] == "attended"
    assert get(client, key, status="paid").json()["data"][0]["payment"] is None
