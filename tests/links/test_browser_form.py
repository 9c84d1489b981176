"""The hosted referral form in a real browser (Playwright + Debian chromium) at 360 px."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright
from sqlalchemy import text

from tests.conftest import auth
from tests.links.hosted import create_link

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def mobile_page() -> Iterator[Page]:
    """Started inside the test, after any asyncio.run() set-up (Playwright owns the loop)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
        )
        yield context.new_page()
        browser.close()


def _no_horizontal_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_submit_with_errors_then_succeed(client, make_partner, sql):
    partner = make_partner(name="Ikoyi Physio Partners")
    link = create_link(client, partner["keys"]["sk_test"], campaign="browser-campaign")
    with mobile_page() as page:
        _errors_then_success(page, link)
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT campaign, route, care_mode FROM referrals WHERE link_id = :l"),
            {"l": link["link_id"]},
        ).one()
    assert tuple(row) == ("browser-campaign", "contact", "remote")


def _errors_then_success(page: Page, link: dict) -> None:
    response = page.goto(link["url"])
    assert response is not None and response.status == 200
    expect(page.get_by_role("heading", name="Physiotherapy referral")).to_be_visible()
    expect(page.get_by_text("Ikoyi Physio Partners is referring you")).to_be_visible()
    _no_horizontal_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / "link-1-form.png"), full_page=True)

    # Submit with mistakes: errors are summarised, shown at each field, input kept.
    page.get_by_label("First name").fill("Chiamaka")
    page.get_by_label("Mobile phone").fill("0803 123")
    page.get_by_role("button", name="Send referral").click()
    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("problems with your answers")
    expect(summary).to_be_focused()
    expect(page.locator("#phone-error")).to_contain_text("country code")
    expect(page.locator("#city-error")).to_be_visible()
    expect(page.locator("#consent-error")).to_be_visible()
    expect(page.get_by_label("First name")).to_have_value("Chiamaka")
    expect(page.get_by_label("Mobile phone")).to_have_attribute("aria-invalid", "true")
    _no_horizontal_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / "link-2-errors.png"), full_page=True)

    # The summary links move focus to the field.
    page.get_by_role("link", name="Enter your city or town.").click()
    expect(page.get_by_label("City or town")).to_be_focused()
    page.keyboard.type("Lagos")
    page.get_by_label("Mobile phone").fill("+234 803 123 4567")
    page.get_by_label("What do you need help with?").fill("Shoulder pain, cannot lift my arm")
    page.get_by_label("Remote (video call)").check()
    page.get_by_label("SMS text message").check()
    consent = page.get_by_label("I agree to the statement above")
    consent.focus()
    page.keyboard.press("Space")  # keyboard works on the native controls
    expect(consent).to_be_checked()
    page.get_by_role("button", name="Send referral").click()
    expect(page.get_by_role("heading", name="Thank you, Chiamaka")).to_be_visible()
    expect(page.get_by_text("A care coordinator will contact you soon")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "link-3-done.png"), full_page=True)


def test_expired_and_deactivated_pages(client, partner, sql):
    with mobile_page() as page:
        _closed_pages(page, client, partner, sql)


def _closed_pages(page, client, partner, sql):
    key = partner["keys"]["sk_test"]
    expired = create_link(client, key, expires_at="2099-01-01T00:00:00Z")
    with sql.begin() as conn:
        conn.execute(
            text("UPDATE referral_links SET expires_at = :t WHERE id = :i"),
            {"t": "2021-06-01 00:00:00+00:00", "i": expired["link_id"]},
        )
    response = page.goto(expired["url"])
    assert response is not None and response.status == 410
    expect(page.get_by_role("heading", name="This link is no longer active")).to_be_visible()
    assert page.locator("form").count() == 0
    page.screenshot(path=str(SCREENSHOTS / "link-4-expired.png"), full_page=True)

    link = create_link(client, key)
    page.goto(link["url"])
    client.delete(f"/api/v1/partners/referral-links/{link['link_id']}", headers=auth(key))
    page.get_by_label("First name").fill("Bola")
    page.get_by_role("button", name="Send referral").click()
    expect(page.get_by_role("heading", name="This link is no longer active")).to_be_visible()

    response = page.goto(link["url"].rsplit("/", 1)[0] + "/" + "Z" * 30)
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Link not found")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "link-5-unknown.png"), full_page=True)
