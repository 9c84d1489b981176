"""The physiotherapist's calendar feed: the app's "Calendar feed" page (a new link shown
once, revoke) and the feed itself at ``/calendar/{token}.ics`` (``care.calendar_feeds``,
``care.ical_text``).

Threat: the feed URL is a bearer credential fetched by calendar services without a cookie.
The access log records the route template, never the token; the message logs redact
``/calendar/...``; the page answering it is ``no-store``; guessing is rate-limited per IP
like the other public pages and a revoked or unknown token is a plain 404.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response, get, post
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record, record_read
from rehabref.care import calendar_feeds, ical_text
from rehabref.clock import utcnow
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.physio_app import auth
from rehabref.physio_app.page_kit import csrf, csrf_ok, page, see_other, signed_in
from rehabref.referrals.sealing import opened_row
from rehabref.services import services_of

SUFFIX = ".ics"
FEED_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


@get("/app/calendar", include_in_schema=False)
async def calendar_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    who = await signed_in(request)
    if who is None:
        return see_other("/app/sign-in")
    async with services_of(request).db.read() as conn:
        active = await calendar_feeds.has_feed(conn, who.physio_id)
    return page("calendar", active=active, url=None, csrf=csrf(services_of(request), who))


@post("/app/calendar", include_in_schema=False, status_code=200)
async def change_calendar(request: Request[Any, Any, Any]) -> Template | Redirect:
    """``action=new``: a new link (the old one stops working), shown once; else revoke."""
    who = await signed_in(request)
    if who is None:
        return see_other("/app/sign-in")
    services = services_of(request)
    form = await posted_form(request)
    if not csrf_ok(services, who, form):
        return page("message", 403, title="Form expired", text="Reload the page and try again.")
    now = utcnow()
    url = None
    async with services.db.write() as conn:
        if form.get("action") == "new":
            token = await calendar_feeds.new_feed(conn, physio_id=who.physio_id, now=now)
            url = services.settings.base_url + calendar_feeds.feed_path(token)
            action = "calendar_feed.created"
        else:
            await calendar_feeds.revoke(conn, physio_id=who.physio_id, now=now)
            action = "calendar_feed.revoked"
        await record(conn, entry(who.actor, action, subject=who.physio_id))
    return page("calendar", active=url is not None, url=url, csrf=csrf(services, who))


def _plain(status: int, text: str, **headers: str) -> Response[bytes]:
    return Response(
        content=text.encode(),
        status_code=status,
        media_type="text/plain; charset=utf-8",
        headers={**FEED_HEADERS, **headers},
    )


@get("/calendar/{feed:str}", include_in_schema=False)
async def calendar_feed(request: Request[Any, Any, Any], feed: str) -> Response[bytes]:
    limits = limits_of(request)
    wait = await limits.blocked(limits.page_per_ip, "page", client_ip(request))
    if wait is not None:
        return _plain(429, "Too many requests.\n", **{"Retry-After": str(wait)})
    token = feed.removesuffix(SUFFIX) if feed.endswith(SUFFIX) else ""
    services = services_of(request)
    now = utcnow()
    async with services.db.read() as conn:
        physio_id = await calendar_feeds.feed_owner(conn, token)
        if physio_id is None:
            return _plain(404, "Not found.\n")
        name = await auth.physio_name(conn, physio_id)
        found = await calendar_feeds.visits_for_feed(conn, physio_id=physio_id, now=now)
    # The patient's first name is sealed at rest: opened here, for this feed only.
    visits = [opened_row(services.box.ring, dict(row._mapping)) for row in found]
    await record_read(services.db, entry(f"physio:{physio_id}", "calendar_feed.read"))
    host = urlsplit(services.settings.base_url).hostname or "rehabref"
    return Response(
        content=ical_text.render(visits, name=name, host=host, now=now).encode(),
        media_type="text/calendar; charset=utf-8",
        headers=FEED_HEADERS,
    )


ROUTES = [calendar_page, change_calendar, calendar_feed]
