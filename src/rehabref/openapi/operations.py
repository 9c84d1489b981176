"""Every documented operation: paths, parameters, request and response models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rehabref.errors_schema import ErrorBody
from rehabref.referrals.schemas_v1 import (
    ReferralCreatedV1,
    ReferralCreateV1,
    ReferralListV1,
    ReferralRecordV1,
)
from rehabref.referrals.status import STATUSES

ResponseSpec = tuple[str, type[BaseModel] | None, dict[str, str]]

REQUEST_ID = {"X-Request-ID": "The request id (yours if you sent one); equals error.request_id."}
RATE_HEADERS = {
    "RateLimit-Limit": "Requests allowed per window for this key.",
    "RateLimit-Remaining": "Requests left in the current window.",
    "RateLimit-Reset": "Seconds until the window resets.",
}

_ERROR_TEXT = {
    400: "Malformed request: invalid JSON, wrong Content-Type or a missing Idempotency-Key.",
    401: "Missing, invalid or revoked API key.",
    403: "The key may not call this operation (e.g. a publishable key).",
    404: "Not found for this partner and environment.",
    409: "Conflict: duplicate external_ref, or the same Idempotency-Key still in flight.",
    413: "Body larger than 1 MiB.",
    422: "Field validation failed; see error.fields.",
    429: "Rate limit exceeded; retry after Retry-After seconds.",
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    result: dict[int, ResponseSpec] = {}
    for status in statuses:
        headers = dict(REQUEST_ID)
        if status == 429:
            headers = {**headers, "Retry-After": "Seconds to wait.", **RATE_HEADERS}
        result[status] = (_ERROR_TEXT[status], ErrorBody, headers)
    return result


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def header(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "schema": {"type": "string", "maxLength": 255},
        "description": description,
    }


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    paths: tuple[str, ...]
    summary: str
    description: str
    tag: str
    responses: dict[int, ResponseSpec]
    request_model: type[BaseModel] | None = None
    parameters: list[dict[str, Any]] = field(default_factory=list)
    secured: bool = True

    def request_schema(self) -> dict[str, Any]:
        assert self.request_model is not None
        return {"$ref": f"#/components/schemas/{self.request_model.__name__}"}


_OK = {**REQUEST_ID, **RATE_HEADERS}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="createReferral",
        method="post",
        paths=("/api/v1/partners/referrals", "/v1/partner/referrals"),
        summary="Create a referral",
        description=(
            "Creates a referral and starts the patient's intake: `route=assistant` returns a "
            "short-lived `assistant_session_url` for the patient; `route=contact` queues a human "
            "follow-up (status `contact_pending`). A retry with the same Idempotency-Key "
            "replays the original response (header `Idempotent-Replayed: true`)."
        ),
        tag="referrals",
        request_model=ReferralCreateV1,
        parameters=[
            header("Idempotency-Key", "Required for Shape V1: one unique value per referral."),
            header("X-Request-ID", "Your trace id, echoed back."),
        ],
        responses={
            201: ("Referral created (or replayed).", ReferralCreatedV1, _OK),
            **errors(400, 401, 403, 409, 413, 422, 429),
        },
    ),
    Operation(
        operation_id="listReferrals",
        method="get",
        paths=("/api/v1/partners/referrals",),
        summary="Query referrals",
        description=(
            "Newest first. `external_ref` returns the envelope with that one referral. "
            "Page with `limit` and the opaque `cursor` from `next_cursor`."
        ),
        tag="referrals",
        parameters=[
            query("external_ref", {"type": "string"}, "Your reference for the referral."),
            query(
                "status",
                {
                    "type": "string",
                    "enum": list(STATUSES),
                },
                "Referral status.",
            ),
            query(
                "created_from",
                {"type": "string", "format": "date-time"},
                "ISO 8601 UTC; referrals created at or after.",
            ),
            query(
                "created_to",
                {"type": "string", "format": "date-time"},
                "ISO 8601 UTC; referrals created before.",
            ),
            query(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "Page size.",
            ),
            query("cursor", {"type": "string"}, "next_cursor of the previous page."),
        ],
        responses={
            200: ("A page of referrals.", ReferralListV1, _OK),
            **errors(401, 403, 422, 429),
        },
    ),
    Operation(
        operation_id="getReferral",
        method="get",
        paths=("/api/v1/partners/referrals/{referral_id}",),
        summary="Retrieve a referral",
        description="The same record as the external_ref query returns.",
        tag="referrals",
        parameters=[
            {"name": "referral_id", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        responses={200: ("The referral.", ReferralRecordV1, _OK), **errors(401, 403, 404, 429)},
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    ErrorBody,
    ReferralCreateV1,
    ReferralCreatedV1,
    ReferralRecordV1,
    ReferralListV1,
)
