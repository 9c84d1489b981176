"""The consent-withdrawal page behind the link in every patient message and page
(``/w/<token>``, ``referrals.withdrawal_links``).

Threat: messaging apps and mail scanners fetch links to draw previews, so a GET that
withdrew would end care nobody asked to end. GET only shows what withdrawing means and a
form; the POST withdraws (``workflows.consent``), checked by a form token derived from the
link's token, so another site cannot post it without the link. The page shows no patient
data (a forwarded link reveals nothing), is never cached or sent on as a referrer, and is
rate limited per client address like the other public pages.
"""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request, get, post
from litestar.response import Template

from rehabref.clock import utcnow
from rehabref.instance_secret import SecretBox
from rehabref.pages.assistant import PRIVATE_PAGE_HEADERS, message_page
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.pages.referral_link import too_many_page
from rehabref.referrals.withdrawal_links import read_withdrawal_token
from rehabref.services import services_of
from rehabref.workflows.consent import withdraw_referral


def _form_token(box: SecretBox, referral_id: str) -> str:
    return box.sign(f"withdraw-form:{referral_id}")


def _not_found() -> Template:
    return message_page("Link not recognised", "This link is not valid.", 404)


def _withdrawn() -> Template:
    return message_page(
        "Your consent is withdrawn",
        "We have stopped your referral and told your referrer. You will get no more "
        "messages from us. If you change your mind, ask your referrer for a new referral.",
        200,
    )


async def _limited(request: Request[Any, Any, Any]) -> Template | None:
    limits = limits_of(request)
    wait = await limits.blocked(limits.page_per_ip, "page", client_ip(request))
    return too_many_page(wait) if wait is not None else None


@get("/w/{token:str}", include_in_schema=False)
async def withdrawal_page(request: Request[Any, Any, Any], token: str) -> Template:
    """The confirmation form; reads nothing from the database and changes nothing."""
    limited = await _limited(request)
    if limited is not None:
        return limited
    box = services_of(request).box
    referral_id = read_withdrawal_token(box, token)
    if referral_id is None:
        return _not_found()
    return Template(
        template_name="rights/withdraw.html",
        context={"form_token": _form_token(box, referral_id)},
        headers=PRIVATE_PAGE_HEADERS,
    )


@post("/w/{token:str}", include_in_schema=False, status_code=200)
async def withdraw(request: Request[Any, Any, Any], token: str) -> Template:
    limited = await _limited(request)
    if limited is not None:
        return limited
    services = services_of(request)
    referral_id = read_withdrawal_token(services.box, token)
    if referral_id is None:
        return _not_found()
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in {"application/x-www-form-urlencoded", "multipart/form-data"}:
        return message_page("Something went wrong", "Please go back and send the form again.", 400)
    form = await posted_form(request)
    sent = str(form.get("form_token") or "")
    expected = _form_token(services.box, referral_id).encode()
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), expected):
        return message_page(
            "Please try again", "This form could not be checked. Reload the page and retry.", 403
        )
    async with services.db.write() as conn:
        done = await withdraw_referral(
            conn,
            referral_id,
            ring=services.box.ring,
            actor="patient:link",
            channel="link",
            now=utcnow(),
        )
    return _withdrawn() if done is not None else _not_found()


ROUTES = [withdrawal_page, withdraw]
