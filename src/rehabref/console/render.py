"""Rendering console pages: shared headers, the signed-in context, redirects."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from litestar import Request
from litestar.response import Redirect, Template

from rehabref import fields
from rehabref.clock import as_utc
from rehabref.console.session import Signed, signed_in
from rehabref.errors import ApiError
from rehabref.money import format_money
from rehabref.pages import form_tokens
from rehabref.pages.forms import posted_form

HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
}

NOTICES = {
    "moved": "Status updated.",
    "redelivered": "Redelivery queued: the worker sends it within seconds.",
    "claimed": "Task claimed.",
    "completed": "Task completed.",
    "physio_created": "Physiotherapist added.",
    "session_scheduled": "Session scheduled.",
    "session_started": "Session started.",
    "session_completed": "Session completed.",
    "session_cancelled": "Session cancelled.",
    "withdrawn": "Consent withdrawal recorded: the referral ended and the partner is told.",
    "payment_link_sent": "Payment link created and sent to the patient.",
    "statement_made": "Commission statement made (or the one already made for that month).",
    "matched": "Matched: the physiotherapist is below and the partner is told.",
    "unmatched": "No physiotherapist fits now: an unmatched task is open; assign one by hand.",
    "assigned": "Physiotherapist assigned: the partner is told.",
    "statement_settled": "Statement settled: the partner is told by webhook.",
    "slot_booked": "Visit booked: the patient and the physiotherapist are told.",
    "slot_rescheduled": "Visit moved: the patient and the physiotherapist are told.",
    "slot_cancelled": "Visit cancelled: the slot is free again.",
    "invoice_issued": "Invoice issued.",
    "invoice_paid": "Invoice recorded as paid.",
}


def when(value: datetime | None) -> str:
    if value is None:
        return ""
    return as_utc(value).strftime("%Y-%m-%d %H:%M UTC")


def page(
    name: str,
    context: dict[str, Any],
    *,
    signed: Signed | None,
    status: int = 200,
    notice: str | None = None,
    **extra: Any,
) -> Template:
    full = {
        **context,
        "operator": signed.operator if signed else None,
        "csrf_token": signed.csrf_token() if signed else context.get("csrf_token"),
        "notice": NOTICES.get(notice or ""),
        "when": when,
        "money": format_money,
    }
    return Template(
        template_name=f"console/{name}.html",
        context=full,
        status_code=status,
        headers={**HEADERS, **extra.pop("headers", {})},
        **extra,
    )


def see_other(path: str, **extra: Any) -> Redirect:
    return Redirect(path=path, status_code=303, headers=HEADERS, **extra)


def to_login() -> Redirect:
    return see_other("/console/login")


def refused(signed: Signed) -> Template:
    return page(
        "message",
        {
            "title": "Form expired",
            "message": "This form was not accepted (its security token is missing or too old). "
            "Go back, reload the page and try again.",
        },
        signed=signed,
        status=403,
    )


@dataclass(frozen=True)
class Posted:
    """A console POST that may proceed: the operator's session and the submitted form."""

    signed: Signed
    form: Any


async def guarded_form(request: Request[Any, Any, Any]) -> Posted | Template | Redirect:
    """Every console POST: a signed-in operator and a valid CSRF token, or the answer to send
    instead (the login redirect, or the 403 "form expired" page)."""
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    form = await posted_form(request)
    if not signed.csrf_ok(form.get(form_tokens.FIELD)):
        return refused(signed)
    return Posted(signed=signed, form=form)


def form_text(form: Any, name: str, max_length: int) -> str:
    """A typed form field, stripped and cut to ``max_length``; text the API would refuse
    (control or invisible characters, ``fields.plain_text``) is a 422 naming the field."""
    value = str(form.get(name) or "").strip()[:max_length]
    try:
        return fields.plain_text(value)
    except ValueError as exc:
        raise ApiError(422, "validation_error", str(exc), fields={name: str(exc)}) from None
