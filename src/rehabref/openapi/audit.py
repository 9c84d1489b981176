"""OpenAPI description of the audit trail listing (ops, admin operators)."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.audit.schemas import AuditEventList, AuditEventRecord
from rehabref.openapi.operations import PAGE_PARAMETERS, REQUEST_ID, Operation, errors, query

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsListAuditEvents",
        method="get",
        paths=("/api/v1/ops/audit-events",),
        summary="Who read or changed what: the audit trail (admin)",
        description=(
            "Every read or change of patient data (partner API, ops API, console, report "
            "downloads), newest first. Records hold ids only, never patient data; each is "
            "hash-chained to the one before (`rehabref audit verify`). Admin operator tokens "
            "only (`rehabref operators create --role admin`): a coordinator's token is 403, "
            "a partner key 401."
        ),
        tag="ops",
        parameters=[
            query("referral_id", {"type": "string", "maxLength": 100}, "One referral."),
            query("actor_id", {"type": "string", "maxLength": 100}, "One actor's id."),
            query(
                "since",
                {"type": "string", "format": "date-time"},
                "Records at or after this ISO 8601 UTC time.",
            ),
            *PAGE_PARAMETERS,
        ],
        responses={
            200: ("A page of audit records.", AuditEventList, REQUEST_ID),
            **errors(401, 403, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (AuditEventRecord, AuditEventList)
