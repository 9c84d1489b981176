"""Every HTML page route (patient pages, hosted form, console), fuzzed with random forms, raw
bytes bodies and random query strings: whatever arrives, the answer is never a 5xx.

The routes come from the Litestar app's own route table (``create_app(...).routes``), so a
page added later is fuzzed too. Path values are real where the page needs one to get past its
first check (an assistant token, a hosted link code, a referral id), and requests carry a
signed-in console session and valid form tokens, so the fuzzed fields reach the form handling.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.routes import HTTPRoute

from rehabref.app import create_app
from rehabref.config import load_settings
from tests.console.operators import csrf, make_operator, sign_in
from tests.links.hosted import create_link
from tests.support.api import created
from tests.support.fuzz import TRICKY_VALUES
from tests.support.partners import onboard
from tests.support.server import ServerProcess

PAGE_ROUTES = [
    (method, route.path_format)
    for route in create_app(load_settings({})).routes
    if isinstance(route, HTTPRoute)
    for method in sorted(route.methods - {"OPTIONS", "HEAD"})
]
FORM_NAMES = (
    "to",
    "reason",
    "scheduled_at",
    "care_mode",
    "amount",
    "currency",
    "outcome",
    "note",
    "modality",
    "session_type",
    "physio_id",
    "at",
    "lat",
    "lng",
    "pain_before",
    "pain_after",
    "notes_summary",
    "text",
    "choice",
    "token",
    "name",
    "phone",
    "first_name",
    "city",
    "areas",
    "rating",
    "weekly_capacity",
)
_FORM_TOKEN = re.compile(r'name="(form_token|csrf_token)" value="([^"]+)"')

values = st.one_of(
    st.sampled_from(TRICKY_VALUES),
    st.text(max_size=40),
    st.binary(max_size=20).map(lambda raw: raw.decode("latin-1")),
)
forms = st.lists(st.tuples(st.sampled_from(FORM_NAMES) | st.text(max_size=8), values), max_size=6)
bodies = st.one_of(
    forms.map(lambda pairs: ("form", pairs)),
    st.lists(st.tuples(st.sampled_from(FORM_NAMES), st.binary(max_size=20)), max_size=4).map(
        lambda parts: ("multipart", parts)
    ),
    st.binary(max_size=300).map(lambda raw: ("raw", raw)),
)
BOUNDARY = "fuzzboundary"


def _multipart(tokens: dict[str, str], parts: list[tuple[str, bytes]]) -> bytes:
    """A multipart body whose fields hold any bytes (UTF-8 or not)."""
    fields = [(name, value.encode()) for name, value in tokens.items()] + parts
    chunks = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        + value
        + b"\r\n"
        for name, value in fields
    ]
    return b"".join(chunks) + f"--{BOUNDARY}--\r\n".encode()


queries = st.lists(st.tuples(st.text(max_size=8), values), max_size=3).map(
    lambda pairs: "&".join(
        f"{quote(k.encode('utf-8', 'surrogatepass'), safe='')}="
        f"{quote(v.encode('utf-8', 'surrogatepass'), safe='')}"
        for k, v in pairs
    )
)
random_segment = st.text(min_size=1, max_size=30).map(
    lambda value: quote(value.encode("utf-8", "surrogatepass"), safe="")
)


def _form_tokens(page: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in _FORM_TOKEN.findall(page.text)}


@pytest.fixture(scope="module")
def real_values(server: ServerProcess, partner_module: dict[str, Any]) -> dict[str, str]:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        key = partner_module["keys"]["sk_test"]
        referral = created(http, key)
        link = create_link(http, key)
    token = urlsplit(referral["assistant_session_url"]).path.rsplit("/", 1)[1]
    return {
        "token": token,
        "public_code": link["public_code"],
        "referral_id": referral["referral_id"],
    }


@pytest.fixture(scope="module")
def partner_module(database_url: str) -> dict[str, Any]:
    return onboard(database_url, name="Fuzzed Pages Clinic")


@pytest.mark.parametrize(("method", "template"), PAGE_ROUTES, ids=lambda v: str(v))
def test_no_page_request_is_answered_with_a_server_error(
    method: str,
    template: str,
    server: ServerProcess,
    database_url: str,
    real_values: dict[str, str],
) -> None:
    names = re.findall(r"{(\w+)}", template)
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert sign_in(http, make_operator(database_url)["token"]).status_code == 303
        tokens = {"csrf_token": csrf(http.get("/console"))}
        # The patient pages' own form tokens (and the hosted form's binding cookie).
        for page in (f"/a/{real_values['token']}", f"/r/{real_values['public_code']}"):
            tokens.update(_form_tokens(http.get(page)))

        @settings(
            max_examples=30,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            body=bodies,
            query=queries,
            segments=st.lists(
                st.one_of(st.just(None), random_segment), min_size=len(names), max_size=len(names)
            ),
        )
        def fuzz(body: tuple[str, Any], query: str, segments: list[str | None]) -> None:
            path = template
            for name, segment in zip(names, segments, strict=True):
                value = segment or real_values.get(name) or "start"
                path = path.replace("{" + name + "}", value)
            url = path + (f"?{query}" if query else "")
            kind, content = body
            content_type = "application/x-www-form-urlencoded"
            if kind == "form":
                content = urlencode([*tokens.items(), *content]).encode()
            elif kind == "multipart":
                content = _multipart(tokens, content)
                content_type = f"multipart/form-data; boundary={BOUNDARY}"
            response = http.request(
                method, url, content=content, headers={"Content-Type": content_type}
            )
            assert response.status_code < 500, (method, url, body, response.text[:500])

        fuzz()
