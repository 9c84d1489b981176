"""Consent withdrawal by the link in every message (GET confirms, POST withdraws), by STOP
and by a coordinator recording a phone call; each ends the referral through the state
machine and queues ``referral.closed`` (reason ``consent_withdrawn``) for the partner.
Against the provider stand-ins, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from sqlalchemy import text

from rehabref.events.sealing import event_data
from rehabref.referrals.coordinator_notes import transition_reason
from tests.channels.conftest import new_phone, wait_for
from tests.channels.patient import nth_message, post_signed
from tests.conftest import auth
from tests.support.graph_api import inbound_text
from tests.support.operators import OPS, op_headers
from tests.support.partners import TEST_RING
from tests.support.payloads import v1_referral
from tests.support.receiver import Receiver

WITHDRAW_LINK = re.compile(r"https?://[^\s]+/w/[A-Za-z0-9_.-]+")


def create(api, partner, key: str = "sk_live", **overrides: Any) -> str:
    response = api.post(
        "/api/v1/partners/referrals",
        json=v1_referral(**overrides),
        headers=auth(partner["keys"][key], f"w-{new_phone()}"),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["referral_id"])


def referral(sql, referral_id: str) -> Any:
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT status, consent_withdrawn_at FROM referrals WHERE id = :r"),
            {"r": referral_id},
        ).one()


def closed_events(sql, referral_id: str) -> list[dict[str, Any]]:
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT data FROM events WHERE referral_id = :r AND type = 'referral.closed'"),
            {"r": referral_id},
        ).all()
    return [event_data(TEST_RING, row.data) for row in rows]


def sms_bodies(twilio, phone: str) -> list[str]:
    forms = [request.form() for request in list(twilio.requests)]
    return [form["Body"][0] for form in forms if form.get("To") == [phone]]


def test_the_link_in_a_message_withdraws_on_post_only(api, twilio, partner, sql):
    phone = new_phone()
    referral_id = create(
        api,
        partner,
        patient={"first_name": "Kemi", "phone": phone, "city": "Lagos"},
        preferred_contact="sms",
    )
    first = wait_for(lambda: sms_bodies(twilio, phone), what="the first SMS")[0]
    link = WITHDRAW_LINK.search(first)
    assert link is not None, first
    path = "/w/" + link.group(0).split("/w/", 1)[1]
    assert phone not in path and "Kemi" not in path

    # A bare GET (a link preview) shows the form and changes nothing.
    page = api.get(path)
    assert page.status_code == 200 and "Withdraw my consent" in page.text
    assert page.headers["cache-control"] == "no-store"
    assert "Kemi" not in page.text and phone not in page.text
    assert referral(sql, referral_id).consent_withdrawn_at is None
    assert closed_events(sql, referral_id) == []

    # A POST without the page's form token (another site) changes nothing either.
    forged = api.post(path, data={"form_token": "x"})
    assert forged.status_code == 403
    assert referral(sql, referral_id).status != "cancelled"
    # A forged link is not recognised.
    assert api.get(path[:-3] + "AAA").status_code == 404

    token = re.search(r'name="form_token" value="([^"]+)"', page.text)
    assert token is not None
    done = api.post(path, data={"form_token": token.group(1)})
    assert done.status_code == 200 and "withdrawn" in done.text
    after = referral(sql, referral_id)
    assert after.status == "cancelled" and after.consent_withdrawn_at is not None
    events = closed_events(sql, referral_id)
    assert len(events) == 1 and events[0]["reason"] == "consent_withdrawn"
    # Posting again (a double tap) ends nothing twice.
    assert api.post(path, data={"form_token": token.group(1)}).status_code == 200
    assert len(closed_events(sql, referral_id)) == 1


def test_stop_withdraws_every_live_referral_of_the_number(api, graph, partner, sql):
    phone = new_phone()
    first = create(api, partner, patient={"first_name": "Ada", "phone": phone, "city": "Lagos"})
    second = create(api, partner, patient={"first_name": "Ada", "phone": phone, "city": "Abuja"})
    nth_message(graph, phone, 2)
    assert post_signed(api, inbound_text(phone, "STOP")).status_code == 200
    ack = nth_message(graph, phone, 3)
    assert "withdrawn your consent" in ack["text"]["body"]
    for referral_id in (first, second):
        wait_for(
            lambda referral_id=referral_id: referral(sql, referral_id).status == "cancelled",
            what="the withdrawal",
        )
        assert [e["reason"] for e in closed_events(sql, referral_id)] == ["consent_withdrawn"]
    with sql.connect() as conn:
        kinds = conn.execute(
            text("SELECT kind, actor FROM data_subject_requests WHERE actor = 'patient:whatsapp'")
        ).all()
    assert kinds and all(row.kind == "withdrawal" for row in kinds)


def test_a_coordinator_records_a_withdrawal_given_by_phone(api, partner, operator_token, sql):
    receiver = Receiver().start()
    endpoint = api.post(
        "/api/v1/partners/webhook-endpoints",
        json={"url": receiver.url},
        headers=auth(partner["keys"]["sk_test"]),
    )
    assert endpoint.status_code == 201, endpoint.text
    phone = new_phone()
    referral_id = create(
        api, partner, "sk_test", patient={"first_name": "Femi", "phone": phone, "city": "Jos"}
    )
    path = f"{OPS}/referrals/{referral_id}/consent-withdrawal"
    missing = api.post(path, json={}, headers=op_headers(operator_token))
    assert missing.status_code == 422 and "note" in missing.json()["error"]["fields"]
    assert api.post(path, json={"note": "x"}).status_code == 401
    response = api.post(
        path, json={"note": "Called: no longer wants therapy"}, headers=op_headers(operator_token)
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "cancelled"
    assert [e["reason"] for e in closed_events(sql, referral_id)] == ["consent_withdrawn"]
    with sql.connect() as conn:
        reason = conn.execute(
            text(
                "SELECT reason FROM referral_transitions WHERE referral_id = :r "
                "AND to_status = 'cancelled'"
            ),
            {"r": referral_id},
        ).scalar_one()
    assert reason.startswith("s1.")  # sealed at rest (coordinator_notes)
    assert (
        transition_reason(TEST_RING, reason)
        == "consent_withdrawn (phone): Called: no longer wants therapy"
    )
    # The partner's endpoint is told, signed, without patient data.
    try:

        def told() -> list[Any]:
            return [
                r
                for r in list(receiver.received)
                if r.json()["type"] == "referral.closed"
                and r.json()["data"]["referral_id"] == referral_id
            ]

        receiver.wait_for(lambda: bool(told()))
        delivered = told()[0]
        assert delivered.json()["data"]["reason"] == "consent_withdrawn"
        assert delivered.json()["data"]["status"] == "cancelled"
        assert delivered.signature_valid(partner["keys"]["whsec_test"])
        assert phone not in delivered.body.decode() and "Femi" not in delivered.body.decode()
    finally:
        receiver.stop()
    # No more messages to the patient: the number is opted out.
    with sql.connect() as conn:
        pending = conn.execute(
            text(
                "SELECT count(*) FROM outbound_messages WHERE referral_id = :r "
                "AND state IN ('pending', 'sending')"
            ),
            {"r": referral_id},
        ).scalar_one()
    assert pending == 0
    unknown = api.post(
        f"{OPS}/referrals/ref_00000000000000000000000000/consent-withdrawal",
        json={"note": "n"},
        headers=op_headers(operator_token),
    )
    assert unknown.status_code == 404


def test_the_email_and_the_assistant_page_carry_the_withdrawal_link(api, smtp, partner, sql):
    address = f"tobi.{new_phone()[4:]}@example.com"
    create(
        api,
        partner,
        patient={"first_name": "Tobi", "email": address, "city": "Lagos"},
        preferred_contact="email",
    )
    mail = wait_for(
        lambda: [c for c in list(smtp.captured) if c.rcpt_tos == [address]], what="the e-mail"
    )[0]
    plain = mail.message().get_body(("plain",)).get_content()
    assert WITHDRAW_LINK.search(plain), plain
    assistant = re.search(r"https?://[^\s]+(/a/[A-Za-z0-9_.~-]+)", plain)
    assert assistant is not None
    page = api.get(assistant.group(1))
    assert page.status_code == 200 and "Withdraw my consent" in page.text
    link = WITHDRAW_LINK.search(page.text)
    assert link is not None and link.group(0).split("/w/")[1] in plain


def test_concurrent_withdrawals_end_the_referral_once(api, partner, operator_token, sql):
    referral_id = create(
        api, partner, patient={"first_name": "Sade", "phone": new_phone(), "city": "Ilorin"}
    )
    path = f"{OPS}/referrals/{referral_id}/consent-withdrawal"

    def withdraw(n: int) -> int:
        with httpx.Client(base_url=str(api.base_url), timeout=30) as http:
            response = http.post(
                path, json={"note": f"call {n}"}, headers=op_headers(operator_token)
            )
            return response.status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(withdraw, range(8)))
    assert statuses == [200] * 8
    assert len(closed_events(sql, referral_id)) == 1
    with sql.connect() as conn:
        moves = conn.execute(
            text(
                "SELECT count(*) FROM referral_transitions WHERE referral_id = :r "
                "AND to_status = 'cancelled'"
            ),
            {"r": referral_id},
        ).scalar_one()
    assert moves == 1
