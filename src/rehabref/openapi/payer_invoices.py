"""OpenAPI description of the HMO and employer invoice operations (ops)."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.billing.payer_invoice_schemas import (
    PayerInvoiceDetail,
    PayerInvoiceDraftIn,
    PayerInvoiceLine,
    PayerInvoiceList,
    PayerInvoiceMoveIn,
    PayerInvoiceRecord,
    RemittanceResult,
)
from rehabref.openapi.operations import (
    PAGE_PARAMETERS,
    REQUEST_ID,
    Operation,
    document_format_query,
    errors,
    query,
)

_INVOICE_ID = {
    "name": "invoice_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}
_OPS_AUTH = " Operator token only."

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsDraftPayerInvoice",
        method="post",
        paths=("/api/v1/ops/payer-invoices",),
        summary="Draft an HMO's or employer's invoice for a month",
        description=(
            "Collects the payer's claim lines of the month (one per completed session billed "
            "to it) into a `draft` invoice whose number prefixes every line's "
            "`invoice_reference`. 201 when made; every repeat answers 200 with the same "
            "invoice. A month not yet over is 409 `period_not_over`; no lines is 409 "
            "`no_claim_lines`. The worker drafts last month's invoices by itself." + _OPS_AUTH
        ),
        tag="ops",
        request_model=PayerInvoiceDraftIn,
        responses={
            201: ("The invoice made.", PayerInvoiceRecord, REQUEST_ID),
            200: ("The invoice made earlier for this month.", PayerInvoiceRecord, REQUEST_ID),
            **errors(400, 401, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListPayerInvoices",
        method="get",
        paths=("/api/v1/ops/payer-invoices",),
        summary="List HMO and employer invoices",
        description="Newest first, every payer and environment." + _OPS_AUTH,
        tag="ops",
        parameters=[
            *PAGE_PARAMETERS,
            query(
                "status",
                {"type": "string", "enum": ["draft", "issued", "paid"]},
                "Only invoices in this status.",
            ),
        ],
        responses={
            200: ("A page of invoices.", PayerInvoiceList, REQUEST_ID),
            **errors(401, 422),
        },
    ),
    Operation(
        operation_id="opsGetPayerInvoice",
        method="get",
        paths=("/api/v1/ops/payer-invoices/{invoice_id}",),
        summary="Retrieve a payer invoice (JSON, CSV or PDF)",
        description=(
            "The invoice with its lines. `format=csv` answers `text/csv` (one row per line, "
            "then a `total` row, integer minor units); `format=pdf` answers "
            "`application/pdf`." + _OPS_AUTH
        ),
        tag="ops",
        parameters=[
            _INVOICE_ID,
            document_format_query(),
        ],
        responses={
            200: ("The invoice (JSON form shown).", PayerInvoiceDetail, REQUEST_ID),
            **errors(401, 404, 422),
        },
    ),
    Operation(
        operation_id="opsMovePayerInvoice",
        method="post",
        paths=("/api/v1/ops/payer-invoices/{invoice_id}/transitions",),
        summary="Issue a payer invoice, or record it paid",
        description=(
            "`draft -> issued -> paid`; any other move (including a repeat) is 409 "
            "`invalid_transition`. Each move is an audit record naming the operator." + _OPS_AUTH
        ),
        tag="ops",
        parameters=[_INVOICE_ID],
        request_model=PayerInvoiceMoveIn,
        responses={
            200: ("The invoice after the move.", PayerInvoiceRecord, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsImportRemittance",
        method="post",
        paths=("/api/v1/ops/payer-invoices/remittances",),
        summary="Import a payer's remittance CSV",
        description=(
            "Body: `Content-Type: text/csv`, header "
            "`invoice_number,amount_paid_minor,paid_on,remittance_reference`, one row per "
            "invoice paid. Every row must name an `issued` invoice and pay exactly its "
            "`payable_total_minor`; any bad row is 422 `validation_error` with one message "
            "per row in `error.fields` (`row 3`: the file's line) and nothing is applied."
            + _OPS_AUTH
        ),
        tag="ops",
        responses={
            200: ("The invoices marked paid.", RemittanceResult, REQUEST_ID),
            **errors(400, 401, 409, 413, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    PayerInvoiceDraftIn,
    PayerInvoiceMoveIn,
    PayerInvoiceRecord,
    PayerInvoiceLine,
    PayerInvoiceDetail,
    PayerInvoiceList,
    RemittanceResult,
)
