"""Booking into free slots over HTTP: book, refuse a taken or unoffered slot, reschedule,
cancel, days off, attended only from the booked time, and the messages it sends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from tests.scheduling.conftest import book, free_slots, new_physio, ready_referral
from tests.support.care import events_of
from tests.support.messages import opened_recipient

OPS = "/api/v1/ops"


def test_a_booking_takes_a_free_slot_and_writes_appointment_booked(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(contract="g")
    referral_id = ready_referral(sql, partner["partner_id"])
    slots = free_slots(client, op_headers, physio["physio_id"])
    assert len(slots) >= 50  # ten a day, a week ahead (less the first hours)
    chosen = slots[3]["starts_at"]

    booked = book(client, op_headers, referral_id, physio["physio_id"], chosen)
    assert booked.status_code == 201, booked.text
    body = booked.json()
    assert body["status"] == "booked" and body["starts_at"] == chosen
    assert body["session_id"].startswith("ses_")
    assert chosen not in {
        s["starts_at"] for s in free_slots(client, op_headers, physio["physio_id"])
    }

    [event] = events_of(sql, referral_id, "appointment.booked")
    assert event["appointment"]["scheduled_at"] == chosen
    session = client.get(f"{OPS}/sessions/{body['session_id']}", headers=op_headers).json()
    assert session["scheduled_at"] == chosen and session["status"] == "scheduled"
    with sql.connect() as conn:
        told = conn.execute(
            text("SELECT channel, recipient FROM outbound_messages WHERE purpose = :p"),
            {"p": "physio.visit_booked"},
        ).all()
    assert ("sms", physio["phone"]) in [(row[0], opened_recipient(row[1])) for row in told]


def test_a_taken_or_unoffered_slot_is_409_slot_unavailable(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(contract="g")
    first = ready_referral(sql, partner["partner_id"])
    second = ready_referral(sql, partner["partner_id"])
    chosen = free_slots(client, op_headers, physio["physio_id"])[0]["starts_at"]
    assert book(client, op_headers, first, physio["physio_id"], chosen).status_code == 201

    taken = book(client, op_headers, second, physio["physio_id"], chosen)
    assert taken.status_code == 409
    assert taken.json()["error"]["code"] == "slot_unavailable"
    odd = (datetime.fromisoformat(chosen) + timedelta(minutes=30)).isoformat()
    unoffered = book(client, op_headers, second, physio["physio_id"], odd.replace("+00:00", "Z"))
    assert unoffered.status_code == 409
    assert "offers no slot" in unoffered.json()["error"]["message"]
    again = book(client, op_headers, first, physio["physio_id"], chosen)
    assert again.status_code == 409  # one upcoming visit per referral: reschedule instead


def test_reschedule_and_cancel_with_reasons_free_the_slot(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(contract="g")
    referral_id = ready_referral(sql, partner["partner_id"])
    slots = free_slots(client, op_headers, physio["physio_id"])
    first = book(client, op_headers, referral_id, physio["physio_id"], slots[0]["starts_at"]).json()

    no_reason = client.post(
        f"{OPS}/appointments/{first['appointment_id']}/reschedule",
        json={"starts_at": slots[1]["starts_at"]},
        headers=op_headers,
    )
    assert no_reason.status_code == 422 and "reason" in no_reason.json()["error"]["fields"]
    moved = client.post(
        f"{OPS}/appointments/{first['appointment_id']}/reschedule",
        json={"starts_at": slots[1]["starts_at"], "reason": "patient at work that morning"},
        headers=op_headers,
    )
    assert moved.status_code == 201, moved.text
    second = moved.json()
    assert second["session_id"] == first["session_id"]
    listed = client.get(f"{OPS}/referrals/{referral_id}/appointments", headers=op_headers).json()
    statuses = {a["appointment_id"]: (a["status"], a["change_reason"]) for a in listed["data"]}
    assert statuses[first["appointment_id"]] == ("rescheduled", "patient at work that morning")
    free = {s["starts_at"] for s in free_slots(client, op_headers, physio["physio_id"])}
    assert slots[0]["starts_at"] in free and slots[1]["starts_at"] not in free
    assert [e["rescheduled"] for e in events_of(sql, referral_id, "appointment.booked")] == [
        False,
        True,
    ]

    cancelled = client.post(
        f"{OPS}/appointments/{second['appointment_id']}/cancel",
        json={"reason": "patient travelling"},
        headers=op_headers,
    )
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    session = client.get(f"{OPS}/sessions/{second['session_id']}", headers=op_headers).json()
    assert session["status"] == "cancelled"
    record = client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers).json()
    assert record["status"] == "booked" and record["appointment"]["status"] == "cancelled"
    assert slots[1]["starts_at"] in {
        s["starts_at"] for s in free_slots(client, op_headers, physio["physio_id"])
    }
    # Rebooking after a cancelled visit is allowed.
    again = book(client, op_headers, referral_id, physio["physio_id"], slots[2]["starts_at"])
    assert again.status_code == 201, again.text


def test_leave_and_public_holidays_remove_slots(client, make_partner, op_headers, sql):
    physio = new_physio(client, op_headers)
    slots = free_slots(client, op_headers, physio["physio_id"], days=5)
    last_day = slots[-1]["starts_at"][:10]
    leave = client.post(
        f"{OPS}/physiotherapists/{physio['physio_id']}/days-off",
        json={"starts_on": last_day, "ends_on": last_day, "reason": "annual leave"},
        headers=op_headers,
    )
    assert leave.status_code == 201, leave.text
    after = free_slots(client, op_headers, physio["physio_id"], days=5)
    assert all(not s["starts_at"].startswith(last_day) for s in after)
    partner = make_partner(contract="g")
    refused = book(
        client,
        op_headers,
        ready_referral(sql, partner["partner_id"]),
        physio["physio_id"],
        slots[-1]["starts_at"],
    )
    assert refused.status_code == 409 and "leave" in refused.json()["error"]["message"]
    removed = client.delete(f"{OPS}/days-off/{leave.json()['days_off_id']}", headers=op_headers)
    assert removed.status_code == 204
    assert free_slots(client, op_headers, physio["physio_id"], days=5) == slots
    bad = client.post(
        f"{OPS}/public-holidays",
        json={"starts_on": "2026-12-26", "ends_on": "2026-12-25", "reason": "Boxing Day"},
        headers=op_headers,
    )
    assert bad.status_code == 422 and "ends_on" in bad.json()["error"]["fields"]


def test_invalid_availability_is_422(client, op_headers, physio):
    url = f"{OPS}/physiotherapists/{physio['physio_id']}/availability"
    overlap = [
        {"weekday": 0, "start": "09:00", "end": "12:00"},
        {"weekday": 0, "start": "11:00", "end": "13:00"},
    ]
    for windows in (
        overlap,
        [{"weekday": 0, "start": "12:00", "end": "09:00"}],
        [{"weekday": 0, "start": "9am", "end": "12:00"}],
        [{"weekday": 0, "start": "09:00", "end": "12:00", "slot_minutes": 7}],
    ):
        response = client.put(url, json={"windows": windows}, headers=op_headers)
        assert response.status_code == 422, response.text
    missing = client.get(f"{OPS}/physiotherapists/phy_missing/availability", headers=op_headers)
    assert missing.status_code == 404


def time_passes(sql, appointment: dict, hours: float) -> None:
    """Move a booked visit ``hours`` into the past, as if that time had passed."""
    shift = timedelta(hours=hours)
    with sql.begin() as conn:
        row = conn.execute(
            text("SELECT starts_at, ends_at FROM appointments WHERE id = :id"),
            {"id": appointment["appointment_id"]},
        ).one()
        starts = _aware(row.starts_at) - shift
        conn.execute(
            text("UPDATE appointments SET starts_at = :s, ends_at = :e WHERE id = :id"),
            {"s": starts, "e": _aware(row.ends_at) - shift, "id": appointment["appointment_id"]},
        )
        conn.execute(
            text("UPDATE care_sessions SET scheduled_at = :s WHERE id = :id"),
            {"s": starts, "id": appointment["session_id"]},
        )
        conn.execute(
            text("UPDATE referrals SET appointment_scheduled_at = :s WHERE id = :id"),
            {"s": starts, "id": appointment["referral_id"]},
        )


def _aware(value):
    """SQLite hands back text or naive datetimes, stored in UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def test_attended_only_from_the_booked_time_and_with_a_reason(
    client, make_partner, op_headers, physio, sql
):
    partner = make_partner(contract="g")
    referral_id = ready_referral(sql, partner["partner_id"])
    slot = free_slots(client, op_headers, physio["physio_id"])[0]["starts_at"]
    appointment = book(client, op_headers, referral_id, physio["physio_id"], slot).json()
    url = f"{OPS}/referrals/{referral_id}/transitions"

    early = client.post(url, json={"to": "attended", "reason": "phoned"}, headers=op_headers)
    assert early.status_code == 409, early.text
    assert "cannot be attended before" in early.json()["error"]["message"]
    time_passes(sql, appointment, hours=200)
    no_reason = client.post(url, json={"to": "attended"}, headers=op_headers)
    assert no_reason.status_code == 422 and "reason" in no_reason.json()["error"]["fields"]
    override = client.post(
        url, json={"to": "attended", "reason": "patient confirmed by phone"}, headers=op_headers
    )
    assert override.status_code == 200, override.text
    listed = client.get(f"{OPS}/referrals/{referral_id}/appointments", headers=op_headers).json()
    assert [(a["status"], a["attended_via"]) for a in listed["data"]] == [("attended", "override")]
    assert len(events_of(sql, referral_id, "appointment.attended")) == 1


def test_cancelling_the_referral_frees_its_slot(client, make_partner, op_headers, physio, sql):
    partner = make_partner(contract="g")
    referral_id = ready_referral(sql, partner["partner_id"])
    slot = free_slots(client, op_headers, physio["physio_id"])[0]["starts_at"]
    assert book(client, op_headers, referral_id, physio["physio_id"], slot).status_code == 201
    closed = client.post(
        f"{OPS}/referrals/{referral_id}/transitions",
        json={"to": "cancelled", "reason": "patient declined"},
        headers=op_headers,
    )
    assert closed.status_code == 200, closed.text
    assert slot in {s["starts_at"] for s in free_slots(client, op_headers, physio["physio_id"])}


@pytest.mark.parametrize("full", ["leave", "booked"])
def test_matching_skips_a_physiotherapist_without_a_free_slot(
    client, make_partner, op_headers, sql, full
):
    """A physiotherapist on leave for the whole horizon or fully booked is not matched."""
    city = f"Ilorin{full}"
    busy = new_physio(
        client,
        op_headers,
        city=city,
        areas=["Tanke"],
        rating=5.0,
        windows=[{"weekday": d, "start": "08:00", "end": "09:00"} for d in range(7)],
    )
    spare = new_physio(client, op_headers, city=city, areas=["Tanke"], rating=3.0, windows=None)
    partner = make_partner(contract="g")
    if full == "leave":
        today = datetime.now().date()
        client.post(
            f"{OPS}/physiotherapists/{busy['physio_id']}/days-off",
            json={
                "starts_on": (today - timedelta(days=1)).isoformat(),
                "ends_on": (today + timedelta(days=20)).isoformat(),
                "reason": "study leave",
            },
            headers=op_headers,
        ).raise_for_status()
    else:
        for slot in free_slots(client, op_headers, busy["physio_id"], days=16):
            referral = ready_referral(sql, partner["partner_id"], city=city, area="Tanke")
            assert (
                book(client, op_headers, referral, busy["physio_id"], slot["starts_at"]).status_code
                == 201
            )
    referral_id = ready_referral(sql, partner["partner_id"], city=city, area="Tanke")
    matched = client.post(f"{OPS}/referrals/{referral_id}/match", headers=op_headers)
    assert matched.status_code == 200, matched.text
    assert matched.json()["physio_id"] == spare["physio_id"]
