"""After a whole live journey, a copy of the database names no patient and holds none of
their words (docs/security.md, Encryption at rest).

A live referral with a name, phone, e-mail, a reason and partner metadata; the patient's
WhatsApp conversation, free text included; a session completed with notes; an assessment
naming the patient's own activity; a coordinator's cancellation with a reason; the events
owed to the partner. Then the SQLite file (with its write-ahead log) or a ``pg_dump`` is read as
bytes. Every reader still shows the text: the partner's record, the operators' view, the
events API.
"""

from __future__ import annotations

import secrets
import string
import uuid

from tests.channels.conftest import new_phone, wait_for
from tests.channels.patient import answer, nth_message, post_signed
from tests.conftest import auth, count
from tests.support.care import physio_body
from tests.support.database_copy import columns_holding, database_copy
from tests.support.graph_api import inbound_text
from tests.support.operators import create_operator, moved, op_headers
from tests.support.payloads import v1_referral


def _word() -> str:
    """A word found nowhere else in the database."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


def test_a_whole_live_journey_leaves_no_patient_text_in_a_database_copy(
    api, graph, make_partner, sql, database_url
):
    tag = _word()  # in every piece of free text below, and in nothing stored plain
    first = _word().capitalize()
    phone = new_phone()
    email = f"{_word()}@example.com"
    partner = make_partner()
    key = partner["keys"]["sk_live"]
    body = v1_referral(
        patient={
            "first_name": first,
            "phone": phone,
            "email": email,
            "city": "Lagos",
        },
        reason=f"Knee swelling {tag} after a fall",
        metadata={"ward_note": f"bed {tag}"},
    )
    created = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(key, str(uuid.uuid4()))
    )
    assert created.status_code == 201, created.text
    referral_id = created.json()["referral_id"]

    # The conversation: a sentence the assistant cannot read, then the usual answers.
    nth_message(graph, phone, 1)
    assert post_signed(api, inbound_text(phone, f"my knee {tag} hurts")).status_code == 200
    message, n, given = nth_message(graph, phone, 2), 2, []
    while "confirm:yes" not in given:
        given.append(answer(api, phone, message))
        n += 1
        message = nth_message(graph, phone, n)
    wait_for(
        lambda: count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r"
            " AND type = 'patient.intake_completed'",
            r=referral_id,
        ),
        what="patient.intake_completed",
    )

    # The care team: a visit completed with notes, an assessment, a cancellation.
    token = create_operator(database_url)
    ops = op_headers(token)
    physio = api.post(
        "/api/v1/ops/physiotherapists", json=physio_body(name="Kemi Adeyemi"), headers=ops
    )
    assert physio.status_code == 201, physio.text
    session = api.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": "2026-11-23T09:00:00Z",
            "modality": "home_visit",
            "session_type": "initial_assessment",
            "physio_id": physio.json()["physio_id"],
        },
        headers=ops,
    )
    assert session.status_code == 201, session.text
    session_id = session.json()["session_id"]
    started = api.post(
        f"/api/v1/ops/sessions/{session_id}/start",
        json={
            "check_in_at": "2026-11-23T09:02:00Z",
            "check_in_lat": 6.5095,
            "check_in_lng": 3.3711,
        },
        headers=ops,
    )
    assert started.status_code == 200, started.text
    notes = f"Quadriceps {tag} programme given"
    done = api.post(
        f"/api/v1/ops/sessions/{session_id}/complete",
        json={
            "pain_before": 6,
            "pain_after": 3,
            "notes_summary": notes,
            "check_out_at": "2026-11-23T09:48:00Z",
            "check_out_lat": 6.5095,
            "check_out_lng": 3.3711,
        },
        headers=ops,
    )
    assert done.status_code == 200, done.text
    assessed = api.post(
        f"/api/v1/ops/referrals/{referral_id}/assessments",
        json={
            "scale": "psfs",
            "tasks": [
                {"activity": f"Climbing {tag} stairs", "score": 3},
                {"activity": "Walking", "score": 5},
                {"activity": "Kneeling", "score": 2},
            ],
        },
        headers=ops,
    )
    assert assessed.status_code == 201, assessed.text
    moved(api, token, referral_id, "cancelled", reason=f"Moved to Abuja {tag}")

    # Every reader opens what it shows.
    record = api.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key)).json()
    assert record["patient"]["first_name"] == first
    assert record["metadata"] == {"ward_note": f"bed {tag}"}
    view = api.get(f"/api/v1/ops/referrals/{referral_id}", headers=ops).json()
    assert view["patient"]["phone"] == phone and tag in view["reason"]
    events = api.get("/api/v1/partners/events", headers=auth(key)).json()
    assert "referral.closed" in {event["type"] for event in events["data"]}
    sessions = api.get(f"/api/v1/ops/referrals/{referral_id}/sessions", headers=ops).json()
    assert notes in str(sessions)
    assessments = api.get(f"/api/v1/ops/referrals/{referral_id}/assessments", headers=ops)
    assert f"Climbing {tag} stairs" in assessments.text

    copy = database_copy(database_url)
    assert referral_id.encode() in copy  # the copy holds this journey...
    for secret in (tag, first, email, phone, phone.removeprefix("+")):
        # ...and nothing that says who the patient is or what they said.
        where = columns_holding(sql, secret) if secret.encode() in copy else []
        assert secret.encode() not in copy, f"{secret!r} is readable in the copy: {where}"
