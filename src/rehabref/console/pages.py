"""Console sign-in, sign-out and the referrals board."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from rehabref.clock import utcnow
from rehabref.console import queries
from rehabref.console.audit_page import viewed
from rehabref.console.render import Posted, guarded_form, page, see_other, to_login
from rehabref.console.session import (
    LOGIN_COOKIE,
    PATH,
    SESSION_COOKIE,
    cleared,
    end_sessions,
    secure,
    session_cookie,
    signed_in,
    start_session,
)
from rehabref.ops import totp
from rehabref.ops.auth import operator_by_token
from rehabref.pages import form_tokens
from rehabref.pages.forms import posted_form
from rehabref.pages.ip_limits import client_ip, limits_of
from rehabref.referrals.status import STATUSES
from rehabref.scope import OperatorScope
from rehabref.services import services_of

LOGIN_MAX_AGE = 3600


def _login_page(request: Request[Any, Any, Any], *, error: str | None, status: int) -> Template:
    services = services_of(request)
    binding = request.cookies.get(LOGIN_COOKIE)
    cookies = []
    if not binding or len(binding) > 64:
        binding = form_tokens.new_binding()
        cookies.append(
            form_tokens.cookie(
                LOGIN_COOKIE, binding, path=PATH, secure=secure(services), max_age=LOGIN_MAX_AGE
            )
        )
    token = form_tokens.issue(services.box, purpose="console-login", binding=binding)
    return page(
        "login",
        {"csrf_token": token, "error": error},
        signed=None,
        status=status,
        cookies=cookies,
    )


@get("/console/login", include_in_schema=False)
async def login_form(request: Request[Any, Any, Any]) -> Template | Redirect:
    if await signed_in(request) is not None:
        return see_other("/console")
    return _login_page(request, error=None, status=200)


@post("/console/login", include_in_schema=False, status_code=200)
async def login(request: Request[Any, Any, Any]) -> Template | Redirect:
    services = services_of(request)
    limits = limits_of(request)
    wait = await limits.blocked(limits.form_per_ip, "console-login", client_ip(request))
    if wait is not None:
        return _login_page(
            request, error=f"Too many attempts. Wait {wait} seconds and try again.", status=429
        )
    form = await posted_form(request)
    valid_form = form_tokens.check(
        services.box,
        purpose="console-login",
        binding=request.cookies.get(LOGIN_COOKIE),
        token=form.get(form_tokens.FIELD),
        max_age=LOGIN_MAX_AGE,
    )
    if valid_form is None:
        return _login_page(request, error="The form expired; please sign in again.", status=403)
    token = form.get("token")
    operator, sealed = None, None
    now = utcnow()
    if isinstance(token, str) and token.strip():
        async with services.db.read() as conn:
            operator = await operator_by_token(conn, token.strip(), now=now)
            if operator is not None:
                sealed = await totp.sealed_secret(conn, operator.operator_id)
    if operator is None:
        return _login_page(request, error="That operator token is not valid.", status=401)
    if sealed is not None:
        code = form.get("code")
        if not isinstance(code, str) or not code.strip():
            return _login_page(
                request,
                error="Enter the six-digit code from your authenticator app.",
                status=401,
            )
        if not totp.code_ok(services.box.unseal(sealed), code, now):
            return _login_page(
                request, error="That code is not right; check your app's clock.", status=401
            )
    value = await start_session(services, operator.operator_id, now)
    return see_other(
        "/console",
        cookies=[session_cookie(services, value), cleared(services, LOGIN_COOKIE)],
    )


@post("/console/logout", include_in_schema=False, status_code=200)
async def logout(request: Request[Any, Any, Any]) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    services = services_of(request)
    await end_sessions(services, posted.signed.operator.operator_id)
    return see_other("/console/login", cookies=[cleared(services, SESSION_COOKIE)])


@get("/console", include_in_schema=False)
async def board(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    query = request.query_params
    status = query.get("status") if query.get("status") in STATUSES else None
    environment = query.get("env") if query.get("env") in {"live", "test"} else None
    search = (query.get("q") or "").strip() or None
    before = query.get("before")
    before_id = before if before and before.startswith("ref_") and len(before) < 41 else None
    async with services_of(request).db.read() as conn:
        scope = OperatorScope(environment=environment)
        counts = await queries.status_counts(conn, scope=scope)
        rows, has_more = await queries.board(
            conn,
            scope=scope,
            status=status,
            search=search,
            before_id=before_id,
            ring=services_of(request).box.ring,
        )
    await viewed(request, signed, "referrals.listed")
    return page(
        "board",
        {
            "counts": counts,
            "total": sum(counts.values()),
            "status": status,
            "environment": environment,
            "search": search or "",
            "rows": rows,
            "next_before": rows[-1].id if has_more and rows else None,
        },
        signed=signed,
        notice=query.get("notice"),
    )


ROUTES = [login_form, login, logout, board]
