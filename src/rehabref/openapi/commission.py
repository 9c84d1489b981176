"""OpenAPI description of the commission statement operations (partner and ops)."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.billing.statement_responses import (
    StatementDetail,
    StatementLine,
    StatementList,
    StatementRecord,
)
from rehabref.billing.statement_schemas import StatementGenerateIn
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import (
    OK_HEADERS,
    PAGE_PARAMETERS,
    REQUEST_ID,
    Operation,
    document_format_query,
    errors,
)

_STATEMENT_ID = {
    "name": "statement_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
}
_NO_COMMISSION = (
    "Only for a partner whose agreement grants commission and shows paid amounts and "
    "commission; for any other partner this is 404 `not_found`."
)
_OPS_AUTH = "Operator token only."

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="listCommissionStatements",
        method="get",
        paths=("/api/v1/partners/commission-statements",),
        summary="List your monthly commission statements",
        description=(
            "Newest first, in the environment of the key used. Page with limit and cursor. "
            + _NO_COMMISSION
        ),
        tag="commission",
        parameters=[
            *PAGE_PARAMETERS,
        ],
        responses={
            200: ("A page of statements.", StatementList, OK_HEADERS),
            **errors(401, 403, 404, 422, 429),
        },
    ),
    Operation(
        operation_id="getCommissionStatement",
        method="get",
        paths=("/api/v1/partners/commission-statements/{statement_id}",),
        summary="Retrieve a commission statement (JSON, CSV or PDF)",
        description=(
            "The statement with its lines: each referral paid in the month, its amount and "
            "commission. `format=csv` answers `text/csv` (one row per line, then a `total` "
            "row, integer minor units); `format=pdf` answers `application/pdf`. " + _NO_COMMISSION
        ),
        tag="commission",
        parameters=[
            _STATEMENT_ID,
            document_format_query(),
        ],
        responses={
            200: ("The statement (JSON form shown).", StatementDetail, OK_HEADERS),
            **errors(401, 403, 404, 422, 429),
        },
    ),
    Operation(
        operation_id="opsGenerateCommissionStatement",
        method="post",
        paths=("/api/v1/ops/commission-statements",),
        summary="Make a partner's commission statement for a month",
        description=(
            "Collects the partner's referrals paid in the month (UTC) whose commission is "
            "`pending_settlement` and not on a statement yet. 201 when made; every repeat for "
            "the same partner, environment and month answers 200 with the same statement. "
            "A month not yet over is 409 `period_not_over`; an agreement without commission "
            "is 409 `no_commission`; an unknown partner is 404. " + _OPS_AUTH
        ),
        tag="ops",
        request_model=StatementGenerateIn,
        responses={
            201: ("The statement made.", StatementRecord, REQUEST_ID),
            200: ("The statement made earlier for this month.", StatementRecord, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsSettleCommissionStatement",
        method="post",
        paths=("/api/v1/ops/commission-statements/{statement_id}/settle",),
        summary="Settle a commission statement",
        description=(
            "Records that the statement was paid out: its lines' referrals move from "
            "`pending_settlement` to `settled` and the partner gets `commission.settled`, in "
            "one transaction. A second settle is 409 `already_settled`. Admin operators only "
            "(403 for a coordinator)."
        ),
        tag="ops",
        parameters=[_STATEMENT_ID],
        responses={
            200: ("The settled statement.", StatementRecord, REQUEST_ID),
            **errors(401, 403, 404, 409),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (StatementGenerateIn,)
ANSWER_TYPES: tuple[AnswerType, ...] = (
    StatementRecord,
    StatementLine,
    StatementDetail,
    StatementList,
)
