"""OpenAPI description of the referral-link operations."""

from __future__ import annotations

from pydantic import BaseModel

from rehabref.links.responses import ReferralLinkList, ReferralLinkRecord
from rehabref.links.schemas import ReferralLinkCreate
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import (
    OK_HEADERS,
    PAGE_PARAMETERS,
    Operation,
    errors,
    header,
)

_LINK_ID = {"name": "link_id", "in": "path", "required": True, "schema": {"type": "string"}}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="createReferralLink",
        method="post",
        paths=("/api/v1/partners/referral-links",),
        summary="Create a hosted referral link",
        description=(
            "Creates a hosted referral form at `url` ({public_base}/r/{public_code}) in the "
            "environment of the key used. The public code carries 176 random bits and no "
            "patient information. Referrals submitted through it are attributed to you and the "
            "campaign. A click alone makes no commission eligible. Idempotency-Key is optional "
            "and honoured when sent."
        ),
        tag="referral-links",
        request_model=ReferralLinkCreate,
        parameters=[header("Idempotency-Key", "Optional: one unique value per link.")],
        responses={
            201: ("Link created (or replayed).", ReferralLinkRecord, OK_HEADERS),
            **errors(400, 401, 403, 409, 413, 422, 429),
        },
    ),
    Operation(
        operation_id="listReferralLinks",
        method="get",
        paths=("/api/v1/partners/referral-links",),
        summary="List hosted referral links",
        description="Newest first, with click and referral counts. Page with limit and cursor.",
        tag="referral-links",
        parameters=[
            *PAGE_PARAMETERS,
        ],
        responses={
            200: ("A page of links.", ReferralLinkList, OK_HEADERS),
            **errors(401, 403, 422, 429),
        },
    ),
    Operation(
        operation_id="getReferralLink",
        method="get",
        paths=("/api/v1/partners/referral-links/{link_id}",),
        summary="Retrieve a hosted referral link",
        description="One link with its click and referral counts.",
        tag="referral-links",
        parameters=[_LINK_ID],
        responses={
            200: ("The link.", ReferralLinkRecord, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
    Operation(
        operation_id="deactivateReferralLink",
        method="delete",
        paths=("/api/v1/partners/referral-links/{link_id}",),
        summary="Deactivate a hosted referral link",
        description=(
            "The form then shows a 410 page and accepts no submissions. Repeating the call "
            "returns the same deactivated link."
        ),
        tag="referral-links",
        parameters=[_LINK_ID],
        responses={
            200: ("The deactivated link.", ReferralLinkRecord, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (ReferralLinkCreate,)
ANSWER_TYPES: tuple[AnswerType, ...] = (ReferralLinkRecord, ReferralLinkList)
