"""The patient books their first visit in the WhatsApp conversation, end to end over real
HTTP (signed webhooks in, the Graph API stand-in out, the in-process worker between): three
free slots of the matched physiotherapist offered after the intake, a number booking exactly
the slot shown under it (``appointment.booked`` delivered to the partner), a slot taken
meanwhile, "0", an expired offer, no free slot at all, and the Pidgin wording; on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from rehabref.care.availability import LAGOS
from rehabref.console.slot_board import lagos_time
from rehabref.db import Database
from rehabref.workflows.appointment_messages import visit_time
from rehabref.workflows.slot_offers import expire_offer
from tests.channels.conftest import TWILIO_FROM, new_phone, wait_for
from tests.channels.patient import choices, nth_message, post_signed, sent_to
from tests.channels.test_sms_email_fallback import post_twilio, sms_to
from tests.conftest import auth, count
from tests.console.operators import make_operator, sign_in
from tests.events.conftest import register
from tests.support.care import insert_referral, physio_body
from tests.support.graph_api import (
    inbound_button,
    inbound_list,
    inbound_template_button,
    inbound_text,
)
from tests.support.messages import opened_content
from tests.support.operators import op_headers
from tests.support.payloads import v1_referral
from tests.support.receiver import Receiver

EVERY_DAY = [
    {"weekday": day, "start": "08:00", "end": "20:00", "slot_minutes": 60} for day in range(7)
]
ENGLISH = ("lang:en", "consent:yes", "mode:home_visit", "slot:weekends", "confirm:yes")
PIDGIN = ("lang:pcm", "consent:yes", "mode:home_visit", "slot:weekday_mornings", "confirm:yes")


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def new_physio(api, token: str, city: str, windows: list[dict[str, Any]] | None) -> str:
    created = api.post(
        "/api/v1/ops/physiotherapists",
        json=physio_body(name="Kemi Adeyemi", city=city, areas=["Yaba"]),
        headers=op_headers(token),
    )
    assert created.status_code == 201, created.text
    physio_id = str(created.json()["physio_id"])
    if windows is not None:
        put = api.put(
            f"/api/v1/ops/physiotherapists/{physio_id}/availability",
            json={"windows": windows},
            headers=op_headers(token),
        )
        assert put.status_code == 200, put.text
    return physio_id


def tap(api, phone: str, message: dict[str, Any], wanted: tuple[str, ...]) -> str:
    """Answer one question as the patient: tap the wanted choice, or type the area."""
    offered = choices(message)
    pick = next((choice for choice in wanted if choice in offered), None)
    if pick is None:
        body = inbound_text(phone, "Yaba")
    elif message["type"] == "template":
        body = inbound_template_button(phone, pick, pick)
    elif message["interactive"]["type"] == "button":
        body = inbound_button(phone, pick, pick)
    else:
        body = inbound_list(phone, pick, pick)
    assert post_signed(api, body).status_code == 200
    return pick or "Yaba"


def say(api, phone: str, words: str) -> None:
    assert post_signed(api, inbound_text(phone, words)).status_code == 200


def body_of(message: dict[str, Any]) -> str:
    """What the message says, without the withdrawal line every live message ends with."""
    if message["type"] == "text":
        said = str(message["text"]["body"])
        assert "\n\nTo withdraw your consent" in said
        return said.split("\n\nTo withdraw your consent")[0]
    if message["type"] == "interactive":
        return str(message["interactive"]["body"]["text"])
    return json.dumps(message["template"])


class Patient:
    """A live referral in its own city, with its own physiotherapist, talking on WhatsApp."""

    def __init__(self, api, graph, partner, token: str, *, windows=EVERY_DAY) -> None:
        self.api, self.graph, self.token = api, graph, token
        self.city = f"Offerton {uuid.uuid4().hex[:8]}"
        self.physio_id = new_physio(api, token, self.city, windows)
        self.phone = new_phone()
        body = v1_referral(patient={"first_name": "Amaka", "phone": self.phone, "city": self.city})
        created = api.post(
            "/api/v1/partners/referrals",
            json=body,
            headers=auth(partner["keys"]["sk_live"], uuid.uuid4().hex),
        )
        assert created.status_code == 201, created.text
        self.referral_id = str(created.json()["referral_id"])
        self.seen = 0

    def next_message(self) -> dict[str, Any]:
        self.seen += 1
        return nth_message(self.graph, self.phone, self.seen)

    def finish_intake(self, wanted: tuple[str, ...] = ENGLISH) -> dict[str, Any]:
        """Answer every question; the message that follows the confirmed summary."""
        message = self.next_message()
        while tap(self.api, self.phone, message, wanted) != "confirm:yes":
            message = self.next_message()
        return self.next_message()

    def say(self, words: str) -> None:
        say(self.api, self.phone, words)


def offers(sql, referral_id: str) -> list[Any]:
    with sql.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT id, physio_id, status, slots, appointment_id, language, care_mode "
                    "FROM slot_offers WHERE referral_id = :r ORDER BY created_at, id"
                ),
                {"r": referral_id},
            )
        )


def offered_starts(row: Any) -> list[datetime]:
    slots = row.slots if isinstance(row.slots, list) else json.loads(row.slots)
    return [datetime.fromisoformat(value) for value in slots]


def appointments_of(sql, referral_id: str) -> list[Any]:
    with sql.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT id, physio_id, starts_at, status, care_mode, created_by "
                    "FROM appointments WHERE referral_id = :r"
                ),
                {"r": referral_id},
            )
        )


def as_utc(value: Any) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def open_tasks(sql, referral_id: str, purpose: str) -> int:
    return count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = :p "
        "AND status = 'open'",
        r=referral_id,
        p=purpose,
    )


def offer_lines(message: dict[str, Any]) -> list[str]:
    assert message["type"] == "text", message
    return body_of(message).splitlines()


def assert_offer_shows(message: dict[str, Any], row: Any) -> None:
    """The message numbers exactly the stored starts, in the stored order."""
    lines = offer_lines(message)
    starts = offered_starts(row)
    numbered = [line for line in lines if line[:1].isdigit()]
    assert numbered == [f"{n}. {visit_time(when)}" for n, when in enumerate(starts, start=1)]


def test_three_slots_are_offered_after_the_intake_and_2_books_exactly_the_second(
    api, graph, partner, sql, operator_token, receiver, database_url
):
    # Live endpoints must use https (checked when registered); the loopback receiver speaks
    # plain http, so the registered endpoint is pointed at it afterwards.
    endpoint = register(api, partner["keys"]["sk_live"], "https://127.0.0.1:9/hooks")
    with sql.begin() as conn:
        conn.execute(
            text("UPDATE webhook_endpoints SET url = :u WHERE id = :e"),
            {"u": receiver.url, "e": endpoint["endpoint_id"]},
        )
    patient = Patient(api, graph, partner, operator_token)
    offer_message = patient.finish_intake()

    lines = offer_lines(offer_message)
    assert lines[0] == "Thank you, Amaka! We have your answers. Kemi Adeyemi can see you at:"
    assert lines[-1] == "Reply 1, 2 or 3, or 0 for other times."
    [row] = offers(sql, patient.referral_id)
    assert row.status == "open" and row.physio_id == patient.physio_id
    assert row.care_mode == "face_to_face"  # a home visit
    assert_offer_shows(offer_message, row)
    starts = offered_starts(row)
    assert len(starts) == 3
    local = [when.astimezone(LAGOS) for when in starts]
    assert all(when.weekday() >= 5 for when in local)  # the patient said weekends
    assert len({when.date() for when in local}) == 3  # spread over three days
    assert starts == sorted(starts)
    assert all(
        timedelta(hours=1) < when - datetime.now(UTC) < timedelta(days=14) for when in starts
    )
    with sql.connect() as conn:
        referral = conn.execute(
            text("SELECT status, assigned_physio_id FROM referrals WHERE id = :r"),
            {"r": patient.referral_id},
        ).one()
    assert tuple(referral) == ("assistant_started", patient.physio_id)

    patient.say("2")
    confirmation = patient.next_message()
    assert confirmation["type"] == "template"
    assert confirmation["template"]["name"] == "rehabref_appointment_confirmed"
    assert visit_time(starts[1]) in json.dumps(confirmation["template"])
    [appointment] = appointments_of(sql, patient.referral_id)
    assert as_utc(appointment.starts_at) == starts[1]
    assert appointment.physio_id == patient.physio_id and appointment.status == "booked"
    assert appointment.created_by == "patient:whatsapp"
    [row] = offers(sql, patient.referral_id)
    assert row.status == "booked" and row.appointment_id == appointment.id
    wait_for(
        lambda: (
            count(
                sql,
                "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id "
                "WHERE e.referral_id = :r AND e.type = 'appointment.booked' "
                "AND d.state = 'succeeded'",
                r=patient.referral_id,
            )
            == 1
        ),
        what="appointment.booked delivered",
    )
    booked = [
        r.json()
        for r in receiver.received
        if r.json()["type"] == "appointment.booked"
        and r.json()["data"]["referral_id"] == patient.referral_id
    ]
    assert len(booked) == 1
    assert as_utc(booked[0]["data"]["appointment"]["scheduled_at"]) == starts[1]

    # The offer is answered: a later "1" books nothing more, it goes to a coordinator.
    patient.say("1")
    wait_for(lambda: open_tasks(sql, patient.referral_id, "patient_message") == 1, what="task")
    assert len(appointments_of(sql, patient.referral_id)) == 1

    # The coordinator reads what was offered and which time the patient took.
    with httpx.Client(base_url=str(api.base_url)) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303
        page = console.get(f"/console/referrals/{patient.referral_id}").text
    shown = page[page.index("Slots offered to the patient") :]
    times = [lagos_time(start) for start in starts]
    assert [shown.index(time) for time in times] == sorted(shown.index(time) for time in times)
    assert f"{times[1]} <strong>(booked)</strong>" in shown
    assert f"{times[0]} <strong>" not in shown and "by WhatsApp" in shown


def test_a_slot_taken_meanwhile_gets_a_fresh_offer_that_books(
    api, graph, partner, sql, operator_token
):
    patient = Patient(api, graph, partner, operator_token)
    first = patient.finish_intake()
    [row] = offers(sql, patient.referral_id)
    assert_offer_shows(first, row)
    taken = offered_starts(row)[1]
    # A coordinator gives the second slot to another patient of the same physiotherapist.
    other = insert_referral(
        sql, partner_id=partner["partner_id"], environment="live", status="contact_pending",
        city=patient.city, care_mode="either", phone=new_phone(),
    )  # fmt: skip
    booked = api.post(
        f"/api/v1/ops/referrals/{other}/appointments",
        json={
            "starts_at": taken.isoformat(),
            "care_mode": "face_to_face",
            "physio_id": patient.physio_id,
        },
        headers=op_headers(operator_token),
    )
    assert booked.status_code == 201, booked.text

    patient.say("2")
    again = patient.next_message()
    lines = offer_lines(again)
    assert lines[0] == "Sorry, that time has just been taken. Kemi Adeyemi can see you at:"
    old, fresh = offers(sql, patient.referral_id)
    assert old.status == "taken" and fresh.status == "open"
    assert_offer_shows(again, fresh)
    assert taken not in offered_starts(fresh)
    assert len(offered_starts(fresh)) == 3
    assert appointments_of(sql, patient.referral_id) == []

    patient.say("1")
    confirmation = patient.next_message()
    assert confirmation["template"]["name"] == "rehabref_appointment_confirmed"
    [appointment] = appointments_of(sql, patient.referral_id)
    assert as_utc(appointment.starts_at) == offered_starts(fresh)[0]
    assert offers(sql, patient.referral_id)[1].status == "booked"


def test_0_hands_the_booking_to_a_coordinator(api, graph, partner, sql, operator_token):
    patient = Patient(api, graph, partner, operator_token)
    patient.finish_intake()
    patient.say("0")
    answer = patient.next_message()
    assert body_of(answer) == (
        "Thank you. A rehabref coordinator will call you soon to book your visit."
    )
    assert open_tasks(sql, patient.referral_id, "slot_offer_declined") == 1
    assert [row.status for row in offers(sql, patient.referral_id)] == ["declined"]
    assert appointments_of(sql, patient.referral_id) == []


def test_an_answer_not_understood_hands_over_too(api, graph, partner, sql, operator_token):
    patient = Patient(api, graph, partner, operator_token)
    patient.finish_intake()
    patient.say("maybe tuesday")
    answer = patient.next_message()
    assert body_of(answer).startswith("Sorry, I did not get that. A rehabref coordinator")
    assert open_tasks(sql, patient.referral_id, "slot_offer_unclear") == 1
    assert appointments_of(sql, patient.referral_id) == []


def run_expiry(database_url: str, offer_id: str, at: datetime) -> None:
    async def run() -> None:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                await expire_offer(conn, {"offer_id": offer_id}, at)
        finally:
            await db.dispose()

    asyncio.run(run())


def test_an_expired_offer_goes_to_a_coordinator_and_its_numbers_never_book(
    api, graph, partner, sql, operator_token, database_url
):
    # The expiry job at its time: a coordinator calls.
    patient = Patient(api, graph, partner, operator_token)
    patient.finish_intake()
    [row] = offers(sql, patient.referral_id)
    with sql.connect() as conn:
        job = conn.execute(
            text(
                "SELECT due_at, payload FROM scheduled_jobs WHERE referral_id = :r "
                "AND kind = 'slot_offer.expire'"
            ),
            {"r": patient.referral_id},
        ).one()
    due = as_utc(job.due_at)
    assert timedelta(hours=47) < due - datetime.now(UTC) <= timedelta(hours=48)
    run_expiry(database_url, row.id, due - timedelta(seconds=1))  # not yet: nothing
    assert offers(sql, patient.referral_id)[0].status == "open"
    run_expiry(database_url, row.id, due)
    assert offers(sql, patient.referral_id)[0].status == "expired"
    assert open_tasks(sql, patient.referral_id, "slot_offer_expired") == 1
    patient.say("1")
    wait_for(lambda: open_tasks(sql, patient.referral_id, "patient_message") == 1, what="task")
    assert appointments_of(sql, patient.referral_id) == []

    # A reply after the expiry, before the job ran: told so, nothing booked.
    late = Patient(api, graph, partner, operator_token)
    late.finish_intake()
    with sql.begin() as conn:
        conn.execute(
            text("UPDATE slot_offers SET expires_at = :t WHERE referral_id = :r"),
            {"t": datetime.now(UTC) - timedelta(minutes=1), "r": late.referral_id},
        )
    late.say("1")
    answer = late.next_message()
    assert body_of(answer).startswith("Sorry, those times are no longer held for you.")
    assert [row.status for row in offers(sql, late.referral_id)] == ["expired"]
    assert open_tasks(sql, late.referral_id, "slot_offer_expired") == 1
    assert appointments_of(sql, late.referral_id) == []


def test_no_free_slot_at_all_hands_over_at_once(api, graph, partner, sql, operator_token):
    patient = Patient(api, graph, partner, operator_token, windows=None)
    answer = patient.finish_intake()
    assert body_of(answer) == (
        "Thank you, Amaka! We have your answers. A rehabref coordinator will call you soon "
        "to book your first visit."
    )
    assert offers(sql, patient.referral_id) == []
    assert open_tasks(sql, patient.referral_id, "no_free_slots") == 1


def test_the_offer_and_the_booking_in_pidgin(api, graph, partner, sql, operator_token):
    patient = Patient(api, graph, partner, operator_token)
    offer_message = patient.finish_intake(PIDGIN)
    lines = offer_lines(offer_message)
    assert lines[0] == "Thank you, Amaka! We don get your answers. Kemi Adeyemi fit see you for:"
    assert lines[-1] == "Reply 1, 2 or 3. If none fit you, reply 0."
    [row] = offers(sql, patient.referral_id)
    assert row.language == "pcm"
    assert_offer_shows(offer_message, row)
    local = [when.astimezone(LAGOS) for when in offered_starts(row)]
    assert all(when.weekday() < 5 and 8 <= when.hour < 12 for when in local)  # weekday mornings
    patient.say("na 3 o")
    confirmation = patient.next_message()
    assert confirmation["template"]["name"] == "rehabref_appointment_confirmed"
    [appointment] = appointments_of(sql, patient.referral_id)
    assert as_utc(appointment.starts_at) == offered_starts(row)[2]
    with sql.connect() as conn:
        content = conn.execute(
            text(
                "SELECT content FROM outbound_messages WHERE referral_id = :r "
                "AND purpose = 'appointment.confirmed'"
            ),
            {"r": patient.referral_id},
        ).scalar_one()
    assert "we don book your physio visit" in str(opened_content(content))
    assert len(sent_to(graph, patient.phone)) == patient.seen


def test_the_offer_and_the_booking_by_sms(api, live_server, twilio, partner, sql, operator_token):
    city = f"Offerton {uuid.uuid4().hex[:8]}"
    physio_id = new_physio(api, operator_token, city, EVERY_DAY)
    phone = new_phone()
    body = v1_referral(
        patient={"first_name": "Ngozi", "phone": phone, "city": city}, preferred_contact="sms"
    )
    created = api.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_live"], uuid.uuid4().hex),
    )
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]

    def texted(n: int) -> str:
        return wait_for(lambda: sms_to(twilio, phone)[n - 1 :], what=f"SMS {n}")[0]["Body"]

    # English, yes, at home, Yaba, weekday evenings, confirm: each answered by its number.
    answers = ["1", "1", "1", "Yaba", "3", "1"]
    for n, words in enumerate(answers, start=1):
        texted(n)
        form = {"MessageSid": f"SM{uuid.uuid4().hex}", "From": phone, "To": TWILIO_FROM}
        reply = post_twilio(api, live_server, "/webhooks/twilio/sms", {**form, "Body": words})
        assert reply.status_code == 200
    offer = texted(len(answers) + 1).split("\n\nTo withdraw your consent")[0]
    [row] = offers(sql, referral_id)
    starts = offered_starts(row)
    assert offer.splitlines() == [
        "Thank you, Ngozi! We have your answers. Kemi Adeyemi can see you at:",
        *[f"{n}. {visit_time(when)}" for n, when in enumerate(starts, start=1)],
        "Reply 1, 2 or 3, or 0 for other times.",
    ]
    local = [when.astimezone(LAGOS) for when in starts]
    assert all(when.weekday() < 5 and 16 <= when.hour < 20 for when in local)  # evenings
    form = {"MessageSid": f"SM{uuid.uuid4().hex}", "From": phone, "To": TWILIO_FROM}
    assert post_twilio(api, live_server, "/webhooks/twilio/sms", {**form, "Body": "3"}).is_success
    confirmation = texted(len(answers) + 2)
    assert confirmation.startswith(
        f"Hello Ngozi, your physiotherapy visit is booked for {visit_time(starts[2])}"
    )
    [appointment] = appointments_of(sql, referral_id)
    assert as_utc(appointment.starts_at) == starts[2] and appointment.physio_id == physio_id
    assert appointment.created_by == "patient:sms"


def test_fewer_fitting_slots_are_offered_and_a_race_with_nothing_left_hands_over(
    api, graph, partner, sql, operator_token
):
    # One slot a week (Saturday 08:00): at most two in the next 14 days.
    saturdays = [{"weekday": 5, "start": "08:00", "end": "09:00", "slot_minutes": 60}]
    patient = Patient(api, graph, partner, operator_token, windows=saturdays)
    offer_message = patient.finish_intake()
    [row] = offers(sql, patient.referral_id)
    starts = offered_starts(row)
    assert 1 <= len(starts) <= 2
    assert_offer_shows(offer_message, row)
    last = {1: "Reply 1, or 0 for other times.", 2: "Reply 1 or 2, or 0 for other times."}
    assert offer_lines(offer_message)[-1] == last[len(starts)]

    # A coordinator gives every free slot of the physiotherapist to other patients.
    free = api.get(
        f"/api/v1/ops/physiotherapists/{patient.physio_id}/free-slots",
        params={"days": 20},
        headers=op_headers(operator_token),
    ).json()["data"]
    assert {as_utc(slot["starts_at"]) for slot in free} >= set(starts)
    for slot in free:
        other = insert_referral(
            sql, partner_id=partner["partner_id"], environment="live",
            status="contact_pending", city=patient.city, phone=new_phone(),
        )  # fmt: skip
        booked = api.post(
            f"/api/v1/ops/referrals/{other}/appointments",
            json={
                "starts_at": slot["starts_at"],
                "care_mode": "face_to_face",
                "physio_id": patient.physio_id,
            },
            headers=op_headers(operator_token),
        )
        assert booked.status_code == 201, booked.text

    patient.say("1")
    answer = patient.next_message()
    assert body_of(answer) == (
        "Thank you. A rehabref coordinator will call you soon to book your visit."
    )
    assert [row.status for row in offers(sql, patient.referral_id)] == ["taken"]
    assert open_tasks(sql, patient.referral_id, "no_free_slots") == 1
    assert appointments_of(sql, patient.referral_id) == []


def test_a_booking_refused_for_another_reason_hands_over(api, graph, partner, sql, operator_token):
    patient = Patient(api, graph, partner, operator_token)
    patient.finish_intake()
    deactivated = api.post(
        f"/api/v1/ops/physiotherapists/{patient.physio_id}/deactivate",
        headers=op_headers(operator_token),
    )
    assert deactivated.status_code == 200, deactivated.text
    patient.say("1")
    answer = patient.next_message()
    assert body_of(answer) == (
        "Thank you. A rehabref coordinator will call you soon to book your visit."
    )
    assert [row.status for row in offers(sql, patient.referral_id)] == ["superseded"]
    assert open_tasks(sql, patient.referral_id, "patient_message") == 1
    assert appointments_of(sql, patient.referral_id) == []
