"""The assistant web page in a real browser (Playwright + Debian chromium) on a small phone
(360 x 640): the whole intake by tapping, one question per page, with the checks a cheap
Android phone and a screen reader need (labels, legends, alerts, tap targets, no sideways
scrolling, a light page). Screenshots go to ``artifacts/screenshots/assistant-web-*.png``
like the other browser tests' (``docs/img`` keeps copies)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from tests.conftest import count
from tests.support.api import created

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH = 360
MIN_TAP = 44  # px, the usual minimum touch target
MAX_PAGE_BYTES = 12_000


@contextmanager
def small_phone() -> Iterator[Page]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(
            viewport={"width": WIDTH, "height": 640}, is_mobile=True, has_touch=True
        )
        yield context.new_page()
        browser.close()


def _phone_friendly(page: Page) -> None:
    """No sideways scrolling, no scripts, every control labelled and big enough to tap."""
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert page.locator("script").count() == 0
    for control in page.locator("input[type=radio], input[type=checkbox]").all():
        label = control.locator("xpath=ancestor::label")
        assert label.inner_text().strip()
        box = label.bounding_box()
        assert box is not None and box["height"] >= MIN_TAP
    for button in page.get_by_role("button").all():
        box = button.bounding_box()
        assert box is not None and box["height"] >= MIN_TAP, button.inner_text()
    if page.locator("fieldset").count():
        assert page.locator("fieldset > legend").inner_text().strip()


def _next(page: Page, label: str = "Next") -> None:
    page.get_by_role("button", name=label, exact=True).click()


def test_a_patient_completes_the_intake_by_tapping(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    with small_phone() as page:
        _tap_through(page, referral["assistant_session_url"])
    events = count(
        sql,
        "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'patient.intake_completed'",
        r=referral["referral_id"],
    )
    assert events == 1


def _tap_through(page: Page, link: str) -> None:
    opened = page.goto(link)
    assert opened is not None and opened.status == 200
    assert len(opened.body()) <= MAX_PAGE_BYTES
    assert page.locator("html").get_attribute("lang") == "en"
    expect(page.get_by_text("Hello Amaka")).to_be_visible()
    expect(page.get_by_role("group", name="Which language do you prefer?")).to_be_visible()
    _phone_friendly(page)
    page.screenshot(path=str(SCREENSHOTS / "assistant-web-1.png"), full_page=True)
    page.get_by_label("English").check()
    _next(page)

    # Consent, read in Pidgin and back: the toggle keeps the question.
    expect(page.get_by_role("group", name="Is that OK?")).to_be_visible()
    page.get_by_role("button", name="Read in Pidgin").click()
    expect(page.get_by_role("group", name="You gree?")).to_be_visible()
    assert page.locator("html").get_attribute("lang") == "pcm"
    page.get_by_role("button", name="Read am for English").click()
    page.get_by_label("Yes, continue").check()
    _next(page)

    # Nothing chosen: the hint is announced and tied to the question.
    expect(page.get_by_role("group", name="How would you like to see")).to_be_visible()
    _next(page)
    alert = page.get_by_role("alert")
    expect(alert).to_have_text("Sorry, I did not get that. Please choose one answer.")
    _phone_friendly(page)
    page.get_by_label("At home").check()
    _next(page)

    area = page.get_by_label("Which area of Lagos do you live in?")
    area.fill("Yaba")
    area.press("Enter")  # the keyboard's Go sends the answer

    expect(page.get_by_role("group", name="When are you usually free?")).to_be_visible()
    expect(page.get_by_text("Choose all that fit.")).to_be_visible()
    page.get_by_label("Weekday mornings").check()
    weekends = page.get_by_label("Weekends")
    weekends.focus()
    page.keyboard.press("Space")  # keyboard works on the native controls
    expect(weekends).to_be_checked()
    _phone_friendly(page)
    page.screenshot(path=str(SCREENSHOTS / "assistant-web-2.png"), full_page=True)
    _next(page)

    summary = page.locator("legend")
    expect(summary).to_contain_text("Sessions: At home")
    expect(summary).to_contain_text("Area: Yaba")
    expect(summary).to_contain_text("Free: Weekday mornings, Weekends")
    page.get_by_label("Confirm").check()
    _next(page)
    expect(page.get_by_role("heading", name="Thank you, Amaka")).to_be_visible()
    expect(page.get_by_text("This link no longer works")).to_be_visible()
    assert page.locator("form").count() == 0

    reused = page.goto(link)
    assert reused is not None and reused.status == 410


def test_talk_to_a_person_from_any_question(client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    with small_phone() as page:
        page.goto(referral["assistant_session_url"])
        page.get_by_role("button", name="Talk to a person").click()
        expect(page.get_by_text("A rehabref coordinator will call you soon")).to_be_visible()
    tasks = count(
        sql,
        "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND "
        "purpose = 'assistant_handover'",
        r=referral["referral_id"],
    )
    assert tasks == 1
