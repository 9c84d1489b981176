"""The patient's assistant page over HTTP: the intake dialogue one question per page, link
previews that change nothing, and every kind of bad link or forged form."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
from sqlalchemy import text

from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_token
from tests.conftest import count
from tests.support.api import created
from tests.support.operators import moved
from tests.support.partners import TEST_SECRET_KEY

PRIVATE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}
PREVIEW_AGENTS = (
    "WhatsApp/2.23.20.0 A",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "TelegramBot (like TwitterBot)",
    "Mozilla/5.0 (Linux; Android 8.1.0; itel A16) AppleWebKit/537.36 Chrome/96 Mobile",
)
# Every table a page view could write to, counted before and after link previews.
TABLES = (
    "events",
    "deliveries",
    "referral_transitions",
    "intake_conversations",
    "contact_tasks",
    "outbound_messages",
    "scheduled_jobs",
    "assistant_sessions",
)


def _path(url: str) -> str:
    return urlsplit(url).path


def _assert_private(response: httpx.Response) -> None:
    for name, value in PRIVATE.items():
        assert response.headers[name] == value
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


def _form_token(page: str) -> str:
    match = re.search(r'name="form_token" value="([^"]+)"', page)
    assert match, page
    return match.group(1)


def _text(response: httpx.Response) -> str:
    return html.unescape(response.text)


def _events(sql, referral_id):
    with sql.connect() as conn:
        return [
            row[0]
            for row in conn.execute(
                text("SELECT type FROM events WHERE referral_id = :r ORDER BY occurred_at"),
                {"r": referral_id},
            )
        ]


def _snapshot(sql, referral_id):
    with sql.connect() as conn:
        totals = {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES}
        referral = conn.execute(
            text("SELECT status, updated_at FROM referrals WHERE id = :r"), {"r": referral_id}
        ).one()
        session = conn.execute(
            text("SELECT opened_at, completed_at FROM assistant_sessions WHERE referral_id = :r"),
            {"r": referral_id},
        ).one()
        conversation = conn.execute(
            text("SELECT state, updated_at FROM intake_conversations WHERE referral_id = :r"),
            {"r": referral_id},
        ).all()
    return totals, tuple(referral), tuple(session), [tuple(row) for row in conversation]


def _answer(client, path, *choices, text_=None, expect=303):
    """Post one answer from the current page's form; the next page (after the redirect)."""
    token = _form_token(client.get(path).text)
    data: dict = {"form_token": token, "choice": list(choices)}
    if text_ is not None:
        data["text"] = text_
    response = client.post(path, data=data)
    assert response.status_code == expect, response.text
    _assert_private(response)
    if expect != 303:
        return response
    assert response.headers["location"] == path
    page = client.get(path)
    assert page.status_code == 200
    return page


def _session_opened(sql, referral_id):
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT opened_at FROM assistant_sessions WHERE referral_id = :r"),
            {"r": referral_id},
        ).scalar_one()


def test_link_previews_and_reloads_change_nothing(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    before = _snapshot(sql, referral_id)
    for _ in range(3):
        for agent in PREVIEW_AGENTS:
            page = client.get(path, headers={"User-Agent": agent})
            assert page.status_code == 200
            _assert_private(page)
            assert "Hello Amaka" in page.text
            assert 'value="lang:en"' in page.text and 'value="lang:pcm"' in page.text
            assert "Lower back pain" not in page.text  # the reason is not shown back
    assert _snapshot(sql, referral_id) == before
    assert before[1][0] == "received" and before[2] == (None, None)
    assert _events(sql, referral_id) == ["referral.created"]


def test_a_whole_intake_by_web_completes_and_matches(client, partner, sql, server):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])

    page = _answer(client, path, "lang:en")
    assert _events(sql, referral_id) == ["referral.created", "assistant.started"]
    assert _session_opened(sql, referral_id) is not None
    assert 'lang="en"' in page.text and "Is that OK?" in page.text
    assert 'type="radio" name="choice" value="consent:yes"' in page.text
    page = _answer(client, path, "consent:yes")
    assert 'value="mode:home_visit"' in page.text and 'value="mode:remote"' in page.text
    page = _answer(client, path, "mode:home_visit")
    assert "Which area of Lagos do you live in?" in _text(page)
    assert 'name="text"' in page.text and 'name="choice" value="area' not in page.text
    page = _answer(client, path, text_="Yaba")
    assert page.text.count('type="checkbox" name="choice"') == 4
    page = _answer(client, path, "slot:weekday_mornings", "slot:weekends")
    summary = _text(page)
    assert "Sessions: At home" in summary and "Area: Yaba" in summary
    assert "Free: Weekday mornings, Weekends" in summary
    assert _events(sql, referral_id) == ["referral.created", "assistant.started"]

    done = _answer(client, path, "confirm:yes", expect=200)
    assert "Thank you, Amaka" in done.text and "This link no longer works" in done.text
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
        area, status = conn.execute(
            text("SELECT patient_area, status FROM referrals WHERE id = :r"), {"r": referral_id}
        ).one()
    assert session[:3] == ("weekday_mornings,weekends", "home_visit", "Yaba")
    assert session[3] is not None and area == "Yaba" and status == "assistant_started"
    # Matching ran: either a physiotherapist was matched or a coordinator task was opened.
    matched = "provider.matched" in types
    unmatched = count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = 'unmatched'",
        r=referral_id,
    )
    assert matched or unmatched == 1

    # The link is used up: GET and POST both get the safe page.
    token = _form_token(page.text)
    for response in (client.get(path), client.post(path, data={"form_token": token})):
        assert response.status_code == 410
        _assert_private(response)
        assert "Amaka" not in response.text
    assert _events(sql, referral_id).count("patient.intake_completed") == 1
    link_token = path.rsplit("/", 1)[1]
    assert link_token not in server.logs() and "Amaka" not in server.logs()
    assert "Yaba" not in server.logs()


def test_answers_not_understood_are_asked_again_with_a_hint(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"], care_mode="remote")
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    page = _answer(client, path)  # sent with nothing chosen
    assert 'role="alert"' in page.text
    assert "Sorry, I did not get that. Please choose one answer." in page.text
    assert 'aria-describedby="hint"' in page.text
    assert _events(sql, referral_id) == ["referral.created", "assistant.started"]
    page = _answer(client, path, "lang:en")
    assert 'role="alert"' not in page.text  # understood: the hint is gone
    page = _answer(client, path, "consent:yes")
    # One care mode allowed: the step is answered for the patient.
    assert "Which area of Lagos" in page.text
    page = _answer(client, path, text_="!!!")
    assert "Sorry, I did not get that. Please type the name of your area" in page.text
    assert 'aria-invalid="true"' in page.text
    page = _answer(client, path, text_="x" * 201)  # too long for the page: not read
    assert 'Or tap "Talk to a person" below.' in _text(page)
    ended = _answer(client, path, text_="?", expect=200)  # a third miss: a person calls
    assert "A rehabref coordinator will call you soon" in ended.text
    assert "<form" not in ended.text
    assert (
        count(
            sql,
            "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND "
            "purpose = 'assistant_handover'",
            r=referral_id,
        )
        == 1
    )


def test_talk_to_a_person_opens_a_handover_task(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    page = _answer(client, path, "lang:en")
    assert 'name="choice" value="handover"' in page.text
    ended = _answer(client, path, "handover", expect=200)
    assert "Thank you, Amaka" in ended.text
    assert "A rehabref coordinator will call you soon" in ended.text
    tasks = count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND "
        "purpose = 'assistant_handover' AND status = 'open'",
        r=referral_id,
    )
    assert tasks == 1
    again = client.get(path)  # the page says so from now on, and asks nothing
    assert again.status_code == 200 and "coordinator will call you" in again.text
    assert "<form" not in again.text
    assert "patient.intake_completed" not in _events(sql, referral_id)


def test_pidgin_is_chosen_first_or_switched_to_at_any_step(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    path = _path(referral["assistant_session_url"])
    page = _answer(client, path, "lang:pcm")
    assert '<html lang="pcm">' in page.text
    assert "You gree?" in page.text and "Yes, I gree" in page.text
    assert "I wan talk to person" in page.text
    assert 'value="lang:en"' in page.text and "Read am for English" in page.text
    page = _answer(client, path, "consent:yes")
    assert "How you wan see your physiotherapist?" in page.text
    page = _answer(client, path, "lang:en")  # the toggle: same question, in English
    assert '<html lang="en">' in page.text
    assert "How would you like to see your physiotherapist?" in page.text
    assert "Read in Pidgin" in page.text
    page = _answer(client, path, "mode:in_clinic")
    page = _answer(client, path, text_="pidgin")  # typed: a switch, not an area
    assert "Which area you dey stay for Lagos?" in page.text


def test_forms_without_the_session_form_token_are_refused(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    path = _path(referral["assistant_session_url"])
    other = created(client, partner["keys"]["sk_test"])
    other_token = _form_token(client.get(_path(other["assistant_session_url"])).text)
    for bad in ("", "forged", other_token):
        response = client.post(path, data={"form_token": bad, "choice": "lang:en"})
        assert response.status_code == 403
        _assert_private(response)
    json_post = client.post(path, json={"form_token": other_token, "choice": "lang:en"})
    assert json_post.status_code == 400
    assert _events(sql, referral["referral_id"]) == ["referral.created"]
    assert _session_opened(sql, referral["referral_id"]) is None


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
    token = _form_token(client.get(path).text)
    cases = [
        (f"/a/{past}", 410),
        (f"/a/{forged}", 404),
        (f"/a/{unknown}", 404),
        ("/a/not-a-token", 404),
        (path + "x", 404),
    ]
    for url, status in cases:
        for response in (
            client.get(url),
            client.post(url, data={"form_token": token, "choice": "lang:en"}),
        ):
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
    assert client.post(path, data={"form_token": token, "choice": "lang:en"}).status_code == 410

    cancelled = created(client, partner["keys"]["sk_test"])
    cancelled_path = _path(cancelled["assistant_session_url"])
    cancelled_token = _form_token(client.get(cancelled_path).text)
    moved(client, operator_token, cancelled["referral_id"], "cancelled")
    assert client.get(cancelled_path).status_code == 410
    posted = client.post(cancelled_path, data={"form_token": cancelled_token, "choice": "lang:en"})
    assert posted.status_code == 410
    assert _events(sql, cancelled["referral_id"]) == ["referral.created", "referral.closed"]


def test_answering_after_a_coordinator_booked_does_not_move_the_referral(
    client, partner, operator_token, sql
):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    moved(client, operator_token, referral_id, "assistant_started")
    moved(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={"scheduled_at": "2026-12-01T09:00:00Z", "care_mode": "remote"},
    )
    assert client.get(path).status_code == 200
    page = _answer(client, path, "lang:en")
    assert "Is that OK?" in page.text
    assert _events(sql, referral_id) == [
        "referral.created",
        "assistant.started",
        "appointment.booked",
    ]
    status = count(
        sql, "SELECT count(*) FROM referrals WHERE id = :r AND status = 'booked'", r=referral_id
    )
    assert status == 1


def test_declining_consent_ends_the_questions_and_a_coordinator_may_call(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    referral_id, path = referral["referral_id"], _path(referral["assistant_session_url"])
    page = _answer(client, path, "lang:en")
    ended = _answer(client, path, "consent:no", expect=200)
    assert "No problem, we will not ask you anything more." in ended.text
    assert "<form" not in ended.text and len(ended.content) < 4_000
    tasks = count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND "
        "purpose = 'consent_declined'",
        r=referral_id,
    )
    assert tasks == 1 and len(page.content) < 8_000  # a light page for a cheap phone
