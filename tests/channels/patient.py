"""A patient on WhatsApp, played by the tests: what the Graph API stand-in received for a
number, and signed replies as Meta would post them."""

from __future__ import annotations

from typing import Any

from tests.channels.conftest import APP_SECRET, wait_for
from tests.support.graph_api import (
    GraphApi,
    inbound_button,
    inbound_list,
    inbound_template_button,
    inbound_text,
    signed_headers,
)

PREFERRED = ("lang:en", "consent:yes", "mode:home_visit", "slot:weekends", "confirm:yes")


def sent_to(graph: GraphApi, phone: str) -> list[dict[str, Any]]:
    digits = phone.removeprefix("+")
    bodies = [request.json() for request in list(graph.requests)]
    return [body for body in bodies if body.get("to") == digits]


def nth_message(graph: GraphApi, phone: str, n: int) -> dict[str, Any]:
    wait_for(lambda: len(sent_to(graph, phone)) >= n, what=f"message {n} to the patient")
    return sent_to(graph, phone)[n - 1]


def choices(message: dict[str, Any]) -> list[str]:
    if message["type"] == "template":
        return [
            component["parameters"][0]["payload"]
            for component in message["template"]["components"]
            if component["type"] == "button"
        ]
    if message["type"] != "interactive":
        return []
    action = message["interactive"]["action"]
    if "buttons" in action:
        return [button["reply"]["id"] for button in action["buttons"]]
    return [row["id"] for section in action["sections"] for row in section["rows"]]


def post_signed(client, body: bytes):
    return client.post("/webhooks/whatsapp", content=body, headers=signed_headers(APP_SECRET, body))


def answer(client, phone: str, message: dict[str, Any]) -> str:
    """Reply as a patient would: tap the preferred choice, or type an area."""
    offered = choices(message)
    wanted = next((choice for choice in PREFERRED if choice in offered), None)
    if message["type"] == "template" and wanted:
        body = inbound_template_button(phone, wanted, wanted)
    elif wanted and message["interactive"]["type"] == "button":
        body = inbound_button(phone, wanted, wanted)
    elif wanted:
        body = inbound_list(phone, wanted, wanted)
    else:
        wanted = "Yaba"
        body = inbound_text(phone, wanted)
    assert post_signed(client, body).status_code == 200
    return wanted
