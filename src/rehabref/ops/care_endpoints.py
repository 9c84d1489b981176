"""Coordinator (ops) API for therapy sessions and assessments. Operator tokens only."""

from __future__ import annotations

from typing import Any

from litestar import Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.care import assessments, sessions
from rehabref.care.schemas import (
    SessionCancel,
    SessionComplete,
    SessionSchedule,
    SessionStart,
    parse_time,
)
from rehabref.care.views import ops_session_view
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.services import services_of
from rehabref.tables.referrals import Referral
from rehabref.workflows.sessions import complete_session, schedule_session

_referrals = table(Referral)


async def _view(conn: AsyncConnection, ring: KeyRing, session_id: str) -> dict[str, Any]:
    row = await sessions.get_session(conn, session_id=session_id)
    provider = await sessions.provider_name(conn, row.physio_id)
    return ops_session_view(row, provider_name=provider, ring=ring)


async def _require_referral(conn: AsyncConnection, referral_id: str) -> None:
    found = (
        await conn.execute(select(_referrals.c.id).where(_referrals.c.id == referral_id))
    ).first()
    if found is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")


async def schedule(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    payload = validate(SessionSchedule, await json_object(request))
    location = (payload.location.lat, payload.location.lng) if payload.location else None
    services = services_of(request)
    async with services.db.write() as conn:
        session_id = await schedule_session(
            conn,
            coverage=services.coverage,
            referral_id=referral_id,
            scheduled_at=parse_time(payload.scheduled_at),
            modality=payload.modality,
            session_type=payload.session_type,
            actor=operator.actor,
            physio_id=payload.physio_id,
            location=location,
        )
        view = await _view(conn, services.box.ring, session_id)
        await _audit(conn, operator, "session.scheduled", view)
    return json_response(view, 201)


async def _audit(
    conn: AsyncConnection, operator: OperatorPrincipal, action: str, view: dict[str, Any]
) -> None:
    """The session change's audit record, in its transaction."""
    item = entry(
        operator.actor, action, referral_id=view["referral_id"], subject=view["session_id"]
    )
    await record(conn, item)


async def list_for_referral(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.read() as conn:
        await _require_referral(conn, referral_id)
        rows = (
            await conn.execute(
                select(sessions.sessions.c.id)
                .where(sessions.sessions.c.referral_id == referral_id)
                .order_by(sessions.sessions.c.session_number)
            )
        ).all()
        data = [await _view(conn, services.box.ring, row.id) for row in rows]
    return json_response({"data": data})


async def get_one(
    request: PlainRequest, operator: OperatorPrincipal, session_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.read() as conn:
        view = await _view(conn, services.box.ring, session_id)
    return json_response(view)


async def start(
    request: PlainRequest, operator: OperatorPrincipal, session_id: str
) -> Response[bytes]:
    payload = validate(SessionStart, await json_object(request))
    services = services_of(request)
    async with services.db.write() as conn:
        await sessions.start_session(
            conn,
            session_id=session_id,
            check_in_at=parse_time(payload.check_in_at),
            check_in_lat=payload.check_in_lat,
            check_in_lng=payload.check_in_lng,
            actor=operator.actor,
        )
        view = await _view(conn, services.box.ring, session_id)
        await _audit(conn, operator, "session.started", view)
    return json_response(view)


async def complete(
    request: PlainRequest, operator: OperatorPrincipal, session_id: str
) -> Response[bytes]:
    payload = validate(SessionComplete, await json_object(request))
    services = services_of(request)
    async with services.db.write() as conn:
        await complete_session(
            conn,
            ring=services.box.ring,
            coverage=services.coverage,
            session_id=session_id,
            pain_before=payload.pain_before,
            pain_after=payload.pain_after,
            notes_summary=payload.notes_summary,
            check_out_at=parse_time(payload.check_out_at),
            check_out_lat=payload.check_out_lat,
            check_out_lng=payload.check_out_lng,
            actor=operator.actor,
        )
        view = await _view(conn, services.box.ring, session_id)
        await _audit(conn, operator, "session.completed", view)
    return json_response(view)


async def cancel(
    request: PlainRequest, operator: OperatorPrincipal, session_id: str
) -> Response[bytes]:
    payload = validate(SessionCancel, await json_object(request))
    services = services_of(request)
    async with services.db.write() as conn:
        await sessions.cancel_session(
            conn,
            session_id=session_id,
            reason=payload.reason,
            actor=operator.actor,
            ring=services.box.ring,
        )
        view = await _view(conn, services.box.ring, session_id)
        await _audit(conn, operator, "session.cancelled", view)
    return json_response(view)


async def record_assessment(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    item = assessments.validate_assessment(await json_object(request))
    ring = services_of(request).box.ring
    async with services_of(request).db.write() as conn:
        row = await assessments.record_assessment(
            conn, ring, referral_id=referral_id, item=item, actor=operator.actor
        )
        await record(conn, entry(operator.actor, "assessment.recorded", referral_id=referral_id))
    return json_response(assessments.assessment_view(row), 201)


async def list_assessments(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    ring = services_of(request).box.ring
    async with services_of(request).db.read() as conn:
        await _require_referral(conn, referral_id)
        rows = await assessments.list_assessments(conn, ring, referral_id=referral_id)
    return json_response({"data": [assessments.assessment_view(row) for row in rows]})


ROUTES = [
    PlainRoute("POST", "/api/v1/ops/referrals/{referral_id}/sessions", schedule, auth=OPERATOR),
    PlainRoute(
        "GET",
        "/api/v1/ops/referrals/{referral_id}/sessions",
        list_for_referral,
        auth=OPERATOR,
        audit="sessions.listed",
    ),
    PlainRoute(
        "GET", "/api/v1/ops/sessions/{session_id}", get_one, auth=OPERATOR, audit="session.read"
    ),
    PlainRoute("POST", "/api/v1/ops/sessions/{session_id}/start", start, auth=OPERATOR),
    PlainRoute("POST", "/api/v1/ops/sessions/{session_id}/complete", complete, auth=OPERATOR),
    PlainRoute("POST", "/api/v1/ops/sessions/{session_id}/cancel", cancel, auth=OPERATOR),
    PlainRoute(
        "POST", "/api/v1/ops/referrals/{referral_id}/assessments", record_assessment, auth=OPERATOR
    ),
    PlainRoute(
        "GET",
        "/api/v1/ops/referrals/{referral_id}/assessments",
        list_assessments,
        auth=OPERATOR,
        audit="assessments.listed",
    ),
]
