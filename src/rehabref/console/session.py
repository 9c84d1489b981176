"""Console sign-in: a signed session cookie carrying the operator id, and CSRF on every POST.

The cookie is ``<operator id>.<expiry epoch ms>.<nonce>.<signature>`` (HttpOnly,
SameSite=Strict, path /console, Secure when the public base URL is https). It is checked on
every request, together with the operator row, so revoking an operator's token ends their
console sessions at once, and signing out ends every session of that operator issued before
(``operators.console_sessions_after``), not only the cookie in this browser. Every form
carries a token signed for the session's nonce (``links.form_tokens``); a POST without it is
refused.

Idle sign-out: each session also has a row in ``console_sessions`` (keyed by the nonce) with
its last request; a session idle for longer than ``console_idle_seconds`` (config,
REHABREF_CONSOLE_IDLE_MINUTES, default 15) is over, whatever its cookie says, so a console
left open on a shared desk does not stay signed in. An expired operator token ends its
sessions too.
"""

from __future__ import annotations

import secrets
import time
from datetime import datetime, timedelta
from typing import Any

from litestar import Request
from litestar.datastructures import Cookie
from sqlalchemy import insert, select, update

from rehabref.clock import as_utc, utcnow
from rehabref.db import table
from rehabref.instance_secret import SecretBox
from rehabref.ops.auth import OperatorPrincipal, active, principal_of
from rehabref.pages import form_tokens
from rehabref.services import Services, services_of
from rehabref.tables.operators import ConsoleSession, Operator

SESSION_COOKIE = "rr_console"
LOGIN_COOKIE = "rr_console_login"
SESSION_SECONDS = 8 * 3600
CSRF_MAX_AGE = SESSION_SECONDS
PATH = "/console"
_operators = table(Operator)
_sessions = table(ConsoleSession)


def secure(services: Services) -> bool:
    return services.settings.base_url.startswith("https://")


def idle_expired(last_seen: datetime, now: datetime, idle_seconds: float) -> bool:
    """Whether a session last used at ``last_seen`` is over at ``now`` for being idle."""
    return now - as_utc(last_seen) > timedelta(seconds=idle_seconds)


def new_session_value(box: SecretBox, operator_id: str, nonce: str | None = None) -> str:
    """A signed cookie value for a new session (``nonce``: its ``console_sessions`` id)."""
    expires_ms = int((time.time() + SESSION_SECONDS) * 1000)
    body = f"{operator_id}.{expires_ms}.{nonce or secrets.token_hex(12)}"
    return f"{body}.{box.sign('console-session:' + body)}"


async def start_session(services: Services, operator_id: str, now: datetime) -> str:
    """A new signed-in session: its row (for the idle sign-out) and its cookie value."""
    nonce = secrets.token_hex(12)
    async with services.db.write() as conn:
        await conn.execute(
            insert(_sessions),
            {"id": nonce, "operator_id": operator_id, "created_at": now, "last_seen_at": now},
        )
    return new_session_value(services.box, operator_id, nonce)


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


async def signed_in(
    request: Request[Any, Any, Any], *, now: datetime | None = None
) -> Signed | None:
    """The signed-in operator, or None; a live session's last-seen time moves to ``now``."""
    services = services_of(request)
    parsed = _read_session(services.box, request.cookies.get(SESSION_COOKIE))
    if parsed is None:
        return None
    operator_id, nonce, issued_at = parsed
    now = now or utcnow()
    async with services.db.write() as conn:
        row = (
            await conn.execute(
                select(
                    _operators.c.id,
                    _operators.c.name,
                    _operators.c.role,
                    _operators.c.console_sessions_after,
                    _sessions.c.last_seen_at,
                )
                .join(_sessions, _sessions.c.operator_id == _operators.c.id)
                .where(_operators.c.id == operator_id, _sessions.c.id == nonce, active(now))
            )
        ).first()
        if row is None:
            return None
        ended = row.console_sessions_after
        if ended is not None and issued_at <= as_utc(ended).timestamp():
            return None
        if idle_expired(row.last_seen_at, now, services.settings.console_idle_seconds):
            return None
        await conn.execute(
            update(_sessions).where(_sessions.c.id == nonce).values(last_seen_at=now)
        )
    return Signed(principal_of(row), nonce, services.box)
