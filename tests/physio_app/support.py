"""Helpers for the physiotherapist app tests: a physiotherapist with a booked visit whose
time has come, and the sign-in link as the outbox holds it."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import Engine

from tests.scheduling.conftest import book, free_slots, new_physio, ready_referral
from tests.scheduling.test_booking import time_passes
from tests.support.messages import opened_content, ref_of

IKEJA = (6.6018, 3.3515)
LINK = re.compile(r"https?://\S+/app/link/[A-Za-z0-9_\-]+")


def unique_phone() -> str:
    return "+234803" + str(uuid.uuid4().int)[:7]


def physio_with_visit(
    client: httpx.Client, op_headers: dict[str, str], sql: Engine, partner_id: str, **extra: Any
) -> dict[str, Any]:
    """A physiotherapist (own phone) with one face-to-face visit in Ikeja that started a
    minute ago."""
    physio = new_physio(client, op_headers, phone=unique_phone(), **extra)
    referral_id = ready_referral(sql, partner_id, first_name="Ngozi", last_name="Eze")
    slot = free_slots(client, op_headers, physio["physio_id"])[0]["starts_at"]
    appointment = book(client, op_headers, referral_id, physio["physio_id"], slot)
    assert appointment.status_code == 201, appointment.text
    body = appointment.json()
    ahead = (datetime.fromisoformat(slot) - datetime.now(UTC)).total_seconds() / 3600
    time_passes(sql, body, hours=ahead + 1 / 60)
    return {"physio": physio, "referral_id": referral_id, "appointment": body}


def sign_in_link(sql: Engine, phone: str) -> str:
    with sql.connect() as conn:
        row = conn.execute(
            text(
                "SELECT content FROM outbound_messages WHERE recipient_ref = :to AND"
                " purpose = 'physio.sign_in' ORDER BY created_at DESC LIMIT 1"
            ),
            {"to": ref_of(phone)},  # sealed at rest: found by its blind index
        ).one()
    content = opened_content(row[0])
    found = LINK.search(json.dumps(content))
    assert found, content
    return found.group(0)
