"""OpenAPI description of the coordinator (ops) operations."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rehabref.openapi.operations import PAGE_PARAMETERS, REQUEST_ID, Operation, errors, query
from rehabref.ops.schemas import (
    ContactTaskComplete,
    OpsContactTask,
    OpsContactTaskList,
    OpsReferral,
    OpsReferralDetail,
    OpsReferralList,
    TransitionRequest,
)
from rehabref.referrals.status import STATUSES

_AUTH = (
    "Operator token only (`rehabref operators create`): `Authorization: Bearer op_...`. "
    "Partner API keys get 401."
)


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


_PAGE = list(PAGE_PARAMETERS)

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsTransitionReferral",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/transitions",),
        summary="Move a referral to another status",
        description=(
            "Applies one move of the referral state machine and writes its event in the same "
            "transaction. `appointment` is required for `booked` (booked -> booked "
            "reschedules); `payment` is required for `paid` and computes the partner "
            "commission from the agreement. An illegal move is 409 `invalid_transition`. " + _AUTH
        ),
        tag="ops",
        request_model=TransitionRequest,
        parameters=[_path("referral_id")],
        responses={
            200: ("The referral after the move.", OpsReferral, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListReferrals",
        method="get",
        paths=("/api/v1/ops/referrals",),
        summary="Find referrals (all partners)",
        description="Newest first. `q` matches referral_id, external_ref, partner_reference or "
        "tracking_code exactly. " + _AUTH,
        tag="ops",
        parameters=[
            query("status", {"type": "string", "enum": list(STATUSES)}, "Referral status."),
            query("q", {"type": "string", "maxLength": 255}, "An identifier to look up."),
            query("partner_id", {"type": "string"}, "Only this partner's referrals."),
            query("environment", {"type": "string", "enum": ["test", "live"]}, "Environment."),
            *_PAGE,
        ],
        responses={
            200: ("A page of referrals.", OpsReferralList, REQUEST_ID),
            **errors(401, 422),
        },
    ),
    Operation(
        operation_id="opsGetReferral",
        method="get",
        paths=("/api/v1/ops/referrals/{referral_id}",),
        summary="A referral with its intake answers and transition history",
        description=_AUTH,
        tag="ops",
        parameters=[_path("referral_id")],
        responses={
            200: ("The referral.", OpsReferralDetail, REQUEST_ID),
            **errors(401, 404),
        },
    ),
    Operation(
        operation_id="opsListContactTasks",
        method="get",
        paths=("/api/v1/ops/contact-tasks",),
        summary="The contact task queue",
        description="Oldest first (the longest-waiting patient first). " + _AUTH,
        tag="ops",
        parameters=[
            query(
                "status",
                {"type": "string", "enum": ["open", "claimed", "done"], "default": "open"},
                "Task status.",
            ),
            *_PAGE,
        ],
        responses={
            200: ("A page of tasks.", OpsContactTaskList, REQUEST_ID),
            **errors(401, 422),
        },
    ),
    Operation(
        operation_id="opsClaimContactTask",
        method="post",
        paths=("/api/v1/ops/contact-tasks/{task_id}/claim",),
        summary="Claim a contact task",
        description="open -> claimed by you (again by you: no change). A task claimed by "
        "another coordinator or done is 409 `invalid_transition`. " + _AUTH,
        tag="ops",
        parameters=[_path("task_id")],
        responses={
            200: ("The task.", OpsContactTask, REQUEST_ID),
            **errors(401, 404, 409),
        },
    ),
    Operation(
        operation_id="opsCompleteContactTask",
        method="post",
        paths=("/api/v1/ops/contact-tasks/{task_id}/complete",),
        summary="Record the outcome of a contact task",
        description=(
            "`reached`: you spoke to the patient and can book (transition to `booked`); "
            "`unreachable`: no answer; `assistant_link_sent`: a new assistant link is sent "
            "to the patient through the messaging adapter. " + _AUTH
        ),
        tag="ops",
        request_model=ContactTaskComplete,
        parameters=[_path("task_id")],
        responses={
            200: ("The task.", OpsContactTask, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    TransitionRequest,
    ContactTaskComplete,
    OpsReferral,
    OpsReferralDetail,
    OpsReferralList,
    OpsContactTask,
    OpsContactTaskList,
)
