"""Stored webhook events, sealed at rest.

Threat: an event's ``data`` and its delivery envelope (``body``) carry what partners are told
about a patient (for Shape G partners session notes, the physiotherapist's phone, the
diagnosis), so a database copy or backup must not reveal them. Every writer stores
``sealed_event_row(ring, row)`` (one AES-GCM call for the data, one for the body); every
reader opens them: ``event_data`` for the payload shown by the events API, the ops API, the
console and the export, ``event_body`` for the delivery worker, which opens the exact bytes
just before signing and sending them. The receiver's answer kept with each attempt is sealed
too (``RESPONSE_EXCERPT``): a receiver that echoes the body back would store it there.
Values without the ``s1.`` envelope (rows from before migration 0031) are read as they are.
"""

from __future__ import annotations

from typing import Any

import msgspec

from rehabref.crypto import (
    SEALED_PREFIX,
    KeyRing,
    open_sealed_bytes,
    open_stored,
    seal,
    seal_optional,
)

DATA = "event.data"
BODY = "event.body"
# What a partner's receiver answered (first 1 KiB): a receiver may echo the body back.
RESPONSE_EXCERPT = "delivery_attempt.response_excerpt"


def sealed_event_row(ring: KeyRing, row: dict[str, Any]) -> dict[str, Any]:
    """An ``events`` row as stored: ``data`` as sealed JSON text, ``body`` sealed."""
    return {
        **row,
        "data": seal(ring, DATA, msgspec.json.encode(row["data"]).decode()),
        "body": seal(ring, BODY, row["body"]),
    }


def event_data(ring: KeyRing, stored: str) -> dict[str, Any]:
    """The event's ``data``; a row stored before sealing holds plain JSON text."""
    text = open_stored(ring, DATA, stored)
    data: dict[str, Any] = msgspec.json.decode(text)
    return data


def event_body(ring: KeyRing, stored: str) -> bytes:
    """The exact envelope bytes that are signed and sent; a body stored before sealing is
    plain JSON and sent as it is."""
    raw = stored.encode()
    if stored.startswith(SEALED_PREFIX):
        return open_sealed_bytes(ring, BODY, raw)
    return raw


def sealed_excerpt(ring: KeyRing, excerpt: str | None) -> str | None:
    return seal_optional(ring, RESPONSE_EXCERPT, excerpt)


def opened_excerpt(ring: KeyRing, stored: str | None) -> str | None:
    return open_stored(ring, RESPONSE_EXCERPT, stored)
