"""Console sign-in: a signed session cookie carrying the operator id, and CSRF on every POST.

The cookie is ``<operator id>.<expiry epoch ms>.<nonce>.<signature>`` (HttpOnly,
SameSite=Strict, path /console, Secure when the public base URL is https). It is checked on
every request, together with the operator row, so revoking an operator's token ends their
console sessions at once, and signing out ends every session of that operator issued before
(``operators.console_sessions_after``), not only the cookie in this browser. Every form
carries a token signed for the session's nonce (``links.form_tokens``); a POST without it is
refused.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from litestar import Request
from litestar.datastructures import Cookie
from sqlalchemy import select, update

from rehabref.clock import as_utc, utcnow
from rehabref.db import table
from rehabref.instance_secret import SecretBox
from rehabref.ops.auth import OperatorPrincipal
from rehabref.pages import form_tokens
from rehabref.services import Services, services_of
from rehabref.tables.operators import Operator

SESSION_COOKIE = "rr_console"
LOGIN_COOKIE = "rr_console_login"
SESSION_SECONDS = 8 * 3600
CSRF_MAX_AGE = SESSION_SECONDS
PATH = "/console"
_operators = table(Operator)


def secure(services: Services) -> bool:
    return services.settings.base_url.startswith("https://")


def new_session_value(box: SecretBox, operator_id: str) -> str:
    expires_ms = int((time.time() + SESSION_SECONDS) * 1000)
    body = f"{operator_id}.{expires_ms}.{secrets.token_hex(12)}"
    return f"{body}.{box.sign('console-session:' + body)}"


def _read_session(box: SecretBox, value: str | None) -> tuple[str, str, float] | None:
    """(operator id, nonce, issued at in epoch seconds) of a genuine, unexpired cookie value."""
    if not value or len(value) > 200:
        return None
    parts = value.split(".")
    if len(parts) != 4 or not (parts[1].isascii() and parts[1].isdigit()):
        return None
    operator_id, expiry, nonce, signature = parts
    expires_at = int(expiry) / 1000
    if expires_at <= time.time():
        return None
    if not box.verify(f"console-session:{operator_id}.{expiry}.{nonce}", signature):
        return None
    return operator_id, nonce, expires_at - SESSION_SECONDS


def session_cookie(services: Services, value: str) -> Cookie:
    return form_tokens.cookie(
        SESSION_COOKIE, value, path=PATH, secure=secure(services), max_age=SESSION_SECONDS
    )


def cleared(services: Services, name: str) -> Cookie:
    return form_tokens.cookie(name, "", path=PATH, secure=secure(services), max_age=0)


async def end_sessions(services: Services, operator_id: str) -> None:
    """Sign the operator out everywhere: sessions issued until now stop working."""
    async with services.db.write() as conn:
        await conn.execute(
            update(_operators)
            .where(_operators.c.id == operator_id)
            .values(console_sessions_after=utcnow())
        )


class Signed:
    """The signed-in operator and their session's CSRF binding."""

    def __init__(self, operator: OperatorPrincipal, nonce: str, box: SecretBox) -> None:
        self.operator = operator
        self._nonce = nonce
        self._box = box

    def csrf_token(self) -> str:
        return form_tokens.issue(self._box, purpose="console", binding=self._nonce)

    def csrf_ok(self, token: Any) -> bool:
        return (
            form_tokens.check(
                self._box,
                purpose="console",
                binding=self._nonce,
                token=token if isinstance(token, str) else None,
                max_age=CSRF_MAX_AGE,
            )
            is not None
        )


async def signed_in(request: Request[Any, Any, Any]) -> Signed | None:
    services = services_of(request)
    parsed = _read_session(services.box, request.cookies.get(SESSION_COOKIE))
    if parsed is None:
        return None
    operator_id, nonce, issued_at = parsed
    async with services.db.read() as conn:
        row = (
            await conn.execute(
                select(
                    _operators.c.id, _operators.c.name, _operators.c.console_sessions_after
                ).where(_operators.c.id == operator_id, _operators.c.revoked_at.is_(None))
            )
        ).first()
    if row is None:
        return None
    ended = row.console_sessions_after
    if ended is not None and issued_at <= as_utc(ended).timestamp():
        return None
    return Signed(OperatorPrincipal(operator_id=row.id, name=row.name), nonce, services.box)
