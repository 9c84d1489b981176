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
from rehabref.physio_app import auth, visits
from rehabref.physio_app.forms import check_in_fields, completion_fields, normalise_phone
from rehabref.physio_app.page_kit import MODES
from rehabref.physio_app.page_kit import csrf as _csrf
from rehabref.physio_app.page_kit import csrf_ok as _csrf_ok
from rehabref.physio_app.page_kit import page as _page
from rehabref.physio_app.page_kit import secure as _secure
from rehabref.physio_app.page_kit import see_other as _see_other
from rehabref.physio_app.page_kit import signed_in as _signed_in
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.services import services_of
from rehabref.workflows.sessions import complete_session
from rehabref.workflows.visits import check_in

PATH = "/app"
LOGIN_COOKIE = "rr_physio_login"


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
                services.box.ring,
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
                ring=services.box.ring,
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
