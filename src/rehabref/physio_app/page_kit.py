"""What every physiotherapist app page shares: headers (a CSP that allows only the app's own
script), the page and redirect answers, the session and the session-bound CSRF token."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.response import Redirect, Template

from rehabref.clock import utcnow
from rehabref.pages import form_tokens
from rehabref.physio_app import auth
from rehabref.services import Services, services_of

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "Permissions-Policy": "geolocation=(self)",
}
MODES = {"home_visit": "Home visit", "in_clinic": "At the clinic", "remote": "Video session"}


def secure(services: Services) -> bool:
    return services.settings.base_url.startswith("https://")


def page(template: str, status: int = 200, **context: Any) -> Template:
    return Template(
        template_name=f"physio/{template}.html",
        context=context,
        status_code=status,
        headers=HEADERS,
    )


def see_other(path: str, **extra: Any) -> Redirect:
    return Redirect(path=path, status_code=303, headers=HEADERS, **extra)


def csrf(services: Services, who: auth.SignedIn) -> str:
    return form_tokens.issue(services.box, purpose="physio-app", binding=who.session_digest)


def csrf_ok(services: Services, who: auth.SignedIn, form: Any) -> bool:
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


async def signed_in(request: Request[Any, Any, Any]) -> auth.SignedIn | None:
    async with services_of(request).db.read() as conn:
        return await auth.session_of(conn, request.cookies.get(auth.COOKIE), utcnow())
