"""parse_webhook over Meta's documented webhook bodies (built by the independent stand-in)
and over garbage of every shape, which must be skipped without raising."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehabref.channels.inbound import InboundMessage, StatusUpdate
from rehabref.channels.whatsapp import parse_webhook
from tests.support import graph_api

PHONE = "+2348031234567"
AT = datetime.fromtimestamp(1_700_000_000, tz=UTC)


def parse(body: bytes) -> list[InboundMessage | StatusUpdate]:
    return parse_webhook(json.loads(body))


def wamid_of(body: bytes) -> str:
    return str(json.loads(body)["entry"][0]["changes"][0]["value"]["messages"][0]["id"])


def test_text_message():
    body = graph_api.inbound_text(PHONE, "My back hurts")
    assert parse(body) == [
        InboundMessage("whatsapp", wamid_of(body), PHONE, "My back hurts", None, AT)
    ]


def test_reply_button_gives_the_choice_id():
    body = graph_api.inbound_button(PHONE, "home", "Home visit")
    expected = InboundMessage(
        "whatsapp", wamid_of(body), PHONE, None, "home", AT, context_id="wamid.ctx"
    )
    assert parse(body) == [expected]


def test_list_reply_gives_the_row_id():
    body = graph_api.inbound_list(PHONE, "d3", "Day 3", "Morning")
    assert parse(body) == [InboundMessage("whatsapp", wamid_of(body), PHONE, None, "d3", AT)]


def test_template_quick_reply_gives_the_payload():
    body = graph_api.inbound_template_button(PHONE, "stop", "Stop")
    expected = InboundMessage(
        "whatsapp", wamid_of(body), PHONE, None, "stop", AT, context_id="wamid.ctx"
    )
    assert parse(body) == [expected]


@pytest.mark.parametrize("value", ["sent", "delivered", "read"])
def test_statuses(value):
    body = graph_api.status("wamid.abc", value, timestamp=1_700_000_100)
    at = datetime.fromtimestamp(1_700_000_100, tz=UTC)
    assert parse(body) == [StatusUpdate("whatsapp", "wamid.abc", value, None, at)]


def test_failed_status_carries_the_error_code():
    body = graph_api.status("wamid.abc", "failed", error_code=131026)
    assert parse(body) == [StatusUpdate("whatsapp", "wamid.abc", "failed", "131026", AT)]


def test_media_message_is_passed_on_with_its_caption_or_no_text():
    body = json.loads(graph_api.inbound_text(PHONE, "x"))
    message = body["entry"][0]["changes"][0]["value"]["messages"][0]
    del message["text"]
    message.update(type="image", image={"id": "media1", "caption": "my x-ray"})
    assert [m.text for m in parse_webhook(body)] == ["my x-ray"]  # type: ignore[union-attr]
    message.update(type="audio", audio={"id": "media2"})
    del message["image"]
    parsed = parse_webhook(body)
    assert len(parsed) == 1 and isinstance(parsed[0], InboundMessage)
    assert (parsed[0].text, parsed[0].choice_id) == (None, None)


def test_several_entries_changes_messages_and_statuses_in_order():
    one = json.loads(graph_api.inbound_text(PHONE, "one"))
    two = json.loads(graph_api.status("wamid.s", "read"))
    one["entry"].append(two["entry"][0])
    one["entry"][0]["changes"].append(
        {"field": "account_update", "value": {"messages": [{"type": "text"}]}}
    )
    parsed = parse_webhook(one)
    assert [type(item).__name__ for item in parsed] == ["InboundMessage", "StatusUpdate"]


def message_with(**changes: Any) -> dict[str, Any]:
    body = json.loads(graph_api.inbound_text(PHONE, "hello"))
    message = body["entry"][0]["changes"][0]["value"]["messages"][0]
    for key, value in changes.items():
        if value is ...:
            del message[key]
        else:
            message[key] = value
    return dict(body)


GARBAGE: list[Any] = [
    None,
    [],
    "entry",
    17,
    {"entry": None},
    {"entry": {"changes": []}},
    {"entry": [None, 1, "x", [], {"changes": "x"}, {"changes": [None, {"field": "messages"}]}]},
    {"entry": [{"changes": [{"field": "messages", "value": []}]}]},
    {"entry": [{"changes": [{"field": "messages", "value": {"messages": {"a": 1}}}]}]},
    {"entry": [{"changes": [{"field": "messages", "value": {"statuses": [1, None, {}]}}]}]},
    message_with(**{"from": 2348031234567}),
    message_with(**{"from": "+2348031234567"}),
    message_with(**{"from": "٢٣٤٨٠٣١٢٣٤٥٦٧"}),
    message_with(**{"from": ...}),
    message_with(id=None),
    message_with(id="w" * 600),
    message_with(timestamp="soon"),
    message_with(timestamp=True),
    message_with(timestamp="9" * 40),
    message_with(timestamp=-5),
    message_with(type=None),
    message_with(type="reaction"),
    message_with(text={"body": None}),
    message_with(text="hello"),
    message_with(type="interactive", interactive={"type": "button_reply"}),
    message_with(type="interactive", interactive={"type": "nfm_reply", "nfm_reply": {}}),
    message_with(type="interactive", interactive={"type": "list_reply", "list_reply": {"id": 5}}),
    message_with(type="button", button=None),
    message_with(type="button", button={"payload": ""}),
]


@pytest.mark.parametrize("payload", GARBAGE)
def test_garbage_is_skipped_without_raising(payload):
    assert parse_webhook(payload) == []


def test_unknown_status_values_and_garbled_error_codes():
    body = json.loads(graph_api.status("wamid.abc", "deleted"))
    assert parse_webhook(body) == []
    body = json.loads(graph_api.status("wamid.abc", "failed"))
    body["entry"][0]["changes"][0]["value"]["statuses"][0]["errors"] = [{"code": True}, "x"]
    assert parse_webhook(body) == [StatusUpdate("whatsapp", "wamid.abc", "failed", None, AT)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "entry",
                    "changes",
                    "field",
                    "value",
                    "messages",
                    "statuses",
                    "id",
                    "from",
                    "timestamp",
                    "type",
                    "text",
                    "body",
                    "interactive",
                    "button",
                    "status",
                    "errors",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=60, deadline=None)
@given(json_values)
def test_any_json_shape_parses_without_raising(payload):
    assert isinstance(parse_webhook(payload), list)
