"""Booking into a free slot from the referral page in a real browser (Playwright +
/usr/bin/chromium), on the test database (sqlite or postgres), with axe-core on every state
shown: a coordinator picks a time and a care mode and books, moves the visit with a reason,
meets a slot someone else took meanwhile (409 with the reason), cancels with a reason, and
does the same at 390 px. Screenshots: docs/img/workbench-7-slots-desktop.png and
docs/img/workbench-8-slots-390.png.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import text

from tests.a11y.axe import assert_accessible
from tests.console.operators import make_operator, sign_in
from tests.console.slot_support import assigned_referral
from tests.support.care import operator_token, ops
from tests.support.partners import onboard

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "img"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def world(server, database_url, sql) -> dict[str, Any]:
    operator = make_operator(database_url)
    op_headers = ops(operator_token(database_url))
    partner = onboard(database_url, name=f"Slot Clinic {secrets.token_hex(2)}")
    with (
        httpx.Client(base_url=server.base_url, timeout=30) as api,
        httpx.Client(base_url=server.base_url, timeout=30) as console,
    ):
        assert sign_in(console, operator["token"]).status_code == 303
        main = assigned_referral(console, api, sql, op_headers, partner)
        other = assigned_referral(console, api, sql, op_headers, partner)
        phone = assigned_referral(console, api, sql, op_headers, partner)
    return {
        "token": operator["token"],
        "op_headers": op_headers,
        "main": main,
        "other": other,
        "phone": phone,
        "base_url": server.base_url,
    }


@pytest.fixture(scope="module")
def browser(world: dict[str, Any]) -> Iterator[Browser]:
    # After ``world``: its set-up runs asyncio, which cannot run inside Playwright's loop.
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _page(browser: Browser, world: dict[str, Any], width: int) -> Page:
    context = browser.new_context(
        viewport={"width": width, "height": 900}, bypass_csp=True, base_url=world["base_url"]
    )
    page = context.new_page()
    page.goto("/console/login")
    page.get_by_label("Operator token").fill(world["token"])
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Referrals")).to_be_visible()
    return page


def _statuses(sql, referral_id: str) -> list[str]:
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT status FROM appointments WHERE referral_id = :r ORDER BY created_at, id"),
            {"r": referral_id},
        ).scalars()
        return list(rows)


def _free(page: Page) -> Any:
    return page.locator("#slot-booking ul.slots details")


def test_a_coordinator_books_moves_and_cancels_a_visit(browser, world, sql) -> None:
    main = world["main"]
    page = _page(browser, world, 1280)
    page.goto(main["page"])
    expect(page.get_by_role("heading", name="Visits and free slots")).to_be_visible()
    expect(page.get_by_role("heading", name=f"Free slots of {main['physio_name']}")).to_be_visible()
    assert_accessible(page)

    slot = _free(page).nth(2)
    slot.locator("summary").click()
    slot.get_by_label("Care mode").select_option(label="video session")
    slot.get_by_label("Note (optional)").fill("Prefers a video call first")
    page.locator("#slot-booking").screenshot(path=str(IMAGES / "workbench-7-slots-desktop.png"))
    slot.get_by_role("button", name="Book").click()
    expect(
        page.get_by_text("Visit booked: the patient and the physiotherapist are told.")
    ).to_be_visible()
    assert _statuses(sql, main["referral_id"]) == ["booked"]
    expect(page.locator(".slot-appointments")).to_contain_text("video session")
    assert_accessible(page)

    page.get_by_text("Reschedule", exact=True).click()
    move = page.locator("form[action$='/reschedule']")
    move.get_by_role("combobox").select_option(index=4)
    move.get_by_label("Reason (required)").fill("The physiotherapist asked to move it")
    move.get_by_role("button", name="Move the visit").click()
    expect(page.get_by_text("Visit moved")).to_be_visible()
    assert _statuses(sql, main["referral_id"]) == ["rescheduled", "booked"]
    assert_accessible(page)

    page.get_by_text("Cancel visit", exact=True).click()
    cancel = page.locator("form[action$='/cancel']").first
    cancel.get_by_label("Reason (required)").fill("Patient travelling this week")
    cancel.get_by_role("button", name="Cancel the visit").click()
    expect(page.get_by_text("Visit cancelled: the slot is free again.")).to_be_visible()
    assert _statuses(sql, main["referral_id"]) == ["rescheduled", "cancelled"]
    expect(page.locator(".slot-appointments")).to_contain_text("Reason: Patient travelling")

    page.get_by_role("link", name="Show next week").click()
    expect(page.get_by_role("link", name="Show previous week")).to_be_visible()
    assert _free(page).count() > 0
    assert_accessible(page)


def test_a_slot_taken_meanwhile_shows_the_409(browser, world, sql) -> None:
    other, rival = world["other"], world["phone"]
    page = _page(browser, world, 1280)
    page.goto(other["page"])
    slot = _free(page).nth(1)
    slot.locator("summary").click()
    starts_at = slot.locator("input[name=starts_at]").get_attribute("value")
    # Another coordinator gives that slot to another patient while this page is open.
    with httpx.Client(base_url=world["base_url"], timeout=30) as api:
        taken = api.post(
            f"/api/v1/ops/referrals/{rival['referral_id']}/appointments",
            json={
                "starts_at": starts_at,
                "care_mode": "face_to_face",
                "physio_id": other["physio_id"],
            },
            headers=world["op_headers"],
        )
    assert taken.status_code == 201, taken.text
    slot.get_by_role("button", name="Book").click()
    expect(page.get_by_role("alert")).to_contain_text("The slot is already booked.")
    assert _statuses(sql, other["referral_id"]) == []
    assert_accessible(page)


def test_booking_at_390_px(browser, world, sql) -> None:
    other = world["other"]
    page = _page(browser, world, 390)
    page.goto(other["page"])
    slot = _free(page).first
    slot.locator("summary").click()
    slot.get_by_role("button", name="Book").click()
    expect(page.get_by_text("Visit booked")).to_be_visible()
    assert _statuses(sql, other["referral_id"]) == ["booked"]
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390
    page.locator("#slot-booking").screenshot(path=str(IMAGES / "workbench-8-slots-390.png"))
    assert_accessible(page)
