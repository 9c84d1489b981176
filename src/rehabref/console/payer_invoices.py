"""The console's payer invoices page: every HMO's and employer's monthly invoice, with
"Issue" for drafts and "Mark paid" (with the payer's remittance reference) for issued ones.
The same store calls and state table as the ops API, so an illegal move is refused alike;
forms are CSRF-guarded like every console form and each move is an audit record.
"""

from __future__ import annotations

import asyncio
from typing import Any

from litestar import Request, Response, get, post
from litestar.exceptions import NotFoundException
from litestar.response import Redirect, Template

from rehabref.audit.trail import entry, record
from rehabref.billing import payer_invoice_store as store
from rehabref.billing.payer_invoice_csv import invoice_csv
from rehabref.billing.payer_invoice_pdf import invoice_pdf
from rehabref.billing.payer_invoice_schemas import PayerInvoiceMoveIn
from rehabref.clock import utcnow
from rehabref.console.audit_page import viewed
from rehabref.console.render import Posted, guarded_form, page, see_other, to_login
from rehabref.console.session import Signed, signed_in
from rehabref.documents import attachment
from rehabref.errors import ApiError
from rehabref.request_body import validate
from rehabref.services import services_of

PATH = "/console/invoices"


async def _render(
    request: Request[Any, Any, Any],
    signed: Signed,
    *,
    error: str | None = None,
    status: int = 200,
    notice: str | None = None,
) -> Template:
    async with services_of(request).db.read() as conn:
        rows, _ = await store.list_page(conn, status=None, before_id=None, limit=200)
    await viewed(request, signed, "payer_invoices.listed")
    return page(
        "invoices", {"rows": rows, "error": error}, signed=signed, status=status, notice=notice
    )


@get(PATH, include_in_schema=False)
async def invoices_page(request: Request[Any, Any, Any]) -> Template | Redirect:
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    return await _render(request, signed, notice=request.query_params.get("notice"))


@get(PATH + "/{invoice_id:str}/{kind:str}", include_in_schema=False)
async def invoice_document(
    request: Request[Any, Any, Any], invoice_id: str, kind: str
) -> Response[bytes] | Redirect:
    """The invoice as ``pdf`` or ``csv``, for a signed-in coordinator."""
    signed = await signed_in(request)
    if signed is None:
        return to_login()
    if kind not in ("pdf", "csv"):
        raise NotFoundException()
    async with services_of(request).db.read() as conn:
        row = await store.get(conn, invoice_id)
        if row is None:
            raise NotFoundException()
        lines = await store.invoice_lines(conn, row.number)
    await viewed(request, signed, "payer_invoice.downloaded")
    if kind == "csv":
        content = invoice_csv(row, lines)
    else:
        content = await asyncio.to_thread(invoice_pdf, row, lines)
    return attachment(content, kind, f"{row.number}.{kind}")


@post(PATH + "/{invoice_id:str}/{action:str}", include_in_schema=False, status_code=200)
async def move_invoice(
    request: Request[Any, Any, Any], invoice_id: str, action: str
) -> Template | Redirect:
    posted = await guarded_form(request)
    if not isinstance(posted, Posted):
        return posted
    actor = posted.signed.operator.actor
    try:
        if action not in ("issue", "paid"):
            raise ApiError(404, "not_found", "Unknown action.")
        reference = str(posted.form.get("remittance_reference") or "").strip() or None
        payload = validate(
            PayerInvoiceMoveIn,
            {"to": "issued" if action == "issue" else "paid", "remittance_reference": reference},
        )
        async with services_of(request).db.write() as conn:
            row = await store.move(
                conn,
                invoice_id=invoice_id,
                to=payload.to,
                actor=actor,
                now=utcnow(),
                remittance_reference=payload.remittance_reference,
            )
            await record(conn, entry(actor, f"payer_invoice.{payload.to}", subject=row.id))
    except ApiError as exc:
        detail = "; ".join(exc.fields.values()) if exc.fields else ""
        return await _render(
            request, posted.signed, error=f"{exc.message} {detail}".strip(), status=exc.status
        )
    return see_other(f"{PATH}?notice=invoice_{payload.to}")


ROUTES = [invoices_page, invoice_document, move_invoice]
