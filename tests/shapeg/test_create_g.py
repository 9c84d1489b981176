"""Shape G create over HTTP: the union response, defaults, messaging, events, idempotency."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import text

from rehabref.crypto import open_sealed
from rehabref.referrals.sealing import DIAGNOSIS, EMAIL
from tests.conftest import auth, count
from tests.shapeg.bodies import g_referral, minimal_g_referral, one
from tests.support.partners import TEST_RING

PATH = "/api/v1/partners/referrals"


def test_full_body_returns_the_union_response(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = g_referral()
    before = int(time.time() * 1000)
    response = client.post(PATH, json=body, headers=auth(key))
    assert response.status_code == 201, response.text
    created = response.json()
    assert set(created) == {
        "status",
        "referral_id",
        "tracking_code",
        "partner_reference",
        "tracking_url",
        "intake_status",
        "patient",
        "messaging_intake",
        "created_at",
    }
    assert created["status"] == "success"
    assert created["referral_id"].startswith("ref_")
    assert created["partner_reference"] == body["partner_reference"]
    base = str(client.base_url).rstrip("/")
    assert created["tracking_url"] == f"{base}/track/{created['tracking_code']}"
    assert created["intake_status"] == "pending_messaging_response"
    assert created["patient"] == {"name": "Chidi Okafor", "phone": "+2348031234567"}
    intake = created["messaging_intake"]
    assert intake["dispatched"] is True
    assert intake["recipient"] == "+2348031234567"
    assert intake["deep_link"] == f"{base}/a/{intake['intake_token']}"
    assert isinstance(created["created_at"], int)
    assert before - 5000 <= created["created_at"] <= int(time.time() * 1000) + 5000
    referral_id = created["referral_id"]
    row = one(
        sql,
        "SELECT shape, recommended_sessions, priority, billing_mode, diagnosis, "
        "referring_doctor, patient_area, patient_email FROM referrals WHERE id = :id",
        id=referral_id,
    )
    # The diagnosis and e-mail are sealed at rest (docs/security.md) and opens to what was sent.
    assert row[4].startswith("s1.")
    stored = (
        *row[:4],
        open_sealed(TEST_RING, DIAGNOSIS, row[4]),
        *row[5:7],
        open_sealed(TEST_RING, EMAIL, row[7]),
    )
    assert stored == (
        "g",
        6,
        "urgent",
        "patient_self_pay",
        "Post-operative knee stiffness after ACL repair",
        "Dr. A. Bello",
        "Surulere",
        "chidi@example.com",
    )
    # The patient was messaged at once (the sandbox adapter records, sends nothing).
    assert (
        count(sql, f"SELECT count(*) FROM outbound_messages WHERE referral_id = '{referral_id}'")
        == 1
    )
    assert (
        count(
            sql,
            f"SELECT count(*) FROM events WHERE referral_id = '{referral_id}' "
            "AND type = 'referral.created'",
        )
        == 1
    )
    # The deep link opens the patient's assistant intake page.
    page = client.get(intake["deep_link"].removeprefix(base))
    assert page.status_code == 200
    assert "Chidi" in page.text


def test_minimal_body_takes_the_defaults(client, partner, sql):
    response = client.post(
        PATH, json=minimal_g_referral(), headers=auth(partner["keys"]["sk_test"])
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["partner_reference"] is None
    row = one(
        sql,
        "SELECT recommended_sessions, priority, referring_doctor, callback_url "
        "FROM referrals WHERE id = :id",
        id=created["referral_id"],
    )
    assert tuple(row) == (4, "standard", None, None)
    record = client.get(
        f"{PATH}/{created['referral_id']}", headers=auth(partner["keys"]["sk_test"])
    )
    assert record.json()["sessions_total"] == 4


def _post(client, key, body, idempotency_key=None):
    return client.post(PATH, json=body, headers=auth(key, idempotency_key))


def _without(body, dotted):
    parent = body
    *path, last = dotted.split(".")
    for part in path:
        parent = parent[part]
    del parent[last]
    return body


def _with(body, dotted, value):
    parent = body
    *path, last = dotted.split(".")
    for part in path:
        parent = parent[part]
    parent[last] = value
    return body


@pytest.mark.parametrize(
    "field",
    [
        "patient",
        "patient.first_name",
        "patient.last_name",
        "patient.phone",
        "patient.city",
        "clinical_notes.diagnosis",
        "billing_mode",
    ],
)
def test_required_fields_are_field_level_422(client, partner, field):
    body = _without(g_referral(), field)
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in error["fields"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("patient.phone", "08031234567"),
        ("patient.phone", "+234 803 123 4567"),
        ("patient.phone", "+1234"),
        ("patient.email", "not-an-email"),
        ("patient.first_name", ""),
        ("patient.first_name", "x" * 101),
        ("patient.area", "x" * 101),
        ("patient.city", 42),
        ("clinical_notes.diagnosis", "   "),
        ("clinical_notes.recommended_sessions", 0),
        ("clinical_notes.recommended_sessions", 51),
        ("clinical_notes.recommended_sessions", "4"),
        ("clinical_notes.recommended_sessions", 4.5),
        ("clinical_notes.recommended_sessions", True),
        ("clinical_notes.priority", "low"),
        ("clinical_notes.referring_doctor", "x" * 201),
        ("billing_mode", "cash"),
        ("callback_url", "ftp://example.com/hook"),
        ("callback_url", "not a url"),
        ("callback_url", "https://" + "a" * 2100 + ".com/"),
        ("callback_url", "https://user:pw@127.0.0.1/hook"),
        ("partner_reference", ""),
        ("partner_reference", "x" * 256),
        ("partner_reference", "line\nbreak"),
        ("patient.nickname", "Chi"),
        ("clinical_notes.icd10", "M54.5"),
        ("unknown_top_level", 1),
    ],
)
def test_invalid_values_are_field_level_422(client, partner, field, value):
    body = _with(g_referral(), field, value)
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]["fields"]


@pytest.mark.parametrize("priority", ["standard", "urgent", "high"])
@pytest.mark.parametrize(
    "billing_mode", ["patient_self_pay", "hmo_direct_billing", "corporate_sponsored"]
)
def test_every_priority_and_billing_mode_is_accepted(client, partner, sql, priority, billing_mode):
    body = g_referral()
    body["clinical_notes"]["priority"] = priority
    body["billing_mode"] = billing_mode
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 201, response.text
    stored = one(
        sql,
        "SELECT priority, billing_mode FROM referrals WHERE id = :id",
        id=response.json()["referral_id"],
    )
    assert stored == (priority, billing_mode)


@pytest.mark.parametrize("sessions", [1, 50])
def test_recommended_sessions_bounds_are_inclusive(client, partner, sessions):
    body = g_referral()
    body["clinical_notes"]["recommended_sessions"] = sessions
    created = _post(client, partner["keys"]["sk_test"], body).json()
    record = client.get(
        f"{PATH}/{created['referral_id']}", headers=auth(partner["keys"]["sk_test"])
    )
    assert record.json()["sessions_total"] == sessions


def test_mixing_shapes_is_a_422(client, partner):
    body = g_referral(external_ref="EXT-1")
    response = _post(client, partner["keys"]["sk_test"], body, "mix-1")
    assert response.status_code == 422
    assert "clinical_notes" in response.json()["error"]["fields"]


def test_g_contract_partner_sending_no_markers_gets_shape_g_errors(client, make_partner):
    g_partner = make_partner(name="G Clinic", contract="g")
    response = _post(client, g_partner["keys"]["sk_test"], {"patient": {}})
    assert response.status_code == 422
    assert "billing_mode" in response.json()["error"]["fields"]


def test_idempotency_key_is_optional_but_honoured(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = g_referral()
    first = _post(client, key, body, "g-idem-1")
    second = _post(client, key, body, "g-idem-1")
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
    assert (
        count(
            sql,
            "SELECT count(*) FROM referrals WHERE partner_reference = :r",
            r=body["partner_reference"],
        )
        == 1
    )
    other = _post(client, key, g_referral(), "g-idem-1")
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


def test_duplicate_partner_reference_is_a_409(client, partner, make_partner):
    key = partner["keys"]["sk_test"]
    body = g_referral()
    assert _post(client, key, body).status_code == 201
    again = _post(client, key, g_referral(partner_reference=body["partner_reference"]))
    assert again.status_code == 409
    error = again.json()["error"]
    assert error["code"] == "duplicate_partner_reference"
    assert "partner_reference" in error["fields"]
    # Unique per partner and environment: the live environment and other partners may reuse it.
    assert _post(client, partner["keys"]["sk_live"], body).status_code == 201
    other = make_partner(name="Other Clinic")
    assert _post(client, other["keys"]["sk_test"], body).status_code == 201


def test_callback_url_receives_referral_created(client, partner, sql):
    body = g_referral(callback_url="http://127.0.0.1:9/hooks/rehab")
    created = _post(client, partner["keys"]["sk_test"], body).json()
    targets = [
        row[0]
        for row in sql.connect().execute(
            text(
                "SELECT d.target_url FROM deliveries d JOIN events e ON e.id = d.event_id "
                "WHERE e.referral_id = :r AND e.type = 'referral.created'"
            ),
            {"r": created["referral_id"]},
        )
    ]
    assert targets == ["http://127.0.0.1:9/hooks/rehab"]


def test_live_callback_url_must_be_https(client, partner):
    body = g_referral(callback_url="http://127.0.0.1:9/hooks/rehab")
    response = _post(client, partner["keys"]["sk_live"], body)
    assert response.status_code == 422
    assert "https" in response.json()["error"]["fields"]["callback_url"]


def test_pre_auth_token_only_with_hmo_direct_billing(client, partner):
    body = g_referral(pre_auth_token="pa_x.y")
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 422
    assert "pre_auth_token" in response.json()["error"]["fields"]


def test_forged_pre_auth_token_is_refused(client, partner):
    body = g_referral(billing_mode="hmo_direct_billing", pre_auth_token="pa_eyJ4IjoxfQ.forged")
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 422
    assert "pre_auth_token" in response.json()["error"]["fields"]


def test_unauthenticated_create_is_401(client):
    response = client.post(PATH, json=g_referral())
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


def test_expired_pre_auth_token_is_refused(client, partner):
    from rehabref.eligibility import tokens
    from rehabref.instance_secret import SecretBox
    from tests.support.partners import TEST_SECRET_KEY

    grant = tokens.PreAuth(
        partner_id=partner["partner_id"],
        environment="test",
        hmo_code="AXA_MANSARD",
        policy_number="P-1",
        procedure_code="PHYSIO_STD_SESSION",
        expires_at=int(time.time()) - 1,
        member_phone_digest=tokens.phone_digest(g_referral()["patient"]["phone"]),
    )
    token = tokens.issue(SecretBox(TEST_SECRET_KEY), grant)
    body = g_referral(billing_mode="hmo_direct_billing", pre_auth_token=token)
    response = _post(client, partner["keys"]["sk_test"], body)
    assert response.status_code == 422
    assert "expired" in response.json()["error"]["fields"]["pre_auth_token"]


def test_concurrent_creates_with_one_partner_reference_make_one_referral(server, partner, sql):
    reference = f"RACE-{uuid.uuid4().hex[:8]}"
    key = partner["keys"]["sk_test"]

    def attempt(_):
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            return _post(http, key, g_referral(partner_reference=reference)).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = sorted(pool.map(attempt, range(6)))
    assert statuses == [201, 409, 409, 409, 409, 409]
    assert (
        count(sql, "SELECT count(*) FROM referrals WHERE partner_reference = :r", r=reference) == 1
    )


def test_concurrent_retries_with_one_idempotency_key_make_one_referral(server, partner, sql):
    key = partner["keys"]["sk_test"]
    body = g_referral()
    idem = f"race-{uuid.uuid4().hex}"

    def attempt(_):
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            return _post(http, key, body, idem)

    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(attempt, range(6)))
    created = [r for r in responses if r.status_code == 201]
    assert created and {r.json()["referral_id"] for r in created} == {
        created[0].json()["referral_id"]
    }
    assert {r.status_code for r in responses} <= {201, 409}
    assert (
        count(
            sql,
            "SELECT count(*) FROM referrals WHERE partner_reference = :r",
            r=body["partner_reference"],
        )
        == 1
    )
