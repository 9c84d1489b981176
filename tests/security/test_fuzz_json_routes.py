"""Every JSON route of the app's route table, fuzzed with raw bytes bodies, random path
values and random query strings: whatever arrives, the answer is never a 5xx.

The routes come from ``rehabref.app.JSON_ROUTES`` (the router's own table), so a route added
later is fuzzed without touching this file. Requests carry a valid key (a partner's or a
coordinator's, by path) so that they get past authentication to the body and query parsing.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote, quote_from_bytes

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rehabref.app import JSON_ROUTES
from tests.conftest import auth
from tests.support.fuzz import TRICKY_VALUES

# Query names the list endpoints read, plus anything else hypothesis makes up.
QUERY_NAMES = (
    "limit",
    "cursor",
    "status",
    "from_date",
    "to_date",
    "created_from",
    "created_to",
    "patient_phone",
    "referral_id",
    "event_type",
    "state",
    "shape",
    "environment",
    "q",
    "hub.mode",
    "hub.verify_token",
    "hub.challenge",
)
CONTENT_TYPES = ("application/json", "application/json; charset=utf-8", "text/plain", "")

# Bodies: any bytes; JSON-looking text with bytes that are not UTF-8 spliced in; deep nests.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
bodies = st.one_of(
    st.binary(max_size=512),
    json_values.map(lambda value: httpx.Request("POST", "/", json=value).content),
    st.tuples(st.binary(max_size=8), st.binary(min_size=1, max_size=8)).map(
        lambda parts: b'{"' + parts[0] + b'": "' + parts[1] + b'\xff\xfe"}'
    ),
    st.integers(min_value=1, max_value=3000).map(lambda depth: b"[" * depth + b"]" * depth),
)
query_values = st.one_of(
    st.sampled_from(TRICKY_VALUES),
    st.text(max_size=40),
    st.binary(max_size=20).map(lambda raw: raw.decode("latin-1")),
)
queries = st.one_of(
    st.lists(
        st.tuples(st.sampled_from(QUERY_NAMES) | st.text(max_size=10), query_values),
        max_size=4,
    ).map(
        lambda pairs: "&".join(
            f"{quote(name.encode('utf-8', 'surrogatepass'), safe='')}="
            f"{quote(value.encode('utf-8', 'surrogatepass'), safe='')}"
            for name, value in pairs
        )
    ),
    st.binary(max_size=60).map(lambda raw: quote_from_bytes(raw, safe="=&")),
)
segments = st.one_of(
    st.text(min_size=1, max_size=40),
    st.sampled_from(("ref_00000000000000000000000000", "x", "%", "..", "0" * 300)),
).map(lambda value: quote(value.encode("utf-8", "surrogatepass"), safe=""))


def _route_id(route: Any) -> str:
    return f"{route.method} {route.path}"


def _path(template: str, values: list[str]) -> str:
    parts = template.split("/")
    filled = iter(values)
    return "/".join(next(filled) if part.startswith("{") else part for part in parts)


@pytest.mark.parametrize("route", JSON_ROUTES, ids=_route_id)
def test_no_request_is_answered_with_a_server_error(
    route: Any, client: httpx.Client, partner: dict[str, Any], operator_token: str
) -> None:
    token = operator_token if "/ops/" in route.path else partner["keys"]["sk_test"]
    params = route.path.count("{")

    @settings(
        max_examples=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        body=bodies,
        query=queries,
        values=st.lists(segments, min_size=params, max_size=params),
        content_type=st.sampled_from(CONTENT_TYPES),
    )
    def fuzz(body: bytes, query: str, values: list[str], content_type: str) -> None:
        headers = auth(token, f"fuzz-{uuid.uuid4()}")
        if content_type:
            headers["Content-Type"] = content_type
        url = _path(route.path, values) + (f"?{query}" if query else "")
        response = client.request(route.method, url, content=body, headers=headers)
        assert response.status_code < 500, (route.method, url, body[:200], response.text)

    fuzz()
