"""The tracking page in a real browser (Playwright + Debian chromium) at 360 px."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from tests.conftest import auth
from tests.shapeg.bodies import g_referral

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_tracking_page_on_a_phone(client, partner):
    created = client.post(
        "/api/v1/partners/referrals", json=g_referral(), headers=auth(partner["keys"]["sk_test"])
    ).json()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_context(
            viewport={"width": 360, "height": 740}, is_mobile=True
        ).new_page()
        response = page.goto(created["tracking_url"])
        assert response is not None and response.status == 200
        expect(page.get_by_role("heading", name="Hello Chidi")).to_be_visible()
        progress = page.get_by_role("list", name="Referral progress")
        expect(progress.get_by_role("listitem")).to_have_count(5)
        expect(page.locator('[aria-current="step"]')).to_contain_text("Referral received")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        assert page.evaluate("document.documentElement.lang") == "en"
        page.screenshot(path=str(SCREENSHOTS / "tracking-page.png"), full_page=True)
        missing = page.goto(f"{created['tracking_url'].rsplit('/', 1)[0]}/RR222222222222")
        assert missing is not None and missing.status == 404
        expect(page.get_by_role("heading", name="Tracking code not recognised")).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / "tracking-page-unknown.png"))
        browser.close()
