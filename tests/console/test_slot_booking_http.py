"""Booking into a free slot from the console's referral page over HTTP: the free slots of
the assigned physiotherapist grouped by day, week by week; booking (the same workflow as the
ops API), rescheduling and cancelling with reasons; a slot taken by someone else is a 409
with its reason; forms without the CSRF token are refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text

from rehabref.care.availability import LAGOS
from rehabref.care.sealing import change_reason
from tests.conftest import count
from tests.console.operators import csrf, make_operator, sign_in
from tests.console.slot_support import assigned_referral, offered_slots
from tests.console.workbench import post, referral, town
from tests.support.care import events_of, operator_token, ops
from tests.support.partners import TEST_RING


@pytest.fixture(scope="module")
def op_headers(database_url):
    return ops(operator_token(database_url))


@pytest.fixture
def console(server, database_url):
    operator = make_operator(database_url)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303
        yield http


@pytest.fixture
def world(console, client, sql, op_headers, make_partner):
    return assigned_referral(console, client, sql, op_headers, make_partner())


def _appointments(sql, referral_id: str) -> list[tuple[str, str, str | None]]:
    with sql.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT starts_at, status, change_reason FROM appointments "
                "WHERE referral_id = :r ORDER BY created_at, id"
            ),
            {"r": referral_id},
        ).all()
    # The change reason is sealed at rest: opened as the readers open it.
    return [(str(row[0]), row[1], change_reason(TEST_RING, row[2])) for row in rows]


def _lagos(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(LAGOS)


def test_free_slots_are_listed_by_day_a_week_at_a_time(console, world):
    page = console.get(world["page"])
    assert page.status_code == 200
    assert "Booking into a free slot: comes with" not in page.text  # the placeholder is gone
    assert f"Free slots of {world['physio_name']}" in page.text
    slots = offered_slots(page)
    days = {_lagos(s).date() for s in slots}
    today = datetime.now(LAGOS).date()
    assert slots and min(days) >= today and max(days) <= today + timedelta(days=6)
    assert len(days) >= 6  # every day has hours from 08:00 to 18:00
    first = _lagos(slots[0])
    assert f'<h4 id="day-1">{first:%A} {first.day} {first:%B}</h4>' in page.text
    assert "Show next week" in page.text and "Show previous week" not in page.text

    later = console.get(world["page"], params={"week": "1"})
    later_days = {_lagos(s).date() for s in offered_slots(later)}
    assert later_days == {today + timedelta(days=n) for n in range(7, 14)}
    assert "Show previous week" in later.text
    assert console.get(world["page"], params={"week": "x9"}).status_code == 200


def test_book_reschedule_and_cancel_with_reasons(console, sql, world):
    page_path = world["page"]
    slots = offered_slots(console.get(page_path))
    chosen, later = slots[3], slots[-1]
    booked = post(
        console,
        f"{page_path}/appointments",
        page_path,
        starts_at=chosen,
        care_mode="face_to_face",
        reason="Patient prefers mornings",
    )
    assert booked.status_code == 303, booked.text[:800]
    assert "notice=slot_booked" in booked.headers["location"]
    assert _appointments(sql, world["referral_id"])[0][1] == "booked"
    event = events_of(sql, world["referral_id"], "appointment.booked")
    assert len(event) == 1
    shown = console.get(page_path)
    assert "Visit booked" not in shown.text  # the notice is shown only after the redirect
    after = console.get(booked.headers["location"])
    assert "Visit booked: the patient and the physiotherapist are told." in after.text
    assert f"{_lagos(chosen):%H:%M} WAT" in after.text and "in person" in after.text
    assert "The referral has a booked visit" in after.text
    assert f'action="{page_path}/appointments"' not in after.text  # no second booking
    with sql.connect() as conn:
        status = conn.execute(
            text("SELECT status FROM referrals WHERE id = :r"), {"r": world["referral_id"]}
        ).scalar_one()
    assert status == "booked"

    appointment_id = re.search(r'/console/appointments/([^/"]+)/reschedule', after.text)
    assert appointment_id
    apt = appointment_id.group(1)
    no_reason = post(
        console, f"/console/appointments/{apt}/reschedule", page_path, starts_at=later, reason=" "
    )
    assert no_reason.status_code == 422 and "Write the reason." in no_reason.text
    moved = post(
        console,
        f"/console/appointments/{apt}/reschedule",
        page_path,
        starts_at=later,
        reason="Physio asked to move",
    )
    assert moved.status_code == 303, moved.text[:800]
    rows = _appointments(sql, world["referral_id"])
    assert [row[1] for row in rows] == ["rescheduled", "booked"]
    assert rows[0][2] == "Physio asked to move"
    assert len(events_of(sql, world["referral_id"], "appointment.booked")) == 2
    page = console.get(page_path).text
    assert "moved" in page and "Reason: Physio asked to move" in page

    new_apt = re.search(r'/console/appointments/([^/"]+)/cancel', page)
    assert new_apt
    refused = post(console, f"/console/appointments/{new_apt.group(1)}/cancel", page_path)
    assert refused.status_code == 422
    cancelled = post(
        console,
        f"/console/appointments/{new_apt.group(1)}/cancel",
        page_path,
        reason="Patient travelling",
    )
    assert cancelled.status_code == 303
    assert [row[1] for row in _appointments(sql, world["referral_id"])] == [
        "rescheduled",
        "cancelled",
    ]
    page = console.get(page_path).text
    assert "Reason: Patient travelling" in page and ">cancelled<" in page
    assert later in offered_slots(console.get(page_path))  # the slot is free again
    audit = count(
        sql,
        "SELECT count(*) FROM audit_events WHERE referral_id = :r AND action LIKE 'appointment.%'",
        r=world["referral_id"],
    )
    assert audit == 3


def test_a_slot_taken_meanwhile_is_a_409_with_the_reason(
    console, client, sql, op_headers, world, make_partner
):
    page_path = world["page"]
    slot = offered_slots(console.get(page_path))[2]
    token = csrf(console.get(page_path))
    # Another coordinator books the slot for another referral through the ops API.
    other = assigned_referral(console, client, sql, op_headers, make_partner())
    taken = client.post(
        f"/api/v1/ops/referrals/{other['referral_id']}/appointments",
        json={"starts_at": slot, "care_mode": "face_to_face", "physio_id": world["physio_id"]},
        headers=op_headers,
    )
    assert taken.status_code == 201, taken.text
    answer = console.post(
        f"{page_path}/appointments",
        data={"csrf_token": token, "starts_at": slot, "care_mode": "face_to_face"},
        follow_redirects=False,
    )
    assert answer.status_code == 409
    assert "The slot is already booked." in answer.text
    assert slot not in offered_slots(answer)  # the page shown again no longer offers it
    assert _appointments(sql, world["referral_id"]) == []


def test_guards_csrf_bad_input_and_no_physiotherapist(
    console, client, sql, op_headers, world, make_partner
):
    page_path = world["page"]
    slot = offered_slots(console.get(page_path))[0]
    forged = console.post(
        f"{page_path}/appointments",
        data={"starts_at": slot, "care_mode": "face_to_face"},
        follow_redirects=False,
    )
    assert forged.status_code == 403
    bad = post(console, f"{page_path}/appointments", page_path, starts_at="soon", care_mode="x")
    assert bad.status_code == 422 and "Choose one of the free slots." in bad.text
    odd = (_lagos(slot) + timedelta(minutes=30)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    unoffered = post(
        console, f"{page_path}/appointments", page_path, starts_at=odd, care_mode="remote"
    )
    assert unoffered.status_code == 409
    assert "offers no slot starting at this time" in unoffered.text
    assert _appointments(sql, world["referral_id"]) == []
    missing = post(console, "/console/appointments/apt_nope/cancel", page_path, reason="x")
    assert missing.status_code == 404

    lone = referral(client, make_partner(), town())
    lone_page = console.get(f"/console/referrals/{lone}").text
    assert "Match or assign a physiotherapist first" in lone_page

    unpublished = assigned_referral(console, client, sql, op_headers, make_partner(), windows=None)
    text_ = console.get(unpublished["page"]).text
    assert "has not published weekly availability" in text_
    assert 'id="slot-booking"' in text_
