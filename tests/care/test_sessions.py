"""Sessions over HTTP through the ops API: lifecycle, transitions, validation, events."""

from __future__ import annotations

import re

from tests.support.care import events_of, insert_referral

IKEJA = {"lat": 6.6018, "lng": 3.3515}
NEAR_IKEJA = (6.6050, 3.3490)  # ~0.45 km away


def schedule(client, op_headers, referral_id, physio_id, **extra):
    body = {
        "scheduled_at": "2026-11-23T09:00:00Z",
        "modality": "home_visit",
        "session_type": "initial_assessment",
        "physio_id": physio_id,
        **extra,
    }
    response = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions", json=body, headers=op_headers
    )
    assert response.status_code == 201, response.text
    return response.json()


def start(client, op_headers, session_id, lat=NEAR_IKEJA[0], lng=NEAR_IKEJA[1], **extra):
    body = {"check_in_at": "2026-11-21T09:02:00Z", "check_in_lat": lat, "check_in_lng": lng}
    body.update(extra)
    return client.post(f"/api/v1/ops/sessions/{session_id}/start", json=body, headers=op_headers)


def complete(client, op_headers, session_id, **extra):
    body = {
        "pain_before": 7,
        "pain_after": 4,
        "notes_summary": "Lumbar mobilisation, core activation; home programme given.",
        "check_out_at": "2026-11-21T09:50:30Z",
        "check_out_lat": NEAR_IKEJA[0],
        "check_out_lng": NEAR_IKEJA[1],
        **extra,
    }
    return client.post(f"/api/v1/ops/sessions/{session_id}/complete", json=body, headers=op_headers)


def test_session_lifecycle_emits_session_completed_with_clinical_summary_for_g(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(name="Reddington Telemed", contract="g")
    referral_id = insert_referral(
        sql,
        environment="live",
        partner_id=partner["partner_id"],
        city="Lagos",
        area="Ikeja",
        diagnosis="Low back pain",
    )
    created = schedule(client, op_headers, referral_id, physio["physio_id"])
    assert created["status"] == "scheduled"
    assert created["session_number"] == 1
    assert created["provider_name"] == "Kemi Adeyemi"
    session_id = created["session_id"]

    started = start(client, op_headers, session_id)
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "in_progress"
    assert started.json()["check_in_at"] == "2026-11-21T09:02:00.000Z"

    done = complete(client, op_headers, session_id)
    assert done.status_code == 200, done.text
    view = done.json()
    assert view["status"] == "completed"
    assert view["duration_minutes"] == 48.5
    assert view["completed_at"] == "2026-11-21T09:50:30.000Z"
    assert view["gps_check_in"]["verified"] is True
    assert view["gps_check_in"]["method"] == "area_centroid"
    assert view["gps_check_in"]["radius_km"] == 5.0
    # A live referral's invoice item (the sandbox's carry a T: tests/sandbox).
    assert re.fullmatch(r"INV-202611-[0-9A-Z]{26}-\d{4}", view["invoice_reference"])
    partner_part = view["invoice_reference"].split("-")[2]
    assert partner_part == partner["partner_id"].removeprefix("ptn_").upper()

    (event,) = events_of(sql, referral_id, "session.completed")
    assert event["referral_id"] == referral_id
    assert event["session_id"] == session_id
    assert event["duration_seconds"] == 2910
    assert event["duration_minutes"] == 48.5
    assert event["gps_check_in"]["verified"] is True
    assert 0 < event["gps_check_in"]["distance_km"] < 1
    assert event["invoice_reference"] == view["invoice_reference"]
    assert event["provider_name"] == "Kemi Adeyemi"
    assert event["clinical_summary"] == {
        "pain_score_before": 7,
        "pain_score_after": 4,
        "pain_reduction": {"points": 3, "percentage": 42.9},
        "notes_summary": "Lumbar mobilisation, core activation; home programme given.",
    }


def test_v1_partners_get_no_clinical_content_in_session_completed(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(name="Employer Wellness", contract="v1")
    referral_id = insert_referral(
        sql,
        environment="live",
        partner_id=partner["partner_id"],
        shape="v1",
        city="Lagos",
        reason="Back pain",
        care_mode="face_to_face",
    )
    session_id = schedule(client, op_headers, referral_id, physio["physio_id"])["session_id"]
    assert start(client, op_headers, session_id).status_code == 200
    assert complete(client, op_headers, session_id).status_code == 200
    (event,) = events_of(sql, referral_id, "session.completed")
    assert "clinical_summary" not in event
    text_of_event = str(event)
    assert "pain" not in text_of_event and "notes" not in text_of_event
    assert event["gps_check_in"]["method"] == "city_centroid"  # no area on the referral
    assert event["external_ref"].startswith("EXT-")


def test_invalid_moves_are_409(client, partner, op_headers, physio, sql):
    referral_id = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], area="Ikeja"
    )
    session_id = schedule(client, op_headers, referral_id, physio["physio_id"])["session_id"]
    early = complete(client, op_headers, session_id)
    assert early.status_code == 409
    assert early.json()["error"]["code"] == "invalid_transition"
    assert start(client, op_headers, session_id).status_code == 200
    assert start(client, op_headers, session_id).status_code == 409
    assert complete(client, op_headers, session_id).status_code == 200
    cancel = client.post(
        f"/api/v1/ops/sessions/{session_id}/cancel", json={"reason": "x"}, headers=op_headers
    )
    assert cancel.status_code == 409

    second = schedule(client, op_headers, referral_id, physio["physio_id"])
    assert second["session_number"] == 2
    cancelled = client.post(
        f"/api/v1/ops/sessions/{second['session_id']}/cancel",
        json={"reason": "Patient travelling"},
        headers=op_headers,
    )
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["cancel_reason"] == "Patient travelling"
    assert start(client, op_headers, second["session_id"]).status_code == 409


def test_validation_ranges(client, partner, op_headers, physio, sql):
    referral_id = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], area="Ikeja"
    )
    session_id = schedule(client, op_headers, referral_id, physio["physio_id"])["session_id"]
    bad_gps = start(client, op_headers, session_id, lat=91, lng=200)
    assert bad_gps.status_code == 422
    assert set(bad_gps.json()["error"]["fields"]) == {"check_in_lat", "check_in_lng"}
    no_gps = client.post(
        f"/api/v1/ops/sessions/{session_id}/start",
        json={"check_in_at": "2026-11-21T09:02:00Z"},
        headers=op_headers,
    )
    assert no_gps.status_code == 422
    assert "check_in_lat" in no_gps.json()["error"]["fields"]
    assert start(client, op_headers, session_id).status_code == 200
    bad_pain = complete(client, op_headers, session_id, pain_before=11, pain_after=-1)
    assert bad_pain.status_code == 422
    assert set(bad_pain.json()["error"]["fields"]) == {"pain_before", "pain_after"}
    backwards = complete(client, op_headers, session_id, check_out_at="2026-11-21T08:00:00Z")
    assert backwards.status_code == 422
    assert "check_out_at" in backwards.json()["error"]["fields"]
    no_physio_referral = insert_referral(sql, environment="live", partner_id=partner["partner_id"])
    response = client.post(
        f"/api/v1/ops/referrals/{no_physio_referral}/sessions",
        json={"scheduled_at": "2026-11-23T09:00:00Z", "modality": "home_visit"},
        headers=op_headers,
    )
    assert response.status_code == 422
    assert "physio_id" in response.json()["error"]["fields"]
    missing = client.post(
        "/api/v1/ops/referrals/ref_nope/sessions",
        json={"scheduled_at": "2026-11-23T09:00:00Z", "modality": "home_visit"},
        headers=op_headers,
    )
    assert missing.status_code == 404


def test_gps_far_from_the_patient_is_not_verified_and_remote_is_not_applicable(
    client, partner, op_headers, physio, sql
):
    referral_id = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], area="Ikeja"
    )
    far = schedule(client, op_headers, referral_id, physio["physio_id"])["session_id"]
    assert start(client, op_headers, far, lat=9.0765, lng=7.3986).status_code == 200  # Abuja
    view = complete(client, op_headers, far).json()
    assert view["gps_check_in"]["verified"] is False
    assert view["gps_check_in"]["distance_km"] > 500

    remote = schedule(client, op_headers, referral_id, physio["physio_id"], modality="remote")
    response = client.post(
        f"/api/v1/ops/sessions/{remote['session_id']}/start",
        json={"check_in_at": "2026-11-21T10:00:00Z"},
        headers=op_headers,
    )
    assert response.status_code == 200, response.text
    done = client.post(
        f"/api/v1/ops/sessions/{remote['session_id']}/complete",
        json={
            "pain_before": 5,
            "pain_after": 5,
            "notes_summary": "Video review of exercises.",
            "check_out_at": "2026-11-21T10:30:00Z",
        },
        headers=op_headers,
    ).json()
    assert done["gps_check_in"] == {
        "verified": None,
        "method": "not_applicable",
        "distance_km": None,
        "radius_km": None,
    }


def test_scheduled_location_is_the_gps_reference_when_given(
    client, partner, op_headers, physio, sql
):
    referral_id = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], area="Lekki"
    )
    session = schedule(client, op_headers, referral_id, physio["physio_id"], location=IKEJA)
    assert session["location"] == IKEJA
    assert start(client, op_headers, session["session_id"]).status_code == 200
    view = complete(client, op_headers, session["session_id"]).json()
    assert view["gps_check_in"]["method"] == "scheduled_location"
    assert view["gps_check_in"]["verified"] is True
    assert view["gps_check_in"]["radius_km"] == 1.0


def test_invoice_items_count_up_within_the_partners_month(client, partner, op_headers, physio, sql):
    referral_id = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], area="Ikeja"
    )
    references = []
    for _ in range(3):
        session_id = schedule(client, op_headers, referral_id, physio["physio_id"])["session_id"]
        start(client, op_headers, session_id)
        references.append(complete(client, op_headers, session_id).json()["invoice_reference"])
    items = [int(reference.rsplit("-", 1)[1]) for reference in references]
    assert items == [items[0], items[0] + 1, items[0] + 2]
    assert len({reference.rsplit("-", 1)[0] for reference in references}) == 1


def test_partner_keys_never_reach_ops_endpoints(client, partner, physio):
    key = partner["keys"]["sk_test"]
    for method, path in [
        ("get", "/api/v1/ops/sessions/ses_x"),
        ("post", "/api/v1/ops/referrals/ref_x/sessions"),
        ("get", "/api/v1/ops/physiotherapists"),
        ("post", "/api/v1/ops/referrals/ref_x/assessments"),
    ]:
        response = getattr(client, method)(path, headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 401, path
        assert response.json()["error"]["code"] == "unauthenticated"
