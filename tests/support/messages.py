"""Patient messages as the tests read them from the database: sealed at rest
(channels/sealing.py), opened here with the test servers' key ring."""

from __future__ import annotations

import json
from typing import Any

from rehabref.channels.sealing import CONTENT, RECIPIENT, address_ref
from rehabref.crypto import open_stored
from tests.support.partners import TEST_RING


def opened_content(stored: str) -> dict[str, Any]:
    """A stored ``outbound_messages.content``: the JSON of ``channels.content.to_json``."""
    text = open_stored(TEST_RING, CONTENT, stored)
    assert text is not None
    decoded: dict[str, Any] = json.loads(text)
    return decoded


def opened_recipient(stored: str) -> str:
    """A stored ``outbound_messages.recipient``: the phone or e-mail address."""
    address = open_stored(TEST_RING, RECIPIENT, stored)
    assert address is not None
    return address


def ref_of(address: str) -> str:
    """The ``recipient_ref`` a message to ``address`` is stored under (its blind index)."""
    return address_ref(TEST_RING, address)
