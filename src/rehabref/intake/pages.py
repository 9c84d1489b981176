"""The patient's assistant page behind ``assistant_session_url``."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template
from sqlalchemy import select

from rehabref.clock import as_utc, utcnow
from rehabref.db import table
from rehabref.intake.models import AssistantSession
from rehabref.intake.service import read_assistant_token
from rehabref.referrals.models import Referral
from rehabref.services import services_of

_sessions = table(AssistantSession)
_referrals = table(Referral)

PRIVATE_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
}


def message_page(title: str, message: str, status: int) -> Template:
    return Template(
        template_name="message.html",
        context={"title": title, "message": message},
        status_code=status,
        headers=PRIVATE_PAGE_HEADERS,
    )


@get("/a/{token:str}", include_in_schema=False)
async def assistant_page(request: Request[Any, Any, Any], token: str) -> Template:
    services = services_of(request)
    parsed = read_assistant_token(services.box, token)
    if parsed is None:
        return message_page("Link not recognised", "This link is not valid.", 404)
    session_id, fresh = parsed
    async with services.db.read() as conn:
        row = (
            await conn.execute(
                select(_sessions.c.expires_at, _referrals.c.patient_first_name)
                .join(_referrals, _referrals.c.id == _sessions.c.referral_id)
                .where(_sessions.c.id == session_id)
            )
        ).first()
    if row is None:
        return message_page("Link not recognised", "This link is not valid.", 404)
    if not fresh or as_utc(row.expires_at) <= utcnow():
        return message_page(
            "This link has expired",
            "For your privacy, intake links expire. Your care team will contact you.",
            410,
        )
    return message_page(
        f"Hello {row.patient_first_name}",
        "This is your private physiotherapy intake. We will ask about your availability and "
        "how you would like to be seen.",
        200,
    )


ROUTES = [assistant_page]
