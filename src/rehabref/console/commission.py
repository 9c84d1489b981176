"""The console's commission statements page: every partner's statements, a form to make a
month's statement, and (admins) settling one. The same store calls as the ops API, so the
rules (ended month, one statement per month, settle once) are the same; forms are
CSRF-guarded like every console form.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record
from rehabref.billing import commission_store as store
from rehabref.billing.statement_schemas import StatementGenerateIn
from rehabref.clock import utcnow
from rehabref.console.audit_page import viewed
from rehabref.console.render import Posted, guarded_form, page, see_other, to_login
from rehabref.console.session import Signed, signed_in
from rehabref.errors import ApiError
from rehabref.request_body import validate
from rehabref.services import services_of

PATH = "/console/commission"


async def _render(
    request: Request[Any, Any, Any],
    signed: Signed,
    *,
    error: str | None = None,
    status: int = 200,
    notice: str | None = None,
) -> Template:
    async with services_of(request).db.read() as conn:
        rows = await store.list_all(conn)
        partners = await store.partners_with_commission(conn)
    await viewed(request, signed, "commission_statements.listed")
    return page(
        "commission",
        {"rows": rows, "partners": partners, "error": error},
        signed=signed,
        status=status,
        notice=notice,
    )


@get(PATH, include_in_schema=False)
async def commission_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    return await _render(request, signed, notice=request.query_params.get("notice"))


@post(PATH, include_in_schema=False, status_code=200)
async def generate_statement(request: Request[Any, Any, Any]) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    actor = posted.signed.operator.actor
    try:
        payload = validate(
            StatementGenerateIn,
            {
                "partner_id": str(posted.form.get("partner_id") or ""),
                "period": str(posted.form.get("period") or ""),
                "environment": str(posted.form.get("environment") or "live"),
            },
        )
        async with services_of(request).db.write() as conn:
            row, created = await store.generate(
                conn,
                partner_id=payload.partner_id,
                environment=payload.environment,
                period=payload.period,
                actor=actor,
                now=utcnow(),
            )
            if created:
                await record(conn, entry(actor, "commission_statement.generated", subject=row.id))
    except ApiError as exc:
        return await _render(request, posted.signed, error=exc.message, status=exc.status)
    return see_other(f"{PATH}?notice=statement_made")


@post(PATH + "/{statement_id:str}/settle", include_in_schema=False, status_code=200)
async def settle_statement(
    request: Request[Any, Any, Any], statement_id: str
) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    operator = posted.signed.operator
    if not operator.is_admin:
        return await _render(
            request, posted.signed, error="Only an admin operator can settle.", status=403
        )
    try:
        services = services_of(request)
        async with services.db.write() as conn:
            await store.settle(
                conn,
                services.box.ring,
                statement_id=statement_id,
                actor=operator.actor,
                now=utcnow(),
            )
            await record(
                conn, entry(operator.actor, "commission_statement.settled", subject=statement_id)
            )
    except ApiError as exc:
        return await _render(request, posted.signed, error=exc.message, status=exc.status)
    return see_other(f"{PATH}?notice=statement_settled")


ROUTES = [commission_page, generate_statement, settle_statement]
