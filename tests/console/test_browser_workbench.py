"""The coordinator workbench in a real browser (Playwright + /usr/bin/chromium), with axe-core
checking every page it shows (no serious or critical violation), at desktop width and at
390 px, on the test database (sqlite or postgres).

A coordinator works through the queues: runs matching on an unmatched referral, reassigns it
(registry filtered by specialization, with a reason), is refused "Mark attended" before the
booked start, reschedules to the true time and marks it attended with a reason, records a
payment, closes; sends a Paystack
payment link; cancels a referral; sees the no-show, overdue outcome and failed-delivery
queues; filters the physiotherapist table. Screenshots go to docs/img/workbench-*.png.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import text

from tests.a11y.axe import assert_accessible, violations
from tests.conftest import auth
from tests.console.operators import make_operator, sign_in
from tests.console.workbench import add_physio, post, referral, town
from tests.support.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "img"
REPORT = ROOT / "artifacts" / "axe-workbench.json"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser(world: dict[str, Any]) -> Iterator[Browser]:
    # After ``world``: its set-up runs asyncio, which cannot run inside Playwright's loop.
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def axe_log() -> Iterator[list[dict[str, Any]]]:
    log: list[dict[str, Any]] = []
    yield log
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(log, indent=1))


def _page(browser: Browser, base_url: str, token: str, width: int) -> Page:
    context = browser.new_context(
        viewport={"width": width, "height": 900}, bypass_csp=True, base_url=base_url
    )
    page = context.new_page()
    page.goto("/console/login")
    page.get_by_label("Operator token").fill(token)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Referrals")).to_be_visible()
    return page


def _shot(page: Page, name: str) -> None:
    page.wait_for_load_state()
    page.screenshot(path=str(IMAGES / f"workbench-{name}.png"), full_page=True)


def _no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], (page.url, width)  # type: ignore[index]


@pytest.fixture(scope="module")
def world(server, database_url, sql) -> Iterator[dict[str, Any]]:
    """A partner with live referrals in a city of their own, physiotherapists there, and
    one piece of work in each queue."""
    from tests.support.partners import onboard

    operator = make_operator(database_url)
    partner = onboard(database_url, name=f"Workbench Clinic {secrets.token_hex(2)}")
    city = town()
    names = {"ngozi": f"Ngozi {secrets.token_hex(2)}", "tunde": f"Tunde {secrets.token_hex(2)}"}
    with (
        httpx.Client(base_url=server.base_url, timeout=30) as api,
        httpx.Client(base_url=server.base_url, timeout=30) as console,
    ):
        assert sign_in(console, operator["token"]).status_code == 303
        add_physio(console, city, names["ngozi"], modalities=["home_visit", "remote"])
        add_physio(console, city, names["tunde"], specializations="sports")
        refs = {
            name: referral(api, partner, city, external_ref=f"WB-{name}-{secrets.token_hex(3)}")
            for name in ("main", "cancel", "noshow", "outcome")
        }
        # Card payments of a test referral go to the sandbox checkout (no Paystack keys here).
        refs["pay"] = referral(api, partner, city, key="sk_test")
        past = (datetime.now(UTC) - timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M")
        page = f"/console/referrals/{refs['noshow']}"
        assert (
            post(
                console,
                f"{page}/transition",
                page,
                to="booked",
                scheduled_at=past,
                care_mode="remote",
            ).status_code
            == 303
        )
        page = f"/console/referrals/{refs['outcome']}"
        assert post(console, f"{page}/match", page).status_code == 303
        yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
        assert (
            post(
                console,
                f"{page}/sessions",
                page,
                scheduled_at=yesterday,
                modality="home_visit",
                session_type="treatment",
                physio_id="",
            ).status_code
            == 303
        )
        with sql.connect() as conn:
            session_id = conn.execute(
                text("SELECT id FROM care_sessions WHERE referral_id = :r"),
                {"r": refs["outcome"]},
            ).scalar_one()
        assert (
            post(
                console, f"/console/sessions/{session_id}/start", page, lat="6.5", lng="3.4"
            ).status_code
            == 303
        )
        done = post(
            console,
            f"/console/sessions/{session_id}/complete",
            page,
            pain_before="6",
            pain_after="3",
            lat="6.5",
            lng="3.4",
        )
        assert done.status_code == 303, done.text[-500:]
        receiver = Receiver().start()
        try:
            hook = api.post(
                "/api/v1/partners/webhook-endpoints",
                json={"url": receiver.url},
                headers=auth(partner["keys"]["sk_test"]),
            )
            assert hook.status_code == 201, hook.text
            failing = referral(api, partner, city, key="sk_test")
        finally:
            receiver.stop()
    with sql.begin() as conn:
        conn.execute(
            text(
                "UPDATE deliveries SET state = 'failed', last_status_code = 500 WHERE event_id IN "
                "(SELECT id FROM events WHERE referral_id = :r)"
            ),
            {"r": failing},
        )
    yield {"operator": operator, "refs": refs, "names": names, "city": city, "url": server.base_url}


def test_a_coordinator_works_through_the_referral_page(browser, world, axe_log) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    refs, names = world["refs"], world["names"]
    page = _page(browser, world["url"], world["operator"]["token"], 1280)
    assert_accessible(page, axe_log)  # the board

    # Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()

    page.get_by_role("link", name="Work queues").click()
    expect(page.get_by_role("heading", name="Unmatched")).to_be_visible()
    page.get_by_label("City").fill(world["city"])  # this coordinator's city only
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_label("City")).to_have_value(world["city"])
    assert_accessible(page, axe_log)
    expect(page.locator(f'a[href="/console/referrals/{refs["main"]}"]')).to_be_visible()
    page.goto(f"/console/referrals/{refs['main']}")
    expect(page.get_by_text("No physiotherapist yet.")).to_be_visible()
    expect(page.get_by_role("heading", name="Intake answers")).to_be_visible()
    assert_accessible(page, axe_log)

    page.get_by_role("button", name="Run matching").click()
    expect(page.get_by_role("status")).to_contain_text("Matched")
    physio = page.get_by_role("region", name="Physiotherapist", exact=True)
    expect(physio).to_contain_text(names["ngozi"])
    expect(physio).to_contain_text("Automatic match: specialization fits the referral")

    physio.locator("summary", has_text="Reassign").click()
    page.get_by_label("Specialization", exact=True).select_option("sports")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_label("Physiotherapist (1 found)")).to_be_visible()
    page.get_by_label("Why this physiotherapist (required)").fill("Ngozi is on leave this week")
    page.get_by_role("button", name="Reassign").click()
    expect(page.get_by_role("status")).to_contain_text("Physiotherapist assigned")
    expect(physio).to_contain_text(names["tunde"])
    expect(physio).to_contain_text("Assigned by a coordinator: Ngozi is on leave this week")
    expect(page.get_by_role("list", name="Coordinator actions")).to_contain_text(
        "referral.reassigned"
    )

    next_week = (datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M")
    page.get_by_label("Appointment (UTC)").fill(next_week)
    page.get_by_role("button", name="Book appointment").click()
    expect(page.get_by_role("status")).to_have_text("Status updated.")
    page.locator("#reason-attended").fill("Patient came to the clinic early")
    page.get_by_role("button", name="Mark attended").click()
    expect(page.get_by_role("alert")).to_contain_text("it cannot be attended before then")
    _shot(page, "1-referral-desktop")
    assert_accessible(page, axe_log)  # the page with an error
    # The visit really happened an hour ago: reschedule to the true time, then attend.
    an_hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    page.get_by_label("Appointment (UTC)").fill(an_hour_ago)
    page.get_by_role("button", name="Book appointment").click()
    expect(page.get_by_role("status")).to_have_text("Status updated.")
    page.locator("#reason-attended").fill("Seen at the clinic")
    page.get_by_role("button", name="Mark attended").click()
    expect(page.get_by_role("status")).to_have_text("Status updated.")
    expect(page.get_by_text("Seen at the clinic")).to_be_visible()

    page.get_by_label("Amount paid (NGN)").fill("20000")
    page.get_by_role("button", name="Record payment").click()
    expect(page.get_by_role("status")).to_have_text("Status updated.")
    facts = page.get_by_role("region", name="Appointment and payment")
    expect(facts).to_contain_text("NGN 20,000.00")
    page.locator("#reason-closed").fill("Discharged")
    page.get_by_role("button", name="Close", exact=True).click()
    expect(page.get_by_text("no further moves")).to_be_visible()
    assert_accessible(page, axe_log)

    page.goto(f"/console/referrals/{refs['pay']}")
    page.get_by_label("Amount to pay by card (NGN)").fill("12,500")
    page.get_by_role("button", name="Send payment link").click()
    expect(page.get_by_role("status")).to_contain_text("Payment link created")
    expect(page.get_by_role("region", name="Card payments (Paystack)")).to_contain_text(
        "NGN 12,500.00"
    )
    assert_accessible(page, axe_log)

    page.goto(f"/console/referrals/{refs['cancel']}")
    page.locator("#reason-cancelled").fill("Patient moved abroad")
    page.get_by_role("button", name="Cancel referral").click()
    expect(page.get_by_text("This referral is cancelled: no further moves.")).to_be_visible()
    expect(page.get_by_role("button", name="Run matching")).to_have_count(0)
    page.context.close()


def test_the_queues_and_the_physiotherapist_table(browser, world, axe_log) -> None:
    refs, names = world["refs"], world["names"]
    page = _page(browser, world["url"], world["operator"]["token"], 1280)
    expected = {
        "Unmatched": refs["pay"],
        "No-show": refs["noshow"],
        "Outcome measures overdue": refs["outcome"],
    }
    for tab, rid in expected.items():
        page.goto(f"/console/queues?city={quote(world['city'])}")
        page.get_by_role("navigation", name="Queues").get_by_role("link", name=tab).click()
        expect(page.get_by_role("heading", name=tab, exact=True)).to_be_visible()
        expect(page.locator(f'a[href="/console/referrals/{rid}"]')).to_be_visible()
        assert_accessible(page, axe_log)
    page.get_by_role("navigation", name="Queues").get_by_role(
        "link", name="Awaiting booking"
    ).click()
    expect(page.get_by_role("heading", name="Awaiting booking", exact=True)).to_be_visible()
    assert_accessible(page, axe_log)
    page.get_by_role("navigation", name="Queues").get_by_role(
        "link", name="Failed deliveries"
    ).click()
    expect(page.get_by_text("referral.created").first).to_be_visible()
    _shot(page, "3-queues-desktop")
    assert_accessible(page, axe_log)
    page.get_by_role("button", name="Redeliver").first.click()
    expect(page.get_by_role("status")).to_contain_text("Redelivery queued")

    page.get_by_role("link", name="Physiotherapists").click()
    page.get_by_label("City", exact=True).first.fill(world["city"])
    page.get_by_label("Specialization", exact=True).select_option("sports")
    page.get_by_role("button", name="Filter").click()
    table = page.get_by_role("table", name="Registered physiotherapists, filtered")
    expect(table).to_contain_text(names["tunde"])
    expect(table).not_to_contain_text(names["ngozi"])
    _shot(page, "4-physios-desktop")
    assert_accessible(page, axe_log)
    for path in ("/console/tasks", "/console/deliveries", "/console/commission", "/console/audit"):
        page.goto(path)
        assert_accessible(page, axe_log)
    page.context.close()


def test_the_workbench_at_390_px(browser, world, axe_log) -> None:
    refs = world["refs"]
    page = _page(browser, world["url"], world["operator"]["token"], 390)
    # The board shows each referral as a card: status, patient, partner and date at once.
    row = page.locator("table.stack tbody tr").first
    expect(row.locator('td[data-label="Status"]')).to_be_visible()
    expect(row.locator('td[data-label="Partner"]')).to_be_visible()
    box = row.bounding_box()
    assert box is not None and box["width"] <= 390
    _no_sideways_scroll(page)
    _shot(page, "5-board-390")
    assert_accessible(page, axe_log)
    for path, shot in (
        (f"/console/referrals/{refs['main']}", "2-referral-390"),
        (f"/console/queues?queue=no_show&city={quote(world['city'])}", "6-queues-390"),
        ("/console/physios", None),
        ("/console/tasks", None),
        ("/console/deliveries", None),
    ):
        page.goto(path)
        _no_sideways_scroll(page)
        if shot:
            _shot(page, shot)
        assert_accessible(page, axe_log)
    page.context.close()
    page = browser.new_context(viewport={"width": 390, "height": 800}, bypass_csp=True).new_page()
    page.goto(f"{world['url']}/console/login")
    assert_accessible(page, axe_log)
    page.context.close()


def test_axe_reports_what_it_should(browser) -> None:
    """The check can fail: a page with an unlabelled field and an image without text."""
    page = browser.new_context(bypass_csp=True).new_page()
    page.set_content('<html lang="en"><body><main><img src="x.png"><input></main></body></html>')
    found = {v["id"]: v["impact"] for v in violations(page)}
    assert found.get("image-alt") == "critical" and found.get("label") == "critical"
    with pytest.raises(AssertionError, match="image-alt"):
        assert_accessible(page)
    page.context.close()
