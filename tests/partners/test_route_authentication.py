"""Every JSON route's one authentication step over HTTP, by kind (``PlainRoute.auth``): the
answers for a missing, invalid or wrong kind of credential come before anything the handler
reads (the body, the query, the path), and a partner key is counted once per request."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from rehabref.api.authentication import PARTNER_SECRET
from rehabref.api.report_link_auth import REPORT_LINK
from rehabref.app import JSON_ROUTES
from rehabref.ops.auth import ADMIN, OPERATOR
from rehabref.plain_asgi import PUBLIC, PlainRoute
from tests.support.api import REFERRALS, bearer, create, error_of
from tests.support.operators import OPS
from tests.support.server import ServerProcess

PARTNER_KEY_MESSAGE = "Missing or invalid API key."
OPERATOR_MESSAGE = "Missing, invalid or expired operator token."


def routes_of(*kinds: object) -> list[PlainRoute]:
    return [route for route in JSON_ROUTES if any(route.auth is kind for kind in kinds)]


def path_of(route: PlainRoute) -> str:
    """The route's template with each parameter filled (an id that exists nowhere)."""
    return re.sub(r"\{[a-z_]+\}", "x_00000000000000000000000000", route.path)


def route_id(route: PlainRoute) -> str:
    return f"{route.method} {route.path}"


def test_every_route_declares_one_of_the_known_kinds():
    known = (PARTNER_SECRET, OPERATOR, ADMIN, REPORT_LINK, PUBLIC)
    assert [route_id(r) for r in JSON_ROUTES if not any(r.auth is k for k in known)] == []
    # Only the provider webhooks check their own credential (a signature).
    assert {r.path.split("/")[1] for r in routes_of(PUBLIC)} == {"webhooks"}


@pytest.mark.parametrize("route", routes_of(PARTNER_SECRET), ids=route_id)
def test_partner_routes_without_a_valid_secret_key_are_401_before_the_body(client, route):
    for headers in ({}, bearer("sk_test_" + "x" * 32), {"Authorization": "Basic abc"}):
        response = client.request(route.method, path_of(route), content=b"{", headers=headers)
        assert error_of(response, 401, "unauthenticated")["message"] == PARTNER_KEY_MESSAGE
        assert response.headers["www-authenticate"] == 'Bearer realm="rehabref"'


@pytest.mark.parametrize("route", routes_of(OPERATOR, ADMIN), ids=route_id)
def test_ops_routes_refuse_partner_keys_and_missing_tokens_before_the_body(client, partner, route):
    path = path_of(route)
    response = client.request(route.method, path, content=b"{")
    error_of(response, 401, "unauthenticated")
    for key in partner["keys"].values():
        response = client.request(route.method, path, content=b"{", headers=bearer(key))
        assert error_of(response, 401, "unauthenticated")["message"] == OPERATOR_MESSAGE


def test_a_publishable_key_is_403_on_a_secret_key_route(client, partner):
    publishable = bearer(partner["keys"]["pk_test"])
    for route in routes_of(PARTNER_SECRET):
        response = client.request(route.method, path_of(route), content=b"{", headers=publishable)
        error = error_of(response, 403, "forbidden")
        assert error["message"] == (
            "Publishable keys cannot call this endpoint; use a secret key."
        ), route_id(route)


def test_an_operator_token_is_401_on_partner_routes(client, operator_token):
    error = error_of(client.get(REFERRALS, headers=bearer(operator_token)), 401)
    assert error["message"] == PARTNER_KEY_MESSAGE


def test_a_coordinator_is_403_on_admin_routes(client, operator_token):
    for route in routes_of(ADMIN):
        response = client.request(
            route.method, path_of(route), content=b"{", headers=bearer(operator_token)
        )
        assert error_of(response, 403, "forbidden")["message"] == (
            "Only an admin operator can do this."
        )


def test_a_report_link_route_refuses_a_bad_token(client):
    (route,) = routes_of(REPORT_LINK)
    response = client.get(path_of(route))
    assert error_of(response, 403, "forbidden")["message"] == (
        "This report link is invalid or has expired."
    )


@pytest.fixture(scope="module")
def hourly_limited(database_url, tmp_path_factory) -> Iterator[ServerProcess]:
    """A server whose per-key limit is per hour, so the counter never resets mid-test."""
    log_path = tmp_path_factory.mktemp("hourly") / "server.log"
    server = ServerProcess(database_url, log_path, REHABREF_RATE_LIMIT="1000/hour")
    yield server.start("--no-worker")
    server.stop()


def test_each_request_counts_once_against_the_key(hourly_limited, make_partner):
    key = make_partner()["keys"]["sk_test"]
    with httpx.Client(base_url=hourly_limited.base_url) as http:
        remaining = [
            http.get(REFERRALS, headers=bearer(key)).headers["ratelimit-remaining"],
            create(http, key).headers["ratelimit-remaining"],
            http.get(f"{REFERRALS}/x_0", headers=bearer(key)).headers["ratelimit-remaining"],
            http.post(REFERRALS, content=b"{", headers=bearer(key)).headers["ratelimit-remaining"],
        ]
    assert remaining == ["999", "998", "997", "996"]


def test_ops_paths_are_all_under_the_ops_prefix():
    # The operator kinds are exactly the /api/v1/ops routes: no partner route takes a token.
    assert all(r.path.startswith(OPS) for r in routes_of(OPERATOR, ADMIN))
    assert not any(r.path.startswith(OPS) for r in routes_of(PARTNER_SECRET))
