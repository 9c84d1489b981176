"""Patient messages sealed at rest: whom they go to or come from, and what they say.

Threat: a database copy or backup must not reveal which numbers we message nor what was
written (a patient's first name and assistant link in our messages, their answers in
theirs). Every writer stores the address and the text sealed (``sealed_message_columns``,
``sealed_inbound_columns``) and the address's keyed blind index as its reference
(``address_ref``: per-recipient order, opt-outs, conversations, logs); every reader opens
them (``opened_message``, ``opened_inbound``) just before use. A number is looked up by its
index under every key of the ring (``address_refs``), so rows written before a key rotation
are still found. Values without the ``s1.`` envelope (rows from before migration 0029) are
read as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rehabref.channels.content import Content, to_json
from rehabref.crypto import (
    KeyRing,
    blind_index,
    blind_indexes,
    open_stored,
    seal,
    seal_optional,
)

RECIPIENT = "message.recipient"
CONTENT = "message.content"
SENDER = "message.sender"
TEXT = "message.text"
CHOICE = "message.choice_id"
# One index purpose for recipients and senders alike: a reply is matched to the
# conversation and the opt-out of the number we wrote to.
ADDRESS_INDEX = "message.recipient"


def address_ref(ring: KeyRing, address: str) -> str:
    """The reference a new row stores for a phone or e-mail address (the newest key's)."""
    return blind_index(ring, ADDRESS_INDEX, address)


def address_refs(ring: KeyRing, address: str) -> list[str]:
    """Every reference the address may be stored under (one per key of the ring)."""
    return blind_indexes(ring, ADDRESS_INDEX, address)


def legacy_address_ref(address: str) -> str:
    """The unkeyed reference used before migration 0029. Only opt-outs whose number the
    migration could not find keep it, and a STOP must keep working for them."""
    return hashlib.sha256(address.strip().lower().encode()).hexdigest()[:16]


def opt_out_refs(ring: KeyRing, address: str) -> list[str]:
    """What an opt-out of the address may be stored under: its index under every key, or
    the old unkeyed reference for a STOP the migration could not re-key."""
    return [*address_refs(ring, address), legacy_address_ref(address)]


def sealed_content(ring: KeyRing, content: Content) -> str:
    """The content as stored: its JSON (``channels.content.to_json``), sealed."""
    return seal(ring, CONTENT, json.dumps(to_json(content), separators=(",", ":")))


def sealed_message_columns(ring: KeyRing, to: str, content: Content) -> dict[str, str]:
    """``recipient``, ``recipient_ref`` and ``content`` of a new outbound message."""
    return {
        "recipient": seal(ring, RECIPIENT, to),
        "recipient_ref": address_ref(ring, to),
        "content": sealed_content(ring, content),
    }


def opened_message(ring: KeyRing, row: Mapping[Any, Any]) -> dict[str, Any]:
    """An outbound message row with its recipient in clear and its content as the JSON
    ``channels.content.from_json`` reads."""
    opened = dict(row)
    opened["recipient"] = open_stored(ring, RECIPIENT, row["recipient"])
    # A row from before 0029 holds the JSON text itself.
    opened["content"] = json.loads(open_stored(ring, CONTENT, row["content"]))
    return opened


def sealed_inbound_columns(
    ring: KeyRing, *, sender: str, text: str | None, choice_id: str | None
) -> dict[str, str | None]:
    """``sender``, ``sender_ref``, ``text`` and ``choice_id`` of a received message (a
    WhatsApp list row's id can carry the patient's words, so it is sealed too)."""
    return {
        "sender": seal(ring, SENDER, sender),
        "sender_ref": address_ref(ring, sender),
        "text": seal_optional(ring, TEXT, text),
        "choice_id": seal_optional(ring, CHOICE, choice_id),
    }


def opened_inbound(ring: KeyRing, row: Mapping[Any, Any]) -> dict[str, Any]:
    """A received message row with its sender, text and choice in clear."""
    opened = dict(row)
    opened["sender"] = open_stored(ring, SENDER, row["sender"])
    opened["text"] = open_stored(ring, TEXT, row["text"])
    opened["choice_id"] = open_stored(ring, CHOICE, row["choice_id"])
    return opened
