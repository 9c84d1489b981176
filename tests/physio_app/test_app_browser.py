"""The physiotherapist app in a real browser (Playwright + Debian chromium) at 360x640:
sign in by link, check in with the device's position granted (verified) and denied
(recorded unverified, with the reason), record and complete the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import text

from rehabref.events.sealing import event_data
from tests.physio_app.support import IKEJA, physio_with_visit, sign_in_link
from tests.support.partners import TEST_RING

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"
PHONE = {"width": 360, "height": 640}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-sync"]


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


def _shot(page: Page, name: str, take: bool) -> None:
    if take:
        page.wait_for_load_state()
        page.screenshot(path=str(SCREENSHOTS / f"physio-{name}.png"), full_page=True)


def _sign_in(page: Page, sql: Any, phone: str, *, shots: bool) -> None:
    page.goto("/app")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("Your registered phone or e-mail").fill(phone)
    page.get_by_label("Send the link by").select_option("sms")
    _shot(page, "1-sign-in", shots)
    page.get_by_role("button", name="Send me a sign-in link").click()
    expect(page.get_by_role("heading", name="Check your messages")).to_be_visible()
    page.goto(sign_in_link(sql, phone))
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Today")).to_be_visible()


def _session(sql: Any, session_id: str) -> Any:
    with sql.connect() as conn:
        return conn.execute(
            text(
                "SELECT status, check_in_lat, check_in_accuracy_m, check_in_refusal, gps_check"
                " FROM care_sessions WHERE id = :s"
            ),
            {"s": session_id},
        ).one()


def _events(sql: Any, referral_id: str, kind: str) -> list[dict[str, Any]]:
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT data FROM events WHERE referral_id = :r AND type = :t"),
            {"r": referral_id, "t": kind},
        ).all()
    return [event_data(TEST_RING, r[0]) for r in rows]


@pytest.mark.parametrize("location", ["granted", "denied"])
def test_a_visit_from_check_in_to_completion(world, browser, server, sql, location):
    shots = location == "granted"
    session_id = world["appointment"]["session_id"]
    context = browser.new_context(base_url=server.base_url, viewport=PHONE, is_mobile=True)
    if location == "granted":
        context.grant_permissions(["geolocation"], origin=server.base_url)
        context.set_geolocation({"latitude": IKEJA[0], "longitude": IKEJA[1], "accuracy": 35})
    page = context.new_page()
    try:
        _sign_in(page, sql, world["physio"]["phone"], shots=shots)
        visit = page.get_by_role("link", name="Ngozi")
        expect(visit).to_contain_text("Ikeja")
        _shot(page, "2-visits", shots)
        visit.click()
        expect(page.get_by_role("heading", name="Ngozi")).to_be_visible()
        _shot(page, "3-visit", shots)
        page.get_by_role("button", name="Check in").click()
        notice = page.get_by_role("status").filter(has_text="Checked in")
        expect(notice).to_be_visible()
        row = _session(sql, session_id)
        if location == "granted":
            assert row.status == "in_progress" and row.check_in_lat == pytest.approx(IKEJA[0])
            assert row.check_in_accuracy_m == pytest.approx(35)
        else:
            expect(notice).to_contain_text("recorded as unverified")
            assert row.check_in_lat is None
            assert row.check_in_refusal == "the device refused location access"
        [attended] = _events(sql, world["referral_id"], "appointment.attended")
        assert attended["appointment"]["status"] == "attended"
        _shot(page, "4-checked-in", shots)

        page.get_by_label("Pain before (0-10)").fill("7")
        page.get_by_label("Pain after (0-10)").fill("3")
        page.get_by_label("Session summary").fill("Knee mobilisation; home exercises given.")
        _shot(page, "5-record", shots)
        page.get_by_role("button", name="Check out and complete").click()
        expect(page.get_by_role("heading", name="Today")).to_be_visible()
        [done] = _events(sql, world["referral_id"], "session.completed")
        assert done["session_id"] == session_id
        assert done["clinical_summary"]["pain_score_before"] == 7
        assert done["duration_seconds"] >= 0
        gps = done["gps_check_in"]
        assert set(gps) == {"verified", "method", "distance_km", "radius_km"}
        if location == "granted":
            assert gps["verified"] is True and gps["method"] == "area_centroid"
        else:
            assert gps == {
                "verified": False,
                "method": "location_refused",
                "distance_km": None,
                "radius_km": None,
            }
    finally:
        context.close()
