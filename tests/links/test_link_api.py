"""The partner API for hosted referral links: create, list with counts, get, deactivate."""

from __future__ import annotations

import base64
import uuid

from tests.conftest import auth
from tests.links.hosted import create_link, path_of, submit

BASE = "/api/v1/partners/referral-links"


def test_create_returns_an_unguessable_public_url(client, partner):
    link = create_link(client, partner["keys"]["sk_test"], campaign="back-care-week")
    assert link["link_id"].startswith("lnk_")
    assert link["active"] is True
    assert link["expires_at"] is None
    assert link["campaign"] == "back-care-week"
    code = link["public_code"]
    # token_urlsafe(22): 22 random bytes = 176 bits, at least 128 required.
    assert len(base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))) >= 16
    assert link["url"] == f"{client.base_url}/r/{code}".replace("//r", "/r")
    assert link["clicks"] == 0 and link["referrals"] == 0
    other = create_link(client, partner["keys"]["sk_test"], campaign="back-care-week")
    assert other["public_code"] != code


def test_expires_at_is_kept_and_validated(client, partner):
    key = partner["keys"]["sk_test"]
    link = create_link(client, key, expires_at="2099-01-31T23:59:59Z")
    assert link["expires_at"] == "2099-01-31T23:59:59.000Z"
    for bad in ("2020-01-01T00:00:00Z", "2099-01-31T23:59:59", "tomorrow"):
        response = client.post(BASE, json={"campaign": "x", "expires_at": bad}, headers=auth(key))
        assert response.status_code == 422, bad
        assert "expires_at" in response.json()["error"]["fields"]
    response = client.post(BASE, json={"campaign": ""}, headers=auth(key))
    assert response.status_code == 422
    assert "campaign" in response.json()["error"]["fields"]
    response = client.post(BASE, json={"campaign": "x", "colour": "red"}, headers=auth(key))
    assert response.status_code == 422


def test_links_live_in_the_environment_of_the_key(client, partner, make_partner):
    link = create_link(client, partner["keys"]["sk_test"])
    live = auth(partner["keys"]["sk_live"])
    assert client.get(f"{BASE}/{link['link_id']}", headers=live).status_code == 404
    assert client.delete(f"{BASE}/{link['link_id']}", headers=live).status_code == 404
    assert client.get(BASE, headers=live).json()["data"] == []
    stranger = auth(make_partner(name="Other clinic")["keys"]["sk_test"])
    assert client.get(f"{BASE}/{link['link_id']}", headers=stranger).status_code == 404
    test_list = client.get(BASE, headers=auth(partner["keys"]["sk_test"])).json()
    assert [item["link_id"] for item in test_list["data"]] == [link["link_id"]]


def test_authentication_is_required(client, partner):
    assert client.post(BASE, json={"campaign": "x"}).status_code == 401
    response = client.post(BASE, json={"campaign": "x"}, headers=auth(partner["keys"]["pk_test"]))
    assert response.status_code == 403
    assert client.get(BASE, headers=auth("sk_test_" + "x" * 40)).status_code == 401


def test_list_is_paginated_newest_first(client, partner):
    key = partner["keys"]["sk_test"]
    made = [create_link(client, key, campaign=f"c{i}")["link_id"] for i in range(3)]
    first = client.get(BASE, params={"limit": 2}, headers=auth(key)).json()
    assert [item["link_id"] for item in first["data"]] == made[::-1][:2]
    assert first["has_more"] is True
    second = client.get(
        BASE, params={"limit": 2, "cursor": first["next_cursor"]}, headers=auth(key)
    ).json()
    assert [item["link_id"] for item in second["data"]] == [made[0]]
    assert second == {**second, "has_more": False, "next_cursor": None}
    bad = client.get(BASE, params={"limit": 0, "cursor": "nope"}, headers=auth(key))
    assert bad.status_code == 422
    assert set(bad.json()["error"]["fields"]) == {"limit", "cursor"}


def test_counts_clicks_and_referrals(client, partner):
    key = partner["keys"]["sk_test"]
    link = create_link(client, key)
    client.get(path_of(link))
    assert submit(client, link).status_code == 200  # one more view, one referral
    record = client.get(f"{BASE}/{link['link_id']}", headers=auth(key)).json()
    assert record["clicks"] == 2
    assert record["referrals"] == 1
    listed = client.get(BASE, headers=auth(key)).json()["data"]
    assert [(item["clicks"], item["referrals"]) for item in listed] == [(2, 1)]


def test_delete_deactivates_and_is_repeatable(client, partner):
    key = partner["keys"]["sk_test"]
    link = create_link(client, key)
    response = client.delete(f"{BASE}/{link['link_id']}", headers=auth(key))
    assert response.status_code == 200
    gone = response.json()
    assert gone["active"] is False and gone["deactivated_at"] is not None
    again = client.delete(f"{BASE}/{link['link_id']}", headers=auth(key))
    assert again.status_code == 200
    assert again.json()["deactivated_at"] == gone["deactivated_at"]
    assert client.delete(f"{BASE}/lnk_unknown", headers=auth(key)).status_code == 404


def test_idempotency_key_is_honoured(client, partner):
    key = partner["keys"]["sk_test"]
    idem = str(uuid.uuid4())
    first = client.post(BASE, json={"campaign": "spring"}, headers=auth(key, idem))
    second = client.post(BASE, json={"campaign": "spring"}, headers=auth(key, idem))
    assert first.status_code == second.status_code == 201
    assert second.json()["link_id"] == first.json()["link_id"]
    assert second.headers.get("Idempotent-Replayed") == "true"
    other = client.post(BASE, json={"campaign": "autumn"}, headers=auth(key, idem))
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    listed = client.get(BASE, headers=auth(key)).json()["data"]
    assert len(listed) == 1
