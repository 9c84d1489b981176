"""Signed tokens arrive from URLs, cookies and form fields, so they can hold any character.

Every check must answer "not valid" (the page's normal refusal), never a 500: a signature
with non-ASCII characters (``hmac.compare_digest`` refuses non-ASCII ``str``) and numbers
written with non-ASCII digits (``"²".isdigit()`` is true but ``int("²")`` fails).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import httpx

from rehabref.care.report_links import read_pdf_token
from rehabref.eligibility import tokens as preauth
from rehabref.instance_secret import SecretBox
from rehabref.intake.service import read_assistant_token
from rehabref.pages import form_tokens
from tests.conftest import auth
from tests.console.operators import csrf, make_operator, sign_in
from tests.support.partners import TEST_SECRET_KEY
from tests.support.payloads import v1_referral

BOX = SecretBox(TEST_SECRET_KEY)
REFERRAL_ID = "ref_" + "0" * 26
ODD = ("é", "²", "\u202e", "😀", "\u0660\u0661")


def test_verify_refuses_non_ascii_signatures_without_raising() -> None:
    genuine = BOX.sign("report-pdf:x")
    assert BOX.verify("report-pdf:x", genuine)
    for odd in ODD:
        assert not BOX.verify("report-pdf:x", odd)
        assert not BOX.verify("report-pdf:x", genuine[:-1] + odd)


def test_token_readers_refuse_odd_characters() -> None:
    for odd in ODD:
        assert read_assistant_token(BOX, f"ast_x.1.{odd}") is None
        assert read_assistant_token(BOX, f"ast_x.{odd}.sig") is None
        assert read_pdf_token(BOX, f"{REFERRAL_ID}.9999999999.{odd}") is None
        assert read_pdf_token(BOX, f"{REFERRAL_ID}.{odd}.sig") is None
        assert preauth.read(BOX, f"pa_e30.{odd}") is None
        for token in (f"1.n.{odd}", f"{odd}.n.sig"):
            assert (
                form_tokens.check(BOX, purpose="console", binding="b", token=token, max_age=60)
                is None
            )


def test_public_token_pages_refuse_odd_signatures(client: httpx.Client) -> None:
    assert client.get("/a/ast_x.1.%C3%A9").status_code == 404
    assert client.post("/a/ast_x.1.%C3%A9", data={"a": "1"}).status_code == 404
    pdf = client.get(f"/reports/pdf/{REFERRAL_ID}.9999999999.%C3%A9")
    assert pdf.status_code == 403
    assert pdf.json()["error"]["code"] == "forbidden"


def _raw_cookie(value: str) -> dict[bytes, bytes]:
    # Sent as raw UTF-8 bytes, as a browser or a script may.
    return {b"Cookie": f"rr_console={value}".encode()}


def test_console_refuses_odd_session_cookies(client: httpx.Client) -> None:
    for value in ("op_x.9999999999.n.é", "op_x.².n.sig", "op_x.9999999999.n.😀"):
        page = client.get("/console", headers=_raw_cookie(value), follow_redirects=False)
        assert page.status_code == 303, value
        assert page.headers["location"].endswith("/console/login")


def test_console_forms_refuse_odd_csrf_tokens(client: httpx.Client, database_url: str) -> None:
    login = client.get("/console/login")
    for odd in ("1.n.é", "².n.sig"):
        refused = client.post("/console/login", data={"token": "x", "csrf_token": odd})
        assert refused.status_code == 403, odd
    assert csrf(login)
    operator = make_operator(database_url)
    with httpx.Client(base_url=str(client.base_url), timeout=30) as console:
        assert sign_in(console, operator["token"]).status_code == 303
        for odd in ("1.n.é", "².n.sig"):
            out = console.post("/console/logout", data={"csrf_token": odd})
            assert out.status_code == 403, odd


def test_intake_form_refuses_odd_form_token(client: httpx.Client, partner: dict[str, Any]) -> None:
    created = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(route="assistant"),
        headers=auth(partner["keys"]["sk_test"], f"sec-{datetime.now(UTC).timestamp()}"),
    )
    assert created.status_code == 201, created.text
    path = httpx.URL(created.json()["assistant_session_url"]).path
    page = client.get(path)
    assert page.status_code == 200
    assert re.search(r'name="form_token"', page.text)
    sent = client.post(
        path, data={"form_token": "é", "availability": "weekends", "care_mode": "remote"}
    )
    assert sent.status_code == 403
    assert client.get(path).status_code == 200  # the session is still open


def test_csrf_fields_sent_as_files_are_refused(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    # multipart/form-data lets a client send any field as a file instead of text.
    link = client.post(
        "/api/v1/partners/referral-links",
        json={"campaign": "spring"},
        headers=auth(partner["keys"]["sk_test"], f"sec-link-{datetime.now(UTC).timestamp()}"),
    )
    assert link.status_code == 201, link.text
    path = f"/r/{link.json()['public_code']}"
    assert client.get(path).status_code == 200  # sets the form cookie
    refused = client.post(path, files={"csrf_token": ("token.txt", b"x"), "first_name": "Ada"})
    assert refused.status_code == 403
    client.get("/console/login")
    login = client.post("/console/login", files={"csrf_token": ("t", b"x"), "token": ("t", b"y")})
    assert login.status_code == 403
