"""Ops API for monthly HMO and employer invoices (docs/payments.md, "HMO claims and
employer invoices").

Drafting is idempotent per payer, environment and month (201 made, 200 the same invoice
again); moves follow ``billing/payer_invoices.ALLOWED`` (draft -> issued -> paid; anything
else 409); a remittance CSV marks several issued invoices paid at once, or none. Every change
is an audit record naming the operator.
"""

from __future__ import annotations

import asyncio

from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.billing import payer_invoice_store as store
from rehabref.billing import remittance
from rehabref.billing.payer_invoice_csv import invoice_csv
from rehabref.billing.payer_invoice_pdf import invoice_pdf
from rehabref.billing.payer_invoice_schemas import PayerInvoiceDraftIn, PayerInvoiceMoveIn
from rehabref.clock import utcnow
from rehabref.cursors import page_envelope, page_params
from rehabref.documents import attachment, document_format
from rehabref.errors import ApiError
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of

BASE_PATH = "/api/v1/ops/payer-invoices"
STATUSES = ("draft", "issued", "paid")


async def draft_invoice(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    payload = validate(PayerInvoiceDraftIn, await json_object(request))
    async with services_of(request).db.write() as conn:
        row, created = await store.draft(
            conn,
            payer_kind=payload.payer_kind,
            payer_id=payload.payer_id,
            environment=payload.environment,
            period=payload.period,
            actor=operator.actor,
            now=utcnow(),
        )
        if created:
            await audit(conn, operator.actor, "payer_invoice.drafted", row.id)
    return json_response(store.record(row), status=201 if created else 200)


async def list_invoices(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    problems: dict[str, str] = {}
    limit, before_id = page_params(request.query_params, store.decode_cursor, problems)
    status = request.query_params.get("status")
    if status is not None and status not in STATUSES:
        problems["status"] = "Must be draft, issued or paid."
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services_of(request).db.read() as conn:
        rows, has_more = await store.list_page(
            conn, status=status, before_id=before_id, limit=limit
        )
    return json_response(
        page_envelope(
            [store.record(row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=store.encode_cursor,
        )
    )


async def get_invoice(
    request: PlainRequest, operator: OperatorPrincipal, invoice_id: str
) -> Response[bytes]:
    """JSON with its lines; ``?format=csv`` or ``?format=pdf`` for the documents."""
    kind = document_format(request.query_params)
    async with services_of(request).db.read() as conn:
        row = await store.get(conn, invoice_id)
        if row is None:
            raise ApiError(404, "not_found", "No payer invoice with this identifier.")
        lines = await store.invoice_lines(conn, row.number)
    if kind == "json":
        return json_response(
            {**store.record(row), "lines": [store.line_record(line) for line in lines]}
        )
    if kind == "csv":
        content = invoice_csv(row, lines)
    else:
        content = await asyncio.to_thread(invoice_pdf, row, lines)
    return attachment(content, kind, f"{row.number}.{kind}")


async def move_invoice(
    request: PlainRequest, operator: OperatorPrincipal, invoice_id: str
) -> Response[bytes]:
    payload = validate(PayerInvoiceMoveIn, await json_object(request))
    async with services_of(request).db.write() as conn:
        row = await store.move(
            conn,
            invoice_id=invoice_id,
            to=payload.to,
            actor=operator.actor,
            now=utcnow(),
            remittance_reference=payload.remittance_reference,
        )
        await audit(conn, operator.actor, f"payer_invoice.{payload.to}", row.id)
    return json_response(store.record(row))


async def import_remittance(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    """``Content-Type: text/csv``; all rows applied or none (422 with a message per row)."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != "text/csv":
        raise ApiError(
            400,
            "malformed_request",
            "Send the remittance file as CSV with Content-Type: text/csv.",
            fields={"Content-Type": "Must be text/csv."},
        )
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_request", "The file is not valid UTF-8.") from None
    now = utcnow()
    rows = remittance.parse(text, today=now.date())
    async with services_of(request).db.write() as conn:
        paid = await remittance.apply(conn, rows, actor=operator.actor, now=now)
        for row in paid:
            await audit(conn, operator.actor, "payer_invoice.paid", row.id)
    return json_response({"paid": [store.record(row) for row in paid]})


async def audit(conn: AsyncConnection, actor: str, action: str, invoice_id: str) -> None:
    await record(conn, entry(actor, action, subject=invoice_id))


ROUTES = [
    PlainRoute("POST", BASE_PATH, draft_invoice, auth=OPERATOR),
    PlainRoute("GET", BASE_PATH, list_invoices, auth=OPERATOR),
    PlainRoute("POST", BASE_PATH + "/remittances", import_remittance, auth=OPERATOR),
    PlainRoute("GET", BASE_PATH + "/{invoice_id}", get_invoice, auth=OPERATOR),
    PlainRoute("POST", BASE_PATH + "/{invoice_id}/transitions", move_invoice, auth=OPERATOR),
]
