"""The patient's assistant pages behind ``assistant_session_url`` (``/a/{token}``).

GET shows the intake form (first open: ``assistant.started``); POST stores the answers
(``patient.intake_completed``, then matching) and shows a thank-you page. The token is
the only credential: forged, expired, used-up or cancelled links get a page that says
nothing about the referral. Responses are never cached or sent on as a referrer; the
access log records the route template, never the token.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from typing import Any

from litestar import Request, get, post
from litestar.response import Template

from rehabref.clock import as_utc, utcnow
from rehabref.errors import ApiError
from rehabref.fields import plain_text
from rehabref.intake.service import (
    AVAILABILITY_SLOTS,
    CARE_MODES_FOR,
    form_token,
    read_assistant_token,
    session_with_referral,
)
from rehabref.services import Services, services_of
from rehabref.workflows.intake import assistant_opened, intake_completed

PRIVATE_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}
_TERMINAL = frozenset({"closed", "cancelled"})
SLOT_LABELS = {
    "weekday_mornings": "Weekday mornings (8am - 12pm)",
    "weekday_afternoons": "Weekday afternoons (12pm - 5pm)",
    "weekday_evenings": "Weekday evenings (5pm - 8pm)",
    "weekends": "Weekends",
}
MODE_LABELS = {
    "home_visit": "Home visit: the physiotherapist comes to you",
    "in_clinic": "In a clinic near you",
    "remote": "Remote: a video session",
}


def message_page(title: str, message: str, status: int) -> Template:
    return Template(
        template_name="message.html",
        context={"title": title, "message": message},
        status_code=status,
        headers=PRIVATE_PAGE_HEADERS,
    )


def _not_found() -> Template:
    return message_page("Link not recognised", "This link is not valid.", 404)


def _gone() -> Template:
    return message_page(
        "This link is no longer active",
        "For your privacy, intake links work once and for a short time. "
        "Your care team will contact you.",
        410,
    )


async def _session(services: Services, token: str) -> Any:
    """The session row joined with its referral, or the safe page to show instead."""
    parsed = read_assistant_token(services.box, token)
    if parsed is None:
        return _not_found()
    session_id, fresh = parsed
    async with services.db.read() as conn:
        row = await session_with_referral(conn, session_id)
    if row is None:
        return _not_found()
    if (
        not fresh
        or as_utc(row.expires_at) <= utcnow()
        or row.completed_at is not None
        or row.status in _TERMINAL
    ):
        return _gone()
    return row


@dataclass
class Answers:
    availability: list[str] = field(default_factory=list)
    care_mode: str | None = None
    area: str = ""


def _form_page(
    services: Services,
    row: Any,
    *,
    answers: Answers | None = None,
    errors: dict[str, str] | None = None,
) -> Template:
    answers = answers or Answers()
    modes = CARE_MODES_FOR.get(row.care_mode, CARE_MODES_FOR[None])
    return Template(
        template_name="intake/form.html",
        context={
            "first_name": row.patient_first_name,
            "city": row.patient_city,
            "form_token": form_token(services.box, row.id),
            "slots": [(slot, SLOT_LABELS[slot]) for slot in AVAILABILITY_SLOTS],
            "modes": [(mode, MODE_LABELS[mode]) for mode in modes],
            "chosen_availability": answers.availability,
            "chosen_care_mode": answers.care_mode,
            "chosen_area": answers.area or (row.patient_area or ""),
            "errors": errors or {},
        },
        status_code=422 if errors else 200,
        headers=PRIVATE_PAGE_HEADERS,
    )


def _actor(session_id: str) -> str:
    return f"patient:{session_id}"


@get("/a/{token:str}", include_in_schema=False)
async def assistant_page(request: Request[Any, Any, Any], token: str) -> Template:
    services = services_of(request)
    row = await _session(services, token)
    if isinstance(row, Template):
        return row
    if row.opened_at is None:
        async with services.db.write() as conn:
            await assistant_opened(conn, session_id=row.id, actor=_actor(row.id))
    return _form_page(services, row)


def _read_answers(form: Any, allowed_modes: tuple[str, ...]) -> tuple[Answers, dict[str, str]]:
    errors: dict[str, str] = {}
    chosen = [str(v) for v in form.getall("availability", [])]
    availability = [slot for slot in AVAILABILITY_SLOTS if slot in chosen]
    if not availability or len(availability) != len(set(chosen)):
        errors["availability"] = "Choose at least one time when you are available."
    care_mode = str(form.get("care_mode") or "")
    if care_mode not in allowed_modes:
        errors["care_mode"] = "Choose how you would like to be seen."
    area = " ".join(str(form.get("area") or "").split())
    if len(area) > 100:
        errors["area"] = "Use at most 100 characters for your area."
    else:
        try:
            plain_text(area)
        except ValueError:
            errors["area"] = "Use letters, numbers and punctuation only."
    answers = Answers(availability=availability, care_mode=care_mode or None, area=area[:100])
    return answers, errors


@post("/a/{token:str}", include_in_schema=False, status_code=200)
async def submit_intake(request: Request[Any, Any, Any], token: str) -> Template:
    services = services_of(request)
    row = await _session(services, token)
    if isinstance(row, Template):
        return row
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in {"application/x-www-form-urlencoded", "multipart/form-data"}:
        return message_page("Something went wrong", "Please go back and send the form again.", 400)
    form = await request.form()
    sent_token = str(form.get("form_token") or "")
    expected = form_token(services.box, row.id).encode()
    if not hmac.compare_digest(sent_token.encode("utf-8", "replace"), expected):
        return message_page(
            "Please try again", "This form could not be checked. Reload the page and retry.", 403
        )
    modes = CARE_MODES_FOR.get(row.care_mode, CARE_MODES_FOR[None])
    answers, errors = _read_answers(form, modes)
    if errors:
        return _form_page(services, row, answers=answers, errors=errors)
    try:
        async with services.db.write() as conn:
            if row.opened_at is None:
                await assistant_opened(conn, session_id=row.id, actor=_actor(row.id))
            await intake_completed(
                conn,
                roster=services.roster,
                referral_id=row.referral_id,
                session_id=row.id,
                availability=",".join(answers.availability),
                care_mode=answers.care_mode or "",
                area=answers.area or None,
                actor=_actor(row.id),
            )
    except ApiError as exc:
        if exc.status == 409:  # completed by a concurrent submit
            return _gone()
        raise
    return Template(
        template_name="intake/done.html",
        context={"first_name": row.patient_first_name},
        status_code=200,
        headers=PRIVATE_PAGE_HEADERS,
    )


ROUTES = [assistant_page, submit_intake]
