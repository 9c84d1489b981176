"""The physiotherapist's iCalendar feed over HTTP, parsed with the ``icalendar`` package:
made and revoked in the app and through the ops API, the physiotherapist's own visits only
(another physiotherapist's never), moved and cancelled visits as STATUS:CANCELLED, RFC 5545
text rules (CRLF, 75-octet folding, escaping), and the token kept out of the logs."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import httpx
import icalendar
import pytest

from tests.physio_app.support import physio_with_visit, unique_phone
from tests.physio_app.test_app_http import csrf, signed_in
from tests.scheduling.conftest import book, free_slots, new_physio, ready_referral

FEED_URL = re.compile(r'value="(https?://[^"]+/calendar/[^"]+\.ics)"')


@pytest.fixture
def world(client, op_headers, sql, make_partner) -> dict[str, Any]:
    """Physiotherapist A with three visits (Ngozi's, whose time has come, and two ahead) and
    physiotherapist B with Zainab's visit."""
    partner = make_partner(contract="g")["partner_id"]
    mine = physio_with_visit(client, op_headers, sql, partner)
    physio = mine["physio"]["physio_id"]
    slots = free_slots(client, op_headers, physio)
    ahead = []
    for first_name, slot in (("Tolu", slots[1]), ("Ada", slots[2])):
        referral = ready_referral(sql, partner, first_name=first_name, last_name="Okafor")
        booked = book(client, op_headers, referral, physio, slot["starts_at"])
        assert booked.status_code == 201, booked.text
        ahead.append(booked.json())
    other = new_physio(client, op_headers, phone=unique_phone())
    referral = ready_referral(sql, partner, first_name="Zainab", last_name="Bello")
    other_slot = free_slots(client, op_headers, other["physio_id"])[0]["starts_at"]
    theirs = book(client, op_headers, referral, other["physio_id"], other_slot)
    assert theirs.status_code == 201, theirs.text
    return {**mine, "ahead": ahead, "other": other, "theirs": theirs.json()}


def _path(url: str) -> str:
    return url[url.index("/calendar/") :]


def _feed(server, url: str) -> tuple[httpx.Response, icalendar.Calendar]:
    answer = httpx.get(server.base_url + _path(url), timeout=30)
    assert answer.status_code == 200, answer.text
    return answer, icalendar.Calendar.from_ical(answer.content)


def _events(calendar: icalendar.Calendar) -> dict[str, Any]:
    return {str(event["UID"]).split("@")[0]: event for event in calendar.walk("VEVENT")}


def _utc(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _starts_at(client, op_headers, appointment: dict[str, Any]) -> datetime:
    """The visit's start as the ops API has it now (the fixture moved it into the past)."""
    listed = client.get(
        f"/api/v1/ops/referrals/{appointment['referral_id']}/appointments", headers=op_headers
    ).json()["data"]
    (row,) = [a for a in listed if a["appointment_id"] == appointment["appointment_id"]]
    return _utc(row["starts_at"]).replace(microsecond=0)  # iCalendar has whole seconds


def _app_feed(http: httpx.Client, action: str = "new") -> httpx.Response:
    page = http.get("/app/calendar")
    assert page.status_code == 200 and "Calendar feed" in page.text
    return http.post("/app/calendar", data={"csrf_token": csrf(page), "action": action})


def test_the_app_makes_a_feed_of_own_visits_only(server, sql, client, op_headers, world):
    http = signed_in(server, sql, world["physio"]["phone"])
    assert "Calendar feed" in http.get("/app").text
    made = _app_feed(http)
    assert made.status_code == 200 and "shown only once" in made.text
    url = FEED_URL.search(made.text)
    assert url, made.text
    url = url.group(1)
    token = url.rsplit("/", 1)[1].removesuffix(".ics")
    assert len(token) >= 43  # 256 bits in URL-safe base64
    assert token not in http.get("/app/calendar").text  # shown once

    answer, calendar = _feed(server, url)
    assert answer.headers["content-type"].startswith("text/calendar")
    assert answer.headers["cache-control"] == "no-store"
    raw = answer.content
    assert raw.startswith(b"BEGIN:VCALENDAR\r\n") and raw.endswith(b"END:VCALENDAR\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")  # CRLF only
    assert all(len(line) <= 75 for line in raw.split(b"\r\n"))
    assert calendar["VERSION"] == "2.0"
    events = _events(calendar)
    visit, (tolu, ada) = world["appointment"], world["ahead"]
    assert set(events) == {visit["appointment_id"], tolu["appointment_id"], ada["appointment_id"]}
    first = events[visit["appointment_id"]]
    assert str(first["SUMMARY"]) == "Ngozi (in person)"
    assert str(first["STATUS"]) == "CONFIRMED"
    assert first.decoded("DTSTART") == _starts_at(client, op_headers, visit)
    assert first.decoded("DTSTART").tzinfo is not None and raw.count(b"DTSTART:") == 3
    assert first.decoded("DTEND") > first.decoded("DTSTART")
    for forbidden in (b"Eze", b"Okafor", b"Zainab", b"+234", b"diagnosis"):
        assert forbidden not in raw
    assert token not in server.logs()

    # Moved and cancelled visits stay in the feed, cancelled, under the same UID.
    moved = client.post(
        f"/api/v1/ops/appointments/{tolu['appointment_id']}/reschedule",
        json={
            "starts_at": free_slots(client, op_headers, world["physio"]["physio_id"])[5][
                "starts_at"
            ],
            "reason": "Moved by the patient",
        },
        headers=op_headers,
    )
    assert moved.status_code == 201, moved.text
    cancelled = client.post(
        f"/api/v1/ops/appointments/{ada['appointment_id']}/cancel",
        json={"reason": "Travelling"},
        headers=op_headers,
    )
    assert cancelled.status_code == 200, cancelled.text
    events = _events(_feed(server, url)[1])
    assert str(events[tolu["appointment_id"]]["STATUS"]) == "CANCELLED"
    assert str(events[ada["appointment_id"]]["STATUS"]) == "CANCELLED"
    assert int(events[ada["appointment_id"]]["SEQUENCE"]) == 1
    new = events[moved.json()["appointment_id"]]
    assert str(new["STATUS"]) == "CONFIRMED"
    assert new.decoded("DTSTART") == _utc(moved.json()["starts_at"])

    # A new link stops the old one; revoking stops the new one.
    replaced = FEED_URL.search(_app_feed(http).text)
    assert replaced
    assert httpx.get(server.base_url + _path(url)).status_code == 404
    assert _feed(server, replaced.group(1))[0].status_code == 200
    revoked = _app_feed(http, "off")
    assert revoked.status_code == 200 and "No calendar feed is on." in revoked.text
    assert httpx.get(server.base_url + _path(replaced.group(1))).status_code == 404


def test_the_ops_api_makes_and_revokes_feeds(server, client, op_headers, partner, world):
    other = world["other"]["physio_id"]
    path = f"/api/v1/ops/physiotherapists/{other}/calendar-feed"
    made = client.post(path, headers=op_headers)
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["physio_id"] == other and body["replaced_previous"] is False
    assert made.headers["cache-control"] == "no-store"
    events = _events(_feed(server, body["url"])[1])
    assert set(events) == {world["theirs"]["appointment_id"]}  # B's visit, none of A's
    assert str(events[world["theirs"]["appointment_id"]]["SUMMARY"]) == "Zainab (in person)"

    again = client.post(path, headers=op_headers)
    assert again.status_code == 201 and again.json()["replaced_previous"] is True
    assert httpx.get(server.base_url + _path(body["url"])).status_code == 404
    assert client.delete(path, headers=op_headers).status_code == 204
    assert httpx.get(server.base_url + _path(again.json()["url"])).status_code == 404
    assert client.delete(path, headers=op_headers).status_code == 204  # already off

    unknown = "/api/v1/ops/physiotherapists/phy_nobody/calendar-feed"
    assert client.post(unknown, headers=op_headers).json()["error"]["code"] == "not_found"
    assert client.post(path).status_code == 401
    partner_key = {"Authorization": f"Bearer {partner['keys']['sk_live']}"}
    assert client.post(path, headers=partner_key).status_code == 401


def test_unknown_tokens_and_text_rules(server, client, op_headers, sql, make_partner):
    for path in (
        "/calendar/" + "x" * 43 + ".ics",
        "/calendar/" + "x" * 43,
        "/calendar/.ics",
        "/calendar/" + "y" * 300 + ".ics",
    ):
        answer = httpx.get(server.base_url + path)
        assert answer.status_code == 404 and "text/calendar" not in answer.headers["content-type"]

    partner = make_partner(contract="g")["partner_id"]
    physio = new_physio(client, op_headers, phone=unique_phone())
    name = "Ọláolúwa, Jr; \\ the patient with a first name long enough to be folded"
    referral = ready_referral(sql, partner, first_name=name, last_name="Ade")
    slot = free_slots(client, op_headers, physio["physio_id"])[0]["starts_at"]
    assert book(client, op_headers, referral, physio["physio_id"], slot).status_code == 201
    url = client.post(
        f"/api/v1/ops/physiotherapists/{physio['physio_id']}/calendar-feed", headers=op_headers
    ).json()["url"]
    answer, calendar = _feed(server, url)
    (event,) = calendar.walk("VEVENT")
    assert str(event["SUMMARY"]) == f"{name} (in person)"  # escaped and folded, read back
    assert "\\, Jr\\; \\\\ the" in answer.text.replace("\r\n ", "")
    assert all(len(line) <= 75 for line in answer.content.split(b"\r\n"))
    assert b"\r\n " in answer.content  # a folded line
