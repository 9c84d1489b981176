"""The coordinator console in a real browser (Playwright + Debian chromium).

A dedicated server with the delivery worker and a real webhook receiver: the coordinator
signs in, finds a referral, books it, marks it attended, records the payment, claims the
contact task, adds a physiotherapist, and redelivers a failed webhook delivery, which the
receiver then gets again (same event id).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright
from sqlalchemy import create_engine, text

from rehabref.db import sync_url
from tests.conftest import auth
from tests.console.operators import make_operator
from tests.support.databases import fresh_database
from tests.support.partners import onboard
from tests.support.payloads import v1_referral
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("console")
    with fresh_database(tmp) as url:
        server = ServerProcess(url, tmp / "server.log", REHABREF_WEBHOOK_RETRY_BASE_SECONDS="0.3")
        server.start()  # with the delivery worker
        receiver = Receiver().start()
        engine = create_engine(sync_url(url))
        try:
            yield {"url": url, "server": server, "receiver": receiver, "sql": engine}
        finally:
            engine.dispose()
            receiver.stop()
            server.stop()


def _wait_for(check: Any, what: str, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _shot(page: Page, name: str) -> None:
    page.wait_for_load_state()  # a screenshot taken mid-navigation fails in Chromium
    page.screenshot(path=str(SCREENSHOTS / f"console-{name}.png"), full_page=True)


def test_coordinator_moves_a_referral_and_redelivers(world: dict[str, Any]) -> None:
    server: ServerProcess = world["server"]
    receiver: Receiver = world["receiver"]
    sql = world["sql"]
    partner = onboard(world["url"], name="Yaba Clinic", commission_bps=1000, show_payments=True)
    operator = make_operator(world["url"])
    key = partner["keys"]["sk_test"]
    ref = f"CONSOLE-{uuid.uuid4().hex[:6]}"
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        hook = client.post(
            "/api/v1/partners/webhook-endpoints", json={"url": receiver.url}, headers=auth(key)
        )
        assert hook.status_code == 201, hook.text
        body = v1_referral(external_ref=ref, route="contact", preferred_contact="sms")
        created = client.post(
            "/api/v1/partners/referrals", json=body, headers=auth(key, str(uuid.uuid4()))
        )
        assert created.status_code == 201, created.text
    rid = created.json()["referral_id"]
    first = _wait_for(
        lambda: [r for r in receiver.received if r.json()["type"] == "referral.created"],
        "referral.created to arrive",
    )[0]
    # A delivery that exhausted its 24 h of retries ends "failed"; set that state directly.
    with sql.begin() as conn:
        conn.execute(
            text(
                "UPDATE deliveries SET state = 'failed', last_status_code = 500 WHERE event_id = :e"
            ),
            {"e": first.event_id},
        )

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{server.base_url}/console")
        expect(page.get_by_role("heading", name="Coordinator sign-in")).to_be_visible()
        page.get_by_label("Operator token").fill("op_" + "x" * 43)
        page.keyboard.press("Enter")
        expect(page.get_by_role("alert")).to_contain_text("not valid")
        _shot(page, "1-login-error")
        page.get_by_label("Operator token").fill(operator["token"])
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Referrals")).to_be_visible()
        page.get_by_label("Search").fill(ref)
        page.get_by_role("button", name="Search").click()
        # The search is a page load: wait for its answer before looking at it.
        page.wait_for_url(lambda url: f"q={ref}" in url)
        expect(page.get_by_label("Search")).to_have_value(ref)
        _shot(page, "2-board")
        page.get_by_role("link", name=ref).click()
        expect(page.get_by_role("heading", name="Amaka")).to_be_visible()

        # A visit that started an hour ago: "Mark attended" is refused before the start.
        started = datetime.now(UTC) - timedelta(hours=1)
        page.get_by_label("Appointment (UTC)").fill(started.strftime("%Y-%m-%dT%H:%M"))
        page.get_by_role("button", name="Book appointment").click()
        expect(page.get_by_role("status")).to_have_text("Status updated.")
        page.get_by_label("Reason (required: overrides the check-in)").fill("seen at home")
        page.get_by_role("button", name="Mark attended").click()
        expect(page.get_by_role("status")).to_have_text("Status updated.")
        page.get_by_label("Amount paid").fill("abc")
        page.get_by_role("button", name="Record payment").click()
        expect(page.get_by_role("alert")).to_contain_text("Enter the amount paid")
        page.get_by_label("Amount paid").fill("20000")
        page.get_by_role("button", name="Record payment").click()
        expect(page.get_by_role("status")).to_have_text("Status updated.")
        expect(page.get_by_role("heading", name="Amaka paid")).to_be_visible()
        expect(page.get_by_text("payment.completed")).to_be_visible()
        _shot(page, "3-referral-timeline")

        page.get_by_role("link", name="Contact tasks").click()
        page.get_by_role("button", name="Claim the task for Amaka").first.click()
        expect(page.get_by_role("status")).to_have_text("Task claimed.")
        page.get_by_role("link", name="claimed").click()
        _shot(page, "4-tasks")
        page.get_by_label("Note").fill("Booked by phone")
        page.get_by_role("button", name="Complete").click()
        expect(page.get_by_role("status")).to_have_text("Task completed.")

        page.get_by_role("link", name="Physiotherapists").click()
        page.get_by_label("Name", exact=True).fill("Tobi Adeyemi")
        page.get_by_label("License number").fill(f"MRTB-{uuid.uuid4().hex[:6]}")
        page.get_by_label("Phone (E.164)").fill("0809 123")
        page.get_by_role("region", name="Add a physiotherapist").get_by_label(
            "City", exact=True
        ).fill("Lagos")
        page.get_by_label("Rating (0-5)").fill("4.6")
        page.get_by_label("Weekly capacity").fill("8")
        page.get_by_label("musculoskeletal").check()
        page.get_by_label("home visit").check()
        page.get_by_role("button", name="Add physiotherapist").click()
        expect(page.get_by_role("alert")).to_contain_text("need attention")
        expect(page.locator("#phone-error")).to_contain_text("E.164")
        expect(page.get_by_label("Name", exact=True)).to_have_value("Tobi Adeyemi")
        page.get_by_label("Phone (E.164)").fill("+2348091234567")
        page.get_by_role("button", name="Add physiotherapist").click()
        expect(page.get_by_role("status")).to_have_text("Physiotherapist added.")
        expect(page.get_by_role("cell", name="Tobi Adeyemi")).to_be_visible()
        _shot(page, "5-physios")

        page.get_by_role("link", name="Webhook deliveries").click()
        expect(page.get_by_role("cell", name="referral.created")).to_be_visible()
        _shot(page, "6-failed-deliveries")
        page.get_by_role("button", name=f"Redeliver event {first.event_id}").click()
        expect(page.get_by_role("status")).to_contain_text("Redelivery queued")

        # The same pages on a 360 px phone: nothing wider than the screen but table scrollers.
        phone = browser.new_context(
            viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
        ).new_page()
        phone.goto(f"{server.base_url}/console/login")
        phone.get_by_label("Operator token").fill(operator["token"])
        phone.get_by_role("button", name="Sign in").click()
        for path in (
            "/console",
            f"/console/referrals/{rid}",
            "/console/deliveries?state=succeeded",
        ):
            phone.goto(f"{server.base_url}{path}")
            assert phone.evaluate("document.documentElement.scrollWidth") <= 360, path
        _shot(phone, "7-mobile-deliveries")
        phone.goto(f"{server.base_url}/console/referrals/{rid}")
        _shot(phone, "8-mobile-referral")
        browser.close()

    again = _wait_for(
        lambda: [r for r in receiver.received if r.event_id == first.event_id][1:],
        "the redelivered event",
    )
    assert again[0].signature_valid(partner["keys"]["whsec_test"])
    with sql.connect() as conn:
        row = conn.execute(
            text(
                "SELECT status, payment_amount_minor, commission_minor FROM referrals WHERE id = :r"
            ),
            {"r": rid},
        ).one()
    assert tuple(row) == ("paid", 2_000_000, 200_000)
    types = [r.json()["type"] for r in receiver.received]
    for expected in ("appointment.booked", "appointment.attended", "payment.completed"):
        _wait_for(
            lambda expected=expected: expected in [r.json()["type"] for r in receiver.received],
            expected,
        )
    assert types.count("referral.created") >= 2
