"""Helpers for the slot-booking tests: a physiotherapist who works every day (through the
ops API, as a coordinator would set it), assigned to a live referral in a city of its own."""

from __future__ import annotations

import re
import secrets
from typing import Any

import httpx
from sqlalchemy.engine import Engine

from tests.console.workbench import add_physio, physio_id, post, referral, town

EVERY_DAY = [
    {"weekday": day, "start": "08:00", "end": "18:00", "slot_minutes": 60} for day in range(7)
]
SLOT = re.compile(r'name="starts_at" value="([^"]+)"')


def assigned_referral(
    console: httpx.Client,
    api: httpx.Client,
    sql: Engine,
    op_headers: dict[str, str],
    partner: dict[str, Any],
    *,
    windows: list[dict[str, Any]] | None = EVERY_DAY,
) -> dict[str, str]:
    """A contact_pending live referral with a physiotherapist assigned by hand."""
    city = town()
    name = f"Bisi {secrets.token_hex(3)}"
    add_physio(console, city, name, modalities="home_visit")
    physio = physio_id(sql, name)
    if windows is not None:
        put = api.put(
            f"/api/v1/ops/physiotherapists/{physio}/availability",
            json={"windows": windows},
            headers=op_headers,
        )
        assert put.status_code == 200, put.text
    rid = referral(api, partner, city)
    page = f"/console/referrals/{rid}"
    assigned = post(console, f"{page}/assign", page, physio_id=physio, reason="Lives nearby")
    assert assigned.status_code == 303, assigned.text[:500]
    return {"referral_id": rid, "physio_id": physio, "physio_name": name, "page": page}


def offered_slots(page: httpx.Response) -> list[str]:
    """The free slot starts offered by the page's booking forms, in order."""
    return SLOT.findall(page.text)
