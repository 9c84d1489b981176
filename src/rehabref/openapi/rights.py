"""OpenAPI description of the patients'-rights operations (ops API)."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.openapi.operations import REQUEST_ID, Operation, errors
from rehabref.ops.rights_schemas import (
    ConsentWithdrawalIn,
    DataSubjectRequestIn,
    DataSubjectRequestOut,
)
from rehabref.ops.schemas import OpsReferral

_AUTH = "Operator token only: `Authorization: Bearer op_...`."

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsDataSubjectRequest",
        method="post",
        paths=("/api/v1/ops/data-subject-requests",),
        summary="Export or erase everything held about a person (NDPA)",
        description=(
            "Finds every referral whose patient has the phone (E.164) or e-mail address, "
            "any partner. `export` answers with the export document and a PDF for the "
            "patient; `erasure` ends open referrals as a consent withdrawal (partners get "
            "`referral.closed`), then scrubs personal and clinical data everywhere, keeping "
            "ids, statuses, dates and amounts: partners then read the referral with patient "
            "names `[erased]` and contact fields null. Both are logged with hashed "
            "identifiers. See docs/security.md. " + _AUTH
        ),
        tag="ops",
        request_model=DataSubjectRequestIn,
        responses={
            200: ("The request's outcome.", DataSubjectRequestOut, REQUEST_ID),
            **errors(400, 401, 413, 422),
        },
    ),
    Operation(
        operation_id="opsRecordConsentWithdrawal",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/consent-withdrawal",),
        summary="Record a consent withdrawal the patient gave by phone",
        description=(
            "Ends the referral (cancelled, or closed after an attended visit) with reason "
            "`consent_withdrawn`, tells the partner (`referral.closed` with "
            "`reason: consent_withdrawn`), stops every message to the patient and cancels "
            "scheduled sessions. A referral already ended is only marked withdrawn. " + _AUTH
        ),
        tag="ops",
        request_model=ConsentWithdrawalIn,
        parameters=[
            {
                "name": "referral_id",
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
            }
        ],
        responses={
            200: ("The referral after the withdrawal.", OpsReferral, REQUEST_ID),
            **errors(400, 401, 404, 413, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    DataSubjectRequestIn,
    DataSubjectRequestOut,
    ConsentWithdrawalIn,
)
