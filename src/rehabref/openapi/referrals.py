"""OpenAPI description of the referral operations."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import (
    OK_HEADERS,
    PAGE_PARAMETERS,
    Operation,
    errors,
    header,
    query,
)
from rehabref.referrals.responses import (
    ReferralCreatedEither,
    ReferralListEither,
    ReferralListV1,
    ReferralRecordEither,
)
from rehabref.referrals.schemas_g import ReferralCreateEither, ReferralCreateG
from rehabref.referrals.schemas_v1 import ReferralCreateV1
from rehabref.referrals.status import STATUSES

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
            "replays the original response (header `Idempotent-Replayed: true`). "
            "Shape G bodies (`clinical_notes`, `billing_mode`) message the patient at once "
            "and answer with the Shape G body (`created_at` in epoch ms); Idempotency-Key is "
            "optional for Shape G and honoured when sent; a reused `partner_reference` is a "
            "409 `duplicate_partner_reference`. See docs/shape-g.md."
        ),
        tag="referrals",
        request_model=ReferralCreateEither,
        parameters=[
            header("Idempotency-Key", "Required for Shape V1: one unique value per referral."),
            header("X-Request-ID", "Your trace id, echoed back."),
        ],
        responses={
            201: (
                "Referral created (or replayed).",
                ReferralCreatedEither,
                {
                    **OK_HEADERS,
                    "Idempotent-Replayed": "`true` when this answer replays the stored response "
                    "of an earlier request with the same Idempotency-Key.",
                },
            ),
            **errors(400, 401, 403, 409, 413, 422, 429, 503),
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
            *PAGE_PARAMETERS,
        ],
        responses={
            200: ("A page of referrals.", ReferralListEither, OK_HEADERS),
            **errors(401, 403, 422, 429),
        },
    ),
    Operation(
        operation_id="getReferral",
        method="get",
        paths=("/api/v1/partners/referrals/{referral_id}",),
        summary="Retrieve a referral",
        description=(
            "The same record as the external_ref query returns. For a Shape G referral the "
            "path key may also be its tracking code or your partner_reference (looked up in "
            "that order after the referral id); all give the identical 2.4 record."
        ),
        tag="referrals",
        parameters=[
            {"name": "referral_id", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        responses={
            200: ("The referral.", ReferralRecordEither, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    ReferralCreateV1,
    ReferralCreateG,
    ReferralCreateEither,
)
# The unions bring their members (ReferralRecordV1, ReferralCreatedG, ...).
ANSWER_TYPES: tuple[AnswerType, ...] = (
    ReferralCreatedEither,
    ReferralRecordEither,
    ReferralListV1,
    ReferralListEither,
)
