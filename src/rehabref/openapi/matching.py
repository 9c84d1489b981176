"""OpenAPI description of the physiotherapist registry and matching (ops) operations."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rehabref.matching.schemas import (
    MatchResult,
    PhysioCreate,
    PhysioList,
    PhysioRecord,
    PhysioUpdate,
)
from rehabref.openapi.operations import PAGE_PARAMETERS, REQUEST_ID, Operation, errors, query

_AUTH = (
    "Operator token only (`rehabref operators create`): `Authorization: Bearer op_...`. "
    "Partner API keys get 401."
)


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsCreatePhysiotherapist",
        method="post",
        paths=("/api/v1/ops/physiotherapists",),
        summary="Register a physiotherapist",
        description=(
            "Adds a physiotherapist to the registry shared by all partners. The license "
            "number is unique (409 `duplicate_license_number`). " + _AUTH
        ),
        tag="ops",
        request_model=PhysioCreate,
        responses={
            201: ("The physiotherapist.", PhysioRecord, REQUEST_ID),
            **errors(400, 401, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListPhysiotherapists",
        method="get",
        paths=("/api/v1/ops/physiotherapists",),
        summary="List physiotherapists",
        description="Ordered by id; filter by city (aliases resolved) and active. " + _AUTH,
        tag="ops",
        parameters=[
            query("city", {"type": "string", "minLength": 1, "maxLength": 100}, "City."),
            query("active", {"type": "string", "enum": ["true", "false"]}, "Active or not."),
            *PAGE_PARAMETERS,
        ],
        responses={
            200: ("A page of physiotherapists.", PhysioList, REQUEST_ID),
            **errors(401, 422),
        },
    ),
    Operation(
        operation_id="opsGetPhysiotherapist",
        method="get",
        paths=("/api/v1/ops/physiotherapists/{physio_id}",),
        summary="Retrieve a physiotherapist",
        description=_AUTH,
        tag="ops",
        parameters=[_path("physio_id")],
        responses={200: ("The physiotherapist.", PhysioRecord, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsUpdatePhysiotherapist",
        method="patch",
        paths=("/api/v1/ops/physiotherapists/{physio_id}",),
        summary="Update a physiotherapist",
        description="Only the fields sent change; none may be null. " + _AUTH,
        tag="ops",
        request_model=PhysioUpdate,
        parameters=[_path("physio_id")],
        responses={
            200: ("The updated physiotherapist.", PhysioRecord, REQUEST_ID),
            **errors(400, 401, 404, 413, 422),
        },
    ),
    Operation(
        operation_id="opsDeactivatePhysiotherapist",
        method="post",
        paths=("/api/v1/ops/physiotherapists/{physio_id}/deactivate",),
        summary="Deactivate a physiotherapist",
        description=(
            "A deactivated physiotherapist is never matched again; current assignments "
            'stay. Reactivate with PATCH `{"active": true}`. ' + _AUTH
        ),
        tag="ops",
        parameters=[_path("physio_id")],
        responses={200: ("The physiotherapist.", PhysioRecord, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsMatchReferral",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/match",),
        summary="Match a referral to a physiotherapist now",
        description=(
            "Runs the matching rules (docs/matching.md). A referral with a physiotherapist "
            "keeps it. When nobody fits, `matched` is false and an `unmatched` contact task "
            "is queued. " + _AUTH
        ),
        tag="ops",
        parameters=[_path("referral_id")],
        responses={
            200: ("The match result.", MatchResult, REQUEST_ID),
            **errors(401, 404, 409),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    PhysioCreate,
    PhysioUpdate,
    PhysioRecord,
    PhysioList,
    MatchResult,
)
