"""Data-subject requests over the ops API: export (JSON and the patient's PDF) and
erasure, then what partners read and what the database still holds, on both databases."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

from pypdf import PdfReader
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from rehabref.referrals.person import identifier_hash
from tests.conftest import auth, count
from tests.shapeg.bodies import g_referral
from tests.support.api import create, created, error_of
from tests.support.operators import OPS, move, op_headers
from tests.support.partners import TEST_RING
from tests.support.payloads import v1_referral

PATH = "/api/v1/partners/referrals"
DSR = f"{OPS}/data-subject-requests"


def new_phone() -> str:
    return f"+234803{random.randint(0, 9_999_999):07d}"


def person_referrals(client, partner) -> dict[str, Any]:
    """One V1 and one Shape G referral of the same person (same phone), with an e-mail,
    a surname, a reason and a diagnosis to find again."""
    phone = new_phone()
    tag = f"{random.randint(0, 10**9):09d}"
    email = f"ngozi.{tag}@example.com"
    key = partner["keys"]["sk_test"]
    v1 = created(
        client,
        key,
        patient={"first_name": f"Ngozi{tag}", "phone": phone, "email": email, "city": "Enugu"},
        reason=f"Shoulder pain {tag} after a fall",
    )
    body = g_referral()
    body["patient"].update(
        {"first_name": f"Ngozi{tag}", "last_name": f"Obi{tag}", "phone": phone, "email": email}
    )
    body["clinical_notes"]["diagnosis"] = f"Rotator cuff tear {tag}"
    response = client.post(PATH, json=body, headers=auth(key))
    assert response.status_code == 201, response.text
    return {
        "phone": phone,
        "email": email,
        "secrets": [phone, email, f"Ngozi{tag}", f"Obi{tag}", f"Shoulder pain {tag}", tag],
        # Sealed at rest: never in the database as plain text, erased or not (the patient's
        # messages, which also hold the phone and first name, are sealed since 0029).
        "sealed": [phone, f"Ngozi{tag}", f"Shoulder pain {tag}", email, f"Obi{tag}", tag],
        "ids": [v1["referral_id"], response.json()["referral_id"]],
    }


def request(client, token: str, body: dict[str, Any]):
    return client.post(DSR, json=body, headers=op_headers(token))


def test_export_returns_everything_as_json_and_a_pdf(client, partner, operator_token, sql):
    person = person_referrals(client, partner)
    response = request(client, operator_token, {"kind": "export", "phone": person["phone"]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["kind"] == "export" and body["request_id"].startswith("dsr_")
    document = body["export"]
    assert sorted(r["id"] for r in document["referrals"]) == sorted(person["ids"])
    assert {r["patient_email"] for r in document["referrals"]} == {person["email"]}
    g = next(r for r in document["referrals"] if r["shape"] == "g")
    assert g["diagnosis"].startswith("Rotator cuff tear")
    assert all(r["transitions"] for r in document["referrals"])  # at least "received"
    assert all(r["events"] for r in document["referrals"])  # referral.created at least
    assert body["result"]["referrals"] == 2
    pdf = base64.b64decode(body["pdf_base64"])
    text_of_pdf = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    assert "Your data held by rehabref" in text_of_pdf
    assert person["phone"] in text_of_pdf and "Rotator cuff tear" in text_of_pdf
    # By e-mail alone the same person is found.
    by_email = request(client, operator_token, {"kind": "export", "email": person["email"]})
    assert by_email.json()["result"]["referrals"] == 2
    # The request log keeps a hash, never the phone.
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT kind, phone_hash, actor, result FROM data_subject_requests WHERE id = :i"),
            {"i": body["request_id"]},
        ).one()
    # A keyed index of the number, not a plain hash anyone could test guessed numbers against.
    assert row.kind == "export"
    assert row.phone_hash == identifier_hash(TEST_RING, "phone", person["phone"])
    assert person["phone"] not in str(tuple(row))


def all_text(engine: Engine) -> str:
    """Every row of every table, as text: what a database or backup copy reveals."""
    parts: list[str] = []
    with engine.connect() as conn:
        for name in inspect(conn).get_table_names():
            for row in conn.execute(text(f'SELECT * FROM "{name}"')):
                parts.append(
                    " ".join(
                        bytes(v).decode("utf-8", "replace")
                        if isinstance(v, bytes | memoryview)
                        else str(v)
                        for v in row
                    )
                )
    return "\n".join(parts)


def test_erasure_scrubs_every_copy_and_partners_read_records_without_patient_data(
    client, partner, operator_token, sql
):
    person = person_referrals(client, partner)
    v1_id, g_id = person["ids"]
    # The V1 create's reply, remembered under its Idempotency-Key, holds the patient too.
    before = all_text(sql)
    plain = [s for s in person["secrets"] if s not in person["sealed"]]
    assert all(secret in before for secret in plain)
    assert not any(secret in before for secret in person["sealed"])

    response = request(client, operator_token, {"kind": "erasure", "phone": person["phone"]})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["referrals"] == 2 and result["ended"] == 2
    assert response.json()["export"] is None and response.json()["pdf_base64"] is None

    after = all_text(sql)
    for secret in person["secrets"]:
        assert secret not in after, f"{secret!r} is still in the database"

    key = partner["keys"]["sk_test"]
    v1 = client.get(f"{PATH}/{v1_id}", headers=auth(key)).json()
    assert v1["patient"] == {"first_name": "[erased]", "city": "[erased]"}
    assert v1["status"] == "cancelled"
    g = client.get(f"{PATH}/{g_id}", headers=auth(key)).json()
    assert g["patient"] == {
        "firstName": "[erased]",
        "lastName": None,
        "phone": None,
        "city": "[erased]",
    }
    assert g["current_status"] == "cancelled"
    # The partner was told before the data went: referral.closed, reason consent_withdrawn.
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id IN (:a, :b) "
            "AND type = 'referral.closed'",
            a=v1_id,
            b=g_id,
        )
        == 2
    )
    # Ids, statuses and dates stay; a second erasure finds the records but nothing to end.
    again = request(client, operator_token, {"kind": "erasure", "email": person["email"]})
    assert again.status_code == 200
    assert again.json()["result"]["referrals"] == 0  # nothing holds the address any more


def test_erasure_keeps_amounts_and_dates(client, partner, operator_token, sql):
    phone = new_phone()
    referral_id = created(
        client,
        partner["keys"]["sk_test"],
        patient={"first_name": "Bola", "phone": phone, "city": "Ibadan"},
    )["referral_id"]
    booking = {"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "remote"}
    for to, extra in (
        ("contact_pending", {}),
        ("booked", {"appointment": booking}),
        ("attended", {"reason": "seen at home"}),
        ("paid", {"payment": {"amount_minor": 1500000, "currency": "NGN"}}),
    ):
        assert move(client, operator_token, referral_id, to, **extra).status_code == 200
    response = request(client, operator_token, {"kind": "erasure", "phone": phone})
    assert response.status_code == 200, response.text
    with sql.connect() as conn:
        row = conn.execute(
            text(
                "SELECT status, payment_amount_minor, appointment_scheduled_at, created_at, "
                "erased_at, patient_phone FROM referrals WHERE id = :r"
            ),
            {"r": referral_id},
        ).one()
    assert row.status == "closed"  # paid: care was given, so closed rather than cancelled
    assert row.payment_amount_minor == 1500000
    assert row.appointment_scheduled_at is not None and row.created_at is not None
    assert row.erased_at is not None and row.patient_phone is None


def test_bad_requests_are_clear_4xx(client, partner, operator_token):
    error_of(request(client, operator_token, {"kind": "export"}), 422, "validation_error")
    bad_phone = request(client, operator_token, {"kind": "export", "phone": "0803"})
    assert "phone" in error_of(bad_phone, 422, "validation_error")["fields"]
    bad_email = request(client, operator_token, {"kind": "erasure", "email": "nobody"})
    assert "email" in error_of(bad_email, 422, "validation_error")["fields"]
    bad_kind = request(client, operator_token, {"kind": "delete", "phone": new_phone()})
    assert "kind" in error_of(bad_kind, 422, "validation_error")["fields"]
    error_of(client.post(DSR, json={"kind": "export", "phone": new_phone()}), 401)
    as_partner = client.post(
        DSR, json={"kind": "export", "phone": new_phone()}, headers=auth(partner["keys"]["sk_live"])
    )
    error_of(as_partner, 401, "unauthenticated")
    nobody = request(client, operator_token, {"kind": "export", "phone": new_phone()})
    assert nobody.status_code == 200 and nobody.json()["result"]["referrals"] == 0


def test_a_replay_after_erasure_does_not_hand_the_patient_back(client, partner, operator_token):
    """Stored replies are sealed at rest; erasure opens each to find the person's, so the
    partner's replay of its own create no longer returns the erased patient."""
    key = partner["keys"]["sk_test"]
    phone = new_phone()
    tag = f"{random.randint(0, 10**9):09d}"
    body = v1_referral(
        patient={"first_name": f"Amaka{tag}", "phone": phone, "city": "Enugu"},
        reason=f"Knee pain {tag}",
    )
    first = create(client, key, body, idempotency_key=f"erase-{tag}")
    assert first.status_code == 201, first.text
    replayed = create(client, key, body, idempotency_key=f"erase-{tag}")
    assert replayed.headers.get("idempotent-replayed") == "true"

    response = request(client, operator_token, {"kind": "erasure", "phone": phone})
    assert response.status_code == 200, response.text
    assert response.json()["result"]["idempotent_replies"] == 1

    again = create(client, key, body, idempotency_key=f"erase-{tag}")
    assert again.headers.get("idempotent-replayed") != "true"
    assert again.json().get("referral_id") != first.json()["referral_id"]
