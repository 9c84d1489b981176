"""The patient's intake pages over HTTP: first open, answers, and every kind of bad link."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy import text

from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_token
from tests.conftest import count
from tests.support.api import created
from tests.support.operators import moved
from tests.support.partners import TEST_SECRET_KEY

PRIVATE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}


def _path(url: str) -> str:
    return urlsplit(url).path


def _assert_private(response):
    for name, value in PRIVATE.items():
        assert response.headers[name] == value
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


def _form_token(html: str) -> str:
    match = re.search(r'name="form_token" value="([^"]+)"', html)
    assert match, html
    return match.group(1)


def _events(sql, referral_id):
    with sql.connect() as conn:
        return [
            row[0]
            for row in conn.execute(
                text("SELECT type FROM events WHERE referral_id = :r ORDER BY occurred_at"),
                {"r": referral_id},
            )
        ]


def _answers(token, **overrides):
    body = {
        "form_token": token,
        "availability": ["weekday_mornings", "weekends"],
        "care_mode": "home_visit",
        "area": "Yaba",
    }
    body.update(overrides)
    return body


def test_first_open_starts_the_assistant_once_and_submit_completes(client, partner, sql, server):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    page = client.get(path)
    assert page.status_code == 200
    _assert_private(page)
    assert "Hello Amaka" in page.text
    assert 'name="availability"' in page.text and 'value="in_clinic"' in page.text
    assert "Lower back pain" not in page.text  # the reason is not shown back
    again = client.get(path)
    assert again.status_code == 200
    assert _events(sql, referral_id) == ["referral.created", "assistant.started"]
    assert (
        count(
            sql,
            "SELECT count(*) FROM referrals WHERE id = :r AND status = 'assistant_started'",
            r=referral_id,
        )
        == 1
    )

    done = client.post(path, data=_answers(_form_token(page.text)))
    assert done.status_code == 200, done.text
    _assert_private(done)
    assert "Thank you, Amaka" in done.text
    types = _events(sql, referral_id)
    assert types[:3] == ["referral.created", "assistant.started", "patient.intake_completed"]
    with sql.connect() as conn:
        session = conn.execute(
            text(
                "SELECT availability, care_mode, area, completed_at FROM assistant_sessions "
                "WHERE referral_id = :r"
            ),
            {"r": referral_id},
        ).one()
        area = conn.execute(
            text("SELECT patient_area FROM referrals WHERE id = :r"), {"r": referral_id}
        ).scalar_one()
    assert session[:3] == ("weekday_mornings,weekends", "home_visit", "Yaba")
    assert session[3] is not None and area == "Yaba"
    # Matching ran: either a physiotherapist was matched or a coordinator task was opened.
    matched = "provider.matched" in types
    unmatched = count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = 'unmatched'",
        r=referral_id,
    )
    assert matched or unmatched == 1

    # The link is used up: GET and POST both get the safe page.
    for response in (client.get(path), client.post(path, data=_answers(_form_token(page.text)))):
        assert response.status_code == 410
        _assert_private(response)
        assert "Amaka" not in response.text
    assert _events(sql, referral_id).count("patient.intake_completed") == 1
    token = path.rsplit("/", 1)[1]
    assert token not in server.logs() and "Amaka" not in server.logs()


def test_bad_answers_are_422_with_accessible_errors(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"], care_mode="remote")
    path = _path(referral["assistant_session_url"])
    page = client.get(path)
    assert 'value="remote"' in page.text and 'value="home_visit"' not in page.text
    token = _form_token(page.text)
    response = client.post(
        path,
        data=_answers(token, availability=["at_midnight"], care_mode="home_visit", area="x" * 101),
    )
    assert response.status_code == 422
    assert 'role="alert"' in response.text
    assert "Choose at least one time" in response.text
    assert "Choose how you would like to be seen" in response.text
    assert 'aria-invalid="true"' in response.text
    assert _events(sql, referral["referral_id"]) == ["referral.created", "assistant.started"]
    ok = client.post(
        path, data=_answers(token, availability=["weekday_evenings"], care_mode="remote", area="")
    )
    assert ok.status_code == 200
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT care_mode, area FROM assistant_sessions WHERE referral_id = :r"),
            {"r": referral["referral_id"]},
        ).one()
    assert tuple(row) == ("remote", None)


def test_forms_without_the_session_form_token_are_refused(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    path = _path(referral["assistant_session_url"])
    client.get(path)
    other = created(client, partner["keys"]["sk_test"])
    other_token = _form_token(client.get(_path(other["assistant_session_url"])).text)
    for bad in ("", "forged", other_token):
        response = client.post(path, data=_answers(bad))
        assert response.status_code == 403
        _assert_private(response)
    json_post = client.post(path, json=_answers(other_token))
    assert json_post.status_code == 400
    assert (
        count(
            sql,
            "SELECT count(*) FROM assistant_sessions WHERE referral_id = :r AND "
            "completed_at IS NOT NULL",
            r=referral["referral_id"],
        )
        == 0
    )


def test_forged_expired_and_closed_links_get_safe_pages(client, partner, operator_token, sql):
    referral = created(client, partner["keys"]["sk_test"])
    path = _path(referral["assistant_session_url"])
    session_id = path.rsplit("/", 1)[1].split(".")[0]
    box = SecretBox(TEST_SECRET_KEY)
    past = assistant_token(box, session_id=session_id, expires_at=datetime.now(UTC) - timedelta(1))
    forged = assistant_token(
        SecretBox("another-secret"),
        session_id=session_id,
        expires_at=datetime.now(UTC) + timedelta(days=1),
    )
    unknown = assistant_token(
        box,
        session_id="ast_00000000000000000000000000",
        expires_at=datetime.now(UTC) + timedelta(days=1),
    )
    cases = [
        (f"/a/{past}", 410),
        (f"/a/{forged}", 404),
        (f"/a/{unknown}", 404),
        ("/a/not-a-token", 404),
        (path + "x", 404),
    ]
    for url, status in cases:
        response = client.get(url)
        assert response.status_code == status, url
        _assert_private(response)
        assert "Amaka" not in response.text
    assert _events(sql, referral["referral_id"]) == ["referral.created"]

    # Expired in the database although the token's own expiry is later.
    with sql.begin() as conn:
        conn.execute(
            text("UPDATE assistant_sessions SET expires_at = :t WHERE id = :s"),
            {"t": datetime.now(UTC) - timedelta(seconds=1), "s": session_id},
        )
    assert client.get(path).status_code == 410

    cancelled = created(client, partner["keys"]["sk_test"])
    moved(client, operator_token, cancelled["referral_id"], "cancelled")
    response = client.get(_path(cancelled["assistant_session_url"]))
    assert response.status_code == 410
    assert _events(sql, cancelled["referral_id"]) == ["referral.created", "referral.closed"]


def test_opening_after_a_coordinator_booked_does_not_move_the_referral(
    client, partner, operator_token, sql
):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id = referral["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    moved(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={"scheduled_at": "2026-12-01T09:00:00Z", "care_mode": "remote"},
    )
    assert client.get(_path(referral["assistant_session_url"])).status_code == 200
    assert _events(sql, referral_id) == [
        "referral.created",
        "assistant.started",
        "appointment.booked",
    ]
