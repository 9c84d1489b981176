"""Webhook events and the partner's metadata at rest: ``events.data``, ``events.body`` and
``referrals.partner_metadata`` are sealed (AES-GCM, key id in the value), yet the partner's
events API and records, the ops API, the console, the data-subject export and the webhook
receiver get them opened; the delivered bytes are exactly the stored envelope (so its
signature is what it always was), also for a body sealed before a key rotation.

Real server, real ``rehabref worker`` subprocess, real loopback receiver and database (SQLite
or PostgreSQL, per REHABREF_TEST_DATABASE).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import Engine

from rehabref.crypto import new_key, parse_key_ring
from rehabref.db import Database
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.sealing import event_body, event_data
from rehabref.events.worker import DeliveryWorker, WorkerConfig
from rehabref.instance_secret import SecretBox
from tests.conftest import auth
from tests.console.operators import make_operator, sign_in
from tests.events.conftest import WorkerProcess, register, trigger
from tests.support.api import REFERRALS, bearer
from tests.support.care import insert_referral, physio_body
from tests.support.database_copy import database_copy
from tests.support.databases import fresh_database
from tests.support.operators import op_headers
from tests.support.partners import TEST_RING, TEST_SECRET_KEY, onboard
from tests.support.payloads import v1_referral
from tests.support.receiver import Receiver

NEAR_IKEJA = (6.6050, 3.3490)


def _stored_event(sql: Engine, event_id: str) -> Any:
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT data, body FROM events WHERE id = :e"), {"e": event_id}
        ).one()


def _completed_session(client: httpx.Client, token: str, referral_id: str, notes: str) -> str:
    """A visit scheduled, started and completed through the ops API: ``session.completed``."""
    headers = op_headers(token)
    physio = client.post(
        "/api/v1/ops/physiotherapists", json=physio_body(name="Kemi Adeyemi"), headers=headers
    )
    assert physio.status_code == 201, physio.text
    scheduled = client.post(
        f"/api/v1/ops/referrals/{referral_id}/sessions",
        json={
            "scheduled_at": "2026-11-23T09:00:00Z",
            "modality": "home_visit",
            "session_type": "initial_assessment",
            "physio_id": physio.json()["physio_id"],
        },
        headers=headers,
    )
    assert scheduled.status_code == 201, scheduled.text
    session_id = str(scheduled.json()["session_id"])
    started = client.post(
        f"/api/v1/ops/sessions/{session_id}/start",
        json={
            "check_in_at": "2026-11-21T09:02:00Z",
            "check_in_lat": NEAR_IKEJA[0],
            "check_in_lng": NEAR_IKEJA[1],
        },
        headers=headers,
    )
    assert started.status_code == 200, started.text
    done = client.post(
        f"/api/v1/ops/sessions/{session_id}/complete",
        json={
            "pain_before": 7,
            "pain_after": 4,
            "notes_summary": notes,
            "check_out_at": "2026-11-21T09:50:30Z",
            "check_out_lat": NEAR_IKEJA[0],
            "check_out_lng": NEAR_IKEJA[1],
        },
        headers=headers,
    )
    assert done.status_code == 200, done.text
    return session_id


def test_event_payloads_and_metadata_are_sealed_yet_every_reader_opens_them(
    client, server, make_partner, sql, database_url, operator_token
):
    tag = secrets.token_hex(6)
    notes = f"Knee flexion {tag} improved; continue the quadriceps programme."
    phone = f"+23480{secrets.randbelow(10**8):08d}"
    g_partner = make_partner(contract="g")
    key = g_partner["keys"]["sk_live"]
    referral_id = insert_referral(
        sql, partner_id=g_partner["partner_id"], environment="live", area="Ikeja", phone=phone
    )
    session_id = _completed_session(client, operator_token, referral_id, notes)
    # The partner's metadata, sent with a V1 referral of the same person.
    v1_partner = make_partner()
    metadata = {"patient_number": f"PN-{tag}", "ward": "B"}
    v1 = client.post(
        REFERRALS,
        json=v1_referral(
            patient={"first_name": "Ada", "phone": phone, "city": "Lagos"}, metadata=metadata
        ),
        headers={**bearer(v1_partner["keys"]["sk_test"]), "Idempotency-Key": str(uuid.uuid4())},
    )
    assert v1.status_code == 201, v1.text
    v1_id = v1.json()["referral_id"]

    listed = client.get(
        "/api/v1/partners/events",
        params={"referral_id": referral_id, "type": "session.completed"},
        headers=auth(key),
    ).json()["data"]
    (event,) = listed
    assert event["data"]["session_id"] == session_id
    assert event["data"]["clinical_summary"]["notes_summary"] == notes
    event_id = event["event_id"]

    stored = _stored_event(sql, event_id)
    assert stored.data.startswith("s1.k0.") and stored.body.startswith("s1.k0.")
    assert event_data(TEST_RING, stored.data) == event["data"]
    envelope = json.loads(event_body(TEST_RING, stored.body))
    assert envelope == {k: event[k] for k in ("event_id", "type", "occurred_at", "data")}
    with sql.connect() as conn:
        stored_metadata = conn.execute(
            text("SELECT partner_metadata FROM referrals WHERE id = :r"), {"r": v1_id}
        ).scalar_one()
    assert stored_metadata.startswith("s1.k0.")

    # The readers open them: the partner's events API (the list above, and one), the
    # partner's record, the ops API, the console's referral page and the data-subject export.
    one = client.get(f"/api/v1/partners/events/{event_id}", headers=auth(key)).json()
    assert one["data"]["clinical_summary"]["notes_summary"] == notes
    record = client.get(
        f"{REFERRALS}/{v1_id}", headers=bearer(v1_partner["keys"]["sk_test"])
    ).json()
    assert record["metadata"] == metadata
    ops_event = client.get(
        f"/api/v1/ops/events/{event_id}", headers=op_headers(operator_token)
    ).json()
    assert ops_event["data"] == event["data"]
    with httpx.Client(base_url=server.base_url) as console:
        assert sign_in(console, make_operator(database_url)["token"]).status_code == 303
        page = console.get(f"/console/referrals/{referral_id}")
        assert page.status_code == 200 and event_id in page.text
        assert "s1.k0." not in page.text
    exported = client.post(
        "/api/v1/ops/data-subject-requests",
        json={"kind": "export", "phone": phone},
        headers=op_headers(operator_token),
    )
    assert exported.status_code == 200, exported.text
    documents = {r["id"]: r for r in exported.json()["export"]["referrals"]}
    assert documents[v1_id]["partner_metadata"] == metadata
    (completed,) = [e for e in documents[referral_id]["events"] if e["id"] == event_id]
    assert completed["data"] == event["data"] and "body" not in completed

    # A copy of the database shows neither the envelope nor the payload nor the metadata.
    # (The visit's notes are also in care_sessions, sealed separately: the fragments looked
    # for here are the event's JSON.)
    copy = database_copy(database_url)
    assert event_id.encode() in copy  # the event is there, its id plain by design
    for fragment in (
        f'{{"event_id":"{event_id}"',
        f'"notes_summary":"{notes}"',
        f'"notes_summary": "{notes}"',
        f"PN-{tag}",
        json.dumps(metadata),
    ):
        assert fragment.encode() not in copy, f"{fragment!r} is readable in the database copy"


def test_a_body_sealed_before_a_key_rotation_is_delivered_byte_for_byte(
    client, make_partner, sql, database_url, tmp_path: Path
):
    partner = make_partner(contract="g")  # its session.completed carries clinical notes
    key, signing = partner["keys"]["sk_test"], partner["keys"]["whsec_test"]
    receiver = Receiver().start()
    try:
        register(client, key, receiver.url)
        sent = trigger(client, key, "session.completed", receiver.url)
        stored = _stored_event(sql, sent["event_id"])
        assert stored.body.startswith("s1.k0.")  # sealed under the ring before rotation
        # The ring after a rotation: the old key stays (it opens), a new one seals and signs.
        rotated = f"k0:{TEST_SECRET_KEY},k1:{new_key()}"
        worker = WorkerProcess(
            database_url, tmp_path / "worker.log", REHABREF_SECRET_KEY=rotated
        ).start()
        try:
            receiver.wait_for(lambda: bool(receiver.for_event(sent["event_id"])))
        finally:
            worker.stop()
        delivered = receiver.for_event(sent["event_id"])[0]
    finally:
        receiver.stop()
    assert delivered.signature_valid(signing)
    assert delivered.body == event_body(TEST_RING, stored.body)
    event = delivered.json()
    assert event["event_id"] == sent["event_id"]
    assert event["data"]["clinical_summary"]["notes_summary"]  # the webhook gets it opened
    assert event["data"] == event_data(TEST_RING, stored.data)


def test_a_body_sealed_under_a_key_no_longer_in_the_ring_is_not_sent(tmp_path: Path):
    """A key removed from the ring too early: the delivery is not sent (nothing readable
    to sign), and the attempt says why instead of sending ciphertext."""
    receiver = Receiver().start()

    async def scenario(url: str, partner_id: str) -> Any:
        db = Database(url)
        before_removal = parse_key_ring(f"k0:{TEST_SECRET_KEY},k9:{new_key()}")
        worker = DeliveryWorker(
            db,
            SecretBox(parse_key_ring(f"k0:{TEST_SECRET_KEY}")),  # k9 is gone
            WorkerConfig(allow_loopback_targets=True),
        )
        try:
            async with db.write() as conn:
                (event_id,) = await record_events(
                    conn,
                    before_removal,
                    partner_id=partner_id,
                    environment="test",
                    events=[
                        NewEvent(
                            "appointment.booked",
                            {"referral_id": "ref_x", "status": "booked"},
                            extra_targets=(receiver.url,),
                            only_extra_targets=True,
                        )
                    ],
                )
            assert await worker.run_once() == 1
            async with db.read() as conn:
                return (
                    await conn.execute(
                        text(
                            "SELECT a.error FROM delivery_attempts a"
                            " JOIN deliveries d ON d.id = a.delivery_id WHERE d.event_id = :e"
                        ),
                        {"e": event_id},
                    )
                ).scalar_one()
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        with fresh_database(tmp_path) as url:
            partner = onboard(url, name="Rotated too early")
            error = asyncio.run(scenario(url, partner["partner_id"]))
    finally:
        receiver.stop()
    assert error == "event body cannot be opened with the key ring"
    assert receiver.received == []
