"""Console sign-in security: TOTP second factor, idle sign-out, roles, and recorded views."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pyotp
import pytest
from sqlalchemy import select, text, update

from rehabref.console.session import idle_expired
from rehabref.db import table
from rehabref.ops.totp import code_ok
from rehabref.tables.operators import ConsoleSession, Operator
from tests.audit.operators import cli, create
from tests.conftest import auth
from tests.console.operators import csrf, sign_in
from tests.support.payloads import v1_referral

_sessions = table(ConsoleSession)
_operators = table(Operator)


def _enrol(database_url: str, operator_id: str) -> str:
    result = cli(database_url, "operators", "enrol-totp", "--operator-id", operator_id)
    assert result.returncode == 0, result.stderr
    uri = result.stdout.strip()
    assert uri.startswith("otpauth://totp/")
    secret = parse_qs(urlsplit(uri).query)["secret"][0]
    return secret


def _sign_in_with_code(http: httpx.Client, token: str, code: str | None) -> httpx.Response:
    page = http.get("/console/login")
    data = {"token": token, "csrf_token": csrf(page)}
    if code is not None:
        data["code"] = code
    return http.post("/console/login", data=data, follow_redirects=False)


def test_an_enrolled_operator_needs_the_right_code(server, database_url, sql):
    operator = create(database_url)
    secret = _enrol(database_url, operator["operator_id"])
    with sql.connect() as conn:
        stored = conn.execute(
            text("SELECT totp_secret FROM operators WHERE id = :id"),
            {"id": operator["operator_id"]},
        ).scalar()
    assert stored and secret not in stored  # sealed, not in the clear
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        missing = _sign_in_with_code(http, operator["token"], None)
        assert missing.status_code == 401
        assert "six-digit code" in missing.text
        right_now = pyotp.TOTP(secret).now()
        wrong = "000000" if right_now != "000000" else "111111"
        refused = _sign_in_with_code(http, operator["token"], wrong)
        assert refused.status_code == 401
        assert "rr_console=" not in refused.headers.get("set-cookie", "")
        assert _sign_in_with_code(http, operator["token"], "12345x").status_code == 401
        accepted = _sign_in_with_code(http, operator["token"], pyotp.TOTP(secret).now())
        assert accepted.status_code == 303, accepted.text[:300]
        assert http.get("/console", follow_redirects=False).status_code == 200


def test_operators_without_totp_sign_in_with_the_token_alone(server, database_url):
    operator = create(database_url)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303


def test_enrolling_an_unknown_operator_fails(database_url):
    result = cli(database_url, "operators", "enrol-totp", "--operator-id", "opr_nobody")
    assert result.returncode == 2
    assert "no active operator" in result.stderr


def test_code_check_with_an_injected_clock():
    secret = pyotp.random_base32()
    at = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC)
    code = pyotp.TOTP(secret).at(at)
    assert code_ok(secret, code, at)
    assert code_ok(secret, code, at + timedelta(seconds=30))  # one step of drift
    assert not code_ok(secret, code, at + timedelta(minutes=5))
    assert not code_ok(secret, " " + code[:5], at)
    assert not code_ok(secret, "\u0661" * 6, at)  # non-ASCII digits


def test_idle_policy_with_an_injected_clock():
    seen = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    assert not idle_expired(seen, seen + timedelta(minutes=15), 15 * 60)
    assert idle_expired(seen, seen + timedelta(minutes=15, seconds=1), 15 * 60)
    assert not idle_expired(seen.replace(tzinfo=None), seen + timedelta(minutes=1), 15 * 60)


def test_an_idle_console_session_is_signed_out(server, database_url, sql):
    operator = create(database_url)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303
        assert http.get("/console", follow_redirects=False).status_code == 200
        # Used 14 minutes ago: still signed in, and the request moves last seen to now.
        _last_seen(sql, operator["operator_id"], minutes_ago=14)
        assert http.get("/console", follow_redirects=False).status_code == 200
        with sql.connect() as conn:
            seen = conn.execute(
                select(_sessions.c.last_seen_at).where(
                    _sessions.c.operator_id == operator["operator_id"]
                )
            ).scalar_one()
        seen = seen if seen.tzinfo else seen.replace(tzinfo=UTC)
        assert datetime.now(UTC) - seen < timedelta(minutes=1)
        _last_seen(sql, operator["operator_id"], minutes_ago=16)
        response = http.get("/console", follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"] == "/console/login"


def _last_seen(sql, operator_id: str, *, minutes_ago: int) -> None:
    with sql.begin() as conn:
        conn.execute(
            update(_sessions)
            .where(_sessions.c.operator_id == operator_id)
            .values(last_seen_at=datetime.now(UTC) - timedelta(minutes=minutes_ago))
        )


def test_an_expired_token_ends_its_console_session(server, database_url, sql):
    operator = create(database_url, "--expires-in-days", "30")
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303
        with sql.begin() as conn:
            conn.execute(
                update(_operators)
                .where(_operators.c.id == operator["operator_id"])
                .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
            )
        assert http.get("/console", follow_redirects=False).status_code == 303
        assert sign_in(http, operator["token"]).status_code == 401


@pytest.fixture
def referral_id(client, partner):
    body = v1_referral(route="contact")
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_test"], body["external_ref"]),
    )
    assert response.status_code == 201, response.text
    return response.json()["referral_id"]


def test_console_audit_page_is_for_admins_and_views_are_recorded(server, database_url, referral_id):
    coordinator = create(database_url)
    admin = create(database_url, "--role", "admin")
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, coordinator["token"]).status_code == 303
        assert http.get(f"/console/referrals/{referral_id}").status_code == 200
        assert http.get("/console/audit").status_code == 403
        assert "Audit trail" not in http.get("/console").text
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, admin["token"]).status_code == 303
        page = http.get("/console/audit", params={"referral_id": referral_id})
        assert page.status_code == 200
        assert "referral.read" in page.text and coordinator["operator_id"] in page.text
        assert "referral.created" in page.text
        bad = http.get("/console/audit", params={"since": "not a time"})
        assert bad.status_code == 422
        assert "ISO 8601" in bad.text
        assert http.get("/console/audit", params={"cursor": "x"}).status_code == 422
