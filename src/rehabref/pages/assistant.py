"""The patient's assistant pages behind ``assistant_session_url`` (``/a/{token}``): the
intake dialogue (``intake.dialogue``, the same engine as WhatsApp and SMS), one question
per page.

GET shows where the patient stands and writes nothing: messaging apps fetch links to draw
previews, so only an answer (a POST) records ``assistant.started``, marks the link opened
and moves the dialogue. A POST is answered by a 303 back to the GET (post/redirect/get:
reloading never re-sends an answer); the only thing said before the next question, the
"not understood" hint, is read back from the dialogue state (``reasks``), so no patient
text ever goes in a URL. The end of the dialogue (completed, a coordinator will call) is
shown at once. The token is the only credential: forged, expired, used-up or cancelled
links get a page that says nothing about the referral. Responses are never cached or sent
on as a referrer; the access log records the route template, never the token.
"""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from rehabref.api_request import ApiRequest
from rehabref.clock import as_utc, utcnow
from rehabref.errors import ApiError
from rehabref.fields import plain_text
from rehabref.intake import dialogue
from rehabref.intake.phrases import say
from rehabref.intake.service import (
    form_token,
    mark_opened,
    read_assistant_token,
    session_with_referral,
)
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.referrals import store
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.withdrawal_links import withdrawal_url
from rehabref.services import Services, services_of
from rehabref.workflows.conversation import web_answer, web_state
from rehabref.workflows.moves import ENDED

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
TEXT_MAX = 200
CHOICES_MAX = 8  # more ids than any step shows is not an answer from this page

# How each step is asked on a page (phrases; the messaging wording names SMS numbers).
WEB_QUESTION = {"availability": "web_ask_availability"}
MULTIPLE = frozenset({"availability"})  # check boxes: several slots in one answer
TYPED = frozenset({"area"})  # a text box; it is the "another area" choice
HIDDEN_CHOICES = frozenset({"area:other"})
HINT = {
    "language": "web_hint_choice",
    "consent": "web_hint_choice",
    "care_mode": "web_hint_choice",
    "area": "hint_area",
    "availability": "web_hint_times",
    "confirm": "web_hint_choice",
}
OTHER_LANGUAGE = {"en": "lang:pcm", "pcm": "lang:en"}
ENDING = {"handed_over": "handover", "declined": "declined"}


def message_page(
    title: str, message: str, status: int, headers: dict[str, str] | None = None
) -> Template:
    return Template(
        template_name="message.html",
        context={"title": title, "message": message},
        status_code=status,
        headers={**PRIVATE_PAGE_HEADERS, **(headers or {})},
    )


async def over_page_limit(request: ApiRequest) -> Template | None:
    """Count a public page request against the per-IP page limit; the 429 page when over it
    (guessing tokens or tracking codes costs a client its budget, not the database)."""
    limits = limits_of(request)
    wait = await limits.blocked(limits.page_per_ip, "page", client_ip(request))
    if wait is None:
        return None
    return message_page(
        "Please wait a moment",
        "We received too many requests. Wait a minute and try again.",
        429,
        {"Retry-After": str(wait)},
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
        or row.status in ENDED
    ):
        return _gone()
    return row


def _page(template: str, state: dialogue.State, status: int = 200, **context: Any) -> Template:
    """A page of the dialogue; ``withdraw_url`` in the context shows the withdrawal link."""
    return Template(
        template_name=template,
        context={"page_language": state.language, **context},
        status_code=status,
        headers=PRIVATE_PAGE_HEADERS,
    )


def _hint(state: dialogue.State) -> str | None:
    """What the last answer missed (the dialogue counts answers not understood in a row)."""
    if not state.reasks or state.step not in HINT:
        return None
    hints = [say(state.language, "not_understood"), say(state.language, HINT[state.step])]
    if state.reasks == dialogue.MAX_MISUNDERSTOOD - 1:  # the last try: a person can help
        hints.append(say(state.language, "web_hint_help"))
    return " ".join(hints)


def _question_page(
    services: Services,
    session_id: str,
    referral_id: str,
    state: dialogue.State,
    ctx: dialogue.Context,
) -> Template:
    lang, reply = state.language, dialogue.prompt(state, ctx)
    question = say(lang, WEB_QUESTION[state.step]) if state.step in WEB_QUESTION else reply.text
    choices = [c for c in reply.choices if c.id not in HIDDEN_CHOICES]
    return _page(
        "intake/question.html",
        state,
        withdraw_url=withdrawal_url(services.box, services.settings.base_url, referral_id),
        form_token=form_token(services.box, session_id),
        intro=say(lang, "web_hello", first_name=ctx.first_name, referrer_name=ctx.referrer_name)
        if state.step == "language"
        else None,
        question=question,
        choices=choices,
        multiple=state.step in MULTIPLE,
        typed=state.step in TYPED,
        typed_label=say(lang, "web_other_area") if choices else question,
        hint=_hint(state),
        switch=None if state.step == "language" else OTHER_LANGUAGE[lang],
        words={
            name: say(lang, f"web_{name}")
            for name in ("title", "pick_all", "send", "person", "switch")
        },
    )


def _ending_page(state: dialogue.State, first_name: str, withdraw_url: str) -> Template:
    """Completed (the link is used up now), or a coordinator will call."""
    done = state.step == "completed"
    return _page(
        "intake/done.html",
        state,
        withdraw_url=withdraw_url,
        first_name=first_name,
        message=say(
            state.language, "completed" if done else ENDING[state.step], first_name=first_name
        ),
        closing=say(state.language, "web_link_used") if done else None,
    )


@get("/a/{token:str}", include_in_schema=False)
async def assistant_page(request: Request[Any, Any, Any], token: str) -> Template:
    """The current question. Reads only: a link preview changes nothing."""
    limited = await over_page_limit(request)
    if limited is not None:
        return limited
    services = services_of(request)
    row = await _session(services, token)
    if isinstance(row, Template):
        return row
    async with services.db.read() as conn:
        # Plain reads, no row locks: link-preview bots must not queue up behind writers.
        referral = await store.unscoped_get_referral(conn, referral_id=row.referral_id)
        if referral is None or referral.status in ENDED:
            return _gone()
        state, ctx = await web_state(conn, ring=services.box.ring, referral=referral)
    if state.step == "completed":  # done on another channel: the link is used up
        return _gone()
    if state.step in dialogue.TERMINAL:
        return _ending_page(
            state,
            ctx.first_name,
            withdrawal_url(services.box, services.settings.base_url, row.referral_id),
        )
    return _question_page(services, row.id, row.referral_id, state, ctx)


def _answer(form: Any) -> dialogue.Answer:
    """The posted answer: tapped choice ids and typed text (dropped when it is not plain
    text of a sensible length, which the dialogue then treats as not understood)."""
    choice_ids = tuple(str(v)[:40] for v in form.getall("choice", []))[:CHOICES_MAX]
    text = " ".join(str(form.get("text") or "").split())
    try:
        typed = plain_text(text) if 0 < len(text) <= TEXT_MAX else None
    except ValueError:
        typed = None
    if typed is not None:
        # The text box is the "another area" choice: what was typed is the answer.
        choice_ids = tuple(i for i in choice_ids if not i.startswith("area:"))
    return dialogue.Answer(text=typed, choice_ids=choice_ids)


@post("/a/{token:str}", include_in_schema=False, status_code=200)
async def answer_question(request: Request[Any, Any, Any], token: str) -> Template | Redirect:
    """One answer: the dialogue moves on, then the next question (303) or the ending."""
    limited = await over_page_limit(request)
    if limited is not None:
        return limited
    services = services_of(request)
    row = await _session(services, token)
    if isinstance(row, Template):
        return row
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in {"application/x-www-form-urlencoded", "multipart/form-data"}:
        return message_page("Something went wrong", "Please go back and send the form again.", 400)
    form = await posted_form(request)
    sent_token = str(form.get("form_token") or "")
    expected = form_token(services.box, row.id).encode()
    if not hmac.compare_digest(sent_token.encode("utf-8", "replace"), expected):
        return message_page(
            "Please try again", "This form could not be checked. Reload the page and retry.", 403
        )
    now = utcnow()
    try:
        async with services.db.write() as conn:
            if row.opened_at is None:
                await mark_opened(conn, session_id=row.id, now=now)
            turn = await web_answer(
                conn,
                roster=services.roster,
                ring=services.box.ring,
                referral_id=row.referral_id,
                answer=_answer(form),
                actor=f"patient:{row.id}",
                now=now,
            )
    except ApiError as exc:
        if exc.status == 409:  # the referral ended meanwhile
            return _gone()
        raise
    if turn.state.step == "completed" and turn.outcome != "completed":
        return _gone()  # completed by a concurrent answer
    if turn.state.step in dialogue.TERMINAL:
        return _ending_page(
            turn.state,
            open_text(services.box.ring, FIRST_NAME, row.patient_first_name) or "",
            withdrawal_url(services.box, services.settings.base_url, row.referral_id),
        )
    return Redirect(path=f"/a/{token}", status_code=303, headers=PRIVATE_PAGE_HEADERS)


ROUTES = [assistant_page, answer_question]
