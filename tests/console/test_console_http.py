"""The console over plain HTTP: sign-in, session cookie, CSRF, board, timeline, actions."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import auth, count
from tests.console.operators import csrf, make_operator, sign_in
from tests.support.payloads import v1_referral


@pytest.fixture
def operator(database_url):
    return make_operator(database_url)


@pytest.fixture
def console(server, operator):
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        response = sign_in(http, operator["token"])
        assert response.status_code == 303, response.text[:300]
        yield http


def _referral(client, partner, *, key="sk_test", **overrides):
    response = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(**overrides),
        headers=auth(partner["keys"][key], overrides.get("external_ref") or None),
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_pages_need_a_signed_in_operator(client, partner):
    for path in ("/console", "/console/tasks", "/console/physios", "/console/deliveries"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"] == "/console/login"
    # Partner API keys are not operator tokens.
    page = client.get("/console/login")
    response = client.post(
        "/console/login",
        data={"token": partner["keys"]["sk_test"], "csrf_token": csrf(page)},
        follow_redirects=False,
    )
    assert response.status_code == 401
    assert "rr_console=" not in response.headers.get("set-cookie", "")


def test_sign_in_sets_a_strict_http_only_cookie(server, operator):
    with httpx.Client(base_url=server.base_url) as http:
        response = sign_in(http, operator["token"])
        cookie = [c for c in response.headers.get_list("set-cookie") if c.startswith("rr_console=")]
        assert cookie, response.headers
        lowered = cookie[0].lower()
        assert "httponly" in lowered and "samesite=strict" in lowered and "path=/console" in lowered
        assert "secure" not in lowered  # http base URL here; https turns Secure on
        assert operator["token"] not in cookie[0]
        assert http.get("/console").status_code == 200


def test_login_requires_the_form_token(server, operator):
    with httpx.Client(base_url=server.base_url) as http:
        response = http.post("/console/login", data={"token": operator["token"]})
        assert response.status_code == 403
        assert http.get("/console", follow_redirects=False).status_code == 303


def test_a_forged_session_cookie_is_ignored(server, operator):
    with httpx.Client(base_url=server.base_url) as http:
        http.cookies.set("rr_console", "opr_x.9999999999.abcd.fake", path="/console")
        assert http.get("/console", follow_redirects=False).status_code == 303


def test_board_lists_and_searches(console, client, partner):
    created = _referral(client, partner, external_ref="BOARD-1", route="contact")
    board = console.get("/console")
    assert board.status_code == 200
    assert "BOARD-1" in board.text
    found = console.get("/console", params={"q": "BOARD-1"})
    assert "BOARD-1" in found.text
    by_status = console.get("/console", params={"status": "booked", "q": "BOARD-1"})
    assert f"/console/referrals/{created['referral_id']}" not in by_status.text
    assert "No referrals match." in by_status.text
    # Phone and e-mail match exactly, through their blind indexes; sealed names match nothing.
    assert created["referral_id"] in console.get("/console", params={"q": "+2348031234567"}).text
    assert created["referral_id"] not in console.get("/console", params={"q": "amak"}).text


def test_post_without_csrf_token_is_refused(console, client, partner, sql):
    created = _referral(client, partner, external_ref="CSRF-1", route="contact")
    response = console.post(
        f"/console/referrals/{created['referral_id']}/transition", data={"to": "cancelled"}
    )
    assert response.status_code == 403
    status = count(
        sql,
        "SELECT count(*) FROM referrals WHERE id = :r AND status = 'cancelled'",
        r=created["referral_id"],
    )
    assert status == 0


def test_move_through_booked_attended_paid(console, client, make_partner, sql):
    partner = make_partner(commission_bps=1000, show_payments=True)
    created = _referral(client, partner, external_ref="MOVE-1", route="contact")
    rid = created["referral_id"]
    page = console.get(f"/console/referrals/{rid}")
    assert page.status_code == 200 and "Book appointment" in page.text

    def move(to, **data):
        token = csrf(console.get(f"/console/referrals/{rid}"))
        return console.post(
            f"/console/referrals/{rid}/transition",
            data={"to": to, "csrf_token": token, **data},
            follow_redirects=False,
        )

    assert move("booked", scheduled_at="2026-11-02T10:00", care_mode="remote").status_code == 303
    assert move("attended").status_code == 422  # by hand, attendance needs a reason
    assert move("attended", reason="patient confirmed by phone").status_code == 303
    bad = move("paid", amount="abc")
    assert bad.status_code == 422 and "Enter the amount" in bad.text
    illegal = move("booked", scheduled_at="2026-11-02T10:00", care_mode="remote")
    assert illegal.status_code == 409 and "cannot move" in illegal.text
    assert move("paid", amount="20,000", currency="NGN").status_code == 303
    with sql.connect() as conn:
        from sqlalchemy import text

        row = (
            conn.execute(text("SELECT * FROM referrals WHERE id = :r"), {"r": rid}).mappings().one()
        )
    assert row["status"] == "paid"
    assert row["payment_amount_minor"] == 2_000_000
    assert row["commission_minor"] == 200_000
    timeline = console.get(f"/console/referrals/{rid}").text
    for text_ in ("booked", "attended", "paid", "payment.completed", "appointment.booked"):
        assert text_ in timeline
    assert "NGN 20,000.00" in timeline and "NGN 2,000.00" in timeline  # payment, commission
    assert "patient confirmed by phone" in timeline  # the reason of the manual move
    types = count(sql, "SELECT count(*) FROM referral_transitions WHERE referral_id = :r", r=rid)
    assert types == 5  # new, contact_pending, booked, attended, paid


def test_logout_ends_the_session(console):
    token = csrf(console.get("/console"))
    response = console.post("/console/logout", data={"csrf_token": token}, follow_redirects=False)
    assert response.status_code == 303
    assert console.get("/console", follow_redirects=False).status_code == 303


def test_logout_also_ends_a_copied_session_cookie(server, operator):
    with (
        httpx.Client(base_url=server.base_url) as first,
        httpx.Client(base_url=server.base_url) as copy,
    ):
        sign_in(first, operator["token"])
        copy.cookies.set("rr_console", first.cookies.get("rr_console"), path="/console")
        assert copy.get("/console").status_code == 200
        token = csrf(first.get("/console"))
        first.post("/console/logout", data={"csrf_token": token}, follow_redirects=False)
        assert copy.get("/console", follow_redirects=False).status_code == 303
        # Signing in again afterwards works.
        assert sign_in(first, operator["token"]).status_code == 303
        assert first.get("/console").status_code == 200


def test_record_a_remote_session_from_schedule_to_completion(console, client, partner, sql):
    # A live referral: the registry's physiotherapists are offered to live referrals only.
    created = _referral(client, partner, key="sk_live", external_ref="SESSION-1", route="contact")
    rid = created["referral_id"]
    license_number = f"MRTB-{rid[-6:]}"
    physio = console.post(
        "/console/physios",
        data={
            "csrf_token": csrf(console.get("/console/physios")),
            "name": "Kemi Ade",
            "license_number": license_number,
            "phone": "+2348091234567",
            "city": "Lagos",
            "rating": "4.5",
            "weekly_capacity": "10",
            "specializations": "musculoskeletal",
            "modalities": "remote",
        },
        follow_redirects=False,
    )
    assert physio.status_code == 303, physio.text[:2000]
    with sql.connect() as conn:
        from sqlalchemy import text

        physio_id = conn.execute(
            text("SELECT id FROM physiotherapists WHERE license_number = :l"), {"l": license_number}
        ).scalar_one()

    def post(path, **data):
        token = csrf(console.get(f"/console/referrals/{rid}"))
        return console.post(path, data={"csrf_token": token, **data}, follow_redirects=False)

    scheduled = post(
        f"/console/referrals/{rid}/sessions",
        scheduled_at="2026-12-03T08:00",
        modality="remote",
        session_type="assessment",
        physio_id=physio_id,
    )
    assert scheduled.status_code == 303, scheduled.text[:2000]
    with sql.connect() as conn:
        from sqlalchemy import text

        session_id = conn.execute(
            text("SELECT id FROM care_sessions WHERE referral_id = :r"), {"r": rid}
        ).scalar_one()
    assert post(f"/console/sessions/{session_id}/start").status_code == 303
    bad = post(f"/console/sessions/{session_id}/complete", pain_before="11", pain_after="2")
    assert bad.status_code == 422 and "0 to 10" in bad.text
    done = post(
        f"/console/sessions/{session_id}/complete",
        pain_before="7",
        pain_after="3",
        notes_summary="Improved range of motion",
    )
    assert done.status_code == 303, done.text[:2000]
    page = console.get(f"/console/referrals/{rid}").text
    assert "completed" in page and "7 &rarr; 3" in page
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'session.completed'",
            r=rid,
        )
        == 1
    )
