"""A message rendered as the JSON body of a WhatsApp Cloud API send (``POST /{id}/messages``).

Pure: content in, Graph API payload out. WhatsApp rejects a whole message when one field is
over its limit, so every limited field is clipped here (button title 20, list row title 24,
row description 72, interactive body 1024, list button 20) rather than refused at send time.

Templates: an approved template's variables are its body parameters in order. When the
template carries a link, the link is the LAST body parameter: the templates we submit for
approval end with the link variable (e.g. "... open {{3}}"), so a parameter count mismatch
shows up as Graph error 132000 at the first send rather than a silently missing link.
"""

from __future__ import annotations

from typing import Any

from rehabref.channels.content import NUMBER_HINT, Choice, Content, Reply, Template, numbered

BUTTON_TITLE_MAX = 20
LIST_ROW_TITLE_MAX = 24
LIST_ROW_DESCRIPTION_MAX = 72
LIST_BUTTON_MAX = 20
SECTION_TITLE_MAX = 24
INTERACTIVE_BODY_MAX = 1024
TEXT_BODY_MAX = 4096
MAX_BUTTONS = 3
MAX_LIST_ROWS = 10


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _with_link(text: str, link: str | None, limit: int) -> str:
    """Text, then the link on its own line; the text is clipped so the link survives."""
    if not link:
        return clip(text, limit)
    return clip(text, max(limit - len(link) - 1, 1)) + "\n" + link


def render(to_digits: str, content: Content) -> dict[str, Any]:
    """The full request body for one recipient (E.164 digits without "+")."""
    envelope: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to_digits,
    }
    if isinstance(content, Template):
        return {**envelope, "type": "template", "template": _template(content)}
    return {**envelope, **_reply(content)}


def _template(template: Template) -> dict[str, Any]:
    parameters = list(template.parameters)
    if template.link:
        parameters.append(template.link)
    components: list[dict[str, Any]] = []
    if parameters:
        components.append(
            {"type": "body", "parameters": [{"type": "text", "text": p} for p in parameters]}
        )
    components += [
        {
            "type": "button",
            "sub_type": "quick_reply",
            "index": str(index),
            "parameters": [{"type": "payload", "payload": choice.id}],
        }
        for index, choice in enumerate(template.quick_replies)
    ]
    return {
        "name": template.name,
        "language": {"code": template.language},
        "components": components,
    }


def _reply(reply: Reply) -> dict[str, Any]:
    count = len(reply.choices)
    if count == 0:
        return _text(_with_link(reply.text, reply.link, TEXT_BODY_MAX))
    if count <= MAX_BUTTONS:
        return _interactive("button", reply, {"buttons": [_button(c) for c in reply.choices]})
    if count <= MAX_LIST_ROWS:
        section = {
            "title": clip(reply.list_button, SECTION_TITLE_MAX),
            "rows": [_row(c) for c in reply.choices],
        }
        action = {"button": clip(reply.list_button, LIST_BUTTON_MAX), "sections": [section]}
        return _interactive("list", reply, action)
    return _text(_numbered(reply))


def _text(body: str) -> dict[str, Any]:
    return {"type": "text", "text": {"body": body, "preview_url": False}}


def _interactive(kind: str, reply: Reply, action: dict[str, Any]) -> dict[str, Any]:
    body = _with_link(reply.text, reply.link, INTERACTIVE_BODY_MAX)
    return {
        "type": "interactive",
        "interactive": {"type": kind, "body": {"text": body}, "action": action},
    }


def _button(choice: Choice) -> dict[str, Any]:
    return {
        "type": "reply",
        "reply": {"id": choice.id, "title": clip(choice.title, BUTTON_TITLE_MAX)},
    }


def _row(choice: Choice) -> dict[str, Any]:
    row = {"id": choice.id, "title": clip(choice.title, LIST_ROW_TITLE_MAX)}
    if choice.description:  # Graph rejects an empty description
        row["description"] = clip(choice.description, LIST_ROW_DESCRIPTION_MAX)
    return row


def _numbered(reply: Reply) -> str:
    """More choices than a list holds: written out, answered by number (as on SMS)."""
    text = "\n".join([reply.text, *numbered(reply.choices), NUMBER_HINT])
    return _with_link(text, reply.link, TEXT_BODY_MAX)
