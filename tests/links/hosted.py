"""Helpers for driving the hosted referral form over plain HTTP."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx

from tests.conftest import auth

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def create_link(client: httpx.Client, key: str, **body: Any) -> dict[str, Any]:
    body.setdefault("campaign", f"campaign-{uuid.uuid4().hex[:6]}")
    response = client.post("/api/v1/partners/referral-links", json=body, headers=auth(key))
    assert response.status_code == 201, response.text
    return response.json()


def path_of(link: dict[str, Any]) -> str:
    return f"/r/{link['public_code']}"


def form_token(page: httpx.Response) -> str:
    match = _TOKEN.search(page.text)
    assert match, page.text[:500]
    return match.group(1)


def good_form(**overrides: str) -> dict[str, str]:
    form = {
        "first_name": "Ngozi",
        "phone": "+234 803 123 4567",
        "email": "",
        "city": "Abuja",
        "reason": "Knee pain after a fall",
        "care_mode": "either",
        "preferred_contact": "messaging",
        "consent": "yes",
    }
    form.update(overrides)
    return form


def submit(client: httpx.Client, link: dict[str, Any], **overrides: str) -> httpx.Response:
    page = client.get(path_of(link))
    assert page.status_code == 200, page.text[:300]
    return client.post(
        path_of(link), data={**good_form(**overrides), "csrf_token": form_token(page)}
    )
