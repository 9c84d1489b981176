"""The physiotherapist app's pages (/app): server-rendered for a cheap Android phone; the only
script asks the browser for the device's position at check-in and check-out.

Every page but sign-in needs a session (``auth``); every visit is read through
``visits.own_visit`` (another physiotherapist's visit is a 404), and each read of patient
data writes an audit record. Forms carry a CSRF token bound to the session.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response, get, post
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record, record_read
from rehabref.care.availability import LAGOS
from rehabref.channels.content import CHANNELS
from rehabref.clock import as_utc, utcnow
from rehabref.crypto import KeyRing
from rehabref.errors import ApiError
from rehabref.pages import form_tokens
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.physio_app import auth, calendar, visits
from rehabref.physio_app.forms import check_in_fields, completion_fields, normalise_phone
from rehabref.referrals.sealing import FIRST_NAME, open_text, opened_row
from rehabref.services import Services, services_of
from rehabref.workflows.sessions import complete_session
from rehabref.workflows.visits import check_in

PATH = "/app"
LOGIN_COOKIE = "rr_physio_login"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "Permissions-Policy": "geolocation=(self)",
}
MODES = {"home_visit": "Home visit", "in_clinic": "At the clinic", "remote": "Video session"}


def _secure(services: Services) -> bool:
    return services.settings.base_url.startswith("https://")


def _page(template: str, status: int = 200, **context: Any) -> Template:
    return Template(
        template_name=f"physio/{template}.html",
        context=context,
        status_code=status,
        headers=HEADERS,
    )


def _see_other(path: str, **extra: Any) -> Redirect:
    return Redirect(path=path, status_code=303, headers=HEADERS, **extra)


def _csrf(services: Services, who: auth.SignedIn) -> str:
    return form_tokens.issue(services.box, purpose="physio-app", binding=who.session_digest)


def _csrf_ok(services: Services, who: auth.SignedIn, form: Any) -> bool:
    return (
        form_tokens.check(
            services.box,
            purpose="physio-app",
            binding=who.session_digest,
            token=form.get(form_tokens.FIELD),
            max_age=auth.SESSION_SECONDS,
        )
        is not None
    )


async def _signed_in(request: Request[Any, Any, Any]) -> auth.SignedIn | None:
    async with services_of(request).db.read() as conn:
        return await auth.session_of(conn, request.cookies.get(auth.COOKIE), utcnow())


def local(when: datetime) -> str:
    return as_utc(when).astimezone(LAGOS).strftime("%a %d %b, %H:%M")


# Sign-in ---------------------------------------------------------------------------------


def _sign_in_page(request: Request[Any, Any, Any], *, note: str | None, status: int) -> Template:
    services = services_of(request)
    binding = form_tokens.new_binding()
    page = _page(
        "sign_in",
        status,
        note=note,
        csrf=form_tokens.issue(services.box, purpose="physio-login", binding=binding),
    )
    page.cookies.append(
        form_tokens.cookie(
            LOGIN_COOKIE, binding, path=PATH, secure=_secure(services), max_age=auth.LINK_SECONDS
        )
    )
    return page


@get("/app/sign-in", include_in_schema=False)
async def sign_in_form(request: Request[Any, Any, Any]) -> Template:
    return _sign_in_page(request, note=None, status=200)


@post("/app/sign-in", include_in_schema=False, status_code=200)
async def ask_for_link(request: Request[Any, Any, Any]) -> Template:
    services = services_of(request)
    limits = limits_of(request)
    wait = await limits.blocked(limits.form_per_ip, "physio-sign-in", client_ip(request))
    if wait is not None:
        return _sign_in_page(request, note=f"Too many attempts. Wait {wait} seconds.", status=429)
    form = await posted_form(request)
    if (
        form_tokens.check(
            services.box,
            purpose="physio-login",
            binding=request.cookies.get(LOGIN_COOKIE),
            token=form.get(form_tokens.FIELD),
            max_age=auth.LINK_SECONDS,
        )
        is None
    ):
        return _sign_in_page(request, note="The form expired; please try again.", status=403)
    channel = str(form.get("channel") or "")
    raw = str(form.get("contact") or "").strip()[:254]
    contact = raw if "@" in raw else normalise_phone(raw)
    if channel not in CHANNELS or contact is None or ("@" in raw) != (channel == "email"):
        return _sign_in_page(
            request,
            note="Enter your registered phone (WhatsApp or SMS) or e-mail (e-mail).",
            status=422,
        )
    now = utcnow()
    async with services.db.write() as conn:
        physio = await auth.physio_by_contact(conn, contact)
        if physio is not None:
            await auth.send_link(
                conn,
                physio=physio,
                channel=channel,
                base_url=services.settings.base_url,
                now=now,
            )
    # The same answer whether or not the contact is registered.
    return _page(
        "message",
        title="Check your messages",
        text=(
            "If this contact belongs to a registered physiotherapist, a sign-in link is on "
            "its way. It works once, for 15 minutes."
        ),
    )


@get("/app/link/{secret:str}", include_in_schema=False)
async def open_link(request: Request[Any, Any, Any], secret: str) -> Template:
    async with services_of(request).db.read() as conn:
        usable = await auth.link_is_open(conn, secret[:100], utcnow())
    if not usable:
        return _page("message", 410, title="Link expired", text=_EXPIRED)
    return _page("link", secret=secret)


_EXPIRED = "This sign-in link was used or has expired. Ask for a new one."


@post("/app/link/{secret:str}", include_in_schema=False, status_code=200)
async def use_link(request: Request[Any, Any, Any], secret: str) -> Template | Redirect:
    services = services_of(request)
    async with services.db.write() as conn:
        value = await auth.use_link(conn, secret[:100], utcnow())
    if value is None:
        return _page("message", 410, title="Link expired", text=_EXPIRED)
    cookie = form_tokens.cookie(
        auth.COOKIE, value, path=PATH, secure=_secure(services), max_age=auth.SESSION_SECONDS
    )
    return _see_other(PATH, cookies=[cookie])


@post("/app/sign-out", include_in_schema=False, status_code=200)
async def sign_out(request: Request[Any, Any, Any]) -> Redirect:
    services = services_of(request)
    who = await _signed_in(request)
    form = await posted_form(request)
    if who is not None and _csrf_ok(services, who, form):
        async with services.db.write() as conn:
            await auth.sign_out(conn, who, utcnow(), everywhere=form.get("everywhere") == "yes")
    cleared = form_tokens.cookie(auth.COOKIE, "", path=PATH, secure=_secure(services), max_age=0)
    return _see_other("/app/sign-in", cookies=[cleared])


# Visits ----------------------------------------------------------------------------------


def _visit_view(ring: KeyRing, row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "first_name": open_text(ring, FIRST_NAME, row.patient_first_name),
        "area": row.patient_area or row.patient_city,
        "mode": MODES.get(row.modality, row.modality),
        "when": local(row.scheduled_at),
        "status": row.status.replace("_", " "),
        "number": row.session_number,
    }


@get("/app", include_in_schema=False)
async def visits_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    who = await _signed_in(request)
    if who is None:
        return _see_other("/app/sign-in")
    services = services_of(request)
    now = utcnow()
    _, end_of_today, _ = visits.week_bounds(now)
    async with services.db.read() as conn:
        rows = await visits.upcoming(conn, physio_id=who.physio_id, now=now)
    await record_read(services.db, entry(who.actor, "physio_app.visits_listed"))
    today = [
        _visit_view(services.box.ring, r) for r in rows if as_utc(r.scheduled_at) < end_of_today
    ]
    later = [
        _visit_view(services.box.ring, r) for r in rows if as_utc(r.scheduled_at) >= end_of_today
    ]
    return _page("visits", name=who.name, today=today, later=later, csrf=_csrf(services, who))


async def _own(request: Request[Any, Any, Any], who: auth.SignedIn, session_id: str) -> Any:
    async with services_of(request).db.read() as conn:
        row = await visits.own_visit(conn, physio_id=who.physio_id, session_id=session_id[:40])
        answers = None if row is None else await visits.intake_answers(conn, row.referral_id)
    return row, answers


@get("/app/visits/{session_id:str}", include_in_schema=False)
async def visit_page(request: Request[Any, Any, Any], session_id: str) -> Template | Redirect:
    who = await _signed_in(request)
    if who is None:
        return _see_other("/app/sign-in")
    return await _render_visit(request, who, session_id, problem=None, status=200)


async def _render_visit(
    request: Request[Any, Any, Any],
    who: auth.SignedIn,
    session_id: str,
    *,
    problem: str | None,
    status: int,
) -> Template:
    services = services_of(request)
    row, answers = await _own(request, who, session_id)
    if row is None:
        return _page("message", 404, title="Not found", text="No visit of yours has this link.")
    await record_read(
        services.db,
        entry(who.actor, "physio_app.visit_read", referral_id=row.referral_id, subject=row.id),
    )
    return _page(
        "visit",
        status,
        visit=_visit_view(services.box.ring, row),
        answers=answers,
        raw_status=row.status,
        checked_in=None if row.check_in_at is None else local(row.check_in_at),
        refusal=row.check_in_refusal,
        remote=row.modality == "remote",
        problem=problem,
        csrf=_csrf(services, who),
    )


async def _guarded(
    request: Request[Any, Any, Any], session_id: str
) -> tuple[auth.SignedIn, Any] | Template | Redirect:
    who = await _signed_in(request)
    if who is None:
        return _see_other("/app/sign-in")
    form = await posted_form(request)
    if not _csrf_ok(services_of(request), who, form):
        return _page("message", 403, title="Form expired", text="Reload the visit and try again.")
    row, _ = await _own(request, who, session_id)
    if row is None:
        return _page("message", 404, title="Not found", text="No visit of yours has this link.")
    return who, form


@post("/app/visits/{session_id:str}/check-in", include_in_schema=False, status_code=200)
async def check_in_visit(request: Request[Any, Any, Any], session_id: str) -> Template | Redirect:
    guarded = await _guarded(request, session_id)
    if not isinstance(guarded, tuple):
        return guarded
    who, form = guarded
    fields = check_in_fields(form)
    if isinstance(fields, str):
        return await _render_visit(request, who, session_id, problem=fields, status=422)
    try:
        async with services_of(request).db.write() as conn:
            await check_in(
                conn,
                session_id=session_id,
                actor=who.actor,
                point=fields.point,
                accuracy_m=fields.accuracy_m,
                refusal=fields.refusal,
                ring=services_of(request).box.ring,
                now=utcnow(),
            )
            await record(conn, entry(who.actor, "session.started", subject=session_id))
    except ApiError as error:
        return await _render_visit(request, who, session_id, problem=error.message, status=409)
    return _see_other(f"/app/visits/{session_id}")


@post("/app/visits/{session_id:str}/complete", include_in_schema=False, status_code=200)
async def complete_visit(request: Request[Any, Any, Any], session_id: str) -> Template | Redirect:
    guarded = await _guarded(request, session_id)
    if not isinstance(guarded, tuple):
        return guarded
    who, form = guarded
    fields = completion_fields(form)
    if isinstance(fields, str):
        return await _render_visit(request, who, session_id, problem=fields, status=422)
    services = services_of(request)
    try:
        async with services.db.write() as conn:
            await complete_session(
                conn,
                coverage=services.coverage,
                session_id=session_id,
                pain_before=fields.pain_before,
                pain_after=fields.pain_after,
                notes_summary=fields.notes,
                check_out_at=utcnow(),
                check_out_lat=fields.place.point[0] if fields.place.point else None,
                check_out_lng=fields.place.point[1] if fields.place.point else None,
                actor=who.actor,
                check_out_accuracy_m=fields.place.accuracy_m,
                check_out_refused=fields.place.refusal is not None,
            )
            await record(conn, entry(who.actor, "session.completed", subject=session_id))
    except ApiError as error:
        return await _render_visit(request, who, session_id, problem=error.message, status=409)
    return _see_other(PATH)


# Calendar feed ---------------------------------------------------------------------------


@get("/app/calendar", include_in_schema=False)
async def calendar_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    who = await _signed_in(request)
    if who is None:
        return _see_other("/app/sign-in")
    async with services_of(request).db.read() as conn:
        active = await calendar.has_feed(conn, who.physio_id)
    return _page("calendar", active=active, url=None, csrf=_csrf(services_of(request), who))


@post("/app/calendar", include_in_schema=False, status_code=200)
async def change_calendar(request: Request[Any, Any, Any]) -> Template | Redirect:
    """``action=new``: a new feed URL (the old one stops working); ``off``: no feed."""
    who = await _signed_in(request)
    if who is None:
        return _see_other("/app/sign-in")
    services = services_of(request)
    form = await posted_form(request)
    if not _csrf_ok(services, who, form):
        return _page("message", 403, title="Form expired", text="Reload the page and try again.")
    now = utcnow()
    url = None
    async with services.db.write() as conn:
        if form.get("action") == "new":
            secret = await calendar.new_feed(conn, physio_id=who.physio_id, now=now)
            url = f"{services.settings.base_url}/cal/{secret}"
        else:
            await calendar.revoke(conn, physio_id=who.physio_id, now=now)
        await record(conn, entry(who.actor, "calendar_feed.changed", subject=who.physio_id))
    return _page("calendar", active=url is not None, url=url, csrf=_csrf(services, who))


@get("/cal/{secret:str}", include_in_schema=False)
async def calendar_feed(request: Request[Any, Any, Any], secret: str) -> Response[bytes]:
    services = services_of(request)
    now = utcnow()
    async with services.db.read() as conn:
        physio_id = await calendar.feed_owner(conn, secret)
        if physio_id is None:
            return Response(content=b"Not found\n", status_code=404, media_type="text/plain")
        name = await auth.physio_name(conn, physio_id)
        found = await calendar.visits_for_feed(conn, physio_id=physio_id, now=now)
    rows = [opened_row(services.box.ring, dict(row._mapping)) for row in found]
    await record_read(services.db, entry(f"physio:{physio_id}", "calendar_feed.read"))
    host = urlsplit(services.settings.base_url).hostname or "rehabref"
    body = calendar.render(rows, name=name, now=now, host=host)
    return Response(
        content=body.encode(),
        media_type="text/calendar; charset=utf-8",
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


GEO_JS = (Path(__file__).parent / "geo.js").read_bytes()


@get("/app/geo.js", include_in_schema=False)
async def geo_script() -> Response[bytes]:
    return Response(
        content=GEO_JS,
        media_type="text/javascript; charset=utf-8",
        headers={"Cache-Control": "public, max-age=3600"},
    )


ROUTES = [
    geo_script,
    calendar_page,
    change_calendar,
    calendar_feed,
    sign_in_form,
    ask_for_link,
    open_link,
    use_link,
    sign_out,
    visits_page,
    visit_page,
    check_in_visit,
    complete_visit,
]
