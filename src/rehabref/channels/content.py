"""What a patient message says, independent of the channel that carries it.

The intake dialogue speaks in ``Reply`` (text, optional choices, optional link); a
business-initiated WhatsApp message must be an approved ``Template``. Each provider client
renders these for its channel (WhatsApp reply buttons or a list, numbered choices in an SMS,
an e-mail's text and HTML parts), so the dialogue never knows which channel it talks on.

Both are stored as JSON on the message row (``to_json`` / ``from_json``): the worker sends
from the row, and the coordinator's timeline shows ``plain_text``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

Channel = Literal["whatsapp", "sms", "email"]
CHANNELS: tuple[Channel, ...] = ("whatsapp", "sms", "email")


@dataclass(frozen=True)
class Choice:
    """One answer the patient can pick. ``id`` comes back in the reply (a button or list
    row id on WhatsApp); ``title`` is what they see (WhatsApp: at most 20 characters for a
    button, 24 for a list row); ``description`` shows under a list row only."""

    id: str
    title: str
    description: str = ""


@dataclass(frozen=True)
class Reply:
    """A message inside a conversation: text, then choices (up to 3 as buttons, up to 10 as
    a list on WhatsApp; numbered on SMS), then a link on its own line."""

    text: str
    choices: tuple[Choice, ...] = ()
    link: str | None = None
    # The button that opens a list of more than three choices (WhatsApp, 20 characters).
    list_button: str = "Choose"
    # E-mail only.
    subject: str = "Your physiotherapy referral"


@dataclass(frozen=True)
class Template:
    """A business-initiated WhatsApp message: an approved template, its body parameters and
    its quick-reply button payloads (index order). ``text`` is the same message written out
    in full: the SMS fallback and the coordinator's timeline use it."""

    name: str
    language: str
    parameters: tuple[str, ...]
    text: str
    quick_replies: tuple[Choice, ...] = ()
    link: str | None = None


Content = Reply | Template


# Where choices are written out (SMS, a WhatsApp list too long to show), they are answered
# by number.
NUMBER_HINT = "Reply with a number."


def numbered(choices: tuple[Choice, ...]) -> list[str]:
    """``1. Home visit``, one line per choice."""
    return [f"{n}. {choice.title}" for n, choice in enumerate(choices, start=1)]


def plain_text(content: Content) -> str:
    """The message as a person reads it (timeline, SMS fallback, an e-mail's text part)."""
    lines = [content.text]
    if isinstance(content, Reply):
        lines += numbered(content.choices)
    else:
        lines += [f"[{choice.title}]" for choice in content.quick_replies]
    if content.link:
        lines.append(content.link)
    return "\n".join(lines)


def withdrawal_footer(link: str) -> str:
    return f"To withdraw your consent and stop this referral: {link} (or reply STOP)."


def with_withdrawal_link(content: Content, link: str) -> Content:
    """The message with the consent-withdrawal line after its text (NDPA: every message
    says how to withdraw). A WhatsApp template's approved body cannot change: the line
    reaches the SMS and e-mail renderings and the timeline, and STOP works on WhatsApp."""
    return replace(content, text=f"{content.text}\n\n{withdrawal_footer(link)}")


def as_reply(content: Content) -> Reply:
    """A template re-said as a conversation message (for SMS and e-mail, which have none)."""
    if isinstance(content, Reply):
        return content
    return Reply(text=content.text, choices=content.quick_replies, link=content.link)


def _choices(items: list[dict[str, str]]) -> tuple[Choice, ...]:
    return tuple(Choice(item["id"], item["title"], item.get("description", "")) for item in items)


def to_json(content: Content) -> dict[str, Any]:
    choices = content.choices if isinstance(content, Reply) else content.quick_replies
    encoded_choices = [
        {"id": c.id, "title": c.title, **({"description": c.description} if c.description else {})}
        for c in choices
    ]
    if isinstance(content, Template):
        return {
            "type": "template",
            "name": content.name,
            "language": content.language,
            "parameters": list(content.parameters),
            "text": content.text,
            "quick_replies": encoded_choices,
            "link": content.link,
        }
    return {
        "type": "reply",
        "text": content.text,
        "choices": encoded_choices,
        "link": content.link,
        "list_button": content.list_button,
        "subject": content.subject,
    }


def from_json(data: dict[str, Any]) -> Content:
    if data["type"] == "template":
        return Template(
            name=data["name"],
            language=data["language"],
            parameters=tuple(data["parameters"]),
            text=data["text"],
            quick_replies=_choices(data.get("quick_replies", [])),
            link=data.get("link"),
        )
    return Reply(
        text=data["text"],
        choices=_choices(data.get("choices", [])),
        link=data.get("link"),
        list_button=data.get("list_button", "Choose"),
        subject=data.get("subject", "Your physiotherapy referral"),
    )
