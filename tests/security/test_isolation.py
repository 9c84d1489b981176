"""Tenant isolation over HTTP: another partner's keys, and the same partner's other
environment, see none of a partner's referrals, reports, sessions, events, webhook endpoints
or referral links, by any identifier (each lookup is also checked with the owner's key, so
a broken route cannot pass as "isolated")."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.conftest import auth
from tests.shapeg.bodies import g_referral
from tests.support.payloads import v1_referral

REFS = "/api/v1/partners/referrals"


def _key(partner: dict[str, Any], environment: str) -> str:
    return str(partner["keys"][f"sk_{environment}"])


@pytest.fixture
def owned(client: httpx.Client, make_partner: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    owner = make_partner(name=f"Owner {uuid.uuid4().hex[:4]}", contract="g")
    key = _key(owner, "test")
    body = g_referral()
    referral = client.post(REFS, json=body, headers=auth(key, uuid.uuid4().hex))
    assert referral.status_code == 201, referral.text
    v1_body = v1_referral()
    v1 = client.post(REFS, json=v1_body, headers=auth(key, uuid.uuid4().hex))
    assert v1.status_code == 201, v1.text
    endpoint = client.post(
        "/api/v1/partners/webhook-endpoints",
        json={"url": "http://127.0.0.1:9/hooks"},
        headers=auth(key, uuid.uuid4().hex),
    )
    assert endpoint.status_code == 201, endpoint.text
    link = client.post(
        "/api/v1/partners/referral-links",
        json={"campaign": "isolation"},
        headers=auth(key, uuid.uuid4().hex),
    )
    assert link.status_code == 201, link.text
    events = client.get("/api/v1/partners/events", headers=auth(key)).json()["data"]
    return {
        "owner": owner,
        "referral": referral.json(),
        "partner_reference": body["partner_reference"],
        "v1_id": v1.json()["referral_id"],
        "external_ref": v1_body["external_ref"],
        "endpoint_id": endpoint.json()["endpoint_id"],
        "link_id": link.json()["link_id"],
        "event_id": events[0]["event_id"],
    }


def _reads(owned: dict[str, Any]) -> list[str]:
    referral = owned["referral"]
    return [
        f"{REFS}/{referral['referral_id']}",
        f"{REFS}/{referral['tracking_code']}",
        f"{REFS}/{owned['partner_reference']}",
        f"{REFS}/{owned['v1_id']}",
        f"/api/v1/partners/reports/{referral['referral_id']}",
        f"/api/v1/partners/events/{owned['event_id']}",
        f"/api/v1/partners/referral-links/{owned['link_id']}",
    ]


def _lists(owned: dict[str, Any]) -> list[tuple[str, dict[str, str], str]]:
    referral_id = owned["referral"]["referral_id"]
    return [
        (REFS, {}, "data"),
        (REFS, {"external_ref": owned["external_ref"]}, "data"),
        ("/api/v1/partners/events", {"referral_id": referral_id}, "data"),
        ("/api/v1/partners/webhook-endpoints", {}, "data"),
        ("/api/v1/partners/referral-links", {}, "data"),
        ("/api/v1/partners/sessions", {"referral_id": referral_id}, "sessions"),
    ]


def _visible(client: httpx.Client, key: str, owned: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for path in _reads(owned):
        seen[path] = client.get(path, headers=auth(key)).status_code
    for path, params, field in _lists(owned):
        answer = client.get(path, params=params, headers=auth(key))
        assert answer.status_code == 200, (path, answer.text)
        seen[f"{path}?{params}"] = len(answer.json()[field])
    return seen


def test_owner_sees_everything(client: httpx.Client, owned: dict[str, Any]) -> None:
    seen = _visible(client, _key(owned["owner"], "test"), owned)
    assert all(status == 200 for path, status in seen.items() if "?" not in path), seen
    counts = [count for path, count in seen.items() if "?" in path and "sessions" not in path]
    assert all(count >= 1 for count in counts), seen


@pytest.mark.parametrize("who", ["other_test", "other_live", "owner_live"])
def test_other_keys_see_nothing(
    client: httpx.Client,
    owned: dict[str, Any],
    make_partner: Callable[..., dict[str, Any]],
    who: str,
) -> None:
    other = make_partner(name=f"Other {uuid.uuid4().hex[:4]}", contract="g")
    partner, environment = (owned["owner"], "live") if who == "owner_live" else (other, who[6:])
    key = _key(partner, environment)
    seen = _visible(client, key, owned)
    assert all(value in (0, 404) for value in seen.values()), seen
    writes = [
        client.post(
            f"/api/v1/partners/events/{owned['event_id']}/redeliver",
            headers=auth(key, uuid.uuid4().hex),
        ),
        client.delete(
            f"/api/v1/partners/webhook-endpoints/{owned['endpoint_id']}",
            headers=auth(key, uuid.uuid4().hex),
        ),
        client.delete(
            f"/api/v1/partners/referral-links/{owned['link_id']}",
            headers=auth(key, uuid.uuid4().hex),
        ),
    ]
    assert [w.status_code for w in writes] == [404, 404, 404]
    # ... and nothing was changed for the owner.
    owner = _key(owned["owner"], "test")
    hooks = client.get("/api/v1/partners/webhook-endpoints", headers=auth(owner)).json()["data"]
    assert [h["endpoint_id"] for h in hooks] == [owned["endpoint_id"]]
    link = client.get(f"/api/v1/partners/referral-links/{owned['link_id']}", headers=auth(owner))
    assert link.json()["active"] is True
