"""SMS and e-mail first contacts, outages, permanent refusals and their fallback, STOP and
START, against the Twilio, Graph API and SMTP stand-ins, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from rehabref.channels.content import Reply
from rehabref.channels.outbox import enqueue
from rehabref.clock import utcnow
from rehabref.db import Database
from tests.channels.conftest import TWILIO_FROM, new_phone, wait_for
from tests.channels.patient import nth_message, post_signed, sent_to
from tests.conftest import auth, count
from tests.support import graph_api, twilio_api
from tests.support.graph_api import GraphApi, inbound_text
from tests.support.partners import TEST_RING
from tests.support.payloads import v1_referral
from tests.support.twilio_api import TwilioApi, sign


def create(api, partner, key: str, **overrides: Any) -> str:
    response = api.post(
        "/api/v1/partners/referrals",
        json=v1_referral(**overrides),
        headers=auth(partner["keys"]["sk_live"], key),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["referral_id"])


def sms_to(twilio: TwilioApi, phone: str) -> list[dict[str, str]]:
    forms = [request.form() for request in list(twilio.requests)]
    return [{k: v[0] for k, v in form.items()} for form in forms if form.get("To") == [phone]]


def post_twilio(api, live_server, path: str, params: dict[str, str]):
    """Post as Twilio does: the form signed with the auth token over the public URL."""
    url = live_server.base_url + path
    token = live_server.env["REHABREF_TWILIO_AUTH_TOKEN"]
    return api.post(path, data=params, headers={"X-Twilio-Signature": sign(token, url, params)})


def tasks(sql, referral_id: str) -> list[str]:
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT purpose FROM contact_tasks WHERE referral_id = :r ORDER BY id"),
            {"r": referral_id},
        )
        return [row.purpose for row in rows]


def status_of(sql, referral_id: str) -> str:
    with sql.connect() as conn:
        return str(
            conn.execute(
                text("SELECT status FROM referrals WHERE id = :r"), {"r": referral_id}
            ).scalar_one()
        )


@pytest.fixture
def refusing(graph: GraphApi) -> Iterator[set[str]]:
    """Phones the Graph API stand-in refuses as not on WhatsApp (code 131026)."""
    phones: set[str] = set()
    graph.behaviour = lambda request, _i: (
        graph_api.Answer(status=400, code=131026)
        if "+" + str(request.json().get("to")) in phones
        else graph_api.Answer()
    )
    yield phones
    graph.behaviour = graph_api.succeed


def test_sms_preference_sends_the_link_by_sms_and_sms_replies_drive_the_dialogue(
    api, live_server, twilio, partner, sql
):
    phone = new_phone()
    referral_id = create(
        api,
        partner,
        "s1",
        patient={"first_name": "Ngozi", "phone": phone, "city": "Lagos"},
        preferred_contact="sms",
    )
    first = wait_for(lambda: sms_to(twilio, phone), what="the SMS")[0]
    assert first["From"] == TWILIO_FROM
    assert "/a/" in first["Body"] and "1. English" in first["Body"]
    assert first["StatusCallback"] == f"{live_server.base_url}/webhooks/twilio/status"
    reply = {"MessageSid": "SM" + "a" * 32, "From": phone, "To": TWILIO_FROM, "Body": "1"}
    assert post_twilio(api, live_server, "/webhooks/twilio/sms", reply).status_code == 200
    second = wait_for(lambda: sms_to(twilio, phone)[1:], what="the next question")[0]
    assert "1." in second["Body"] and "/a/" not in second["Body"]
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM referrals WHERE id = :r AND status = 'assistant_started'",
                r=referral_id,
            )
            == 1
        ),
        what="assistant_started",
    )
    # The delivery status Twilio reports is recorded on the message.
    with sql.connect() as conn:
        sid = conn.execute(
            text(
                "SELECT provider_message_id FROM outbound_messages WHERE referral_id = :r "
                "ORDER BY id LIMIT 1"
            ),
            {"r": referral_id},
        ).scalar_one()
    callback = {"MessageSid": sid, "MessageStatus": "delivered", "To": phone}
    assert post_twilio(api, live_server, "/webhooks/twilio/status", callback).status_code == 204
    assert (
        count(
            sql,
            "SELECT count(*) FROM outbound_messages WHERE provider_message_id = :s "
            "AND state = 'delivered'",
            s=sid,
        )
        == 1
    )


def test_twilio_webhooks_refuse_a_wrong_signature(api, live_server, sql):
    params = {"MessageSid": "SM" + "b" * 32, "From": new_phone(), "Body": "hi"}
    before = count(sql, "SELECT count(*) FROM inbound_messages")
    for path in ("/webhooks/twilio/sms", "/webhooks/twilio/status"):
        response = api.post(path, data=params, headers={"X-Twilio-Signature": "bm9wZQ=="})
        assert response.status_code == 401
        assert api.post(path, data=params).status_code == 401
    assert count(sql, "SELECT count(*) FROM inbound_messages") == before


def test_email_preference_sends_a_text_and_html_email_with_the_link(api, smtp, partner):
    address = f"patient-{new_phone()[-7:]}@example.com"
    create(
        api,
        partner,
        "e1",
        patient={"first_name": "Tunde", "email": address, "city": "Lagos"},
        preferred_contact="email",
    )
    captured = wait_for(
        lambda: [c for c in smtp.captured if address in c.rcpt_tos], what="the e-mail"
    )[0]
    message = captured.message()
    assert message["From"] == "care@rehabref.test" and message["To"] == address
    plain = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Tunde" in plain and "/a/" in plain
    assert '<a href="' in html and "/a/" in html


def test_an_outage_is_retried_until_the_provider_takes_the_message(api, graph, partner, sql):
    phone = new_phone()
    graph.behaviour = lambda request, _i: (
        graph_api.Answer(status=503)
        if "+" + str(request.json().get("to")) == phone
        and sum(1 for r in list(graph.requests) if r.json().get("to") == phone[1:]) <= 2
        else graph_api.Answer()
    )
    try:
        referral_id = create(
            api, partner, "o1", patient={"first_name": "Efe", "phone": phone, "city": "Lagos"}
        )
        wait_for(
            lambda: (
                count(
                    sql,
                    "SELECT count(*) FROM outbound_messages WHERE referral_id = :r "
                    "AND state = 'sent' AND attempts = 3",
                    r=referral_id,
                )
                == 1
            ),
            what="the third attempt accepted",
        )
    finally:
        graph.behaviour = graph_api.succeed
    assert len(sent_to(graph, phone)) == 3


def test_a_number_not_on_whatsapp_gets_an_sms_and_then_a_coordinator(
    api, twilio, partner, sql, refusing
):
    phone = new_phone()
    refusing.add(phone)
    referral_id = create(
        api, partner, "f1", patient={"first_name": "Kemi", "phone": phone, "city": "Lagos"}
    )
    fallback = wait_for(lambda: sms_to(twilio, phone), what="the fallback SMS")[0]
    assert "/a/" in fallback["Body"] and "Kemi" in fallback["Body"]
    with sql.connect() as conn:
        states = [
            (row.channel, row.state)
            for row in conn.execute(
                text(
                    "SELECT channel, state FROM outbound_messages WHERE referral_id = :r "
                    "ORDER BY id"
                ),
                {"r": referral_id},
            )
        ]
    assert states[0] == ("whatsapp", "failed")
    assert tasks(sql, referral_id) == []

    # When SMS refuses too (not a valid mobile number), a coordinator takes over.
    try:
        second = new_phone()
        refusing.add(second)
        twilio.behaviour = lambda request, _i: (
            twilio_api.Answer(status=400, code=21614)
            if request.form().get("To") == [second]
            else twilio_api.Answer()
        )
        other = create(
            api, partner, "f2", patient={"first_name": "Musa", "phone": second, "city": "Lagos"}
        )
        wait_for(lambda: tasks(sql, other) == ["message_undeliverable"], what="the task")
    finally:
        twilio.behaviour = lambda _r, _i: twilio_api.Answer()


def test_stop_withdraws_and_silences_every_referral_of_the_number_until_start(
    api, graph, partner, sql
):
    phone = new_phone()
    referral_id = create(
        api, partner, "x1", patient={"first_name": "Ada", "phone": phone, "city": "Lagos"}
    )
    nth_message(graph, phone, 1)
    assert post_signed(api, inbound_text(phone, "STOP")).status_code == 200
    ack = nth_message(graph, phone, 2)
    assert "START" in ack["text"]["body"]
    # STOP is consent withdrawal: the referral ends (its tasks with it) and stays ended.
    wait_for(lambda: status_of(sql, referral_id) == "cancelled", what="the withdrawal")
    assert tasks(sql, referral_id) == []
    assert post_signed(api, inbound_text(phone, "stop")).status_code == 200  # acknowledged once

    # A new referral for the same number sends nothing while it is opted out.
    later = create(
        api, partner, "x2", patient={"first_name": "Ada", "phone": phone, "city": "Lagos"}
    )
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM outbound_messages WHERE referral_id = :r "
                "AND state = 'suppressed'",
                r=later,
            )
            == 1
        ),
        what="the new message suppressed",
    )
    assert len(sent_to(graph, phone)) == 2
    with sql.connect() as conn:
        opt_out = conn.execute(text("SELECT opted_out, channel FROM message_opt_outs")).all()
    assert any(row.opted_out and row.channel == "whatsapp" for row in opt_out)

    assert post_signed(api, inbound_text(phone, "START")).status_code == 200
    resumed = nth_message(graph, phone, 3)
    assert "again" in resumed["text"]["body"]


def test_messages_to_one_patient_leave_in_the_order_they_were_written(graph, database_url):
    """The first message fails twice; the second, written after it, waits for it."""
    phone = new_phone()

    def first_fails(request: graph_api.GraphRequest, _index: int) -> graph_api.Answer:
        body = request.json()
        is_first = body.get("to") == phone[1:] and "first" in str(body)
        earlier = [r for r in list(graph.requests) if "first" in str(r.json())]
        return graph_api.Answer(status=500 if is_first and len(earlier) <= 2 else 200)

    async def write_two() -> None:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                for words in ("first question", "second question"):
                    await enqueue(
                        conn,
                        TEST_RING,  # the test server's: it opens what it sends
                        channel="whatsapp",
                        to=phone,
                        content=Reply(words),
                        purpose="test.order",
                        environment="live",
                        referral_id=None,
                        now=utcnow(),
                    )
        finally:
            await db.dispose()

    graph.behaviour = first_fails
    try:
        asyncio.run(write_two())
        wait_for(
            lambda: any("second" in str(body) for body in sent_to(graph, phone)),
            what="the second message",
        )
    finally:
        graph.behaviour = graph_api.succeed
    order = ["first" if "first" in str(body) else "second" for body in sent_to(graph, phone)]
    assert order == ["first", "first", "first", "second"]


def test_a_message_after_the_intake_reaches_a_coordinator(api, graph, partner, sql, live_server):
    phone = new_phone()
    referral_id = create(
        api, partner, "h1", patient={"first_name": "Ola", "phone": phone, "city": "Lagos"}
    )
    nth_message(graph, phone, 1)
    with sql.begin() as conn:  # the intake is over (e.g. a coordinator booked by phone)
        conn.execute(
            text("UPDATE intake_conversations SET closed_at = created_at WHERE referral_id = :r"),
            {"r": referral_id},
        )
    assert post_signed(api, inbound_text(phone, "HELP I cannot come on Tuesday")).status_code == 200
    wait_for(lambda: "patient_message" in tasks(sql, referral_id), what="the coordinator task")
    assert (
        count(sql, "SELECT count(*) FROM inbound_messages WHERE referral_id = :r", r=referral_id)
        == 1
    )


def test_an_sms_stop_whose_confirmation_the_carrier_blocks_still_withdraws(
    api, live_server, twilio, partner, sql
):
    phone = new_phone()
    referral_id = create(
        api,
        partner,
        "t1",
        patient={"first_name": "Zainab", "phone": phone, "city": "Lagos"},
        preferred_contact="sms",
    )
    wait_for(lambda: sms_to(twilio, phone), what="the first SMS")
    # Twilio's own STOP handling: every later send to the number is refused with 21610.
    twilio.behaviour = lambda request, _i: (
        twilio_api.Answer(status=400, code=21610)
        if request.form().get("To") == [phone]
        else twilio_api.Answer()
    )
    try:
        stop = {"MessageSid": "SM" + "c" * 32, "From": phone, "To": TWILIO_FROM, "Body": "CANCEL"}
        assert post_twilio(api, live_server, "/webhooks/twilio/sms", stop).status_code == 200
        wait_for(lambda: len(sms_to(twilio, phone)) == 2, what="the refused confirmation")
        wait_for(
            lambda: (
                count(
                    sql,
                    "SELECT count(*) FROM outbound_messages WHERE referral_id = :r "
                    "AND state = 'failed'",
                    r=referral_id,
                )
                == 1
            ),
            what="the confirmation recorded as failed",
        )
    finally:
        twilio.behaviour = lambda _r, _i: twilio_api.Answer()
    # CANCEL on SMS is STOP, so consent is withdrawn: nothing is left for a coordinator.
    assert status_of(sql, referral_id) == "cancelled"
    assert tasks(sql, referral_id) == []
