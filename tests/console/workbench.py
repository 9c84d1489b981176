"""Helpers for the workbench tests: a city of their own, live-registry physiotherapists and
referrals made through the console and partner API, console POSTs with their CSRF token."""

from __future__ import annotations

import secrets
import string
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import Engine

from tests.conftest import auth
from tests.console.operators import csrf
from tests.support.payloads import v1_referral


def town() -> str:
    """A city no other test uses, so only this test's physiotherapists are candidates."""
    return "Kwa " + "".join(secrets.choice(string.ascii_lowercase) for _ in range(10))


def referral(
    client: httpx.Client, partner: dict[str, Any], city: str, key: str = "sk_live", **overrides: Any
) -> str:
    body = v1_referral(**{"route": "contact", **overrides})
    body["patient"] = {**body["patient"], "city": city}
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"][key], body["external_ref"]),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["referral_id"])


def post(console: httpx.Client, path: str, page: str, **data: Any) -> httpx.Response:
    token = csrf(console.get(page))
    return console.post(path, data={"csrf_token": token, **data}, follow_redirects=False)


def add_physio(console: httpx.Client, city: str, name: str, **extra: Any) -> None:
    data = {
        "name": name,
        "license_number": "MRTB/" + secrets.token_hex(5).upper(),
        "phone": "+23480" + "".join(secrets.choice(string.digits) for _ in range(8)),
        "city": city,
        "areas": "",
        "rating": "4.5",
        "weekly_capacity": "10",
        "specializations": extra.pop("specializations", "musculoskeletal"),
        "modalities": extra.pop("modalities", "home_visit"),
        **extra,
    }
    response = post(console, "/console/physios", "/console/physios", **data)
    assert response.status_code == 303, response.text[:500]


def physio_id(sql: Engine, name: str) -> str:
    with sql.connect() as conn:
        return str(
            conn.execute(
                text("SELECT id FROM physiotherapists WHERE name = :n"), {"n": name}
            ).scalar_one()
        )
