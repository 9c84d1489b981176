"""Structured JSON logs and redaction: no key, phone, e-mail, reason text or patient link ever
reaches a log line, and every access line carries the request context (rehabref.logging)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from rehabref.logging import (
    JsonFormatter,
    configure_logging,
    partner_id_var,
    redact,
    request_id_var,
)
from tests.support.api import REFERRALS, bearer, create
from tests.support.partners import onboard
from tests.support.payloads import v1_referral
from tests.support.server import ServerProcess

PHONE = "+2348031234567"
EMAIL = "amaka.logcanary@example.com"
REASON = "Shoulder impingement LOGCANARY-REASON after fall"
METADATA_VALUE = "LOGCANARY-META"


# --- redaction (unit) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key sk_test_" + "a" * 43, "a" * 43),
        ("key sk_live_" + "B" * 43, "B" * 43),
        ("key pk_test_" + "c" * 43, "c" * 43),
        ("whsec_test_" + "d" * 43, "d" * 43),
        ("Authorization: Bearer op_" + "e" * 43, "e" * 43),
        ("bearer abc.def.ghi", "abc.def.ghi"),
        ("GET /a/ast_01abcdefghjkmnpqrstvwxyz01.1795392563.ZOlNrANJUNM", "ZOlNrANJUNM"),
        ("http://host/a/ast_01abcdefghjkmnpqrstvwxyz01.1.sig", "ast_01abcdefghjkmnpqrstvwxyz01"),
        ("GET http://host/calendar/3q2-7wAbCdEfGhIjKlMnOpQrStUvWxYz_0123456789.ics", "3q2-7wAb"),
        ("mail amaka@example.com now", "amaka@example.com"),
        ("mail first.last+tag@sub.example.co.uk", "first.last+tag@sub.example.co.uk"),
        ("call +2348031234567", "+2348031234567"),
        ("call +14155552671.", "+14155552671"),
        ("call 08031234567", "08031234567"),
    ],
)
def test_redact_removes_secrets_and_contact_details(text, secret):
    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "ref_01m809cstsvpbwj51dg1xwmkzx created",
        "status 201 in 12.5 ms",
        "partner ptn_01m809bvyeth27r8tb7gte69jf",
        "route /api/v1/partners/referrals/{referral_id}",
    ],
)
def test_redact_leaves_ids_and_numbers_alone(text):
    assert redact(text) == text


def format_record(message: str, **extra: Any) -> dict[str, Any]:
    record = logging.LogRecord("rehabref.test", logging.INFO, __file__, 1, message, None, None)
    for name, value in extra.items():
        setattr(record, name, value)
    return dict(json.loads(JsonFormatter().format(record)))


def test_formatter_writes_one_json_object_with_context():
    request_token = request_id_var.set("req_abc")
    partner_token = partner_id_var.set("ptn_xyz")
    try:
        entry = format_record("hello", status=201)
    finally:
        request_id_var.reset(request_token)
        partner_id_var.reset(partner_token)
    assert entry["msg"] == "hello"
    assert entry["level"] == "info"
    assert entry["logger"] == "rehabref.test"
    assert entry["request_id"] == "req_abc"
    assert entry["partner_id"] == "ptn_xyz"
    assert entry["status"] == 201
    assert entry["ts"].endswith("Z")


def test_formatter_redacts_extra_fields_and_drops_exception_messages():
    entry = format_record("sent to +2348031234567", target="amaka@example.com")
    assert "+2348031234567" not in json.dumps(entry)
    assert "amaka@example.com" not in json.dumps(entry)
    try:
        raise ValueError(f"bad phone {PHONE}")
    except ValueError:
        record = logging.LogRecord(
            "rehabref.test", logging.ERROR, __file__, 1, "failed", None, sys.exc_info()
        )
    line = JsonFormatter().format(record)
    assert json.loads(line)["error_type"] == "ValueError"
    assert PHONE not in line and "bad phone" not in line and "Traceback" not in line


# --- a real server's logs -----------------------------------------------------------------


@pytest.fixture(scope="module")
def logged(database_url, tmp_path_factory) -> Iterator[dict[str, Any]]:
    """A dedicated server driven through creates, replays, errors and patient pages."""
    log_path = tmp_path_factory.mktemp("logging") / "server.log"
    server = ServerProcess(database_url, log_path, REHABREF_LOG_LEVEL="DEBUG").start("--no-worker")
    partner = onboard(database_url, name="Log Clinic")
    keys = partner["keys"]
    key = keys["sk_test"]
    urls: list[str] = []
    try:
        with httpx.Client(base_url=server.base_url) as http:
            for route in ("assistant", "contact"):
                body = v1_referral(
                    route=route,
                    reason=REASON,
                    metadata={"campaign": METADATA_VALUE},
                    patient={"first_name": "Amaka", "phone": PHONE, "email": EMAIL, "city": "Jos"},
                )
                first = create(
                    http,
                    key,
                    body,
                    idempotency_key=f"log-{route}",
                    headers={"X-Request-ID": f"log-probe-{route}"},
                )
                assert first.status_code == 201
                replay = create(http, key, body, idempotency_key=f"log-{route}")
                assert replay.headers["idempotent-replayed"] == "true"
                if first.json()["assistant_session_url"]:
                    urls.append(first.json()["assistant_session_url"])
            # Errors that echo patient data back in their request bodies.
            bad = v1_referral(reason=REASON)
            bad["patient"]["phone"] = "0803 123 4567"
            assert create(http, key, bad).status_code == 422
            assert create(http, key, v1_referral(care_mode="x", reason=REASON)).status_code == 422
            assert (
                http.post(
                    REFERRALS,
                    content=f'{{"reason": "{REASON}"'.encode(),
                    headers={
                        **bearer(key),
                        "Content-Type": "application/json",
                        "Idempotency-Key": "x",
                    },
                ).status_code
                == 400
            )
            assert create(http, keys["pk_test"]).status_code == 403
            assert http.get(REFERRALS, headers=bearer("sk_test_" + "Z" * 43)).status_code == 401
            assert (
                http.get(REFERRALS, params={"external_ref": PHONE}, headers=bearer(key)).status_code
                == 200
            )
            assert http.get(f"{REFERRALS}/{EMAIL}", headers=bearer(key)).status_code == 404
            assert http.get(REFERRALS, headers=bearer(keys["sk_live"])).status_code == 200
            for url in urls:
                assert http.get(url).status_code == 200
                assert http.get(url[:-3] + "xyz").status_code == 404
    finally:
        server.stop()
    yield {"logs": server.logs(), "partner": partner, "urls": urls}


def test_no_secret_or_patient_data_in_server_logs(logged):
    logs = logged["logs"]
    assert "log-probe-assistant" in logs  # the log really is this server's
    forbidden = [
        *logged["partner"]["keys"].values(),
        PHONE,
        PHONE[1:],
        "08031234567",
        "0803 123 4567",
        EMAIL,
        "logcanary@",
        "LOGCANARY-REASON",
        "Shoulder impingement",
        METADATA_VALUE,
        "Z" * 43,
    ]
    for url in logged["urls"]:
        token = url.rsplit("/", 1)[1]
        forbidden += [url, token, token.rsplit(".", 1)[1]]
    for value in forbidden:
        assert value not in logs, f"{value[:12]}... leaked into the logs"


def access_lines(logs: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("logger") == "rehabref.access"]


def test_every_log_line_is_json(logged):
    for line in logged["logs"].splitlines():
        assert isinstance(json.loads(line), dict), line


def test_access_lines_carry_the_request_context(logged):
    lines = access_lines(logged["logs"])
    assert len(lines) >= 15
    for line in lines:
        assert {"request_id", "partner_id", "route", "status", "latency_ms", "method"} <= set(line)
        assert isinstance(line["status"], int)
        assert isinstance(line["latency_ms"], int | float) and line["latency_ms"] >= 0
    probe = [line for line in lines if line["request_id"] == "log-probe-assistant"]
    assert len(probe) == 1
    assert probe[0]["partner_id"] == logged["partner"]["partner_id"]
    assert probe[0]["route"] == "/api/v1/partners/referrals"
    assert probe[0]["status"] == 201
    statuses = {line["status"] for line in lines}
    assert {200, 201, 400, 401, 403, 404, 422} <= statuses


def test_access_lines_name_route_templates_not_raw_paths(logged):
    routes = {line["route"] for line in access_lines(logged["logs"])}
    assert "/a/{token}" in routes
    assert "/api/v1/partners/referrals/{referral_id}" in routes
    assert not any("ast_" in route or "@" in route for route in routes)


def test_unauthenticated_lines_have_no_partner(logged):
    for line in access_lines(logged["logs"]):
        if line["status"] == 401:
            assert line["partner_id"] is None


def test_driver_loggers_stay_quiet_even_at_debug():
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        configure_logging("DEBUG")
        for name in ("aiosqlite", "asyncpg", "sqlalchemy.engine", "httpx", "httpcore"):
            assert logging.getLogger(name).getEffectiveLevel() >= logging.WARNING
        assert logging.getLogger("rehabref.access").getEffectiveLevel() == logging.DEBUG
        assert logging.getLogger("uvicorn.access").disabled
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
