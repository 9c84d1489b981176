"""The coordinator workbench over plain HTTP: match, assign / reassign with a reason, the
work queues, the physiotherapist filters, and the guards (CSRF, roster, reasons).

Live referrals in a city of their own, so the live registry rows other tests add never
compete with the physiotherapists made here.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text

from rehabref.db import Database
from rehabref.wiring import roster_sources
from rehabref.workflows.intake import intake_completed
from tests.conftest import auth, count
from tests.console.operators import make_operator, sign_in
from tests.console.workbench import add_physio, physio_id, post, referral, town
from tests.support.partners import TEST_RING
from tests.support.receiver import Receiver


@pytest.fixture
def console(server, database_url):
    operator = make_operator(database_url)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, operator["token"]).status_code == 303
        yield http


def queue_of(console: httpx.Client, city: str, queue: str) -> str:
    """One work queue's page, narrowed to the test's own city."""
    return console.get("/console/queues", params={"queue": queue, "city": city}).text


def test_match_finds_no_one_then_someone_with_the_reason(console, client, make_partner, sql):
    city = town()
    partner = make_partner()
    rid = referral(client, partner, city)
    page = f"/console/referrals/{rid}"
    assert "No physiotherapist yet." in console.get(page).text
    queue = queue_of(console, city, "unmatched")
    assert rid in queue and "not matched yet" in queue
    assert rid not in queue_of(console, town(), "unmatched")  # another coordinator's city

    nobody = post(console, f"{page}/match", page)
    assert nobody.status_code == 303 and nobody.headers["location"].endswith("notice=unmatched")
    queue = queue_of(console, city, "unmatched")
    assert "matching found no one: assign by hand" in queue

    name = f"Ngozi {secrets.token_hex(3)}"
    add_physio(console, city, name)
    found = post(console, f"{page}/match", page)
    assert found.headers["location"].endswith("notice=matched")
    shown = console.get(page).text
    assert name in shown
    assert "Automatic match: specialization fits the referral" in shown
    assert "10 weekly places free" in shown
    assert "referral.matched" in shown  # in the coordinator actions of the history
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'provider.matched'",
            r=rid,
        )
        == 1
    )
    assert (
        count(
            sql,
            "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = 'unmatched' "
            "AND status != 'done'",
            r=rid,
        )
        == 0
    )
    assert rid not in queue_of(console, city, "unmatched")
    waiting = queue_of(console, city, "awaiting_booking")
    assert rid in waiting and f"matched to {name}" in waiting


def test_assign_and_reassign_need_a_reason_and_the_roster(console, client, make_partner, sql):
    city = town()
    partner = make_partner()
    rid = referral(client, partner, city)
    page = f"/console/referrals/{rid}"
    first, second = f"Tunde {secrets.token_hex(3)}", f"Bisi {secrets.token_hex(3)}"
    add_physio(console, city, first, specializations="neurological")
    add_physio(console, city, second)
    first_id, second_id = physio_id(sql, first), physio_id(sql, second)

    filtered = _assign_choices(console.get(f"{page}?pcity={city}&pspec=neurological").text)
    assert first in filtered and second not in filtered
    both = _assign_choices(console.get(f"{page}?pcity={city}").text)
    assert first in both and second in both

    no_reason = post(console, f"{page}/assign", page, physio_id=first_id, reason=" ")
    assert no_reason.status_code == 422 and "Say why" in no_reason.text
    no_csrf = console.post(f"{page}/assign", data={"physio_id": first_id, "reason": "x"})
    assert no_csrf.status_code == 403
    # A test referral is never given a physiotherapist of the live registry.
    sandbox = referral(client, partner, city, key="sk_test")
    test_page = f"/console/referrals/{sandbox}"
    outside = post(console, f"{test_page}/assign", test_page, physio_id=first_id, reason="x")
    assert outside.status_code == 422 and "registry" in outside.text
    unknown = post(console, f"{page}/assign", page, physio_id="phy_nobody", reason="x")
    assert unknown.status_code == 422

    done = post(console, f"{page}/assign", page, physio_id=first_id, reason="Knows the family")
    assert done.status_code == 303
    again = post(console, f"{page}/assign", page, physio_id=first_id, reason="again")
    assert again.status_code == 409 and "already with" in again.text
    moved = post(console, f"{page}/assign", page, physio_id=second_id, reason="Tunde is on leave")
    assert moved.status_code == 303
    shown = console.get(page).text
    assert "Assigned by a coordinator: Tunde is on leave" in shown
    assert "Assigned by a coordinator: Knows the family" in shown  # earlier assignments
    assert "referral.assigned" in shown and "referral.reassigned" in shown
    with sql.connect() as conn:
        stored = (
            conn.execute(
                text("SELECT reason FROM physio_assignments WHERE referral_id = :r"), {"r": rid}
            )
            .scalars()
            .all()
        )
        assigned = conn.execute(
            text("SELECT assigned_physio_id FROM referrals WHERE id = :r"), {"r": rid}
        ).scalar_one()
    assert assigned == second_id
    assert len(stored) == 2 and not any("leave" in value for value in stored)  # sealed
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'provider.matched'",
            r=rid,
        )
        == 2
    )


def _assign_choices(html):
    """The options of the assign form's physiotherapist choice."""
    start = html.index('id="assign-physio"')
    return html[start : html.index("</select>", start)]


def test_cancel_and_close_from_the_referral_page(console, client, make_partner, sql):
    partner = make_partner()
    cancelled = referral(client, partner, town())
    page = f"/console/referrals/{cancelled}"
    done = post(console, f"{page}/transition", page, to="cancelled", reason="Patient moved")
    assert done.status_code == 303
    shown = console.get(page).text
    assert "no further moves" in shown and "Patient moved" in shown
    assert "Run matching" not in shown  # an ended referral takes no physiotherapist
    closed = referral(client, partner, town())
    page = f"/console/referrals/{closed}"
    past = (datetime.now(UTC) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M")
    for to, extra in (
        ("booked", {"scheduled_at": past, "care_mode": "remote"}),
        ("attended", {"reason": "Seen at the clinic"}),  # started three hours ago
        ("paid", {"amount": "15000"}),
        ("closed", {"reason": "Discharged"}),
    ):
        answer = post(console, f"{page}/transition", page, to=to, **extra)
        assert answer.status_code == 303, (to, answer.text[-800:])
    shown = console.get(page).text
    assert "NGN 15,000.00" in shown and "Discharged" in shown


def test_no_show_and_overdue_outcome_queues(console, client, make_partner, sql):
    partner = make_partner()
    city = town()
    name = f"Femi {secrets.token_hex(3)}"
    add_physio(console, city, name, modalities="remote")
    missed = referral(client, partner, city)
    page = f"/console/referrals/{missed}"
    old = (datetime.now(UTC) - timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M")
    booked = post(
        console, f"{page}/transition", page, to="booked", scheduled_at=old, care_mode="remote"
    )
    assert booked.status_code == 303
    queue = queue_of(console, city, "no_show")
    assert missed in queue and "booked visit passed without being attended" in queue

    treated = referral(client, partner, city)
    page = f"/console/referrals/{treated}"
    assert post(console, f"{page}/match", page).status_code == 303
    when = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    scheduled = post(
        console,
        f"{page}/sessions",
        page,
        scheduled_at=when,
        modality="remote",
        session_type="treatment",
        physio_id="",
    )
    assert scheduled.status_code == 303, scheduled.text[-800:]
    assert treated in queue_of(console, city, "no_show")  # never checked in
    with sql.connect() as conn:
        session_id = conn.execute(
            text("SELECT id FROM care_sessions WHERE referral_id = :r"), {"r": treated}
        ).scalar_one()
    assert post(console, f"/console/sessions/{session_id}/start", page).status_code == 303
    completed = post(
        console,
        f"/console/sessions/{session_id}/complete",
        page,
        pain_before="6",
        pain_after="4",
        notes_summary="Exercises taught",
    )
    assert completed.status_code == 303, completed.text[-800:]
    queue = queue_of(console, city, "outcomes_overdue")
    assert treated in queue and "baseline measure missing" in queue
    assert treated not in queue_of(console, city, "no_show")


def test_failed_deliveries_queue_and_physio_filters(console, sql, make_partner, client):
    city = town()
    names = [f"Ada {secrets.token_hex(3)}", f"Obi {secrets.token_hex(3)}"]
    add_physio(console, city, names[0], specializations="sports", modalities="in_clinic")
    add_physio(console, city, names[1])
    by_city = console.get("/console/physios", params={"city": city}).text
    assert names[0] in by_city and names[1] in by_city and "2 physiotherapists" in by_city
    sports = console.get("/console/physios", params={"city": city, "spec": "sports"}).text
    assert names[0] in sports and names[1] not in sports
    clinic = console.get("/console/physios", params={"city": city, "modality": "home_visit"})
    assert names[1] in clinic.text and names[0] not in clinic.text
    searched = console.get("/console/physios", params={"q": names[1].split()[1]}).text
    assert names[1] in searched and names[0] not in searched
    none = console.get("/console/physios", params={"city": city, "active": "no"}).text
    assert "No physiotherapist matches this filter." in none

    partner = make_partner()
    receiver = Receiver().start()  # the server runs no worker here: nothing is sent
    try:
        hook = client.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": receiver.url},
            headers=auth(partner["keys"]["sk_test"]),
        )
    finally:
        receiver.stop()
    assert hook.status_code == 201, hook.text
    rid = referral(client, partner, city, key="sk_test")
    with sql.begin() as conn:
        conn.execute(
            text(
                "UPDATE deliveries SET state = 'failed', last_status_code = 503 WHERE event_id IN "
                "(SELECT id FROM events WHERE referral_id = :r)"
            ),
            {"r": rid},
        )
        event_id = conn.execute(
            text("SELECT id FROM events WHERE referral_id = :r AND type = 'referral.created'"),
            {"r": rid},
        ).scalar_one()
    queue = console.get("/console/queues?queue=failed_deliveries").text
    assert event_id in queue and "last HTTP 503" in queue
    again = post(
        console,
        f"/console/events/{event_id}/redeliver",
        "/console/queues?queue=failed_deliveries",
        back="queues",
    )
    assert again.status_code == 303
    assert again.headers["location"].startswith("/console/queues?queue=failed_deliveries")


def test_intake_answers_and_the_automatic_match_reason(console, client, make_partner, database_url):
    """The patient's answers (through the real intake-completed workflow) and the match they
    led to: the physiotherapist covering the patient's area, with that as the reason."""
    city = town()
    partner = make_partner()
    name = f"Kemi {secrets.token_hex(3)}"
    add_physio(console, city, name, areas="Surulere", modalities="remote")
    rid = referral(client, partner, city, route="assistant")
    _complete_intake(database_url, rid)
    shown = console.get(f"/console/referrals/{rid}").text
    assert "weekday evenings" in shown and "Surulere" in shown
    assert name in shown and "covers the patient&#39;s area" in shown


def _complete_intake(database_url, referral_id):
    async def work():
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return await intake_completed(
                    conn,
                    roster=roster_sources(),
                    ring=TEST_RING,
                    referral_id=referral_id,
                    availability="weekday_evenings",
                    care_mode="remote",
                    area="Surulere",
                    actor="test:channel",
                )
        finally:
            await db.dispose()

    return asyncio.run(work())
