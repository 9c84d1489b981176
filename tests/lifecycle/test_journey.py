"""The whole journey, driven like a patient (Playwright + Debian chromium) and a coordinator
(ops API over HTTP), with the partner's own webhook receiver checking every event in order.

received -> assistant_started (the patient's first answer on the link's page) -> intake
completed -> matched -> booked -> attended -> paid -> closed. A dedicated database and a
server running the delivery worker in-process keep the receiver's view to this journey alone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.conftest import auth
from tests.support.databases import fresh_database
from tests.support.operators import OPS, create_operator, moved, op_headers
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
EXPECTED = [
    "referral.created",
    "assistant.started",
    "patient.intake_completed",
    "provider.matched",
    "appointment.booked",
    "appointment.attended",
    "payment.completed",
    "referral.closed",
]


@pytest.fixture(scope="module")
def journey_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("journey")
    with fresh_database(tmp) as url:
        server = ServerProcess(url, tmp / "server.log", REHABREF_WEBHOOK_RETRY_BASE_SECONDS="0.3")
        server.start()  # with the delivery worker in-process
        receiver = Receiver().start()
        try:
            yield {"url": url, "server": server, "receiver": receiver}
        finally:
            receiver.stop()
            server.stop()


def test_patient_and_coordinator_journey_with_receiver(journey_env: dict[str, Any]) -> None:
    server: ServerProcess = journey_env["server"]
    receiver: Receiver = journey_env["receiver"]
    partner = onboard(
        journey_env["url"], name="Journey Hospital", commission_bps=1000, show_payments=True
    )
    token = create_operator(journey_env["url"], "Journey Coordinator")
    key, secret = partner["keys"]["sk_test"], partner["keys"]["whsec_test"]
    city = f"Ikeja {uuid.uuid4().hex[:6]}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        hook = client.post(
            "/api/v1/partners/webhook-endpoints", json={"url": receiver.url}, headers=auth(key)
        )
        assert hook.status_code == 201, hook.text
        physio = client.post(
            f"{OPS}/physiotherapists",
            json={
                "name": "Ngozi Eze",
                "license_number": f"MRTB-{uuid.uuid4().hex[:8]}",
                "specializations": ["musculoskeletal"],
                "rating": 4.8,
                "phone": "+2348091234567",
                "city": city,
                "areas": ["Allen"],
                "modalities": ["home_visit", "in_clinic"],
                "weekly_capacity": 5,
            },
            headers=op_headers(token),
        )
        assert physio.status_code == 201, physio.text
        physio_id = physio.json()["physio_id"]

        body = v1_referral(patient={"first_name": "Amaka", "phone": "+2348031234567", "city": city})
        response = client.post(
            "/api/v1/partners/referrals", json=body, headers=auth(key, f"journey-{uuid.uuid4()}")
        )
        assert response.status_code == 201, response.text
        referral = response.json()
        referral_id, link = referral["referral_id"], referral["assistant_session_url"]

        # The patient, on a phone-sized screen, by keyboard and by touch.
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_context(
                viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
            ).new_page()
            opened = page.goto(link)
            assert opened is not None and opened.status == 200
            assert opened.headers["cache-control"] == "no-store"
            expect(page.get_by_text("Hello Amaka")).to_be_visible()
            page.screenshot(path=str(SCREENSHOTS / "intake-1-form.png"), full_page=True)
            # One question per page (the intake dialogue, as on WhatsApp).
            page.get_by_label("English").check()
            page.get_by_role("button", name="Next", exact=True).click()
            page.get_by_label("Yes, continue").check()
            page.get_by_role("button", name="Next", exact=True).click()
            page.get_by_role("button", name="Next", exact=True).click()  # nothing chosen
            expect(page.get_by_role("alert")).to_contain_text("Please choose one answer")
            page.screenshot(path=str(SCREENSHOTS / "intake-2-errors.png"), full_page=True)
            page.get_by_label("At home").check()
            page.get_by_role("button", name="Next", exact=True).click()
            page.get_by_label("Which area of").fill("Allen")
            page.get_by_role("button", name="Next", exact=True).click()
            page.get_by_label("Weekday mornings").check()
            page.get_by_label("Weekends").focus()
            page.keyboard.press("Space")  # keyboard works on the native controls
            expect(page.get_by_label("Weekends")).to_be_checked()
            page.get_by_role("button", name="Next", exact=True).click()
            page.get_by_label("Confirm").check()
            page.get_by_role("button", name="Next", exact=True).click()
            expect(page.get_by_role("heading", name="Thank you, Amaka")).to_be_visible()
            page.screenshot(path=str(SCREENSHOTS / "intake-3-done.png"), full_page=True)
            reused = page.goto(link)
            assert reused is not None and reused.status == 410
            page.screenshot(path=str(SCREENSHOTS / "intake-4-reused.png"), full_page=True)
            browser.close()

        # The coordinator sees the answers and the match, then books and records the visit.
        detail = client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers(token)).json()
        assert detail["status"] == "assistant_started"
        assert detail["intake"]["availability"] == ["weekday_mornings", "weekends"]
        assert detail["intake"]["care_mode"] == "home_visit"
        assert detail["patient"]["area"] == "Allen"
        # A sandbox referral is matched from the partner's sandbox roster, never from the
        # registry, even with a registry physiotherapist in the city (changed contract).
        assert detail["assigned_physio_id"] not in (None, physio_id)
        moved(
            client,
            token,
            referral_id,
            "booked",
            reason="home visit Tuesday",
            appointment={"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "face_to_face"},
        )
        moved(client, token, referral_id, "attended", reason="seen at home")
        paid = moved(
            client,
            token,
            referral_id,
            "paid",
            payment={"amount_minor": 2_000_000, "currency": "NGN"},
        )
        assert paid["payment"]["partner_commission_minor"] == 200_000
        moved(client, token, referral_id, "closed", reason="course complete")

        record = client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key)).json()
        assert record["status"] == "closed"
        assert record["appointment"]["status"] == "attended"
        assert record["payment"] == {
            "currency": "NGN",
            "amount_minor": 2_000_000,
            "partner_commission_minor": 200_000,
            "commission_status": "pending_settlement",
        }
        history = client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers(token)).json()
        assert [t["to_status"] for t in history["transitions"]] == [
            "received",
            "assistant_started",
            "booked",
            "attended",
            "paid",
            "closed",
        ]
        assert history["transitions"][1]["actor"].startswith("patient:")

    # The partner's receiver: every event once (by event_id), signed, in order of occurrence.
    receiver.wait_for(lambda: len(receiver.event_ids()) >= len(EXPECTED), timeout=60)
    events: dict[str, dict[str, Any]] = {}
    for item in receiver.received:
        assert item.signature_valid(secret), item.signature
        events[item.event_id] = item.json()
    ordered = sorted(events.values(), key=lambda e: e["occurred_at"])
    assert [e["type"] for e in ordered] == EXPECTED
    assert all(e["data"]["referral_id"] == referral_id for e in ordered)
    assert [e["data"]["status"] for e in ordered] == [
        "received",
        "assistant_started",
        "assistant_started",
        "assistant_started",
        "booked",
        "attended",
        "paid",
        "closed",
    ]
    matched = next(e for e in ordered if e["type"] == "provider.matched")
    assert matched["data"]["physiotherapist"]["license_number"].startswith("SANDBOX-")
    payment = next(e for e in ordered if e["type"] == "payment.completed")
    assert payment["data"] == {
        "referral_id": referral_id,
        "external_ref": body["external_ref"],
        "status": "paid",
        "care_mode": "either",
        "payment": {
            "currency": "NGN",
            "amount_minor": 2_000_000,
            "partner_commission_minor": 200_000,
            "commission_status": "pending_settlement",
        },
    }
    # No patient link token in anything the server logged.
    assert link.rsplit("/", 1)[1] not in server.logs()
    assert json.dumps(ordered).count("/a/") == 0
