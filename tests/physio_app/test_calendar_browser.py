"""The "Calendar feed" page of the physiotherapist app in a real browser (Playwright + Debian
chromium) at 360x640 with axe-core: a new link shown once, the feed it opens, revoke.
Screenshot: docs/img/physio-6-calendar.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import icalendar
import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.a11y.axe import assert_accessible
from tests.physio_app.support import physio_with_visit
from tests.physio_app.test_app_browser import ARGS, PHONE, SCREENSHOTS, _sign_in


@pytest.fixture
def world(op_headers, make_partner, client, sql) -> dict[str, Any]:
    """Set up before the browser starts (its event loop would refuse asyncio.run)."""
    partner = make_partner(contract="g")
    return physio_with_visit(client, op_headers, sql, partner["partner_id"])


@pytest.fixture
def browser(world) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        yield launched
        launched.close()


def test_new_link_then_revoke(world, browser, server, sql):
    context = browser.new_context(
        base_url=server.base_url, viewport=PHONE, is_mobile=True, bypass_csp=True
    )
    page = context.new_page()
    try:
        _sign_in(page, sql, world["physio"]["phone"], shots=False)
        page.get_by_role("link", name="Calendar feed").click()
        expect(page.get_by_role("heading", name="Calendar feed")).to_be_visible()
        expect(page.get_by_text("No calendar feed is on.")).to_be_visible()
        assert_accessible(page)

        page.get_by_role("button", name="New link").click()
        address = page.get_by_label("Calendar feed address")
        url = address.input_value()
        assert "/calendar/" in url and url.endswith(".ics")
        page.screenshot(path=str(SCREENSHOTS / "physio-6-calendar.png"), full_page=True)
        assert_accessible(page)
        feed = httpx.get(server.base_url + url[url.index("/calendar/") :], timeout=30)
        events = icalendar.Calendar.from_ical(feed.content).walk("VEVENT")
        assert [str(e["SUMMARY"]) for e in events] == ["Ngozi (in person)"]

        page.goto("/app/calendar")
        expect(page.get_by_text("Your calendar feed is on.")).to_be_visible()
        assert url not in page.content()  # shown once
        page.get_by_role("button", name="Revoke").click()
        expect(page.get_by_text("No calendar feed is on.")).to_be_visible()
        assert httpx.get(server.base_url + url[url.index("/calendar/") :]).status_code == 404
    finally:
        context.close()
