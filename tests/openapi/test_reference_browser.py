"""/docs in a real browser (Playwright + Debian chromium): Swagger UI renders both documents
from assets served by rehabref itself, "Try it out" with a sandbox key gets a 2xx from the live
server, and the page loads nothing from anywhere else and breaks none of its own CSP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from rehabref.openapi.reference_page import CONTENT_SECURITY_POLICY

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Collects every CSP violation the page reports, before any of its scripts run.
WATCH_CSP = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.console_errors: list[str] = []


@pytest.fixture
def browser_page(server) -> Iterator[tuple[Page, Recorder]]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    recorder = Recorder()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.add_init_script(WATCH_CSP)
        page.on(
            "request",
            lambda request: recorder.requests.append(
                {"url": request.url, "headers": request.headers}
            ),
        )
        page.on(
            "console",
            lambda message: (
                recorder.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        yield page, recorder
        browser.close()


def test_docs_page_has_a_strict_content_security_policy(client):
    page = client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert policy == CONTENT_SECURITY_POLICY
    assert "'unsafe-eval'" not in policy and "http" not in policy and "*" not in policy
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    assert "<script>" not in page.text  # no inline script; the policy would block it
    assert client.get("/docs/assets/swagger-ui-bundle.js").status_code == 200
    for name in ("../../pyproject.toml", "index.html", "swagger-editor-bundle.js"):
        assert client.get(f"/docs/assets/{name}").status_code == 404


def test_reference_renders_both_apis_and_try_it_out_reaches_the_live_server(
    server, partner, browser_page
):
    page, recorder = browser_page
    key = partner["keys"]["sk_test"]
    httpx.post(
        f"{server.base_url}/api/v1/partners/referrals",
        json={
            "external_ref": "DOCS-TRY-1",
            "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
            "reason": "Lower back pain",
            "care_mode": "either",
            "preferred_contact": "messaging",
            "route": "contact",
            "consent": {
                "accepted": True,
                "accepted_at": "2026-01-15T09:30:00Z",
                "version": "2026-01",
                "source": "clinic_form",
            },
        },
        headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "docs-try-1"},
    ).raise_for_status()

    page.goto(f"{server.base_url}/docs")
    # Navigation by tag: every tag of the partner document is a section.
    for tag in ("referrals", "referral-links", "webhooks", "sandbox", "commission"):
        expect(page.locator(f"#operations-tag-{tag}")).to_be_visible(timeout=20_000)
    expect(page.locator("#operations-tag-ops")).to_have_count(0)
    expect(page.get_by_text("Webhooks", exact=True).first).to_be_visible()
    # Every schema readable: the Schemas section lists the components, expandable.
    schemas = page.locator("section.models")
    expect(schemas).to_be_visible()
    expect(schemas.get_by_text("ReferralRecordV1", exact=True)).to_be_visible()
    expect(schemas.get_by_text("PaymentRefundedEvent", exact=True)).to_be_visible()

    # Authorize with the sandbox key, then "Try it out" on GET /api/v1/partners/referrals.
    page.locator(".scheme-container button.authorize").click()
    modal = page.locator(".modal-ux")
    modal.locator("input").first.fill(key)
    modal.locator("button.modal-btn.authorize").click()
    expect(modal.locator("button", has_text="Logout")).to_be_visible()
    modal.locator("button.btn-done").click()
    operation = page.locator("#operations-referrals-listReferrals")
    operation.locator(".opblock-summary").click()
    operation.locator("button.try-out__btn").click()
    operation.locator("button.execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status").first
    expect(status).to_have_text("200", timeout=20_000)
    expect(operation.locator(".live-responses-table")).to_contain_text("DOCS-TRY-1")
    page.screenshot(path=str(SCREENSHOTS / "api-reference.png"), full_page=False)

    # The operations API is the other document, chosen in the top bar.
    page.locator(".topbar select").select_option(label="Operations API (coordinators)")
    expect(page.locator("#operations-tag-ops")).to_be_visible(timeout=20_000)
    expect(page.locator("#operations-tag-referrals")).to_have_count(0)

    tried = [r for r in recorder.requests if "/api/v1/partners/referrals" in r["url"]]
    assert tried and tried[-1]["headers"].get("authorization") == f"Bearer {key}"
    outside = [
        r["url"]
        for r in recorder.requests
        if not r["url"].startswith(server.base_url + "/") and not r["url"].startswith("data:")
    ]
    assert not outside, outside
    assert len(recorder.requests) >= 6
    assert page.evaluate("window.__violations") == []
    assert recorder.console_errors == []
