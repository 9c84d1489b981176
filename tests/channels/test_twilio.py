"""TwilioSms against a real loopback Messages API stand-in, and Twilio's webhook forms."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from rehabref.channels.content import Choice, Reply, Template
from rehabref.channels.inbound import InboundMessage, StatusUpdate
from rehabref.channels.outcome import Accepted, Refused, Retry
from rehabref.channels.twilio import TwilioSms, parse_inbound_sms, parse_status
from tests.support.server import free_port
from tests.support.twilio_api import Answer, TwilioApi, sequence

PHONE = "+2348031234567"
FROM = "+15005550006"
CALLBACK = "https://rehabref.example/hooks/twilio/status"


@pytest.fixture
def twilio() -> Iterator[TwilioApi]:
    api = TwilioApi().start()
    yield api
    api.stop()


def make(api: TwilioApi, token: str | None = None, callback: str | None = CALLBACK) -> TwilioSms:
    return TwilioSms(
        api.api_base, api.account_sid, token or api.auth_token, FROM, callback, timeout=0.3
    )


@pytest.fixture
async def provider(twilio: TwilioApi) -> AsyncIterator[TwilioSms]:
    client = make(twilio)
    yield client
    await client.aclose()


async def test_reply_with_choices_and_link_is_one_numbered_text(twilio, provider):
    reply = Reply(
        "Where should the physio see you?",
        (Choice("home", "Home visit"), Choice("clinic", "Clinic")),
        link="https://r.example/l/abc",
    )
    outcome = await provider.send(to=PHONE, content=reply, message_id="msg_1")

    assert isinstance(outcome, Accepted)
    assert outcome.provider_message_id.startswith("SM") and len(outcome.provider_message_id) == 34
    request = twilio.requests[-1]
    assert request.path == f"/2010-04-01/Accounts/{twilio.account_sid}/Messages.json"
    assert request.content_type == "application/x-www-form-urlencoded"
    assert request.form() == {
        "To": [PHONE],
        "From": [FROM],
        "Body": [
            "Where should the physio see you?\n1. Home visit\n2. Clinic\n"
            "Reply with a number.\nhttps://r.example/l/abc"
        ],
        "StatusCallback": [CALLBACK],
    }


async def test_plain_reply_without_callback_has_no_hint_and_no_status_callback(twilio):
    provider = make(twilio, callback=None)
    await provider.send(to=PHONE, content=Reply("Thank you."), message_id="msg_1")
    await provider.aclose()
    assert twilio.requests[-1].form() == {"To": [PHONE], "From": [FROM], "Body": ["Thank you."]}


async def test_template_is_sent_as_its_written_out_text(twilio, provider):
    template = Template(
        "referral_received",
        "en",
        ("Ada",),
        "Hello Ada, you were referred.",
        quick_replies=(Choice("yes", "Yes"), Choice("stop", "Stop")),
        link="https://r.example/l/x",
    )
    await provider.send(to=PHONE, content=template, message_id="msg_1")
    assert twilio.requests[-1].form()["Body"] == [
        "Hello Ada, you were referred.\n1. Yes\n2. Stop\nReply with a number.\nhttps://r.example/l/x"
    ]


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (21211, "twilio 21211 invalid To number"),
        (21610, "twilio 21610 recipient unsubscribed"),
        (21614, "twilio 21614 To number is not a mobile number"),
        (21408, "twilio 21408 region not enabled"),
        (21612, "twilio 21612 cannot route to this number"),
        (21999, "twilio 21999"),
    ],
)
async def test_permanent_errors_are_refused(twilio, provider, code, reason):
    twilio.behaviour = sequence(Answer(400, code=code))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Refused(reason)


async def test_server_error_then_success(twilio, provider):
    twilio.behaviour = sequence(Answer(500, code=20500), Answer())
    assert await provider.send(to=PHONE, content=Reply("hi"), message_id="m") == Retry(
        "twilio 20500 server error"
    )
    assert isinstance(await provider.send(to=PHONE, content=Reply("hi"), message_id="m"), Accepted)


async def test_rate_limit_honours_retry_after(twilio, provider):
    twilio.behaviour = sequence(Answer(429, code=20429, retry_after="3"))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="m")
    assert outcome == Retry("twilio 20429 too many requests", 3.0)


async def test_wrong_credentials_retry_for_the_operator(twilio):
    provider = make(twilio, token="wrong-token")
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="m")
    await provider.aclose()
    assert outcome == Retry("twilio 20003 authentication failed (operator must fix credentials)")


async def test_timeout_retries(twilio, provider):
    twilio.behaviour = sequence(Answer(delay=1.0))
    assert await provider.send(to=PHONE, content=Reply("hi"), message_id="m") == Retry(
        "twilio timeout"
    )


async def test_connection_refused_retries():
    provider = TwilioSms(f"http://127.0.0.1:{free_port()}", "AC1", "t", FROM, None, timeout=0.3)
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="m")
    await provider.aclose()
    assert outcome == Retry("twilio network error (ConnectError)")


AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_parse_inbound_sms():
    form = {"MessageSid": "SMabc", "AccountSid": "AC1", "From": PHONE, "To": FROM, "Body": "2"}
    assert parse_inbound_sms(form, at=AT) == InboundMessage("twilio", "SMabc", PHONE, "2", None, AT)


@pytest.mark.parametrize("form", [{}, {"MessageSid": "SMabc"}, {"From": PHONE, "Body": "x"}])
def test_inbound_form_without_sid_or_sender_is_ignored(form):
    assert parse_inbound_sms(form, at=AT) is None


@pytest.mark.parametrize(
    ("twilio_status", "status"),
    [
        ("queued", "queued"),
        ("accepted", "queued"),
        ("scheduled", "queued"),
        ("sending", "sent"),
        ("sent", "sent"),
        ("delivered", "delivered"),
        ("read", "read"),
        ("undelivered", "failed"),
        ("failed", "failed"),
    ],
)
def test_parse_status_maps_twilio_statuses(twilio_status, status):
    form = {"MessageSid": "SMabc", "MessageStatus": twilio_status}
    assert parse_status(form, at=AT) == StatusUpdate("twilio", "SMabc", status, None, AT)


def test_parse_status_carries_the_error_code():
    form = {"MessageSid": "SMabc", "MessageStatus": "undelivered", "ErrorCode": "30006"}
    assert parse_status(form, at=AT) == StatusUpdate("twilio", "SMabc", "failed", "30006", AT)


@pytest.mark.parametrize(
    "form", [{}, {"MessageStatus": "sent"}, {"MessageSid": "SMabc", "MessageStatus": "lost"}]
)
def test_unknown_status_forms_are_ignored(form):
    assert parse_status(form, at=AT) is None
