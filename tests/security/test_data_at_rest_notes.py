"""Clinical notes and free-text reasons at rest: session notes and cancel reasons, outcome
measure answers, transition reasons, contact-task notes and appointment change reasons are
readable neither in the database file nor in a pg_dump, yet the ops API, the console, the
partner API, the webhook event data and the data-subject export show them as written.

Real server and database (SQLite or PostgreSQL, per REHABREF_TEST_DATABASE), real flows.
"""

from __future__ import annotations

import secrets
import string
import uuid
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import Engine

from tests.console.operators import make_operator, sign_in
from tests.scheduling.conftest import book, free_slots, new_physio
from tests.shapeg.bodies import g_referral
from tests.support.api import REFERRALS, bearer
from tests.support.care import events_of, operator_token, ops
from tests.support.database_copy import database_copy
from tests.support.payloads import v1_referral

OPS = "/api/v1/ops"


def _word() -> str:
    """A word found nowhere else in the database."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _remote_session(
    client: httpx.Client, headers: dict[str, str], referral_id: str, physio_id: str, notes: str
) -> str:
    """A remote session scheduled, started and completed with ``notes`` (ops API)."""
    session_id = _ok(
        client.post(
            f"{OPS}/referrals/{referral_id}/sessions",
            json={
                "scheduled_at": "2026-11-21T09:00:00Z",
                "modality": "remote",
                "session_type": "follow_up",
                "physio_id": physio_id,
            },
            headers=headers,
        ),
        201,
    )["session_id"]
    _ok(
        client.post(
            f"{OPS}/sessions/{session_id}/start",
            json={"check_in_at": "2026-11-21T09:00:00Z"},
            headers=headers,
        )
    )
    _ok(
        client.post(
            f"{OPS}/sessions/{session_id}/complete",
            json={
                "pain_before": 6,
                "pain_after": 3,
                "notes_summary": notes,
                "check_out_at": "2026-11-21T09:40:00Z",
            },
            headers=headers,
        )
    )
    return str(session_id)


def _task_of(sql: Engine, referral_id: str) -> str:
    with sql.connect() as conn:
        return str(
            conn.execute(
                text("SELECT id FROM contact_tasks WHERE referral_id = :r"), {"r": referral_id}
            ).scalar_one()
        )


def test_care_notes_are_sealed_in_the_database_yet_every_reader_shows_them(
    client, server, make_partner, sql, database_url
):
    tag = _word()
    phone = f"+23480{secrets.randbelow(10**8):08d}"
    task_note = f"Daughter {tag} answered, patient hard of hearing"
    booking_reason = f"Patient {tag} prefers mornings"
    cancel_reason = f"Admitted {tag} to hospital"
    notes = f"Knee {tag} flexion improved to ninety degrees"
    activity = f"Carrying {tag} water up the stairs"
    secrets_at_rest = (task_note, booking_reason, cancel_reason, notes, activity)
    headers = ops(operator_token(database_url))

    # A coordinator calls the patient, books a visit, cancels it; a remote session is then
    # completed and an outcome measure recorded (V1 partner: its events carry no notes).
    partner = make_partner()
    created = client.post(
        REFERRALS,
        json=v1_referral(
            patient={"first_name": "Amaka", "phone": phone, "city": "Lagos"},
            route="contact",
        ),
        headers={**bearer(partner["keys"]["sk_live"]), "Idempotency-Key": str(uuid.uuid4())},
    )
    referral_id = _ok(created, 201)["referral_id"]
    task_id = _task_of(sql, referral_id)
    done = _ok(
        client.post(
            f"{OPS}/contact-tasks/{task_id}/complete",
            json={"outcome": "reached", "note": task_note},
            headers=headers,
        )
    )
    assert done["note"] == task_note
    physio = new_physio(client, headers)
    starts_at = free_slots(client, headers, physio["physio_id"])[0]["starts_at"]
    booked = _ok(
        book(client, headers, referral_id, physio["physio_id"], starts_at, reason=booking_reason),
        201,
    )
    cancelled = _ok(
        client.post(
            f"{OPS}/appointments/{booked['appointment_id']}/cancel",
            json={"reason": cancel_reason},
            headers=headers,
        )
    )
    assert cancelled["change_reason"] == cancel_reason
    session_id = _remote_session(client, headers, referral_id, physio["physio_id"], notes)
    psfs = {
        "scale": "psfs",
        "session_id": session_id,
        "tasks": [
            {"activity": activity, "score": 3},
            {"activity": "Walking to the market", "score": 5},
            {"activity": "Kneeling to pray", "score": 4},
        ],
    }
    recorded = _ok(
        client.post(f"{OPS}/referrals/{referral_id}/assessments", json=psfs, headers=headers), 201
    )
    assert recorded["detail"]["tasks"][0] == {"activity": activity, "score": 3}

    # The readers open them: the operators' API...
    referral = _ok(client.get(f"{OPS}/referrals/{referral_id}", headers=headers))
    assert booking_reason in [t["reason"] for t in referral["transitions"]]
    assert "referral created" in [t["reason"] for t in referral["transitions"]]
    session = _ok(client.get(f"{OPS}/sessions/{session_id}", headers=headers))
    assert session["notes_summary"] == notes
    visit = _ok(client.get(f"{OPS}/sessions/{booked['session_id']}", headers=headers))
    assert (visit["status"], visit["cancel_reason"]) == ("cancelled", cancel_reason)
    listed = _ok(client.get(f"{OPS}/referrals/{referral_id}/appointments", headers=headers))
    assert [a["change_reason"] for a in listed["data"]] == [cancel_reason]
    measures = _ok(client.get(f"{OPS}/referrals/{referral_id}/assessments", headers=headers))
    assert measures["data"][0]["detail"]["tasks"][0]["activity"] == activity
    assert measures["data"][0]["score"] == 4.0  # the score stays plain
    # ...the console's referral page (history and appointments)...
    with httpx.Client(base_url=server.base_url) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303
        page = console.get(f"/console/referrals/{referral_id}").text
    assert booking_reason in page and cancel_reason in page
    assert "s1.k0." not in page
    # ...and the person's data-subject export.
    export = _ok(
        client.post(
            f"{OPS}/data-subject-requests", json={"kind": "export", "phone": phone}, headers=headers
        )
    )["export"]
    (exported,) = export["referrals"]
    assert task_note in [t["note"] for t in exported["contact_tasks"]]
    assert booking_reason in [t["reason"] for t in exported["transitions"]]
    assert {s["notes_summary"] for s in exported["therapy_sessions"]} == {None, notes}
    assert {s["cancel_reason"] for s in exported["therapy_sessions"]} == {None, cancel_reason}
    assert [a["change_reason"] for a in exported["appointments"]] == [cancel_reason]
    assert exported["assessments"][0]["detail"] == recorded["detail"]

    copy = database_copy(database_url)
    assert referral_id.encode() in copy  # the copy holds the referral...
    for secret in secrets_at_rest:  # ...but none of what was written about the patient's care
        assert secret.encode() not in copy, f"{secret!r} is readable in the database copy"
        assert tag.encode() not in copy


def test_shape_g_partners_read_session_notes_opened_and_their_events_carry_them(
    client, make_partner, sql, database_url
):
    """The partner's session list and report open the notes; the ``session.completed`` data
    is built from the notes as written (its stored payload is sealed separately)."""
    headers = ops(operator_token(database_url))
    partner = make_partner(contract="g")
    key = partner["keys"]["sk_live"]
    body = g_referral()
    referral_id = _ok(client.post(REFERRALS, json=body, headers=bearer(key)), 201)["referral_id"]
    physio = new_physio(client, headers, windows=None)
    notes = f"Quadriceps {_word()} strength improving"
    session_id = _remote_session(client, headers, referral_id, physio["physio_id"], notes)
    rom = {"scale": "rom", "joint": "knee", "movement": "flexion", "degrees": 95, "side": "left"}
    _ok(client.post(f"{OPS}/referrals/{referral_id}/assessments", json=rom, headers=headers), 201)

    listed = _ok(
        client.get(
            "/api/v1/partners/sessions", params={"referral_id": referral_id}, headers=bearer(key)
        )
    )
    assert [(s["session_id"], s["notes_summary"]) for s in listed["sessions"]] == [
        (session_id, notes)
    ]
    (event,) = events_of(sql, referral_id, "session.completed")
    assert event["clinical_summary"]["notes_summary"] == notes
    report = _ok(client.get(f"/api/v1/partners/reports/{referral_id}", headers=bearer(key)))
    assert report["metrics"]["initial_pain_score"] == 6.0
    pdf = client.get(report["discharge_summary_pdf_url"])  # the ROM answers, opened
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    with sql.connect() as conn:
        stored = conn.execute(
            text("SELECT notes_summary FROM care_sessions WHERE id = :s"), {"s": session_id}
        ).scalar_one()
    assert stored.startswith("s1.") and notes not in stored
