"""OpenAPI description of the eligibility check."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.eligibility.responses import EligibilityAnswer, SandboxIneligibleOrError
from rehabref.eligibility.schemas import EligibilityRequest
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import OK_HEADERS, Operation, errors

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="checkEligibility",
        method="post",
        paths=("/api/v1/partners/eligibility",),
        summary="Check an HMO member's physiotherapy coverage",
        description=(
            "Answers `eligible` (with coverage and a signed `pre_auth_token`) or `ineligible` "
            "(with `reason` and a self-pay fallback). Live keys: both answers are HTTP 200. "
            "Test keys: coverage is synthetic and deterministic per policy number; the "
            "ineligible test phone (scenario 4) and any ineligible answer give HTTP 400 with "
            "the ineligible body. The 200 schema is the eligible body on live keys too when "
            "`status` is `eligible`."
        ),
        tag="eligibility",
        request_model=EligibilityRequest,
        responses={
            200: ("Eligible, or (live keys) ineligible.", EligibilityAnswer, OK_HEADERS),
            400: (
                "Sandbox: ineligible (same body as the live 200 ineligible answer); or a "
                "malformed request (error body).",
                SandboxIneligibleOrError,
                OK_HEADERS,
            ),
            **errors(401, 403, 413, 422, 429),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (EligibilityRequest,)
ANSWER_TYPES: tuple[AnswerType, ...] = (EligibilityAnswer, SandboxIneligibleOrError)
