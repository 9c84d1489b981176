"""The public hosted referral form ``/r/{public_code}`` (server-rendered, no JavaScript).

Unknown codes answer 404 and inactive or expired links 410 with the same neutral page, and
accept nothing. Views of an active link increment a counter (no IP, no user agent stored).
Submissions pass a per-IP and a per-link rate limit and the CSRF check, are validated with
the API's rules, and create the referral through ``workflows.referral_created.create_v1`` - the same
path as the API, with the same events and intake.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, get, post
from litestar.response import Template
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.links import service
from rehabref.links.rows import PublicLinkRow
from rehabref.pages import form_tokens
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.pages.referral_form import (
    CARE_MODES,
    CONSENT_TEXT,
    CONTACTS,
    LABELS,
    FormResult,
    read_form,
)
from rehabref.principal import Principal
from rehabref.referrals import store
from rehabref.referrals.withdrawal_links import withdrawal_url
from rehabref.scope import PartnerScope
from rehabref.services import Services, services_of
from rehabref.tables.partners import Partner
from rehabref.workflows import referral_created

_partners = table(Partner)

COOKIE = "rr_form"
FORM_MAX_AGE = 4 * 3600
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
}


def _page(name: str, context: dict[str, Any], status: int, **extra: Any) -> Template:
    headers = {**HEADERS, **extra.pop("headers", {})}
    return Template(
        template_name=f"links/{name}.html",
        context=context,
        status_code=status,
        headers=headers,
        **extra,
    )


def unknown_page() -> Template:
    return _page(
        "message",
        {
            "title": "Link not found",
            "message": "This referral link does not exist. Check the address, or ask the "
            "person who shared it for a new one.",
        },
        404,
    )


def closed_page() -> Template:
    return _page(
        "message",
        {
            "title": "This link is no longer active",
            "message": "This referral link has expired or was turned off, so it cannot take "
            "new referrals. Please ask the person who shared it for a new link.",
        },
        410,
    )


def too_many_page(retry_after: int) -> Template:
    return _page(
        "message",
        {
            "title": "Please wait a moment",
            "message": "We received too many requests. Wait a minute and try again.",
        },
        429,
        headers={"Retry-After": str(retry_after)},
    )


def _secure(services: Services) -> bool:
    return services.settings.base_url.startswith("https://")


def _form_page(
    services: Services,
    link: PublicLinkRow,
    *,
    binding: str,
    result: FormResult | None,
    status: int,
    set_cookie: bool,
) -> Template:
    token = form_tokens.issue(services.box, purpose=f"link:{link.public_code}", binding=binding)
    cookies = []
    if set_cookie:
        cookies.append(
            form_tokens.cookie(
                COOKIE,
                binding,
                path="/r/",
                secure=_secure(services),
                max_age=FORM_MAX_AGE,
            )
        )
    context = {
        "partner_name": link.partner_name,
        "sandbox": link.environment == "test",
        "action": f"/r/{link.public_code}",
        "csrf_token": token,
        "values": result.values if result else {},
        "errors": result.errors if result else {},
        "labels": LABELS,
        "care_modes": CARE_MODES,
        "contacts": CONTACTS,
        "consent_text": CONSENT_TEXT.format(partner=link.partner_name),
    }
    return _page("form", context, status, cookies=cookies)


@get("/r/{public_code:str}", include_in_schema=False)
async def show_form(request: Request[Any, Any, Any], public_code: str) -> Template:
    services = services_of(request)
    limits = limits_of(request)
    wait = await limits.blocked(limits.page_per_ip, "page", client_ip(request))
    if wait is not None:
        return too_many_page(wait)
    async with services.db.read() as conn:
        link = await service.unscoped_by_public_code(conn, public_code)
    if link is None:
        return unknown_page()
    if not service.link_is_open(link, utcnow()):
        return closed_page()
    async with services.db.write() as conn:
        await service.count_click(conn, link=link)
    binding = request.cookies.get(COOKIE)
    fresh = not binding or len(binding) > 64
    if fresh:
        binding = form_tokens.new_binding()
    assert binding is not None
    return _form_page(services, link, binding=binding, result=None, status=200, set_cookie=fresh)


@post("/r/{public_code:str}", include_in_schema=False, status_code=200)
async def submit_form(request: Request[Any, Any, Any], public_code: str) -> Template:
    services = services_of(request)
    limits = limits_of(request)
    wait = await limits.blocked(limits.form_per_ip, "form", client_ip(request))
    if wait is not None:
        return too_many_page(wait)
    async with services.db.read() as conn:
        link = await service.unscoped_by_public_code(conn, public_code)
    if link is None:
        return unknown_page()
    now = utcnow()
    if not service.link_is_open(link, now):
        return closed_page()
    form = await posted_form(request)
    binding = request.cookies.get(COOKIE)
    nonce = form_tokens.check(
        services.box,
        purpose=f"link:{link.public_code}",
        binding=binding,
        token=form.get(form_tokens.FIELD),
        max_age=FORM_MAX_AGE,
    )
    if nonce is None or binding is None:
        return _page(
            "message",
            {
                "title": "Please try again",
                "message": "Your form session expired or cookies are blocked. Go back, reload "
                "the page and submit the form again.",
                "retry_url": f"/r/{link.public_code}",
            },
            403,
        )
    # Counted only for genuine form posts, so junk requests cannot use up a link's budget.
    wait = await limits.blocked(limits.per_link, "link", link.id)
    if wait is not None:
        return too_many_page(wait)
    result = read_form(
        form,
        external_ref=f"link:{link.id}:{nonce}",
        accepted_at=iso(now) or "",
        metadata={"campaign": link.campaign, "link_id": link.id},
    )
    if result.request is None:
        return _form_page(
            services, link, binding=binding, result=result, status=422, set_cookie=False
        )
    try:
        created = await _create_referral(services, link, result)
    except IntegrityError:  # the same form posted twice at once: the other one won
        created = None
    if created is None:
        context = {"first_name": result.values["first_name"], "partner_name": link.partner_name}
        return _page("done", {**context, "repeat": True}, 200)
    return _page(
        "done",
        {
            "first_name": result.values["first_name"],
            "partner_name": link.partner_name,
            "sandbox": link.environment == "test",
            "assistant_url": created.get("assistant_session_url"),
            "by_contact": created["status"] == "contact_pending",
            "repeat": False,
            # The form's consent promise ("I can withdraw this consent at any time").
            "withdraw_url": withdrawal_url(
                services.box, services.settings.base_url, created["referral_id"]
            ),
        },
        200,
    )


async def _create_referral(
    services: Services, link: PublicLinkRow, result: FormResult
) -> dict[str, Any] | None:
    """The API's create path, attributed to the link's partner and campaign.

    None when this very form was already submitted (same nonce, so same external_ref).
    """
    assert result.request is not None
    async with services.db.read() as conn:
        principal = await _principal(conn, link)
        if await store.find_by_external_ref(
            conn, scope=PartnerScope.of(principal), external_ref=result.request.external_ref
        ):
            return None
    settings = services.settings
    plan = referral_created.plan_v1(
        principal=principal,
        request=result.request,
        intake=referral_created.IntakeSettings(
            box=services.box,
            base_url=settings.base_url,
            assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
            channels=services.channels,
        ),
        now=utcnow(),
        on_created=services.created_hooks(principal.environment),
        attribution=referral_created.Attribution(link_id=link.id, campaign=link.campaign),
    )
    await services.create_store.persist(plan, None)
    created: dict[str, Any] = msgspec.json.decode(plan.response)
    return created


async def _principal(conn: AsyncConnection, link: PublicLinkRow) -> Principal:
    partner = (await conn.execute(select(_partners).where(_partners.c.id == link.partner_id))).one()
    return Principal(
        key_id=f"link:{link.id}",
        partner_id=partner.id,
        partner_name=partner.name,
        environment=link.environment,
        kind="hosted_link",
        contract=partner.contract,
        show_payments=bool(partner.show_payments),
        commission_bps=partner.commission_bps,
        commission_fixed_minor=partner.commission_fixed_minor,
    )


ROUTES = [show_form, submit_form]
