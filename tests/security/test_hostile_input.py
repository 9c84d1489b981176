"""Hostile input the review found answered with a 500 or accepted: bodies that are not UTF-8,
dates far outside any sensible range, and invisible or direction-changing characters in text a
coordinator reads. Each is a clear 4xx with the spec's error body naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy.engine import Engine

from rehabref.app import JSON_ROUTES
from tests.conftest import auth
from tests.console.operators import csrf, make_operator, sign_in
from tests.links.hosted import create_link
from tests.shapeg.bodies import g_referral
from tests.support.api import created, error_of
from tests.support.care import insert_referral, physio_body
from tests.support.operators import move, op_headers
from tests.support.payloads import v1_referral

BODY_METHODS = {"POST", "PUT", "PATCH"}
# A JSON object whose string holds bytes that are not UTF-8 (Latin-1 "é", a lone 0xFF).
NOT_UTF8 = b'{"reason": "caf\xe9 \xff"}'
# Every route that reads a JSON body, from the app's own route table (webhooks from providers
# are signed first and have their own tests).
BODY_ROUTES = [
    route
    for route in JSON_ROUTES
    if route.method in BODY_METHODS and not route.path.startswith("/webhooks/")
]
INVISIBLE = {
    "right-to-left override": "\u202e",
    "first-strong isolate": "\u2068",
    "zero-width space": "\u200b",
    "zero-width joiner": "\u200d",
    "byte order mark": "\ufeff",
    "soft hyphen": "\u00ad",
}


def _filled(path: str) -> str:
    return "/".join("x" if part.startswith("{") else part for part in path.split("/"))


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_a_body_that_is_not_utf8_is_a_400_not_a_500(
    route: Any, client: httpx.Client, partner: dict[str, Any], operator_token: str
) -> None:
    token = operator_token if "/ops/" in route.path else partner["keys"]["sk_test"]
    response = client.request(
        route.method,
        _filled(route.path),
        content=NOT_UTF8,
        headers={**auth(token, "idem-not-utf8"), "Content-Type": "application/json"},
    )
    # Unknown ids may be answered first (404); never a server error, and never "retry".
    assert response.status_code < 500, response.text
    if response.status_code == 400:
        error_of(response, 400, "malformed_request")


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_a_nul_character_in_any_body_string_is_a_4xx_not_a_500(
    route: Any, client: httpx.Client, partner: dict[str, Any], operator_token: str
) -> None:
    token = operator_token if "/ops/" in route.path else partner["keys"]["sk_test"]
    response = client.request(
        route.method,
        _filled(route.path),
        content=b'{"payer_kind": "hmo", "payer_id": "AXA\\u0000", "period": "2026-01"}',
        headers={**auth(token, "idem-nul"), "Content-Type": "application/json"},
    )
    # Unknown ids may be answered first (404); never a server error.
    assert response.status_code < 500, response.text


def test_a_nul_character_is_refused_naming_its_field(
    client: httpx.Client, partner: dict[str, Any], operator_token: str
) -> None:
    invoice = client.post(
        "/api/v1/ops/payer-invoices",
        content=b'{"payer_kind": "hmo", "payer_id": "AXA\\u0000", "period": "2026-01"}',
        headers={**op_headers(operator_token), "Content-Type": "application/json"},
    )
    assert error_of(invoice, 422, "validation_error")["fields"] == {
        "payer_id": "Control characters are not allowed."
    }
    body = v1_referral()
    body["patient"]["first_name"] = "Ama\x00ka"
    body["metadata"] = {"clinic\x00": "x"}
    referral = client.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_test"], "n1")
    )
    fields = error_of(referral, 422, "validation_error")["fields"]
    assert fields in (
        {"patient.first_name": "Control characters are not allowed."},
        {"metadata": "Control characters are not allowed."},
    )
    # A backslash followed by "u0000" is ordinary text, not NUL.
    fine = v1_referral(reason="see \\u0000 in the notes")
    assert (
        client.post(
            "/api/v1/partners/referrals", json=fine, headers=auth(partner["keys"]["sk_test"], "n2")
        ).status_code
        == 201
    )


def test_invalid_utf8_on_create_is_malformed_request(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    response = client.post(
        "/api/v1/partners/referrals",
        content=NOT_UTF8,
        headers={
            **auth(partner["keys"]["sk_test"], "idem-utf8"),
            "Content-Type": "application/json",
        },
    )
    assert "UTF-8" in error_of(response, 400, "malformed_request")["message"]


@pytest.mark.parametrize("bound", ["to_date", "from_date"])
@pytest.mark.parametrize("value", ["9999-12-31", "0001-01-01", "2100-01-01", "1999-12-31"])
def test_sessions_list_refuses_dates_outside_the_accepted_years(
    client: httpx.Client, partner: dict[str, Any], bound: str, value: str
) -> None:
    response = client.get(
        f"/api/v1/partners/sessions?{bound}={value}", headers=auth(partner["keys"]["sk_test"])
    )
    error = error_of(response, 422, "validation_error")
    assert "2000" in error["fields"][bound] and "2099" in error["fields"][bound]


def test_sessions_list_accepts_the_last_day_of_the_range(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    response = client.get(
        "/api/v1/partners/sessions?from_date=2000-01-01&to_date=2099-12-31",
        headers=auth(partner["keys"]["sk_test"]),
    )
    assert response.status_code == 200, response.text


def test_referral_list_refuses_far_future_timestamps(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    response = client.get(
        "/api/v1/partners/referrals?created_from=9999-12-31T23:59:59Z",
        headers=auth(partner["keys"]["sk_test"]),
    )
    assert response.status_code == 422, response.text


def _booking(client: httpx.Client, token: str, referral_id: str, when: str) -> httpx.Response:
    return move(
        client,
        token,
        referral_id,
        "booked",
        appointment={"scheduled_at": when, "care_mode": "remote"},
    )


@pytest.mark.parametrize(
    "when",
    [
        "9999-12-31T09:00:00Z",
        "2100-01-01T09:00:00Z",
        (datetime.now(UTC) + timedelta(days=3 * 365)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    ],
    # Stable ids: the third value moves with the clock, and xdist workers must agree.
    ids=["year-9999", "year-2100", "three-years-ahead"],
)
def test_an_appointment_too_far_ahead_is_refused(
    client: httpx.Client, partner: dict[str, Any], operator_token: str, when: str
) -> None:
    referral = created(client, partner["keys"]["sk_test"])
    response = _booking(client, operator_token, referral["referral_id"], when)
    error = error_of(response, 422, "validation_error")
    assert "appointment.scheduled_at" in error["fields"], error


def test_a_session_scheduled_in_year_9999_is_refused(
    client: httpx.Client, partner: dict[str, Any], operator_token: str
) -> None:
    referral = created(client, partner["keys"]["sk_test"])
    response = client.post(
        f"/api/v1/ops/referrals/{referral['referral_id']}/sessions",
        json={"scheduled_at": "9999-12-31T09:00:00Z", "modality": "remote"},
        headers=op_headers(operator_token),
    )
    assert "scheduled_at" in error_of(response, 422, "validation_error")["fields"]


@pytest.mark.parametrize("char", INVISIBLE.values(), ids=list(INVISIBLE))
def test_invisible_characters_are_refused_in_names_and_reasons(
    client: httpx.Client, partner: dict[str, Any], char: str
) -> None:
    key = partner["keys"]["sk_test"]
    patient = {"first_name": f"Ama{char}ka", "phone": "+2348031234567", "city": "Lagos"}
    response = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(patient=patient, reason=f"Back pain {char}(left)"),
        headers=auth(key, f"idem-{ord(char)}-v1"),
    )
    fields = error_of(response, 422, "validation_error")["fields"]
    assert "patient.first_name" in fields and "reason" in fields, fields
    assert "Invisible" in fields["patient.first_name"]


@pytest.mark.parametrize("char", INVISIBLE.values(), ids=list(INVISIBLE))
def test_invisible_characters_are_refused_in_diagnoses(
    client: httpx.Client, partner: dict[str, Any], char: str
) -> None:
    body = g_referral()
    body["clinical_notes"]["diagnosis"] = f"Knee stiffness {char}after ACL repair"
    body["patient"]["last_name"] = f"Oka{char}for"
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_test"], f"idem-{ord(char)}-g"),
    )
    fields = error_of(response, 422, "validation_error")["fields"]
    assert "clinical_notes.diagnosis" in fields and "patient.last_name" in fields, fields


def test_session_notes_and_reasons_refuse_bidi_overrides(
    client: httpx.Client, partner: dict[str, Any], operator_token: str, sql: Engine
) -> None:
    headers = op_headers(operator_token)
    physio = client.post("/api/v1/ops/physiotherapists", json=physio_body(), headers=headers)
    assert physio.status_code == 201, physio.text
    referral_id = insert_referral(sql, environment="live", partner_id=partner["partner_id"])
    scheduled = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": "2026-11-25T09:00:00Z",
            "modality": "remote",
            "physio_id": physio.json()["physio_id"],
            "session_type": "treat\u200bment",
        },
        headers=headers,
    )
    assert "session_type" in error_of(scheduled, 422, "validation_error")["fields"]
    scheduled = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": "2026-11-25T09:00:00Z",
            "modality": "remote",
            "physio_id": physio.json()["physio_id"],
        },
        headers=headers,
    )
    assert scheduled.status_code == 201, scheduled.text
    session = f"/api/v1/ops/sessions/{scheduled.json()['session_id']}"
    cancelled = client.post(
        f"{session}/cancel", json={"reason": "Patient \u202eyawa devom"}, headers=headers
    )
    assert "reason" in error_of(cancelled, 422, "validation_error")["fields"]
    completed = client.post(
        f"{session}/complete",
        json={
            "pain_before": 6,
            "pain_after": 4,
            "notes_summary": "Knee \u2067flexion\u2069 improved",
            "check_out_at": "2026-11-21T10:00:00Z",
        },
        headers=headers,
    )
    assert "notes_summary" in error_of(completed, 422, "validation_error")["fields"]


def test_accented_and_non_latin_names_are_still_accepted(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    # Yoruba tone marks are combining characters (category Mn), not formatting ones.
    patient = {"first_name": "Adéọlá", "phone": "+2348031234567", "city": "Ìbàdàn"}
    body = created(client, partner["keys"]["sk_test"], patient=patient)
    assert body["referral_id"]


# A multipart form whose one field is not UTF-8 (Litestar's parser raised on it: a 500).
MULTIPART = b'--x\r\nContent-Disposition: form-data; name="text"\r\n\r\ncaf\xe9 \xff\r\n--x--\r\n'


def test_html_forms_that_are_not_utf8_are_a_400(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    key = partner["keys"]["sk_test"]
    assistant = urlsplit(created(client, key)["assistant_session_url"]).path
    link = urlsplit(create_link(client, key)["url"]).path
    for path in ("/console/login", assistant, link):
        response = client.post(
            path,
            content=MULTIPART,
            headers={"Content-Type": "multipart/form-data; boundary=x"},
        )
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"]["code"] == "malformed_request"


def test_console_forms_refuse_far_dates_and_invisible_characters(
    server: Any, client: httpx.Client, partner: dict[str, Any], database_url: str
) -> None:
    rid = created(client, partner["keys"]["sk_test"])["referral_id"]
    with httpx.Client(base_url=server.base_url, timeout=30) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303

        def post(path: str, **data: str) -> httpx.Response:
            token = csrf(console.get(f"/console/referrals/{rid}"))
            return console.post(path, data={"csrf_token": token, **data}, follow_redirects=False)

        transition = f"/console/referrals/{rid}/transition"
        three_years = (datetime.now(UTC) + timedelta(days=3 * 365)).strftime("%Y-%m-%dT%H:%M")
        for when in ("9999-12-31T10:00", "2100-01-01T10:00", three_years):
            booked = post(transition, to="booked", scheduled_at=when, care_mode="remote")
            assert booked.status_code == 422 and "two years ahead" in booked.text, when
        sessions = f"/console/referrals/{rid}/sessions"
        far = post(sessions, scheduled_at="9999-12-31T08:00", modality="remote")
        assert far.status_code == 422 and "2000 to 2099" in far.text
        ahead = post(sessions, scheduled_at=three_years, modality="remote")
        assert ahead.status_code == 422 and "two years ahead" in ahead.text
        hidden = post(transition, to="cancelled", reason="Patient \u202eyawa devom")
        assert hidden.status_code == 422 and "Invisible" in hidden.text
