"""HMO claims and employer invoices end to end on a real server: a claim line per completed
session (in the completing transaction, its reference in ``session.completed``), the
allowance refusal before scheduling, the monthly draft, the documents (PDF, CSV), the state
table, remittance imports and the console page."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright
from pypdf import PdfReader
from sqlalchemy import text
from sqlalchemy.engine import Engine

from rehabref.billing import payer_invoice_store
from rehabref.billing.payer_invoices import invoice_number
from rehabref.db import Database
from tests.a11y.axe import assert_accessible
from tests.conftest import auth
from tests.console.operators import csrf, sign_in
from tests.console.test_browser_console import CHROMIUM_ARGS
from tests.shapeg.bodies import g_referral
from tests.support.care import events_of, physio_body
from tests.support.operators import OPS, op_headers
from tests.support.server import isolated_environ

INVOICES = f"{OPS}/payer-invoices"
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
RATE = 1_500_000  # PHYSIO_STD_SESSION, kobo
CO_PAY = 250_000


def _next_month_start(now: datetime) -> datetime:
    year, month = (now.year, now.month + 1) if now.month < 12 else (now.year + 1, 1)
    return datetime(year, month, 1, 1, 0, tzinfo=UTC)


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _this_period() -> str:
    return f"{datetime.now(UTC):%Y-%m}"


def draft_this_month(database_url: str) -> list[str]:
    """The monthly job as the worker runs it, on the first hour of next month."""

    async def work() -> list[str]:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await payer_invoice_store.draft_last_month(
                    conn, now=_next_month_start(datetime.now(UTC))
                )
        finally:
            await db.dispose()

    return asyncio.run(work())


def add_member(sql: Engine, *, phone: str, limit: int, used: int) -> str:
    policy = f"PB-{uuid.uuid4().hex[:8].upper()}"
    now = datetime.now(UTC)
    with sql.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO hmo_members (id, hmo_code, policy_number, name, phone, plan_tier,"
                " policy_status, expiry_date, physiotherapy_covered, post_surgical_covered,"
                " pre_auth_required, annual_session_limit, sessions_used, co_pay_kobo,"
                " imported_at, updated_at) VALUES (:id, 'AXA_MANSARD', :policy, 'Amina Bello',"
                " :phone, 'Gold', 'active', :expiry, :yes, :yes, :yes, :limit, :used, :co_pay,"
                " :now, :now)"
            ),
            {
                "id": f"hmm_{uuid.uuid4().hex[:20]}",
                "policy": policy,
                "phone": phone,
                "expiry": date(2099, 12, 31),
                "yes": True,
                "limit": limit,
                "used": used,
                "co_pay": CO_PAY,
                "now": now,
            },
        )
    return policy


def employer_invoice_number(employer: dict[str, Any]) -> str:
    """This month's live invoice number of an employer partner."""
    return invoice_number("employer", employer["partner_id"], "live", _this_period())


def new_phone() -> str:
    return "+234803" + str(uuid.uuid4().int)[:7]


@pytest.fixture
def physio_id(client: httpx.Client, operator_token: str) -> str:
    made = client.post(
        f"{OPS}/physiotherapists",
        json=physio_body(name="Kemi Adeyemi"),
        headers=op_headers(operator_token),
    )
    assert made.status_code == 201, made.text
    return str(made.json()["physio_id"])


def hmo_referral(client: httpx.Client, key: str, policy: str, phone: str) -> str:
    checked = client.post(
        "/api/v1/partners/eligibility",
        json={"policy_number": policy, "member_phone": phone, "hmo_code": "AXA_MANSARD"},
        headers=auth(key),
    )
    assert checked.status_code == 200 and checked.json()["status"] == "eligible", checked.text
    body = g_referral(
        billing_mode="hmo_direct_billing", pre_auth_token=checked.json()["pre_auth_token"]
    )
    body["patient"]["phone"] = phone
    created = client.post("/api/v1/partners/referrals", json=body, headers=auth(key))
    assert created.status_code == 201, created.text
    return str(created.json()["referral_id"])


def employer_referral(client: httpx.Client, key: str) -> str:
    body = g_referral(billing_mode="corporate_sponsored")
    created = client.post("/api/v1/partners/referrals", json=body, headers=auth(key))
    assert created.status_code == 201, created.text
    return str(created.json()["referral_id"])


def schedule(client: httpx.Client, token: str, referral_id: str, physio_id: str) -> httpx.Response:
    return client.post(
        f"{OPS}/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": "2026-11-23T09:00:00Z",
            "modality": "remote",
            "session_type": "treatment",
            "physio_id": physio_id,
        },
        headers=op_headers(token),
    )


def run_session(
    client: httpx.Client, token: str, session_id: str, *, start: bool = True
) -> httpx.Response:
    if start:
        started = client.post(
            f"{OPS}/sessions/{session_id}/start",
            json={"check_in_at": "2026-11-21T09:02:00Z"},
            headers=op_headers(token),
        )
        assert started.status_code == 200, started.text
    return client.post(
        f"{OPS}/sessions/{session_id}/complete",
        json={
            "pain_before": 6,
            "pain_after": 3,
            "notes_summary": "Knee mobilisation.",
            "check_out_at": "2026-11-21T09:50:00Z",
        },
        headers=op_headers(token),
    )


def line_of(sql: Engine, session_id: str) -> Any:
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT * FROM claim_lines WHERE session_id = :s"), {"s": session_id}
        ).first()


def test_concurrent_schedulings_for_one_member_never_pass_the_allowance(
    client: httpx.Client, sql: Engine, make_partner: Any, operator_token: str, physio_id: str
) -> None:
    """Three referrals of one member, two covered sessions left, six schedulings at once:
    exactly two pass, whichever referrals they come through."""
    partner = make_partner(name="Race Clinic", contract="g")
    key = partner["keys"]["sk_live"]
    phone = new_phone()
    policy = add_member(sql, phone=phone, limit=3, used=1)
    referrals = [hmo_referral(client, key, policy, phone) for _ in range(3)]

    def attempt(referral_id: str) -> int:
        with httpx.Client(base_url=str(client.base_url), timeout=30) as own:
            return schedule(own, operator_token, referral_id, physio_id).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = sorted(pool.map(attempt, referrals * 2))
    assert statuses == [201, 201, 409, 409, 409, 409], statuses
    with sql.connect() as conn:
        scheduled = conn.execute(
            text(
                "SELECT count(*) FROM care_sessions WHERE status = 'scheduled' AND referral_id IN "
                "(SELECT referral_id FROM referral_coverage WHERE policy_number = :p)"
            ),
            {"p": policy},
        ).scalar_one()
    assert scheduled == 2


def test_hmo_sessions_become_claim_lines_within_the_allowance(
    client: httpx.Client, sql: Engine, make_partner: Any, operator_token: str, physio_id: str
) -> None:
    partner = make_partner(name="Claims Clinic", contract="g")
    key = partner["keys"]["sk_live"]
    phone = new_phone()
    policy = add_member(sql, phone=phone, limit=4, used=2)  # two sessions left
    referral_id = hmo_referral(client, key, policy, phone)

    first = schedule(client, operator_token, referral_id, physio_id)
    second = schedule(client, operator_token, referral_id, physio_id)
    assert first.status_code == 201 and second.status_code == 201
    # A third would go beyond the allowance: refused before anything is written.
    refused = schedule(client, operator_token, referral_id, physio_id)
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "allowance_exceeded"
    assert "2 covered session(s) left and 2 already scheduled" in error["fields"]["scheduled_at"]
    assert error["request_id"]
    with sql.connect() as conn:
        count = conn.execute(
            text("SELECT count(*) FROM care_sessions WHERE referral_id = :r"), {"r": referral_id}
        ).scalar_one()
    assert count == 2

    session_id = first.json()["session_id"]
    done = run_session(client, operator_token, session_id)
    assert done.status_code == 200, done.text
    reference = done.json()["invoice_reference"]
    number = f"HMO-{_this_period().replace('-', '')}-AXA_MANSARD"
    assert re.fullmatch(re.escape(number) + r"-\d{4}", reference), reference
    (event,) = events_of(sql, referral_id, "session.completed")
    assert event["invoice_reference"] == reference
    line = line_of(sql, session_id)
    assert line is not None
    assert line.invoice_reference == reference and line.invoice_number == number
    assert (line.payer_kind, line.payer_id, line.environment) == ("hmo", "AXA_MANSARD", "live")
    assert line.member_id == policy and line.policy == "Gold"
    assert line.pre_auth_token.startswith("pa_")
    assert line.procedure_code == "PHYSIO_STD_SESSION"
    assert (line.amount_minor, line.co_pay_minor) == (RATE, CO_PAY)
    assert str(line.session_date) == "2026-11-21"
    # The member used one more: one left, one scheduled -> still no room for a third ...
    assert schedule(client, operator_token, referral_id, physio_id).status_code == 409
    # ... until the scheduled one is cancelled.
    cancelled = client.post(
        f"{OPS}/sessions/{second.json()['session_id']}/cancel",
        json={"reason": "patient travelling"},
        headers=op_headers(operator_token),
    )
    assert cancelled.status_code == 200, cancelled.text
    assert schedule(client, operator_token, referral_id, physio_id).status_code == 201


def test_self_pay_keeps_the_partner_numbering_and_writes_no_claim_line(
    client: httpx.Client, sql: Engine, make_partner: Any, operator_token: str, physio_id: str
) -> None:
    partner = make_partner(name="Self Pay Clinic", contract="g")
    body = g_referral()
    created = client.post(
        "/api/v1/partners/referrals", json=body, headers=auth(partner["keys"]["sk_live"])
    )
    referral_id = created.json()["referral_id"]
    session_id = schedule(client, operator_token, referral_id, physio_id).json()["session_id"]
    done = run_session(client, operator_token, session_id)
    assert done.status_code == 200, done.text
    assert done.json()["invoice_reference"].startswith("INV-")
    assert line_of(sql, session_id) is None


def test_employer_invoice_drafted_issued_paid_with_documents(
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    physio_id: str,
    database_url: str,
) -> None:
    employer = make_partner(name="Dangote Staff Clinic", contract="g")
    key = employer["keys"]["sk_live"]
    referral_id = employer_referral(client, key)
    sessions = [
        schedule(client, operator_token, referral_id, physio_id).json()["session_id"]
        for _ in range(3)
    ]
    for session_id in sessions:
        client.post(
            f"{OPS}/sessions/{session_id}/start",
            json={"check_in_at": "2026-11-21T09:02:00Z"},
            headers=op_headers(operator_token),
        )
    # Completions at once never share a line number.
    with ThreadPoolExecutor(max_workers=3) as pool:
        answers = list(
            pool.map(lambda s: run_session(client, operator_token, s, start=False), sessions)
        )
    assert [answer.status_code for answer in answers] == [200, 200, 200], [
        answer.text for answer in answers
    ]
    lines = [line_of(sql, session_id) for session_id in sessions]
    assert sorted(line.line_number for line in lines) == [1, 2, 3]
    number = employer_invoice_number(employer)
    assert {line.invoice_number for line in lines} == {number}
    assert {answer.json()["invoice_reference"] for answer in answers} == {
        f"{number}-{n:04d}" for n in (1, 2, 3)
    }

    # The month has not ended: no invoice yet, by hand or by the job.
    early = client.post(
        INVOICES,
        json={
            "payer_kind": "employer",
            "payer_id": employer["partner_id"],
            "period": _this_period(),
        },
        headers=op_headers(operator_token),
    )
    assert early.status_code == 409 and early.json()["error"]["code"] == "period_not_over"
    nothing = client.post(
        INVOICES,
        json={"payer_kind": "employer", "payer_id": employer["partner_id"], "period": "2026-01"},
        headers=op_headers(operator_token),
    )
    assert nothing.status_code == 409 and nothing.json()["error"]["code"] == "no_claim_lines"

    made = draft_this_month(database_url)
    assert made, "the monthly job drafted nothing"
    assert draft_this_month(database_url) == []  # idempotent
    again = client.post(
        INVOICES,
        json={
            "payer_kind": "employer",
            "payer_id": employer["partner_id"],
            "period": _this_period(),
        },
        headers=op_headers(operator_token),
    )
    assert again.status_code == 200, again.text
    invoice = again.json()
    assert invoice["number"] == number and invoice["status"] == "draft"
    assert invoice["payer_name"] == "Dangote Staff Clinic"
    assert invoice["line_count"] == 3
    assert invoice["amount_total_minor"] == 3 * RATE
    assert invoice["co_pay_total_minor"] == 0
    assert invoice["payable_total_minor"] == 3 * RATE
    invoice_id = invoice["id"]

    detail = client.get(f"{INVOICES}/{invoice_id}", headers=op_headers(operator_token)).json()
    assert [line["line_number"] for line in detail["lines"]] == [1, 2, 3]
    assert {line["session_id"] for line in detail["lines"]} == set(sessions)

    exported = client.get(f"{INVOICES}/{invoice_id}?format=csv", headers=op_headers(operator_token))
    assert exported.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(exported.text)))
    assert [row["line_number"] for row in table] == ["1", "2", "3", "total"]
    assert sum(int(row["payable_minor"]) for row in table[:-1]) == int(table[-1]["payable_minor"])
    assert table[-1]["amount_minor"] == str(3 * RATE)

    pdf = client.get(f"{INVOICES}/{invoice_id}?format=pdf", headers=op_headers(operator_token))
    assert pdf.headers["content-type"] == "application/pdf"
    words = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert f"Invoice {number}" in words
    assert "Dangote Staff Clinic" in words
    assert "NGN 15,000.00" in words and "NGN 45,000.00" in words
    assert "Chidi" not in words and "Okafor" not in words  # no patient data

    # The state table: draft -> issued -> paid, nothing else.
    def move(to: str, **extra: Any) -> httpx.Response:
        return client.post(
            f"{INVOICES}/{invoice_id}/transitions",
            json={"to": to, **extra},
            headers=op_headers(operator_token),
        )

    skipped = move("paid")
    assert skipped.status_code == 409 and skipped.json()["error"]["code"] == "invalid_transition"
    assert move("draft").status_code == 422
    issued = move("issued")
    assert issued.status_code == 200 and issued.json()["status"] == "issued"
    assert move("issued").status_code == 409

    # A remittance file with bad rows: every row named, nothing applied.
    bad = (
        "invoice_number,amount_paid_minor,paid_on,remittance_reference\r\n"
        f"{number},{3 * RATE - 1},2026-11-20,DG-RMT-1\r\n"
        "EMP-209901-NOSUCH,100,2026-11-20,DG-RMT-2\r\n"
        f"{number},12.5,2026-11-20,DG-RMT-3\r\n"
        f"{number},{3 * RATE},2099-01-01,DG-RMT-4\r\n"
    )
    rejected = client.post(
        f"{INVOICES}/remittances",
        content=bad.encode(),
        headers={**op_headers(operator_token), "Content-Type": "text/csv"},
    )
    assert rejected.status_code == 422, rejected.text
    fields = rejected.json()["error"]["fields"]
    assert set(fields) == {"row 4", "row 5"}  # parse errors first: whole file refused
    assert "whole number" in fields["row 4"] and "future" in fields["row 5"]
    mismatched = (
        "invoice_number,amount_paid_minor,paid_on,remittance_reference\r\n"
        f"{number},{3 * RATE - 1},{_today()},DG-RMT-1\r\n"
        f"EMP-209901-NOSUCH,100,{_today()},DG-RMT-2\r\n"
    )
    rejected = client.post(
        f"{INVOICES}/remittances",
        content=mismatched.encode(),
        headers={**op_headers(operator_token), "Content-Type": "text/csv"},
    )
    assert rejected.status_code == 422
    fields = rejected.json()["error"]["fields"]
    assert "payable total" in fields["row 2"] and "no invoice" in fields["row 3"]
    current = client.get(f"{INVOICES}/{invoice_id}", headers=op_headers(operator_token)).json()
    assert current["status"] == "issued"
    early = client.post(
        f"{INVOICES}/remittances",
        content=(
            "invoice_number,amount_paid_minor,paid_on,remittance_reference\r\n"
            f"{number},{3 * RATE},2001-01-01,DG-RMT-5\r\n"
        ).encode(),
        headers={**op_headers(operator_token), "Content-Type": "text/csv"},
    )
    assert early.status_code == 422
    assert "before the invoice was issued" in early.json()["error"]["fields"]["row 2"]
    wrong_type = client.post(
        f"{INVOICES}/remittances", content=b"x", headers=op_headers(operator_token)
    )
    assert wrong_type.status_code == 400

    good = (
        "invoice_number,amount_paid_minor,paid_on,remittance_reference\n"
        f"{number},{3 * RATE},{_today()},DG-RMT-0042\n"
    )
    paid = client.post(
        f"{INVOICES}/remittances",
        content=good.encode(),
        headers={**op_headers(operator_token), "Content-Type": "text/csv"},
    )
    assert paid.status_code == 200, paid.text
    (record,) = paid.json()["paid"]
    assert record["status"] == "paid" and record["remittance_reference"] == "DG-RMT-0042"
    assert record["paid_at"].startswith(_today())
    assert move("paid").status_code == 409
    again_paid = client.post(
        f"{INVOICES}/remittances",
        content=good.encode(),
        headers={**op_headers(operator_token), "Content-Type": "text/csv"},
    )
    assert again_paid.status_code == 422 and "is paid" in json.dumps(again_paid.json())

    with sql.connect() as conn:
        actions = [
            row.action
            for row in conn.execute(
                text("SELECT action FROM audit_events WHERE subject = :s"),
                {"s": invoice_id},
            )
        ]
    # Several audit chains on PostgreSQL: compare without order.
    assert sorted(actions) == [
        "payer_invoice.drafted",
        "payer_invoice.issued",
        "payer_invoice.paid",
    ]

    listed = client.get(f"{INVOICES}?status=paid", headers=op_headers(operator_token)).json()
    assert invoice_id in [item["id"] for item in listed["data"]]
    assert (
        client.get(f"{INVOICES}?status=bogus", headers=op_headers(operator_token)).status_code
        == 422
    )
    assert (
        client.get(f"{INVOICES}/pin_missing", headers=op_headers(operator_token)).status_code == 404
    )
    assert client.get(INVOICES, headers=auth(key)).status_code == 401


def test_the_console_lists_issues_and_marks_invoices_paid(
    server: Any,
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    physio_id: str,
    database_url: str,
) -> None:
    employer = make_partner(name="Console Employer", contract="g")
    referral_id = employer_referral(client, employer["keys"]["sk_live"])
    session_id = schedule(client, operator_token, referral_id, physio_id).json()["session_id"]
    assert run_session(client, operator_token, session_id).status_code == 200
    draft_this_month(database_url)
    number = employer_invoice_number(employer)
    with sql.connect() as conn:
        invoice_id = conn.execute(
            text("SELECT id FROM payer_invoices WHERE number = :n"), {"n": number}
        ).scalar_one()
    with httpx.Client(base_url=server.base_url, timeout=30) as browser:
        assert sign_in(browser, operator_token).status_code == 303
        listing = browser.get("/console/invoices")
        assert listing.status_code == 200
        assert number in listing.text and "Console Employer" in listing.text
        assert "NGN 15,000.00" in listing.text
        document = browser.get(f"/console/invoices/{invoice_id}/pdf")
        assert document.headers["content-type"] == "application/pdf"
        assert number in "".join(
            page.extract_text() for page in PdfReader(io.BytesIO(document.content)).pages
        )
        exported = browser.get(f"/console/invoices/{invoice_id}/csv")
        assert exported.text.splitlines()[-1].startswith(f"{number},")
        assert browser.get(f"/console/invoices/{invoice_id}/xls").status_code == 404
        early = browser.post(
            f"/console/invoices/{invoice_id}/paid", data={"csrf_token": csrf(listing)}
        )
        assert early.status_code == 409 and "cannot move from draft to paid" in early.text
        issued = browser.post(
            f"/console/invoices/{invoice_id}/issue",
            data={"csrf_token": csrf(listing)},
            follow_redirects=True,
        )
        assert issued.status_code == 200 and "Invoice issued." in issued.text
        paid = browser.post(
            f"/console/invoices/{invoice_id}/paid",
            data={"csrf_token": csrf(issued), "remittance_reference": "CE-RMT-7"},
            follow_redirects=True,
        )
        assert paid.status_code == 200 and "Invoice recorded as paid." in paid.text
        assert "CE-RMT-7" in paid.text
        forged = browser.post(f"/console/invoices/{invoice_id}/issue", data={"csrf_token": "x"})
        assert forged.status_code in (400, 403)
    with sql.connect() as conn:
        status = conn.execute(
            text("SELECT status FROM payer_invoices WHERE id = :i"), {"i": invoice_id}
        ).scalar_one()
    assert status == "paid"


def test_the_console_scheduling_form_shows_the_allowance_refusal(
    server: Any,
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    physio_id: str,
) -> None:
    partner = make_partner(name="Console Claims Clinic", contract="g")
    phone = new_phone()
    policy = add_member(sql, phone=phone, limit=3, used=2)  # one session left
    referral_id = hmo_referral(client, partner["keys"]["sk_live"], policy, phone)
    assert schedule(client, operator_token, referral_id, physio_id).status_code == 201
    when = (datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%dT09:00")
    with httpx.Client(base_url=server.base_url, timeout=30) as browser:
        assert sign_in(browser, operator_token).status_code == 303
        page = browser.get(f"/console/referrals/{referral_id}")
        refused = browser.post(
            f"/console/referrals/{referral_id}/sessions",
            data={
                "csrf_token": csrf(page),
                "scheduled_at": when,
                "modality": "remote",
                "session_type": "treatment",
                "physio_id": physio_id,
            },
        )
    assert refused.status_code == 409
    assert "beyond the member&#39;s remaining HMO allowance" in refused.text or (
        "beyond the member's remaining HMO allowance" in refused.text
    )
    assert "1 covered session(s) left and 1 already scheduled" in refused.text
    with sql.connect() as conn:
        count = conn.execute(
            text("SELECT count(*) FROM care_sessions WHERE referral_id = :r"), {"r": referral_id}
        ).scalar_one()
    assert count == 1


def _cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", "invoices", "import-remittance", *args],
        env={**isolated_environ(), "REHABREF_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_imports_a_remittance_all_or_nothing(
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    physio_id: str,
    database_url: str,
    tmp_path: Path,
) -> None:
    employer = make_partner(name="CLI Employer", contract="g")
    referral_id = employer_referral(client, employer["keys"]["sk_live"])
    session_id = schedule(client, operator_token, referral_id, physio_id).json()["session_id"]
    assert run_session(client, operator_token, session_id).status_code == 200
    draft_this_month(database_url)
    number = employer_invoice_number(employer)
    with sql.connect() as conn:
        invoice_id = conn.execute(
            text("SELECT id FROM payer_invoices WHERE number = :n"), {"n": number}
        ).scalar_one()
    issued = client.post(
        f"{INVOICES}/{invoice_id}/transitions",
        json={"to": "issued"},
        headers=op_headers(operator_token),
    )
    assert issued.status_code == 200
    header = "invoice_number,amount_paid_minor,paid_on,remittance_reference\n"
    bad = tmp_path / "bad.csv"
    bad.write_text(header + f"{number},{RATE},{_today()},CLI-1\nEMP-209901-NONE,1,{_today()},X\n")
    refused = _cli(database_url, str(bad), "--by", "Ada")
    assert refused.returncode == 1, refused.stderr
    assert "row 3: no invoice with this number" in refused.stderr
    assert _cli(database_url, str(tmp_path / "missing.csv"), "--by", "Ada").returncode == 2
    with sql.connect() as conn:
        status = conn.execute(
            text("SELECT status FROM payer_invoices WHERE id = :i"), {"i": invoice_id}
        ).scalar_one()
    assert status == "issued"  # nothing half-applied
    good = tmp_path / "good.csv"
    good.write_text(header + f"{number},{RATE},{_today()},CLI-1\n")
    applied = _cli(database_url, str(good), "--by", "Ada")
    assert applied.returncode == 0, applied.stderr
    assert f"paid {number} ({RATE} kobo)" in applied.stdout
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT status, paid_by FROM payer_invoices WHERE id = :i"), {"i": invoice_id}
        ).one()
    assert tuple(row) == ("paid", "cli:Ada")


def test_a_coordinator_issues_and_marks_an_invoice_paid_in_the_browser(
    server: Any,
    client: httpx.Client,
    sql: Engine,
    make_partner: Any,
    operator_token: str,
    physio_id: str,
    database_url: str,
) -> None:
    employer = make_partner(name="Browser Employer Ltd", contract="g")
    referral_id = employer_referral(client, employer["keys"]["sk_live"])
    for _ in range(2):
        session_id = schedule(client, operator_token, referral_id, physio_id).json()["session_id"]
        assert run_session(client, operator_token, session_id).status_code == 200
    draft_this_month(database_url)
    number = employer_invoice_number(employer)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        # CSP bypassed only so axe can be injected; the page itself is unchanged.
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{server.base_url}/console/login")
        page.get_by_label("Operator token").fill(operator_token)
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Referrals")).to_be_visible()
        page.get_by_role("link", name="Payer invoices").click()
        expect(page.get_by_role("heading", name="Payer invoices")).to_be_visible()
        row = page.get_by_role("row").filter(has_text=number)
        expect(row).to_contain_text("Browser Employer Ltd")
        expect(row).to_contain_text("NGN 30,000.00")
        expect(row).to_contain_text("draft")
        assert_accessible(page)
        row.get_by_role("button", name=f"Issue {number}").click()
        expect(page.get_by_role("status")).to_contain_text("Invoice issued.")
        row = page.get_by_role("row").filter(has_text=number)
        row.get_by_label(f"Remittance reference for {number}").fill("BE-RMT-11")
        page.screenshot(path=str(DOC_IMAGES / "payer-invoices.png"), full_page=True)
        row.get_by_role("button", name=f"Mark {number} paid").click()
        expect(page.get_by_role("status")).to_contain_text("Invoice recorded as paid.")
        expect(page.get_by_role("row").filter(has_text=number)).to_contain_text("BE-RMT-11")
        browser.close()
