"""What the database holds at rest: stored idempotent replies are sealed (AES-GCM, key id in
the envelope) yet replay byte for byte; a person's referrals are found through the keyed
blind indexes of phone and e-mail (referrals.store.unscoped_referral_ids_of_person); the
referral's reason and diagnosis are readable neither in the database file nor in a pg_dump.

Real server and database (SQLite or PostgreSQL, per REHABREF_TEST_DATABASE).
"""

from __future__ import annotations

import asyncio
import secrets
import string
import uuid
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import Engine

from rehabref.crypto import blind_index, open_sealed_bytes, parse_key_ring
from rehabref.db import Database
from rehabref.idempotency.service import SEALED_RESPONSE
from rehabref.instance_secret import SecretBox
from rehabref.referrals.store import unscoped_referral_ids_of_person
from tests.console.operators import make_operator, sign_in
from tests.shapeg.bodies import g_referral
from tests.support.api import REFERRALS, bearer
from tests.support.database_copy import database_copy
from tests.support.operators import create_operator, op_headers
from tests.support.partners import TEST_SECRET_KEY
from tests.support.payloads import v1_referral

RING = SecretBox(TEST_SECRET_KEY).ring


def _stored_reply(sql: Engine, partner: dict[str, Any], key: str) -> bytes:
    with sql.connect() as conn:
        return bytes(
            conn.execute(
                text(
                    "SELECT response_body FROM idempotency_records"
                    " WHERE partner_id = :partner AND key = :key"
                ),
                {"partner": partner["partner_id"], "key": key},
            ).scalar_one()
        )


def test_stored_replies_are_sealed_and_replay_byte_for_byte(client, partner, sql):
    key = f"idem-{uuid.uuid4()}"
    body = v1_referral(
        patient={"first_name": "Chiamaka", "phone": "+2348035550101", "city": "Lagos"}
    )
    headers = {**bearer(partner["keys"]["sk_test"]), "Idempotency-Key": key}
    first = client.post(REFERRALS, json=body, headers=headers)
    assert first.status_code == 201, first.text
    replay = client.post(REFERRALS, json=body, headers=headers)
    assert replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == first.content

    stored = _stored_reply(sql, partner, key)
    assert stored.startswith(b"s1.k0.")
    referral_id = first.json()["referral_id"]
    assert referral_id.encode() not in stored
    assert open_sealed_bytes(RING, SEALED_RESPONSE, stored) == first.content


def test_shape_g_amended_replies_stay_sealed(client, make_partner, sql):
    partner = make_partner(contract="g")
    key = f"idem-{uuid.uuid4()}"
    headers = {**bearer(partner["keys"]["sk_test"]), "Idempotency-Key": key}
    body = g_referral()
    first = client.post("/v1/partner/referrals", json=body, headers=headers)
    assert first.status_code == 201, first.text
    replay = client.post("/v1/partner/referrals", json=body, headers=headers)
    assert replay.status_code == 201, replay.text
    assert replay.content == first.content
    stored = _stored_reply(sql, partner, key)
    assert stored.startswith(b"s1.")
    assert open_sealed_bytes(RING, SEALED_RESPONSE, stored) == replay.content


def _ids_of_person(database_url: str, **person: str) -> list[str]:
    async def work() -> list[str]:
        db = Database(database_url, pool_size=1)
        try:
            async with db.read() as conn:
                return await unscoped_referral_ids_of_person(conn, RING, **person)
        finally:
            await db.dispose()

    return asyncio.run(work())


def test_a_persons_referrals_are_found_by_phone_or_email_through_the_blind_index(
    client, partner, make_partner, sql, database_url
):
    phone = f"+23480{uuid.uuid4().int % 10**8:08d}"
    email = f"Ada.{uuid.uuid4().hex[:8]}@Example.com"
    other = make_partner()
    made = []
    for owner, patient in [
        (partner, {"first_name": "Ada", "phone": phone, "city": "Lagos"}),
        (other, {"first_name": "Ada", "phone": phone, "email": email, "city": "Abuja"}),
        (partner, {"first_name": "Bola", "email": email.lower(), "city": "Ibadan"}),
    ]:
        contact = "messaging" if "phone" in patient else "email"
        body = v1_referral(patient=patient, preferred_contact=contact)
        response = client.post(
            REFERRALS,
            json=body,
            headers={**bearer(owner["keys"]["sk_test"]), "Idempotency-Key": str(uuid.uuid4())},
        )
        assert response.status_code == 201, response.text
        made.append(response.json()["referral_id"])

    assert _ids_of_person(database_url, phone=phone) == sorted(made[:2])
    assert _ids_of_person(database_url, email=email.upper()) == sorted(made[1:])
    assert _ids_of_person(database_url, phone=phone, email=email) == sorted(made)
    assert _ids_of_person(database_url, phone="+2348000000000") == []
    assert _ids_of_person(database_url) == []

    with sql.connect() as conn:
        stored = conn.execute(
            text("SELECT patient_phone_index FROM referrals WHERE id = :id"), {"id": made[0]}
        ).scalar_one()
    assert stored == blind_index(RING, "phone", phone)
    assert phone not in stored
    # Another key gives another index: the index cannot be checked against guessed numbers
    # without the key.
    assert stored != blind_index(parse_key_ring(f"k1:{'x' * 43}"), "phone", phone)


def test_clinical_text_is_sealed_in_the_database_file_and_in_a_dump(
    client, make_partner, sql, database_url
):
    tag = uuid.uuid4().hex[:10]
    reason = f"Hamstring strain {tag} after football"
    diagnosis = f"Frozen shoulder {tag} stage two"
    v1_partner = make_partner()
    v1 = client.post(
        REFERRALS,
        json=v1_referral(reason=reason, external_ref=f"ext-{tag}"),
        headers={**bearer(v1_partner["keys"]["sk_test"]), "Idempotency-Key": str(uuid.uuid4())},
    )
    assert v1.status_code == 201, v1.text
    g_partner = make_partner(contract="g")
    body = g_referral()
    body["partner_reference"] = f"ref-{tag}"
    body["clinical_notes"]["diagnosis"] = diagnosis
    g = client.post(
        "/v1/partner/referrals", json=body, headers=bearer(g_partner["keys"]["sk_test"])
    )
    assert g.status_code == 201, g.text

    # Readers open the values: the operators' view shows the reason as it was sent.
    token = create_operator(database_url)
    shown = client.get(
        f"/api/v1/ops/referrals/{v1.json()['referral_id']}", headers=op_headers(token)
    )
    assert shown.status_code == 200, shown.text
    assert shown.json()["reason"] == reason

    copy = database_copy(database_url)
    # The copy holds these referrals (their partner references are plain by design)...
    assert f"ext-{tag}".encode() in copy and f"ref-{tag}".encode() in copy
    # ...but not why the patients were referred.
    for secret in (reason, diagnosis, f"Hamstring strain {tag}", f"Frozen shoulder {tag}"):
        assert secret.encode() not in copy, f"{secret!r} is readable in the database copy"


def _name() -> str:
    """A first or last name found nowhere else in the database."""
    letters = string.ascii_lowercase
    return "".join(secrets.choice(letters) for _ in range(10)).capitalize()


def test_patient_identifiers_are_sealed_yet_every_reader_shows_them(
    client, server, make_partner, sql, database_url
):
    first, last = _name(), _name()
    phone = f"+23480{secrets.randbelow(10**8):08d}"
    email = f"{first.lower()}.{uuid.uuid4().hex[:6]}@example.com"
    v1_partner = make_partner()
    body = v1_referral(
        patient={"first_name": first, "phone": phone, "email": email, "city": "Lagos"},
        route="contact",  # a coordinator calls: no message holds the name yet
    )
    v1 = client.post(
        REFERRALS,
        json=body,
        headers={**bearer(v1_partner["keys"]["sk_test"]), "Idempotency-Key": str(uuid.uuid4())},
    )
    assert v1.status_code == 201, v1.text
    referral_id = v1.json()["referral_id"]

    with sql.connect() as conn:
        stored = conn.execute(
            text(
                "SELECT patient_first_name, patient_phone, patient_email, patient_phone_index"
                " FROM referrals WHERE id = :id"
            ),
            {"id": referral_id},
        ).one()
    assert all(value.startswith("s1.k0.") for value in stored[:3])
    assert stored.patient_phone_index == blind_index(RING, "phone", phone)

    # The readers open them: the partner's record, the operators' view and contact tasks,
    # the console's referral page and its search by exact phone or e-mail.
    record = client.get(f"{REFERRALS}/{referral_id}", headers=bearer(v1_partner["keys"]["sk_test"]))
    assert record.json()["patient"]["first_name"] == first
    token = create_operator(database_url)
    shown = client.get(f"/api/v1/ops/referrals/{referral_id}", headers=op_headers(token))
    assert (
        shown.json()["patient"] | {"first_name": first, "phone": phone, "email": email}
        == (shown.json()["patient"])
    )
    mine: list[dict[str, Any]] = []
    params = {"limit": "100"}
    while not mine:  # oldest first, and the suite's database holds many
        page = client.get(
            "/api/v1/ops/contact-tasks", params=params, headers=op_headers(token)
        ).json()
        mine = [t for t in page["data"] if t["referral_id"] == referral_id]
        if not page["has_more"]:
            break
        params["cursor"] = page["next_cursor"]
    assert mine and mine[0]["patient"]["phone"] == phone
    with httpx.Client(base_url=server.base_url) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303
        page = console.get(f"/console/referrals/{referral_id}")
        assert first in page.text and phone in page.text and email in page.text
        assert "s1.k0." not in page.text
        for term in (phone, email.upper()):
            found = console.get("/console", params={"q": term})
            assert referral_id in found.text and first in found.text, term
        # Names are sealed: they are no search term (docs/decisions.md 23).
        assert referral_id not in console.get("/console", params={"q": first}).text

    g_partner = make_partner(contract="g")
    g_body = g_referral()
    g_body["patient"] |= {"first_name": first, "last_name": last, "phone": phone}
    g = client.post(
        "/v1/partner/referrals", json=g_body, headers=bearer(g_partner["keys"]["sk_test"])
    )
    assert g.status_code == 201, g.text
    g_record = client.get(
        f"{REFERRALS}/{g.json()['referral_id']}",
        headers=bearer(g_partner["keys"]["sk_test"]),
    ).json()
    assert (g_record["patient"]["firstName"], g_record["patient"]["lastName"]) == (first, last)
    assert g_record["patient"]["phone"] == phone

    # The copy holds neither (the Shape G referral's first message still names the patient:
    # messages are sealed separately).
    copy = database_copy(database_url)
    for secret in (email, last):
        assert secret.encode() not in copy, f"{secret!r} is readable in the database copy"
