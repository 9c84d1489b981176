"""The error body of spec section 7 on every error path, with stable codes (rehabref.errors)."""

from __future__ import annotations

import json
import uuid

import asyncpg
import httpx
import pytest
from sqlalchemy import make_url, text
from sqlalchemy.exc import DBAPIError

from rehabref.db import Database
from rehabref.errors import ApiError, database_unavailable, error_body
from tests.support.api import REFERRALS, bearer, create, error_of
from tests.support.databases import postgres_admin_url
from tests.support.payloads import v1_referral
from tests.support.server import ServerProcess, free_port

ONE_MIB = 1024 * 1024


def post_raw(client, key, content, content_type="application/json", **headers):
    return client.post(
        REFERRALS,
        content=content,
        headers={
            **bearer(key),
            "Content-Type": content_type,
            "Idempotency-Key": "raw-1",
            **headers,
        },
    )


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "sk_test_" + "a" * 43,  # no scheme
        "Bearer sk_test_short",
        "Bearer sk_test_" + "a" * 43,  # well formed, unknown
        "Bearer sk_prod_" + "a" * 43,
        "Bearer whsec_test_" + "a" * 43,
        "Bearer op_" + "a" * 43,
    ],
)
def test_missing_malformed_or_unknown_key_is_401(client, authorization):
    headers = {} if authorization is None else {"Authorization": authorization}
    for response in (
        client.get(REFERRALS, headers=headers),
        client.get(f"{REFERRALS}/ref_00000000000000000000000000", headers=headers),
        client.post(REFERRALS, json=v1_referral(), headers={**headers, "Idempotency-Key": "k"}),
    ):
        error = error_of(response, 401, "unauthenticated")
        assert error["fields"] == {}
        assert response.headers["www-authenticate"] == 'Bearer realm="rehabref"'


def test_webhook_secret_is_not_an_api_key(client, partner):
    error_of(client.get(REFERRALS, headers=bearer(partner["keys"]["whsec_test"])), 401)


def test_bearer_scheme_is_case_insensitive(client, partner):
    key = partner["keys"]["sk_test"]
    response = client.get(REFERRALS, headers={"Authorization": f"bearer {key}"})
    assert response.status_code == 200


def test_unknown_route_is_404(client):
    error = error_of(client.get("/api/v1/partners/nothing-here"), 404, "not_found")
    assert error["fields"] == {}
    error_of(client.get("/"), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", REFERRALS),
        ("PUT", REFERRALS),
        ("PATCH", f"{REFERRALS}/ref_00000000000000000000000000"),
        ("POST", f"{REFERRALS}/ref_00000000000000000000000000"),
        ("GET", "/v1/partner/referrals"),
    ],
)
def test_wrong_method_is_405_with_allow(client, partner, method, path):
    response = client.request(method, path, headers=bearer(partner["keys"]["sk_test"]))
    error_of(response, 405, "method_not_allowed")
    assert response.headers["allow"]


@pytest.mark.parametrize(
    "content",
    [b"{", b"{'single': 'quotes'}", b"", b"\xff\xfe", b'{"a": 1} trailing', b"NaN"],
)
def test_malformed_json_is_400(client, partner, content):
    error = error_of(post_raw(client, partner["keys"]["sk_test"], content), 400)
    assert error["code"] == "malformed_request"


@pytest.mark.parametrize("depth", [1_000, 300_000])
def test_absurdly_nested_json_is_400(client, partner, depth):
    body = json.dumps(v1_referral()).encode()
    nested = body[:-1] + b', "extra": ' + b"[" * depth + b"]" * depth + b"}"
    error = error_of(post_raw(client, partner["keys"]["sk_test"], nested), 400)
    assert error["code"] == "malformed_request"


def test_moderately_nested_unknown_field_is_a_field_error(client, partner):
    body = json.dumps(v1_referral()).encode()
    nested = body[:-1] + b', "extra": ' + b"[" * 500 + b"]" * 500 + b"}"
    error = error_of(post_raw(client, partner["keys"]["sk_test"], nested), 422)
    assert error["fields"] == {"extra": "Unknown field."}


@pytest.mark.parametrize("content", [b"[]", b"[1, 2]", b'"text"', b"42", b"null", b"true"])
def test_body_that_is_not_an_object_is_400(client, partner, content):
    error = error_of(post_raw(client, partner["keys"]["sk_test"], content), 400)
    assert error["code"] == "malformed_request"
    assert "object" in error["message"]


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "", "json"],
)
def test_wrong_content_type_is_400(client, partner, content_type):
    body = json.dumps(v1_referral()).encode()
    error = error_of(post_raw(client, partner["keys"]["sk_test"], body, content_type), 400)
    assert error["code"] == "malformed_request"
    assert "Content-Type" in error["fields"]


def test_json_content_type_with_charset_is_accepted(client, partner):
    body = json.dumps(v1_referral()).encode()
    response = post_raw(
        client,
        partner["keys"]["sk_test"],
        body,
        "application/json; charset=utf-8",
        **{"Idempotency-Key": "charset-ok"},
    )
    assert response.status_code == 201, response.text


def big_body(size: int) -> bytes:
    body = v1_referral()
    body["metadata"] = {"padding": ""}
    base = len(json.dumps(body).encode())
    body["metadata"]["padding"] = "x" * (size - base)
    encoded = json.dumps(body).encode()
    assert len(encoded) == size
    return encoded


def test_body_over_1_mib_is_413(client, partner):
    error = error_of(post_raw(client, partner["keys"]["sk_test"], big_body(ONE_MIB + 1)), 413)
    assert error["code"] == "payload_too_large"


def test_chunked_body_over_1_mib_is_413(client, partner):
    payload = big_body(2 * ONE_MIB)

    def chunks():
        for start in range(0, len(payload), 64 * 1024):
            yield payload[start : start + 64 * 1024]

    error = error_of(post_raw(client, partner["keys"]["sk_test"], chunks()), 413)
    assert error["code"] == "payload_too_large"


def test_body_of_exactly_1_mib_is_read(client, partner):
    # Read and validated (its metadata is too big), not refused for size.
    response = post_raw(client, partner["keys"]["sk_test"], big_body(ONE_MIB))
    error = error_of(response, 422, "validation_error")
    assert list(error["fields"]) == ["metadata"]


def test_field_errors_use_the_validation_code(client, partner):
    body = v1_referral()
    body["patient"]["phone"] = "0803 123 4567"
    error = error_of(create(client, partner["keys"]["sk_test"], body), 422, "validation_error")
    assert error["fields"]["patient.phone"]


# --- unit level -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "malformed_request"),
        (401, "unauthenticated"),
        (403, "forbidden"),
        (404, "not_found"),
        (409, "conflict"),
        (413, "payload_too_large"),
        (422, "validation_error"),
        (429, "rate_limited"),
        (500, "internal_error"),
        (503, "service_unavailable"),
    ],
)
def test_default_codes(status, code):
    error = ApiError(status)
    assert error.code == code
    assert error.message
    assert error.fields == {} and error.headers == {}


def test_explicit_code_message_fields_and_headers_win():
    error = ApiError(
        409, "duplicate_external_ref", "Exists.", fields={"a": "b"}, headers={"X": "1"}
    )
    assert (error.code, error.message, error.fields, error.headers) == (
        "duplicate_external_ref",
        "Exists.",
        {"a": "b"},
        {"X": "1"},
    )


def test_error_body_shape():
    encoded = error_body(code="not_found", message="Gone.", fields={}, request_id="req_1")
    assert json.loads(encoded) == {
        "error": {"code": "not_found", "message": "Gone.", "fields": {}, "request_id": "req_1"}
    }


def test_health_endpoints(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


def test_a_database_that_cannot_be_reached_is_503_with_retry_after(tmp_path):
    nothing_listens = free_port()
    server = ServerProcess(
        f"postgresql://postgres@127.0.0.1:{nothing_listens}/rehabref", tmp_path / "server.log"
    ).start("--no-worker", ready_path="/healthz")
    try:
        response = httpx.post(
            server.base_url + REFERRALS,
            json=v1_referral(),
            headers={**bearer("sk_test_" + "a" * 43), "Idempotency-Key": "db-down-1"},
            timeout=30,
        )
        readiness = httpx.get(server.base_url + "/readyz", timeout=30)
    finally:
        server.stop()
    error = error_of(response, 503, "service_unavailable")
    assert error["request_id"] == response.headers["X-Request-ID"]
    assert response.headers["Retry-After"] == "1"
    assert readiness.status_code == 503
    logs = server.logs()
    assert '"msg":"database unavailable"' in logs
    assert "unhandled error" not in logs


async def test_driver_errors_of_an_unavailable_database_are_told_apart(tmp_path, backend):
    missing_directory = tmp_path / "missing" / "rehabref.db"
    db = Database(f"sqlite:///{missing_directory}")
    with pytest.raises(Exception) as cannot_open:
        async with db.read() as conn:
            await conn.execute(text("SELECT 1"))
    await db.dispose()
    assert database_unavailable(cannot_open.value)
    assert not database_unavailable(ValueError("a bug"))

    if backend != "postgres":
        return
    # A role allowed no connections: PostgreSQL answers "too many connections" (53300).
    role = f"rehabref_refused_{uuid.uuid4().hex[:8]}"
    admin = make_url(postgres_admin_url())
    admin_conn = await asyncpg.connect(postgres_admin_url())
    try:
        await admin_conn.execute(f'CREATE ROLE "{role}" LOGIN CONNECTION LIMIT 0')
        refused_url = admin.set(username=role).render_as_string(hide_password=False)
        with pytest.raises(asyncpg.TooManyConnectionsError) as raw_refusal:
            await asyncpg.connect(refused_url)
        assert database_unavailable(raw_refusal.value)
        refused = Database(refused_url)
        with pytest.raises(DBAPIError) as wrapped_refusal:
            async with refused.read() as conn:
                await conn.execute(text("SELECT 1"))
        await refused.dispose()
        assert database_unavailable(wrapped_refusal.value)
        # A constraint violation is the request's business, not an outage.
        await admin_conn.execute("CREATE TEMP TABLE unique_things (id int PRIMARY KEY)")
        await admin_conn.execute("INSERT INTO unique_things VALUES (1)")
        with pytest.raises(asyncpg.UniqueViolationError) as violation:
            await admin_conn.execute("INSERT INTO unique_things VALUES (1)")
        assert not database_unavailable(violation.value)
    finally:
        await admin_conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        await admin_conn.close()
