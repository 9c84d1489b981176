"""A rehabref server wired to local provider stand-ins (WhatsApp Cloud API, Twilio, SMTP),
with its worker running in-process, for the end-to-end channel tests."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.support.graph_api import GraphApi
from tests.support.operators import operator_token  # noqa: F401 (a fixture)
from tests.support.server import ServerProcess
from tests.support.smtp_server import SmtpServer
from tests.support.twilio_api import TwilioApi

APP_SECRET = "meta-app-secret-for-tests"
VERIFY_TOKEN = "verify-token-for-tests"
TWILIO_FROM = "+15005550006"
EMAIL_FROM = "care@rehabref.test"


@pytest.fixture(scope="module")
def graph() -> Iterator[GraphApi]:
    api = GraphApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def twilio() -> Iterator[TwilioApi]:
    api = TwilioApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer().start()
    yield server
    server.stop()


def provider_env(graph: GraphApi, twilio: TwilioApi, smtp: SmtpServer) -> dict[str, str]:
    return {
        "REHABREF_WHATSAPP_API_BASE": graph.api_base,
        "REHABREF_WHATSAPP_ACCESS_TOKEN": graph.token,
        "REHABREF_WHATSAPP_PHONE_NUMBER_ID": graph.phone_number_id,
        "REHABREF_WHATSAPP_APP_SECRET": APP_SECRET,
        "REHABREF_WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN,
        "REHABREF_TWILIO_API_BASE": twilio.api_base,
        "REHABREF_TWILIO_ACCOUNT_SID": twilio.account_sid,
        "REHABREF_TWILIO_AUTH_TOKEN": twilio.auth_token,
        "REHABREF_TWILIO_FROM": TWILIO_FROM,
        "REHABREF_SMTP_URL": smtp.url,
        "REHABREF_EMAIL_FROM": EMAIL_FROM,
        "REHABREF_MESSAGE_RETRY_BASE_SECONDS": "0.2",
    }


@pytest.fixture(scope="module")
def live_server(
    database_url: str,
    graph: GraphApi,
    twilio: TwilioApi,
    smtp: SmtpServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    log_path = tmp_path_factory.mktemp("channels") / "server.log"
    process = ServerProcess(database_url, log_path, **provider_env(graph, twilio, smtp)).start()
    yield process
    process.stop()


@pytest.fixture
def api(live_server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.base_url, timeout=30) as http:
        yield http


def new_phone() -> str:
    """A Nigerian mobile number no other test uses (conversations are found by number)."""
    return f"+234803{random.randint(0, 9_999_999):07d}"


def wait_for(check: Callable[[], Any], *, timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
