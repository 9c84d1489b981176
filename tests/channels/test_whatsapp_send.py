"""WhatsAppCloud against a real loopback Graph API stand-in: exact request bodies for each
rendering, and every outcome branch."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from rehabref.channels.content import Choice, Reply, Template
from rehabref.channels.outcome import Accepted, Refused, Retry
from rehabref.channels.whatsapp import WhatsAppCloud
from tests.support.graph_api import Answer, GraphApi, sequence
from tests.support.server import free_port

PHONE = "+2348031234567"
DIGITS = "2348031234567"
ENVELOPE = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": DIGITS}


@pytest.fixture
def graph() -> Iterator[GraphApi]:
    api = GraphApi().start()
    yield api
    api.stop()


@pytest.fixture
async def provider(graph: GraphApi) -> AsyncIterator[WhatsAppCloud]:
    client = WhatsAppCloud(graph.api_base, graph.token, graph.phone_number_id, timeout=0.3)
    yield client
    await client.aclose()


def sent_body(graph: GraphApi) -> dict[str, object]:
    body = graph.requests[-1].json()
    assert body.pop("biz_opaque_callback_data") == "msg_1"
    return body


async def test_plain_text_with_link_is_posted_to_the_phone_numbers_messages_path(graph, provider):
    reply = Reply("Your referral is ready.", link="https://r.example/l/abc")
    outcome = await provider.send(to=PHONE, content=reply, message_id="msg_1")

    assert isinstance(outcome, Accepted) and outcome.provider_message_id.startswith("wamid.")
    request = graph.requests[-1]
    assert request.path == f"/v21.0/{graph.phone_number_id}/messages"
    assert request.authorization == f"Bearer {graph.token}"
    assert request.content_type == "application/json"
    assert sent_body(graph) == {
        **ENVELOPE,
        "type": "text",
        "text": {"body": "Your referral is ready.\nhttps://r.example/l/abc", "preview_url": False},
    }


async def test_up_to_three_choices_are_reply_buttons_with_titles_clipped_to_20(graph, provider):
    choices = (
        Choice("home", "Home visit"),
        Choice("clinic", "At the clinic, near my office"),
        Choice("remote", "Video call"),
    )
    await provider.send(to=PHONE, content=Reply("Where?", choices), message_id="msg_1")

    assert sent_body(graph) == {
        **ENVELOPE,
        "type": "interactive",
        "interactive": {
            "type": "button",
            "body": {"text": "Where?"},
            "action": {
                "buttons": [
                    {"type": "reply", "reply": {"id": "home", "title": "Home visit"}},
                    {"type": "reply", "reply": {"id": "clinic", "title": "At the clinic, near…"}},
                    {"type": "reply", "reply": {"id": "remote", "title": "Video call"}},
                ]
            },
        },
    }
    buttons = graph.requests[-1].json()["interactive"]["action"]["buttons"]
    assert all(len(b["reply"]["title"]) <= 20 for b in buttons)


async def test_four_to_ten_choices_are_a_list_with_rows_and_descriptions(graph, provider):
    choices = tuple(Choice(f"d{n}", f"Day {n}", "Morning" if n == 1 else "") for n in range(1, 5))
    reply = Reply("Pick a day", choices, list_button="See the days available now")
    await provider.send(to=PHONE, content=reply, message_id="msg_1")

    assert sent_body(graph) == {
        **ENVELOPE,
        "type": "interactive",
        "interactive": {
            "type": "list",
            "body": {"text": "Pick a day"},
            "action": {
                "button": "See the days availa…",
                "sections": [
                    {
                        "title": "See the days available…",
                        "rows": [
                            {"id": "d1", "title": "Day 1", "description": "Morning"},
                            {"id": "d2", "title": "Day 2"},
                            {"id": "d3", "title": "Day 3"},
                            {"id": "d4", "title": "Day 4"},
                        ],
                    }
                ],
            },
        },
    }


async def test_list_row_limits_and_a_long_body_keep_the_link(graph, provider):
    choices = tuple(Choice(f"c{n}", "T" * 30, "D" * 80) for n in range(10))
    reply = Reply("x" * 2000, choices, link="https://r.example/l/abc")
    await provider.send(to=PHONE, content=reply, message_id="msg_1")

    interactive = graph.requests[-1].json()["interactive"]
    body = interactive["body"]["text"]
    assert len(body) == 1024 and body.endswith("…\nhttps://r.example/l/abc")
    rows = interactive["action"]["sections"][0]["rows"]
    assert len(rows) == 10
    assert rows[0] == {"id": "c0", "title": "T" * 23 + "…", "description": "D" * 71 + "…"}


async def test_more_than_ten_choices_become_numbered_text(graph, provider):
    choices = tuple(Choice(f"c{n}", f"Option {n}") for n in range(1, 12))
    reply = Reply("Choose one", choices, link="https://r.example/x")
    await provider.send(to=PHONE, content=reply, message_id="msg_1")

    numbered = "\n".join(f"{n}. Option {n}" for n in range(1, 12))
    assert sent_body(graph) == {
        **ENVELOPE,
        "type": "text",
        "text": {
            "body": f"Choose one\n{numbered}\nReply with a number.\nhttps://r.example/x",
            "preview_url": False,
        },
    }


async def test_template_has_body_parameters_link_last_and_quick_reply_payloads(graph, provider):
    template = Template(
        name="referral_received",
        language="en",
        parameters=("Ada", "Lagos Physio"),
        text="Hello Ada, Lagos Physio referred you.",
        quick_replies=(Choice("yes", "Yes"), Choice("stop", "Stop")),
        link="https://r.example/l/abc",
    )
    await provider.send(to=PHONE, content=template, message_id="msg_1")

    assert sent_body(graph) == {
        **ENVELOPE,
        "type": "template",
        "template": {
            "name": "referral_received",
            "language": {"code": "en"},
            "components": [
                {
                    "type": "body",
                    "parameters": [
                        {"type": "text", "text": "Ada"},
                        {"type": "text", "text": "Lagos Physio"},
                        {"type": "text", "text": "https://r.example/l/abc"},
                    ],
                },
                {
                    "type": "button",
                    "sub_type": "quick_reply",
                    "index": "0",
                    "parameters": [{"type": "payload", "payload": "yes"}],
                },
                {
                    "type": "button",
                    "sub_type": "quick_reply",
                    "index": "1",
                    "parameters": [{"type": "payload", "payload": "stop"}],
                },
            ],
        },
    }


async def test_template_without_parameters_has_no_body_component(graph, provider):
    template = Template(name="hello_world", language="en_US", parameters=(), text="Hello")
    await provider.send(to=PHONE, content=template, message_id="msg_1")

    assert sent_body(graph)["template"] == {
        "name": "hello_world",
        "language": {"code": "en_US"},
        "components": [],
    }


async def test_server_error_then_success(graph, provider):
    graph.behaviour = sequence(Answer(500, code=1), Answer())
    first = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    second = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")

    assert first == Retry("whatsapp 1 api unknown error")
    assert isinstance(second, Accepted)


async def test_rate_limit_honours_retry_after(graph, provider):
    graph.behaviour = sequence(Answer(429, code=130429, retry_after="7"))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Retry("whatsapp 130429 throughput rate limit", 7.0)


async def test_plain_429_without_graph_body_still_retries(graph, provider):
    graph.behaviour = sequence(Answer(429, raw_body=b"slow down", retry_after="2.5"))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Retry("whatsapp http 429 rate limited", 2.5)


@pytest.mark.parametrize("code", [1, 2, 4, 80007, 130429, 131000, 131016, 131048, 131056])
async def test_temporary_graph_codes_retry_even_on_400(graph, provider, code):
    graph.behaviour = sequence(Answer(400, code=code))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert isinstance(outcome, Retry) and outcome.reason.startswith(f"whatsapp {code} ")


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (131026, "whatsapp 131026 message undeliverable"),
        (131047, "whatsapp 131047 outside the 24h customer service window"),
        (131051, "whatsapp 131051 unsupported message type"),
        (131030, "whatsapp 131030 recipient not in allowed list"),
        (100, "whatsapp 100 invalid parameter"),
        (132001, "whatsapp 132001 template does not exist"),
        (132099, "whatsapp 132099 template error"),
        (999999, "whatsapp 999999 refused"),
    ],
)
async def test_permanent_graph_codes_are_refused(graph, provider, code, reason):
    graph.behaviour = sequence(Answer(400, code=code))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Refused(reason)
    assert DIGITS not in outcome.reason


async def test_a_bad_token_retries_and_says_the_operator_must_renew_it(graph):
    provider = WhatsAppCloud(graph.api_base, "wrong", graph.phone_number_id, timeout=0.3)
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    await provider.aclose()

    assert outcome == Retry("whatsapp 190 access token invalid or expired (operator must renew it)")
    assert "wrong" not in outcome.reason


async def test_a_hang_past_the_timeout_retries(graph, provider):
    graph.behaviour = sequence(Answer(delay=1.0))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Retry("whatsapp timeout")


async def test_connection_refused_retries():
    provider = WhatsAppCloud(f"http://127.0.0.1:{free_port()}/v21.0", "t", "1", timeout=0.3)
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    await provider.aclose()
    assert outcome == Retry("whatsapp network error (ConnectError)")


async def test_a_success_without_a_message_id_retries(graph, provider):
    graph.behaviour = sequence(Answer(200, raw_body=b'{"messages": []}'))
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    assert outcome == Retry("whatsapp answered without a message id")


async def test_a_garbled_error_body_follows_the_http_status(graph, provider):
    graph.behaviour = sequence(Answer(502, raw_body=b"<html>bad gateway</html>"))
    assert await provider.send(to=PHONE, content=Reply("hi"), message_id="m") == Retry(
        "whatsapp http 502 server error"
    )
    graph.behaviour = sequence(Answer(403, raw_body=b'{"error": {"code": true}}'))
    assert await provider.send(to=PHONE, content=Reply("hi"), message_id="m") == Refused(
        "whatsapp http 403 refused"
    )


async def test_the_stand_in_rejects_a_wrong_path_like_graph_does(graph):
    provider = WhatsAppCloud(graph.api_base, graph.token, "999", timeout=0.3)
    outcome = await provider.send(to=PHONE, content=Reply("hi"), message_id="msg_1")
    await provider.aclose()
    assert outcome == Refused("whatsapp 100 invalid parameter")
    assert graph.requests[-1].path == "/v21.0/999/messages"
