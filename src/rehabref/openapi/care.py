"""OpenAPI description of the session, assessment and outcome report operations."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rehabref.care.responses import OutcomeReport, SessionList
from rehabref.care.schemas import (
    AssessmentBody,
    AssessmentList,
    AssessmentRecord,
    OpsSession,
    OpsSessionList,
    SessionCancel,
    SessionComplete,
    SessionSchedule,
    SessionStart,
)
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import OK_HEADERS, REQUEST_ID, Operation, errors, query

_AUTH = (
    "Operator token only (`rehabref operators create`): `Authorization: Bearer op_...`. "
    "Partner API keys get 401."
)
_DATE = {"type": "string", "maxLength": 40}


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _ops_session(
    operation_id: str, path: str, summary: str, description: str, model: type[BaseModel]
) -> Operation:
    return Operation(
        operation_id=operation_id,
        method="post",
        paths=(path,),
        summary=summary,
        description=description + " " + _AUTH,
        tag="ops",
        request_model=model,
        parameters=[_path("session_id")],
        responses={
            200: ("The session.", OpsSession, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    )


PARTNER_OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="listSessions",
        method="get",
        paths=("/api/v1/partners/sessions",),
        summary="List sessions",
        description=(
            "Sessions of your referrals in the key's environment, ordered by `scheduled_at`. "
            "`from_date`/`to_date` filter `scheduled_at` and take a date (a whole UTC day, "
            "both ends inclusive) or an ISO 8601 UTC timestamp (inclusive). Clinical fields "
            "(`pain_score_before`, `pain_score_after`, `notes_summary`) are present only "
            "for clinical (contract g) partners and are omitted for v1 partners."
        ),
        tag="sessions",
        parameters=[
            query("referral_id", {"type": "string"}, "Sessions of one referral."),
            query("patient_phone", {"type": "string"}, "Patient phone, E.164."),
            query(
                "status",
                {"type": "string", "enum": ["scheduled", "in_progress", "completed", "cancelled"]},
                "Session status.",
            ),
            query(
                "from_date",
                _DATE,
                "ISO 8601 date or UTC timestamp in the years 2000 to 2099; scheduled at or after.",
            ),
            query(
                "to_date",
                _DATE,
                "ISO 8601 date or UTC timestamp in the years 2000 to 2099; scheduled at or before.",
            ),
        ],
        responses={
            200: ("The sessions.", SessionList, OK_HEADERS),
            **errors(401, 403, 422, 429),
        },
    ),
    Operation(
        operation_id="getOutcomeReport",
        method="get",
        paths=("/api/v1/partners/reports/{referral_id}",),
        summary="Clinical outcome summary",
        description=(
            "Metrics computed from recorded sessions and assessments (docs/outcomes.md). "
            "`discharge_summary_pdf_url` is a signed link valid for one hour that needs no "
            "API key. v1-contract partners get 403 `forbidden`: clinical content is not "
            "shared with them."
        ),
        tag="sessions",
        parameters=[_path("referral_id")],
        responses={
            200: ("The outcome report.", OutcomeReport, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
)

OPS_OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="opsScheduleSession",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/sessions",),
        summary="Schedule a session",
        description=(
            "Creates a `scheduled` session with the next session number. The physiotherapist "
            "defaults to the referral's assigned one (422 on `physio_id` when there is none). "
            "For an `hmo_direct_billing` referral, a session beyond the member's remaining "
            "allowance (sessions remaining minus those already scheduled) is refused before it "
            "is scheduled: 409 `allowance_exceeded`. " + _AUTH
        ),
        tag="ops",
        request_model=SessionSchedule,
        parameters=[_path("referral_id")],
        responses={
            201: ("The session.", OpsSession, REQUEST_ID),
            **errors(400, 401, 404, 409, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListReferralSessions",
        method="get",
        paths=("/api/v1/ops/referrals/{referral_id}/sessions",),
        summary="List a referral's sessions",
        description=_AUTH,
        tag="ops",
        parameters=[_path("referral_id")],
        responses={200: ("The sessions.", OpsSessionList, REQUEST_ID), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsGetSession",
        method="get",
        paths=("/api/v1/ops/sessions/{session_id}",),
        summary="Retrieve a session",
        description=_AUTH,
        tag="ops",
        parameters=[_path("session_id")],
        responses={200: ("The session.", OpsSession, REQUEST_ID), **errors(401, 404)},
    ),
    _ops_session(
        "opsStartSession",
        "/api/v1/ops/sessions/{session_id}/start",
        "Check in (start) a session",
        "scheduled -> in_progress. GPS coordinates are required unless the session is remote.",
        SessionStart,
    ),
    _ops_session(
        "opsCompleteSession",
        "/api/v1/ops/sessions/{session_id}/complete",
        "Check out (complete) a session",
        "in_progress -> completed; records pain scores and the notes summary, verifies the "
        "GPS check-in, assigns the invoice item and emits `session.completed`.",
        SessionComplete,
    ),
    _ops_session(
        "opsCancelSession",
        "/api/v1/ops/sessions/{session_id}/cancel",
        "Cancel a session",
        "scheduled or in_progress -> cancelled.",
        SessionCancel,
    ),
    Operation(
        operation_id="opsRecordAssessment",
        method="post",
        paths=("/api/v1/ops/referrals/{referral_id}/assessments",),
        summary="Record an assessment",
        description=(
            "`scale` selects the fields: `psfs` (3 tasks scored 0-10), `ndi`/`odi` "
            "(`raw_score` 0-50, stored as percent), `nprs` (whole 0-10), `vas` (0-10), "
            "`rom` (joint, movement, side, degrees 0-360). " + _AUTH
        ),
        tag="ops",
        request_model=AssessmentBody,
        parameters=[_path("referral_id")],
        responses={
            201: ("The assessment.", AssessmentRecord, REQUEST_ID),
            **errors(400, 401, 404, 413, 422),
        },
    ),
    Operation(
        operation_id="opsListAssessments",
        method="get",
        paths=("/api/v1/ops/referrals/{referral_id}/assessments",),
        summary="List a referral's assessments",
        description="Oldest first. " + _AUTH,
        tag="ops",
        parameters=[_path("referral_id")],
        responses={200: ("The assessments.", AssessmentList, REQUEST_ID), **errors(401, 404)},
    ),
)

OPERATIONS: tuple[Operation, ...] = (*PARTNER_OPERATIONS, *OPS_OPERATIONS)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    SessionSchedule,
    SessionStart,
    SessionComplete,
    SessionCancel,
    OpsSession,
    OpsSessionList,
    AssessmentBody,
    AssessmentRecord,
    AssessmentList,
)
ANSWER_TYPES: tuple[AnswerType, ...] = (SessionList, OutcomeReport)
