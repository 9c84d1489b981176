"""WhatsApp Cloud API webhook bodies parsed into inbound messages and delivery statuses.

Follows Meta's documented shape: ``entry[].changes[]`` with ``field == "messages"``, whose
``value`` holds ``messages[]`` (what a patient sent) and ``statuses[]`` (news about what we
sent). Total over any JSON: the body is attacker-reachable until its signature is checked
and Meta adds types over time, so each unknown or garbled item is skipped, never raised on.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rehabref.channels.inbound import DELIVERY_STATUSES, InboundMessage, StatusUpdate

PROVIDER = "whatsapp"
MAX_MESSAGE_ID = 512

# Message types with no text or pick of ours to read; passed on (text None) so the dialogue
# can ask for a typed answer. Reactions and system notices are not answers: skipped.
WORDLESS_TYPES = frozenset(
    {"image", "audio", "video", "document", "sticker", "location", "contacts", "unsupported"}
)


def parse_webhook(
    payload: Any, *, phone_number_id: str | None = None
) -> list[InboundMessage | StatusUpdate]:
    """Every message and status in one webhook body, in order. With ``phone_number_id``,
    only those of that business number (one Meta app may serve a staging number too)."""
    found: list[InboundMessage | StatusUpdate] = []
    for entry in _dicts(payload.get("entry") if isinstance(payload, dict) else None):
        for change in _dicts(entry.get("changes")):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, dict):
                continue
            number = _field(value.get("metadata"), "phone_number_id")
            if phone_number_id is not None and number != phone_number_id:
                continue
            for message in _dicts(value.get("messages")):
                inbound = _message(message)
                if inbound is not None:
                    found.append(inbound)
            for status in _dicts(value.get("statuses")):
                update = _status(status)
                if update is not None:
                    found.append(update)
    return found


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _field(container: Any, name: str) -> Any:
    return container.get(name) if isinstance(container, dict) else None


def _when(value: Any) -> datetime | None:
    """Meta's ``timestamp``: Unix seconds, as a string of digits."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    text = str(value)
    if not text.isascii() or not text.isdigit() or len(text) > 10:  # past 2286: garbage
        return None
    return datetime.fromtimestamp(int(text), tz=UTC)


def _sender(value: Any) -> str | None:
    """WhatsApp ids are E.164 digits without "+"."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit():
        return None
    return "+" + value if 7 <= len(value) <= 15 and value[0] != "0" else None


def _id(value: Any) -> str | None:
    text = _text(value)
    return text if text is not None and len(text) <= MAX_MESSAGE_ID else None


def _message(message: dict[str, Any]) -> InboundMessage | None:
    wamid = _id(message.get("id"))
    sender = _sender(message.get("from"))
    at = _when(message.get("timestamp"))
    kind = message.get("type")
    if wamid is None or sender is None or at is None or not isinstance(kind, str):
        return None
    text: str | None = None
    choice: str | None = None
    if kind == "text":
        text = _text(_field(message.get("text"), "body"))
        if text is None:
            return None
    elif kind == "interactive":
        interactive = message.get("interactive")
        reply_kind = _field(interactive, "type")
        if reply_kind not in ("button_reply", "list_reply"):
            return None
        choice = _id(_field(_field(interactive, reply_kind), "id"))
        if choice is None:
            return None
    elif kind == "button":  # a template's quick-reply button
        choice = _id(_field(message.get("button"), "payload"))
        if choice is None:
            return None
    elif kind in WORDLESS_TYPES:
        text = _text(_field(message.get(kind), "caption"))
    else:
        return None
    context = _id(_field(message.get("context"), "id"))
    return InboundMessage(PROVIDER, wamid, sender, text, choice, at, context_id=context)


def _status(status: dict[str, Any]) -> StatusUpdate | None:
    wamid = _id(status.get("id"))
    value = status.get("status")
    at = _when(status.get("timestamp"))
    if wamid is None or at is None or value not in DELIVERY_STATUSES:
        return None
    ours = _id(status.get("biz_opaque_callback_data"))
    return StatusUpdate(
        PROVIDER, wamid, value, _error_code(status.get("errors")), at, our_message_id=ours
    )


def _error_code(errors: Any) -> str | None:
    for error in _dicts(errors):
        code = error.get("code")
        if isinstance(code, int) and not isinstance(code, bool):
            return str(code)
        if isinstance(code, str) and code.isascii() and code.isdigit() and len(code) <= 12:
            return code
    return None
