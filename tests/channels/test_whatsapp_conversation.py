"""A live referral's WhatsApp conversation, end to end over real HTTP: the create, the
template the Graph API stand-in receives, the patient's signed replies (buttons, lists,
free text) and the intake completed, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import text

from tests.channels.conftest import APP_SECRET, VERIFY_TOKEN, new_phone, wait_for
from tests.channels.patient import answer, choices, nth_message, post_signed, sent_to
from tests.conftest import auth, count
from tests.console.operators import make_operator, sign_in
from tests.shapeg.bodies import g_referral
from tests.support.graph_api import (
    inbound_button,
    inbound_template_button,
    inbound_text,
    signed_headers,
    status,
)
from tests.support.payloads import v1_referral


def referral_status(sql, referral_id: str) -> str:
    with sql.connect() as conn:
        return str(
            conn.execute(
                text("SELECT status FROM referrals WHERE id = :r"), {"r": referral_id}
            ).scalar_one()
        )


def test_a_live_v1_referral_is_taken_through_the_whole_intake_on_whatsapp(api, graph, partner, sql):
    phone = new_phone()
    body = v1_referral(patient={"first_name": "Amaka", "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "k1")
    )
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]

    first = nth_message(graph, phone, 1)
    assert first["messaging_product"] == "whatsapp" and first["type"] == "template"
    assert first["template"]["name"] == "rehabref_intake_start"
    assert "Lower back pain" not in str(first)  # no clinical text leaves for the provider
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM outbound_messages WHERE referral_id = :r AND state = 'sent' "
                "AND provider = 'whatsapp'",
                r=referral_id,
            )
            == 1
        ),
        what="WhatsApp to accept the template",
    )
    assert referral_status(sql, referral_id) == "received"

    # A free-text reply the assistant cannot read is asked again, with a hint.
    assert post_signed(api, inbound_text(phone, "???")).status_code == 200
    reasked = nth_message(graph, phone, 2)
    assert set(choices(reasked)) >= {"lang:en", "lang:pcm"}
    wait_for(lambda: referral_status(sql, referral_id) == "assistant_started", what="started")

    given = []
    message, n = reasked, 2
    while "confirm:yes" not in given:
        given.append(answer(api, phone, message))
        n += 1
        message = nth_message(graph, phone, n)
    assert given == [
        "lang:en",
        "consent:yes",
        "mode:home_visit",
        "Yaba",
        "slot:weekends",
        "confirm:yes",
    ]
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM events WHERE referral_id = :r AND type = "
                "'patient.intake_completed'",
                r=referral_id,
            )
            == 1
        ),
        what="patient.intake_completed",
    )
    with sql.connect() as conn:
        session = conn.execute(
            text(
                "SELECT availability, care_mode, area FROM assistant_sessions "
                "WHERE referral_id = :r"
            ),
            {"r": referral_id},
        ).one()
    assert tuple(session) == ("weekends", "home_visit", "Yaba")
    # Every message both ways is on the record, in order, for the coordinator's timeline.
    assert (
        count(sql, "SELECT count(*) FROM inbound_messages WHERE referral_id = :r", r=referral_id)
        == 7
    )


def test_a_duplicate_inbound_delivery_is_processed_once(api, graph, partner, sql):
    phone = new_phone()
    body = v1_referral(patient={"first_name": "Bola", "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "k2")
    )
    referral_id = created.json()["referral_id"]
    nth_message(graph, phone, 1)
    reply = inbound_template_button(phone, "lang:en", "English")
    for _ in range(3):  # Meta retries a webhook it thinks failed
        assert post_signed(api, reply).status_code == 200
    nth_message(graph, phone, 2)
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM inbound_messages WHERE referral_id = :r "
                "AND processed_at IS NOT NULL",
                r=referral_id,
            )
            == 1
        ),
        what="the reply processed",
    )
    # Give a wrongly-processed duplicate time to show itself: still one reply.
    wait_for(lambda: True)
    assert (
        count(sql, "SELECT count(*) FROM inbound_messages WHERE referral_id = :r", r=referral_id)
        == 1
    )
    assert len(sent_to(graph, phone)) == 2


def test_unsigned_and_wrongly_signed_webhooks_are_401_and_store_nothing(api, sql):
    phone = new_phone()
    body = inbound_text(phone, "hello")
    before = count(sql, "SELECT count(*) FROM inbound_messages")
    unsigned = api.post(
        "/webhooks/whatsapp", content=body, headers={"Content-Type": "application/json"}
    )
    forged = api.post("/webhooks/whatsapp", content=body, headers=signed_headers("wrong", body))
    tampered = api.post(
        "/webhooks/whatsapp",
        content=body.replace(b"hello", b"HELLO"),
        headers=signed_headers(APP_SECRET, body),
    )
    garbled = api.post(
        "/webhooks/whatsapp",
        content=body,
        headers={"X-Hub-Signature-256": "sha256=zz", "Content-Type": "application/json"},
    )
    for response in (unsigned, forged, tampered, garbled):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthenticated"
    assert count(sql, "SELECT count(*) FROM inbound_messages") == before


def test_signed_garbage_is_a_clear_4xx_or_ignored_never_a_5xx(api):
    for body in (b"not json", b"[]", b"{}", b'{"entry": [null, 1, "x"]}', b"\xff\xfe"):
        response = post_signed(api, body)
        assert response.status_code in (200, 400), (body, response.status_code)


def test_the_verify_handshake_answers_the_challenge_only_with_the_token(api):
    ok = api.get(
        "/webhooks/whatsapp",
        params={
            "hub.mode": "subscribe",
            "hub.verify_token": VERIFY_TOKEN,
            "hub.challenge": "1158201444",
        },
    )
    assert ok.status_code == 200 and ok.text == "1158201444"
    wrong = api.get(
        "/webhooks/whatsapp",
        params={"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"},
    )
    assert wrong.status_code == 403
    assert api.get("/webhooks/whatsapp").status_code == 403


def test_provider_statuses_move_the_message_forward_only(api, graph, partner, sql):
    phone = new_phone()
    body = v1_referral(patient={"first_name": "Chidi", "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "k3")
    )
    referral_id = created.json()["referral_id"]
    nth_message(graph, phone, 1)

    def provider_id() -> str | None:
        with sql.connect() as conn:
            return conn.execute(
                text(
                    "SELECT provider_message_id FROM outbound_messages WHERE referral_id = :r "
                    "AND state <> 'pending'"
                ),
                {"r": referral_id},
            ).scalar()

    wamid = wait_for(provider_id, what="the provider's message id")
    assert wamid.startswith("wamid.")
    for value in ("read", "delivered", "sent"):  # out of order, as Meta may send them
        assert post_signed(api, status(wamid, value, phone)).status_code == 200
    with sql.connect() as conn:
        state = conn.execute(
            text("SELECT state FROM outbound_messages WHERE provider_message_id = :w"),
            {"w": wamid},
        ).scalar_one()
    assert state == "read"


def test_shape_g_create_is_dispatched_only_when_the_provider_took_it(api, graph, make_partner, sql):
    partner = make_partner(name="G Clinic", contract="g")
    phone = new_phone()
    body = g_referral()
    body["patient"]["phone"] = phone
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "g1")
    )
    assert created.status_code == 201, created.text
    intake = created.json()["messaging_intake"]
    assert intake["dispatched"] is True
    assert created.json()["intake_status"] == "pending_messaging_response"
    assert sent_to(graph, phone)[0]["template"]["name"] == "rehabref_intake_start"
    # The replay says the same as the first answer.
    replay = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "g1")
    )
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.json()["messaging_intake"]["dispatched"] is True
    assert len(sent_to(graph, phone)) == 1


def test_coordinators_see_the_conversation_and_partners_never_do(api, graph, partner, database_url):
    phone = new_phone()
    body = v1_referral(patient={"first_name": "Yemi", "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "c1")
    )
    referral_id = created.json()["referral_id"]
    nth_message(graph, phone, 1)
    assert post_signed(api, inbound_text(phone, "Pidgin abeg")).status_code == 200
    nth_message(graph, phone, 2)

    operator = make_operator(database_url)
    assert sign_in(api, operator["token"]).status_code == 303
    page = api.get(f"/console/referrals/{referral_id}")
    assert page.status_code == 200
    assert "Messages with the patient" in page.text
    assert "Pidgin abeg" in page.text and "from patient" in page.text
    assert "Yemi" in page.text and "whatsapp" in page.text

    partner_view = api.get(
        f"/api/v1/partners/referrals/{referral_id}", headers=auth(partner["keys"]["sk_live"])
    )
    assert partner_view.status_code == 200
    assert "Pidgin abeg" not in partner_view.text and "rehabref_intake" not in partner_view.text


def test_a_shared_phone_answers_the_referral_whose_message_it_tapped(api, graph, partner, sql):
    phone = new_phone()  # one family phone, two patients referred
    first = v1_referral(patient={"first_name": "Mama", "phone": phone, "city": "Lagos"})
    second = v1_referral(patient={"first_name": "Papa", "phone": phone, "city": "Lagos"})
    key = partner["keys"]["sk_live"]
    older = api.post("/api/v1/partners/referrals", json=first, headers=auth(key, "f1")).json()
    nth_message(graph, phone, 1)
    newer = api.post("/api/v1/partners/referrals", json=second, headers=auth(key, "f2")).json()
    nth_message(graph, phone, 2)

    def wamid_of(referral_id: str) -> str | None:
        with sql.connect() as conn:
            return conn.execute(
                text(
                    "SELECT provider_message_id FROM outbound_messages WHERE referral_id = :r "
                    "AND provider_message_id IS NOT NULL"
                ),
                {"r": referral_id},
            ).scalar()

    context = wait_for(lambda: wamid_of(older["referral_id"]), what="the older message's id")
    tap = inbound_button(phone, "lang:en", "English", context=context)
    assert post_signed(api, tap).status_code == 200
    wait_for(lambda: referral_status(sql, older["referral_id"]) == "assistant_started", what="A")
    assert referral_status(sql, newer["referral_id"]) == "received"


def test_a_failed_status_before_the_send_was_recorded_still_falls_back(
    api, graph, partner, sql, database_url
):
    """Meta may report ``failed`` before our worker has written the provider's id: the
    status finds the message by our own id (echoed as biz_opaque_callback_data)."""
    phone = new_phone()
    body = v1_referral(patient={"first_name": "Dayo", "phone": phone, "city": "Lagos"})
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"], "e1")
    )
    referral_id = created.json()["referral_id"]
    first = nth_message(graph, phone, 1)
    ours = first["biz_opaque_callback_data"]
    failed = json.loads(status("wamid.early", "failed", phone, error_code=131026))
    failed["entry"][0]["changes"][0]["value"]["statuses"][0]["biz_opaque_callback_data"] = ours
    raw = json.dumps(failed).encode()
    assert post_signed(api, raw).status_code == 200
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM outbound_messages WHERE referral_id = :r AND channel = 'sms'",
                r=referral_id,
            )
            == 1
        ),
        what="the SMS fallback",
    )
    assert (
        count(
            sql, "SELECT count(*) FROM outbound_messages WHERE id = :i AND state = 'failed'", i=ours
        )
        == 1
    )


def test_signed_but_hostile_contents_never_make_a_5xx(api, sql):
    phone = new_phone()
    samples = [
        inbound_text(phone, "nul \u0000 byte"),
        inbound_text(phone, "lone \ud800 surrogate"),
        inbound_text(phone, "x", timestamp=999_999_999_999),
        b'{"entry": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        json.dumps({"entry": [{"changes": [{"field": "messages", "value": {
            "metadata": {"phone_number_id": "someone-elses-number"},
            "messages": [{"from": phone[1:], "id": "wamid.x", "timestamp": "1700000000",
                          "type": "text", "text": {"body": "not for us"}}]}}]}]}).encode(),
    ]  # fmt: skip
    for body in samples:
        response = post_signed(api, body)
        assert response.status_code in (200, 400), (body[:60], response.status_code)
    assert count(sql, "SELECT count(*) FROM inbound_messages WHERE text = 'not for us'") == 0


def test_the_server_log_holds_no_phone_text_link_or_secret(live_server):
    """Runs last in this module: every conversation above has passed through the log."""
    logs = live_server.logs()
    assert "patient message" in logs  # the worker did log its sends (ids and states)
    for secret in ("+234803", "234803", "Yaba", "Pidgin abeg", "Amaka", "/a/", APP_SECRET,
                   "EAAG-test-token"):  # fmt: skip
        assert secret not in logs, secret
