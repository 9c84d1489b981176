"""GET /api/v1/partners/sessions: every filter of spec 4.5, scoping, and the data boundary."""

from __future__ import annotations

import pytest

from tests.conftest import auth
from tests.support.care import insert_referral

PHONE_A = "+2348031234567"
PHONE_B = "+2348059876543"


def _schedule(client, op_headers, referral_id, physio_id, when):
    response = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={"scheduled_at": when, "modality": "home_visit", "physio_id": physio_id},
        headers=op_headers,
    )
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def _run(client, op_headers, session_id, pain=(6, 3)):
    client.post(
        f"/api/v1/ops/sessions/{session_id}/start",
        json={"check_in_at": "2026-11-20T09:00:00Z", "check_in_lat": 6.6, "check_in_lng": 3.35},
        headers=op_headers,
    ).raise_for_status()
    client.post(
        f"/api/v1/ops/sessions/{session_id}/complete",
        json={
            "pain_before": pain[0],
            "pain_after": pain[1],
            "notes_summary": "Gait training",
            "check_out_at": "2026-11-20T09:45:00Z",
            "check_out_lat": 6.6,
            "check_out_lng": 3.35,
        },
        headers=op_headers,
    ).raise_for_status()


@pytest.fixture
def world(client, make_partner, op_headers, physio, sql):
    """A g partner with two patients and four sessions in several states."""
    partner = make_partner(name="Clinic G", contract="g")
    first = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], phone=PHONE_A, area="Ikeja"
    )
    second = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], phone=PHONE_B, area="Ikeja"
    )
    physio_id = physio["physio_id"]
    s1 = _schedule(client, op_headers, first, physio_id, "2026-11-10T09:00:00Z")
    s2 = _schedule(client, op_headers, first, physio_id, "2026-11-17T09:00:00Z")
    s3 = _schedule(client, op_headers, first, physio_id, "2026-11-24T23:30:00Z")
    s4 = _schedule(client, op_headers, second, physio_id, "2026-11-25T09:00:00Z")
    _run(client, op_headers, s1)
    _run(client, op_headers, s2, pain=(3, 1))
    client.post(
        f"/api/v1/ops/sessions/{s4}/cancel", json={"reason": "unwell"}, headers=op_headers
    ).raise_for_status()
    return {"partner": partner, "first": first, "second": second, "ids": [s1, s2, s3, s4]}


def _list(client, key, **params):
    response = client.get("/api/v1/partners/sessions", params=params, headers=auth(key))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total_sessions"] == len(body["sessions"])
    return body


def test_all_sessions_in_order_with_the_2_6_fields(client, world):
    s1, s2, s3, s4 = world["ids"]
    body = _list(client, world["partner"]["keys"]["sk_live"])
    assert [item["session_id"] for item in body["sessions"]] == [s1, s2, s3, s4]
    first = body["sessions"][0]
    assert first == {
        "session_id": s1,
        "session_number": 1,
        "session_type": "treatment",
        "scheduled_at": "2026-11-10T09:00:00.000Z",
        "completed_at": "2026-11-20T09:45:00.000Z",
        "status": "completed",
        "provider_name": "Kemi Adeyemi",
        "modality": "home_visit",
        "pain_score_before": 6,
        "pain_score_after": 3,
        "notes_summary": "Gait training",
    }
    third = body["sessions"][2]
    assert third["status"] == "scheduled"
    assert third["completed_at"] is None and third["pain_score_before"] is None


def test_each_filter(client, world):
    key = world["partner"]["keys"]["sk_live"]
    s1, s2, s3, s4 = world["ids"]

    def ids(**params):
        return [item["session_id"] for item in _list(client, key, **params)["sessions"]]

    assert ids(referral_id=world["first"]) == [s1, s2, s3]
    assert ids(referral_id="ref_unknown") == []
    assert ids(patient_phone=PHONE_B) == [s4]
    assert ids(status="completed") == [s1, s2]
    assert ids(status="cancelled") == [s4]
    assert ids(status="scheduled") == [s3]
    assert ids(status="in_progress") == []
    assert ids(from_date="2026-11-17") == [s2, s3, s4]
    assert ids(to_date="2026-11-24") == [s1, s2, s3]  # a date includes the whole day
    assert ids(to_date="2026-11-24T23:00:00Z") == [s1, s2]
    assert ids(from_date="2026-11-17T09:00:00Z", to_date="2026-11-17T09:00:00Z") == [s2]
    assert ids(from_date="2026-11-11", to_date="2026-11-24", status="scheduled") == [s3]
    assert ids(patient_phone=PHONE_A, status="completed") == [s1, s2]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"patient_phone": "08031234567"}, "patient_phone"),
        ({"from_date": "yesterday"}, "from_date"),
        ({"to_date": "2026-13-01"}, "to_date"),
        ({"from_date": "2026-11-20T10:00:00+01:00"}, "from_date"),
        ({"from_date": "2026-11-20", "to_date": "2026-11-01"}, "to_date"),
    ],
)
def test_invalid_filters_are_field_level_422(client, partner, params, field):
    response = client.get(
        "/api/v1/partners/sessions", params=params, headers=auth(partner["keys"]["sk_test"])
    )
    assert response.status_code == 422
    assert field in response.json()["error"]["fields"]


def test_a_bad_date_filter_names_both_accepted_forms(client, partner):
    response = client.get(
        "/api/v1/partners/sessions",
        params={"from_date": "yesterday"},
        headers=auth(partner["keys"]["sk_test"]),
    )
    message = response.json()["error"]["fields"]["from_date"]
    assert "date (2026-01-31)" in message and "timestamp" in message


def test_scoped_to_partner_and_environment(client, world, partner):
    assert _list(client, partner["keys"]["sk_live"])["sessions"] == []
    assert _list(client, world["partner"]["keys"]["sk_test"])["sessions"] == []
    unauthenticated = client.get("/api/v1/partners/sessions")
    assert unauthenticated.status_code == 401


def test_v1_partners_get_no_clinical_fields(client, make_partner, op_headers, physio, sql):
    partner = make_partner(name="Employer V1", contract="v1")
    referral_id = insert_referral(
        sql,
        environment="live",
        partner_id=partner["partner_id"],
        shape="v1",
        area="Ikeja",
        reason="Back pain",
    )
    session_id = _schedule(
        client, op_headers, referral_id, physio["physio_id"], "2026-11-12T09:00:00Z"
    )
    _run(client, op_headers, session_id)
    (item,) = _list(client, partner["keys"]["sk_live"])["sessions"]
    assert item["status"] == "completed"
    for name in ("pain_score_before", "pain_score_after", "notes_summary"):
        assert name not in item
