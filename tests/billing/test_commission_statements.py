"""Monthly commission statements end to end on a real server: generation, the partner's
scoped reads (JSON, CSV, PDF), settlement and its ``commission.settled`` event."""

from __future__ import annotations

import csv
import io
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright
from pypdf import PdfReader
from sqlalchemy import update
from sqlalchemy.engine import Engine

from rehabref.events.sealing import event_data
from rehabref.tables.referrals import ReferralTransition
from tests.audit.operators import create as create_operator
from tests.billing.conftest import referral_at, rows
from tests.conftest import auth
from tests.console.operators import csrf, sign_in
from tests.console.test_browser_console import CHROMIUM_ARGS, SCREENSHOTS
from tests.support.operators import OPS, moved, op_headers
from tests.support.partners import TEST_RING

STATEMENTS = "/api/v1/partners/commission-statements"
OCTOBER = "2026-10"


@pytest.fixture(scope="module")
def admin_token(database_url: str) -> str:
    return create_operator(database_url, "--role", "admin")["token"]


def paid_in_october(
    client: httpx.Client, sql: Engine, token: str, key: str, amount: int, day: int
) -> str:
    """A referral of ``key`` paid ``amount``, its payment dated ``day`` October 2026."""
    referral_id: str = referral_at(client, token, key, "attended")["referral_id"]
    moved(client, token, referral_id, "paid", payment={"amount_minor": amount, "currency": "NGN"})
    with sql.begin() as conn:
        transitions = ReferralTransition.__table__
        conn.execute(
            update(transitions)
            .where(transitions.c.referral_id == referral_id, transitions.c.to_status == "paid")
            .values(created_at=datetime(2026, 10, day, 12, 0, tzinfo=UTC))
        )
    return referral_id


def generate(client: httpx.Client, token: str, partner_id: str, period: str) -> httpx.Response:
    return client.post(
        f"{OPS}/commission-statements",
        json={"partner_id": partner_id, "period": period},
        headers=op_headers(token),
    )


def statuses(sql: Engine, referral_ids: list[str]) -> dict[str, str]:
    query = "SELECT commission_status FROM referrals WHERE id = :i"
    return {ref: rows(sql, query, i=ref)[0].commission_status for ref in referral_ids}


def test_a_month_is_stated_read_by_its_partner_only_and_settled_once(
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    admin_token: str,
) -> None:
    partner = make_partner(name="Commission Clinic", commission_bps=1000, show_payments=True)
    key = partner["keys"]["sk_live"]
    other = make_partner(name="Other Clinic", commission_bps=1000, show_payments=True)
    other_key = other["keys"]["sk_live"]
    first = paid_in_october(client, sql, operator_token, key, 2_000_000, 3)
    second = paid_in_october(client, sql, operator_token, key, 1_234_567, 20)
    foreign = paid_in_october(client, sql, operator_token, other_key, 3_000_000, 5)
    # Paid now (November): not on October's statement.
    late = referral_at(client, operator_token, key, "attended")["referral_id"]
    moved(
        client, operator_token, late, "paid", payment={"amount_minor": 900_000, "currency": "NGN"}
    )

    made = generate(client, operator_token, partner["partner_id"], OCTOBER)
    assert made.status_code == 201, made.text
    statement = made.json()
    assert statement["line_count"] == 2
    assert statement["amount_total_minor"] == 2_000_000 + 1_234_567
    # 10 % floored per line: 200000 + 123456 (123456.7 floored).
    assert statement["commission_total_minor"] == 200_000 + 123_456
    assert statement["status"] == "pending_settlement"
    again = generate(client, operator_token, partner["partner_id"], OCTOBER)
    assert again.status_code == 200 and again.json()["id"] == statement["id"]
    assert generate(client, operator_token, partner["partner_id"], "2026-11").status_code == 409
    assert generate(client, operator_token, partner["partner_id"], "2026-13").status_code == 422
    assert generate(client, operator_token, "prt_missing", OCTOBER).status_code == 404

    listed = client.get(STATEMENTS, headers=auth(key))
    assert listed.status_code == 200
    assert [item["id"] for item in listed.json()["data"]] == [statement["id"]]
    assert listed.json()["has_more"] is False
    detail = client.get(f"{STATEMENTS}/{statement['id']}", headers=auth(key)).json()
    assert [line["referral_id"] for line in detail["lines"]] == [first, second]
    assert [line["commission_minor"] for line in detail["lines"]] == [200_000, 123_456]
    # Another partner neither lists nor reads it; nor does the partner's test key.
    assert client.get(STATEMENTS, headers=auth(other_key)).json()["data"] == []
    for stranger in (other_key, partner["keys"]["sk_test"]):
        response = client.get(f"{STATEMENTS}/{statement['id']}", headers=auth(stranger))
        assert response.status_code == 404
    assert client.get(f"{STATEMENTS}?cursor=bogus", headers=auth(key)).status_code == 422
    assert (
        client.get(f"{STATEMENTS}/{statement['id']}?format=xls", headers=auth(key)).status_code
        == 422
    )

    exported = client.get(f"{STATEMENTS}/{statement['id']}?format=csv", headers=auth(key))
    assert exported.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(exported.text)))
    assert [row["referral_id"] for row in table] == [first, second, "total"]
    assert [int(row["commission_minor"]) for row in table] == [200_000, 123_456, 323_456]

    pdf = client.get(f"{STATEMENTS}/{statement['id']}?format=pdf", headers=auth(key))
    assert pdf.headers["content-type"] == "application/pdf"
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert "Commission statement" in text and "Commission Clinic" in text and OCTOBER in text
    assert first in text and "NGN 20,000.00" in text and "NGN 3,234.56" in text

    # Settling is for admins; a coordinator is refused.
    settle_path = f"{OPS}/commission-statements/{statement['id']}/settle"
    assert client.post(settle_path, headers=op_headers(operator_token)).status_code == 403
    settled = client.post(settle_path, headers=op_headers(admin_token))
    assert settled.status_code == 200, settled.text
    assert settled.json()["status"] == "settled"
    assert statuses(sql, [first, second, late, foreign]) == {
        first: "settled",
        second: "settled",
        late: "pending_settlement",
        foreign: "pending_settlement",
    }
    assert client.post(settle_path, headers=op_headers(admin_token)).status_code == 409
    events = rows(
        sql,
        "SELECT type, data, referral_id FROM events WHERE partner_id = :p AND type = :t",
        p=partner["partner_id"],
        t="commission.settled",
    )
    assert len(events) == 1
    data = event_data(TEST_RING, events[0].data)
    assert data == {
        "statement_id": statement["id"],
        "period": OCTOBER,
        "currency": "NGN",
        "total_minor": 323_456,
        "line_count": 2,
        "settled_at": settled.json()["settled_at"],
    }
    assert events[0].referral_id is None


def test_a_partner_without_commission_has_no_statements(
    client: httpx.Client, make_partner: Any, operator_token: str
) -> None:
    partner = make_partner(name="Plain Clinic", show_payments=True)
    key = partner["keys"]["sk_live"]
    assert client.get(STATEMENTS, headers=auth(key)).status_code == 404
    # Commission, but an agreement that does not show amounts: no statements either.
    hidden = make_partner(name="Hidden Clinic", commission_bps=1000)
    assert client.get(STATEMENTS, headers=auth(hidden["keys"]["sk_live"])).status_code == 404
    made = generate(client, operator_token, partner["partner_id"], OCTOBER)
    assert made.status_code == 409 and made.json()["error"]["code"] == "no_commission"


def test_concurrent_generates_make_one_statement_and_concurrent_settles_settle_once(
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    admin_token: str,
) -> None:
    partner = make_partner(name="Race Clinic", commission_fixed_minor=150_000)
    paid_in_october(client, sql, operator_token, partner["keys"]["sk_live"], 2_000_000, 9)
    base_url = str(client.base_url)

    def race(call: Any) -> list[httpx.Response]:
        results: list[httpx.Response] = []
        barrier = threading.Barrier(4)

        def run() -> None:
            with httpx.Client(base_url=base_url, timeout=30) as http:
                barrier.wait()
                results.append(call(http))

        threads = [threading.Thread(target=run) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    made = race(lambda http: generate(http, operator_token, partner["partner_id"], OCTOBER))
    assert sorted(response.status_code for response in made) == [200, 200, 200, 201]
    assert len({response.json()["id"] for response in made}) == 1
    assert made[0].json()["commission_total_minor"] == 150_000
    statement_id = made[0].json()["id"]
    settles = race(
        lambda http: http.post(
            f"{OPS}/commission-statements/{statement_id}/settle", headers=op_headers(admin_token)
        )
    )
    assert sorted(response.status_code for response in settles) == [200, 409, 409, 409]
    settled_events = rows(
        sql,
        "SELECT data FROM events WHERE partner_id = :p AND type = 'commission.settled'",
        p=partner["partner_id"],
    )
    assert len(settled_events) == 1
    data = event_data(TEST_RING, settled_events[0].data)
    # This agreement does not show amounts: the event says a statement was settled, no sum.
    assert data["total_minor"] is None and data["line_count"] == 1


def test_the_console_makes_lists_and_settles_statements(
    server: Any,
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    admin_token: str,
    database_url: str,
) -> None:
    name = f"Console Clinic {uuid.uuid4().hex[:6]}"
    partner = make_partner(name=name, commission_bps=1000)
    referral_id = paid_in_october(
        client, sql, operator_token, partner["keys"]["sk_live"], 2_000_000, 14
    )
    coordinator = create_operator(database_url)["token"]
    with (
        httpx.Client(base_url=server.base_url, timeout=30) as admin,
        httpx.Client(base_url=server.base_url, timeout=30) as plain,
    ):
        assert sign_in(admin, admin_token).status_code == 303
        assert sign_in(plain, coordinator).status_code == 303
        listing = admin.get("/console/commission")
        assert name in listing.text  # offered in the partner list
        made = admin.post(
            "/console/commission",
            data={
                "csrf_token": csrf(listing),
                "partner_id": partner["partner_id"],
                "period": OCTOBER,
                "environment": "live",
            },
            follow_redirects=True,
        )
        assert made.status_code == 200
        assert "Commission statement made" in made.text
        statement_id = rows(
            sql,
            "SELECT id FROM commission_statements WHERE partner_id = :p",
            p=partner["partner_id"],
        )[0].id
        assert "NGN 20,000.00" in made.text and "NGN 2,000.00" in made.text
        refused = plain.post(
            f"/console/commission/{statement_id}/settle",
            data={"csrf_token": csrf(plain.get("/console/commission"))},
        )
        assert refused.status_code == 403
        settled = admin.post(
            f"/console/commission/{statement_id}/settle",
            data={"csrf_token": csrf(made)},
            follow_redirects=True,
        )
        assert settled.status_code == 200 and "Statement settled" in settled.text
        assert statuses(sql, [referral_id]) == {referral_id: "settled"}
        bad = admin.post(
            "/console/commission",
            data={"csrf_token": csrf(settled), "partner_id": partner["partner_id"], "period": "x"},
        )
        assert bad.status_code == 422


def test_an_admin_makes_and_settles_a_statement_in_the_browser(
    server: Any,
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    admin_token: str,
) -> None:
    name = f"Browser Clinic {uuid.uuid4().hex[:6]}"
    partner = make_partner(name=name, commission_fixed_minor=250_000, show_payments=True)
    key = partner["keys"]["sk_live"]
    paid_in_october(client, sql, operator_token, key, 2_000_000, 2)
    paid_in_october(client, sql, operator_token, key, 3_500_050, 30)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{server.base_url}/console/login")
        page.get_by_label("Operator token").fill(admin_token)
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Referrals")).to_be_visible()
        page.get_by_role("link", name="Commission").click()
        expect(page.get_by_role("heading", name="Commission statements")).to_be_visible()
        page.get_by_label("Partner").select_option(label=name)
        page.get_by_label("Month (YYYY-MM)").fill(OCTOBER)
        page.get_by_role("button", name="Make statement").click()
        expect(page.get_by_role("status")).to_contain_text("Commission statement made")
        row = page.get_by_role("row").filter(has_text=name)
        expect(row).to_contain_text("NGN 55,000.50")  # paid
        expect(row).to_contain_text("NGN 5,000.00")  # commission: 2 x NGN 2,500.00
        expect(row).to_contain_text("pending settlement")
        page.screenshot(path=str(SCREENSHOTS / "commission-statements.png"), full_page=True)
        row.get_by_role("button", name=f"Settle {name} {OCTOBER}").click()
        expect(page.get_by_role("status")).to_contain_text("Statement settled")
        expect(page.get_by_role("row").filter(has_text=name)).to_contain_text("settled")
        browser.close()
    settled = client.get(STATEMENTS, headers=auth(key)).json()["data"]
    assert [(item["status"], item["commission_total_minor"]) for item in settled] == [
        ("settled", 500_000)
    ]
