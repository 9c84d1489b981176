"""X-Request-ID: echoed when valid, generated when absent or invalid, equal to error.request_id,
present on every answer (rehabref.request_context)."""

from __future__ import annotations

import re

import pytest

from tests.support.api import REFERRALS, bearer, create, error_of
from tests.support.payloads import v1_referral

GENERATED = re.compile(r"^req_[0-9a-f]{32}$")


@pytest.mark.parametrize(
    "request_id", ["trace-1", "0af7651916cd43dd8448eb211c80319c", "a.b:c_d-e", "x" * 128]
)
def test_valid_request_id_is_echoed_on_success_and_error(client, partner, request_id):
    key = partner["keys"]["sk_test"]
    ok = client.get(REFERRALS, headers={**bearer(key), "X-Request-ID": request_id})
    assert ok.status_code == 200
    assert ok.headers["x-request-id"] == request_id
    failed = client.get(f"{REFERRALS}/missing", headers={**bearer(key), "X-Request-ID": request_id})
    assert error_of(failed, 404)["request_id"] == request_id


def test_request_id_is_generated_when_absent(client, partner):
    first = client.get(REFERRALS, headers=bearer(partner["keys"]["sk_test"]))
    second = client.get(REFERRALS, headers=bearer(partner["keys"]["sk_test"]))
    assert GENERATED.match(first.headers["x-request-id"])
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


@pytest.mark.parametrize(
    "request_id",
    [
        "has space",
        "x" * 129,
        "semi;colon",
        "<script>",
        "new\tline",
        "caf\u00e9".encode(),
    ],
)
def test_invalid_request_id_is_replaced(client, request_id):
    response = client.get(REFERRALS, headers={"X-Request-ID": request_id})
    error = error_of(response, 401)
    assert GENERATED.match(error["request_id"])


def test_one_request_id_per_response_header(client):
    response = client.get("/nowhere", headers={"X-Request-ID": "only-once"})
    assert response.headers.get_list("x-request-id") == ["only-once"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/openapi.json", 200),
        ("GET", "/docs", 200),
        ("GET", "/nowhere", 404),
        ("DELETE", REFERRALS, 405),
        ("GET", "/a/not-a-token", 404),
    ],
)
def test_every_answer_carries_a_request_id(client, method, path, status):
    response = client.request(method, path, headers={"X-Request-ID": "probe-7"})
    assert response.status_code == status
    assert response.headers["x-request-id"] == "probe-7"


def test_request_id_on_created_and_replayed_responses(client, partner):
    key, body = partner["keys"]["sk_test"], v1_referral()
    first = create(client, key, body, idempotency_key="ctx-1", headers={"X-Request-ID": "first"})
    again = create(client, key, body, idempotency_key="ctx-1", headers={"X-Request-ID": "second"})
    assert first.headers["x-request-id"] == "first"
    assert again.headers["x-request-id"] == "second"
    assert first.content == again.content


def test_nul_in_the_url_is_refused_with_the_error_body(client):
    response = client.get(f"{REFERRALS}?status=%00", headers={"X-Request-ID": "nul-1"})
    error = error_of(response, 400, "malformed_request")
    assert error["request_id"] == "nul-1"


def test_rate_limit_headers_on_authenticated_answers(client, partner):
    response = client.get(REFERRALS, headers=bearer(partner["keys"]["sk_test"]))
    assert int(response.headers["ratelimit-limit"]) > 0
    assert (
        0 <= int(response.headers["ratelimit-remaining"]) < int(response.headers["ratelimit-limit"])
    )
    assert int(response.headers["ratelimit-reset"]) >= 1


def test_api_answers_are_not_cached(client, partner):
    headers = {"Authorization": f"Bearer {partner['keys']['sk_test']}"}
    for response in (
        client.get("/api/v1/partners/referrals", headers=headers),
        client.get("/api/v1/partners/referrals/ref_00000000000000000000000000", headers=headers),
        client.get("/api/v1/partners/referrals"),
    ):
        assert response.headers.get_list("cache-control") == ["no-store"]
    assert "cache-control" not in client.get("/healthz").headers
