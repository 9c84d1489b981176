"""GET /api/v1/partners/webhook-endpoints pages like every other list (limit 1..100, cursor)."""

from __future__ import annotations

import pytest

from tests.conftest import auth
from tests.events.conftest import register

ENDPOINTS = "/api/v1/partners/webhook-endpoints"


def test_endpoint_list_pages_with_limit_and_cursor(client, make_partner):
    key = make_partner(name="Paging Clinic")["keys"]["sk_test"]
    made = [register(client, key, f"http://127.0.0.1:9/page{n}")["endpoint_id"] for n in range(3)]
    first = client.get(ENDPOINTS, params={"limit": 2}, headers=auth(key)).json()
    assert [e["endpoint_id"] for e in first["data"]] == made[::-1][:2]
    assert first["has_more"] is True and first["next_cursor"]
    second = client.get(
        ENDPOINTS, params={"limit": 2, "cursor": first["next_cursor"]}, headers=auth(key)
    ).json()
    assert [e["endpoint_id"] for e in second["data"]] == [made[0]]
    assert second["has_more"] is False and second["next_cursor"] is None
    everything = client.get(ENDPOINTS, headers=auth(key)).json()
    assert len(everything["data"]) == 3 and everything["has_more"] is False


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": "0"}, "limit"), ({"limit": "101"}, "limit"), ({"cursor": "nope"}, "cursor")],
)
def test_endpoint_list_rejects_bad_paging(client, partner, params, field):
    response = client.get(ENDPOINTS, params=params, headers=auth(partner["keys"]["sk_test"]))
    assert response.status_code == 422
    assert field in response.json()["error"]["fields"]
