"""The physiotherapist app over HTTP: one-time links, sessions, sign-out everywhere, scoping,
and what is (not) logged."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import text

from tests.physio_app.support import physio_with_visit, sign_in_link, unique_phone
from tests.scheduling.conftest import new_physio

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


def ask_link(http: httpx.Client, contact: str, channel: str = "sms") -> httpx.Response:
    form = http.get("/app/sign-in")
    return http.post(
        "/app/sign-in",
        data={"contact": contact, "channel": channel, "csrf_token": csrf(form)},
    )


def signed_in(server, sql, phone: str) -> httpx.Client:
    http = httpx.Client(base_url=server.base_url, timeout=30)
    assert ask_link(http, phone).status_code == 200
    link = sign_in_link(sql, phone)
    path = link[link.index("/app/link/") :]
    assert http.get(path).status_code == 200
    used = http.post(path)
    assert used.status_code == 303 and used.headers["location"] == "/app"
    return http


@pytest.fixture
def world(client, op_headers, sql, make_partner):
    partner = make_partner(contract="g")
    return physio_with_visit(client, op_headers, sql, partner["partner_id"])


def test_a_link_signs_in_once_and_shows_only_what_the_visit_needs(server, sql, world):
    phone = world["physio"]["phone"]
    http = signed_in(server, sql, phone)
    page = http.get("/app")
    assert page.status_code == 200
    assert "Ngozi" in page.text and "Ikeja" in page.text
    assert "Eze" not in page.text and "+234803123" not in page.text  # no surname or phone
    assert page.headers["cache-control"] == "no-store"

    link = sign_in_link(sql, phone)
    again = httpx.post(server.base_url + link[link.index("/app/link/") :])
    assert again.status_code == 410  # once only
    assert link.rsplit("/", 1)[1] not in server.logs()  # the token never reaches the log


def test_unknown_contacts_get_the_same_answer_and_no_message(server, sql):
    http = httpx.Client(base_url=server.base_url, timeout=30)
    stranger = unique_phone()
    answer = ask_link(http, stranger)
    assert answer.status_code == 200 and "If this contact belongs" in answer.text
    with sql.connect() as conn:
        sent = conn.execute(
            text("SELECT count(*) FROM outbound_messages WHERE recipient = :to"), {"to": stranger}
        ).scalar_one()
    assert sent == 0
    assert ask_link(http, "not a phone").status_code == 422


def test_another_physiotherapist_sees_a_404(server, sql, client, op_headers, world):
    other = new_physio(client, op_headers, phone=unique_phone())
    http = signed_in(server, sql, other["phone"])
    visit = http.get(f"/app/visits/{world['appointment']['session_id']}")
    assert visit.status_code == 404 and "Ngozi" not in visit.text
    assert "Ngozi" not in http.get("/app").text


def test_sign_out_everywhere_ends_every_session(server, sql, world):
    phone = world["physio"]["phone"]
    first = signed_in(server, sql, phone)
    second = signed_in(server, sql, phone)
    page = first.get("/app")
    out = first.post("/app/sign-out", data={"csrf_token": csrf(page), "everywhere": "yes"})
    assert out.status_code == 303
    assert second.get("/app").headers.get("location") == "/app/sign-in"
    assert first.get("/app").headers.get("location") == "/app/sign-in"


def test_check_in_needs_a_position_or_the_devices_refusal(server, sql, world):
    http = signed_in(server, sql, world["physio"]["phone"])
    url = f"/app/visits/{world['appointment']['session_id']}"
    token = csrf(http.get(url))
    empty = http.post(f"{url}/check-in", data={"csrf_token": token})
    assert empty.status_code == 422 and "No position" in empty.text
    forged = http.post(f"{url}/check-in", data={"csrf_token": "1.2.3", "refusal": "timeout"})
    assert forged.status_code == 403
    refused = http.post(
        f"{url}/check-in", data={"csrf_token": token, "refusal": "permission_denied"}
    )
    assert refused.status_code == 303
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT status, check_in_lat, check_in_refusal FROM care_sessions WHERE id = :s"),
            {"s": world["appointment"]["session_id"]},
        ).one()
    assert tuple(row) == ("in_progress", None, "the device refused location access")
