"""Coordinator (ops) API: referral transitions and lookup, the contact-task queue.

Operator tokens only (``rehabref operators create``); partner API keys get 401 here.
"""

from __future__ import annotations

from typing import Any

from litestar import Response

from rehabref.audit.trail import entry, record
from rehabref.clock import utcnow
from rehabref.cursors import page_envelope, page_params
from rehabref.errors import ApiError
from rehabref.intake.service import open_assistant_session
from rehabref.ops import service
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.ops.schemas import ContactTaskComplete, TransitionRequest
from rehabref.ops.views import intake_view, referral_view, task_view, transition_view
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.referrals.status import STATUSES
from rehabref.referrals.transitions import AppointmentChange, PaymentChange
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.scope import OperatorScope
from rehabref.services import Services, services_of
from rehabref.workflows import moves
from rehabref.workflows.first_contact import send_assistant_link

_LINK_STATUSES = frozenset({"received", "contact_pending"})


def _page(query: Any, problems: dict[str, str]) -> tuple[int, str | None]:
    return page_params(query, service.decode_cursor, problems)


def _invalid_query(problems: dict[str, str]) -> None:
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)


async def move_referral(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    payload = validate(TransitionRequest, await json_object(request))
    appointment = None
    if payload.appointment is not None:
        appointment = AppointmentChange(
            scheduled_at=payload.appointment.when(), care_mode=payload.appointment.care_mode
        )
    payment = None
    if payload.payment is not None:
        payment = PaymentChange(
            amount_minor=payload.payment.amount_minor, currency=payload.payment.currency
        )
    async with services_of(request).db.write() as conn:
        row = await moves.move_referral(
            conn,
            referral_id=referral_id,
            to=payload.to,
            actor=operator.actor,
            reason=payload.reason,
            appointment=appointment,
            payment=payment,
            ring=services_of(request).box.ring,
        )
    return json_response(referral_view(services_of(request).box.ring, row))


async def list_referrals(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = _page(query, problems)
    status = query.get("status")
    if status is not None and status not in STATUSES:
        problems["status"] = f"Must be one of: {', '.join(STATUSES)}."
    environment = query.get("environment")
    if environment is not None and environment not in {"test", "live"}:
        problems["environment"] = "Must be test or live."
    search = (query.get("q") or "").strip() or None
    if search is not None and len(search) > 255:
        problems["q"] = "At most 255 characters."
    _invalid_query(problems)
    scope = OperatorScope(partner_id=query.get("partner_id"), environment=environment)
    where = service.ReferralFilter(status=status, search=search)
    async with services_of(request).db.read() as conn:
        rows, has_more = await service.list_referrals(
            conn, scope=scope, where=where, before_id=before_id, limit=limit
        )
    return json_response(
        page_envelope(
            [referral_view(services_of(request).box.ring, r) for r in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=service.encode_cursor,
        )
    )


async def get_referral(
    request: PlainRequest, operator: OperatorPrincipal, referral_id: str
) -> Response[bytes]:
    async with services_of(request).db.read() as conn:
        row = await service.get_referral(conn, referral_id)
        if row is None:
            raise ApiError(404, "not_found", "No referral with this identifier.")
        moves = await service.history(conn, services_of(request).box.ring, referral_id)
        intake = await service.latest_intake(conn, referral_id)
    return json_response(
        {
            **referral_view(services_of(request).box.ring, row),
            "intake": intake_view(intake),
            "transitions": [transition_view(m) for m in moves],
        }
    )


async def list_contact_tasks(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    query = request.query_params
    problems: dict[str, str] = {}
    limit, after_id = _page(query, problems)
    status = query.get("status") or "open"
    if status not in service.TASK_STATUSES:
        problems["status"] = "Must be open, claimed or done."
    _invalid_query(problems)
    async with services_of(request).db.read() as conn:
        rows, has_more = await service.list_tasks(
            conn, status=status, after_id=after_id, limit=limit
        )
    return json_response(
        page_envelope(
            [task_view(services_of(request).box.ring, r) for r in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=service.encode_cursor,
        )
    )


async def claim_contact_task(
    request: PlainRequest, operator: OperatorPrincipal, task_id: str
) -> Response[bytes]:
    async with services_of(request).db.write() as conn:
        await service.claim_task(conn, task_id=task_id, actor=operator.actor, now=utcnow())
        row = await service.get_task(conn, task_id)
        await _audit_task(conn, operator, "contact_task.claimed", row)
    return json_response(task_view(services_of(request).box.ring, row))


async def complete_contact_task(
    request: PlainRequest, operator: OperatorPrincipal, task_id: str
) -> Response[bytes]:
    payload = validate(ContactTaskComplete, await json_object(request))
    services = services_of(request)
    now = utcnow()
    async with services.db.write() as conn:
        task = await service.complete_task(
            conn,
            task_id=task_id,
            actor=operator.actor,
            outcome=payload.outcome,
            note=payload.note,
            now=now,
            ring=services.box.ring,
        )
        if payload.outcome == "assistant_link_sent":
            await _send_assistant_link(services, conn, task.referral_id, now)
        row = await service.get_task(conn, task_id)
        await _audit_task(conn, operator, "contact_task.completed", row)
    return json_response(task_view(services_of(request).box.ring, row))


async def _audit_task(conn: Any, operator: OperatorPrincipal, action: str, task: Any) -> None:
    await record(conn, entry(operator.actor, action, referral_id=task.referral_id, subject=task.id))


async def _send_assistant_link(services: Services, conn: Any, referral_id: str, now: Any) -> None:
    referral = await service.get_referral(conn, referral_id)
    if referral is None or referral.status not in _LINK_STATUSES:
        raise ApiError(
            409,
            "invalid_transition",
            "An assistant link can be sent only while the referral waits for contact.",
        )
    url = await open_assistant_session(
        conn,
        box=services.box,
        referral_id=referral_id,
        now=now,
        ttl_seconds=services.settings.assistant_session_ttl_seconds,
        base_url=services.settings.base_url,
    )
    await send_assistant_link(
        conn,
        referral_id=referral_id,
        link=url,
        channels=services.channels,
        ring=services.box.ring,
        now=now,
    )


ROUTES = [
    PlainRoute(
        "POST", "/api/v1/ops/referrals/{referral_id}/transitions", move_referral, auth=OPERATOR
    ),
    PlainRoute(
        "GET", "/api/v1/ops/referrals", list_referrals, auth=OPERATOR, audit="referrals.listed"
    ),
    PlainRoute(
        "GET",
        "/api/v1/ops/referrals/{referral_id}",
        get_referral,
        auth=OPERATOR,
        audit="referral.read",
    ),
    PlainRoute(
        "GET",
        "/api/v1/ops/contact-tasks",
        list_contact_tasks,
        auth=OPERATOR,
        audit="contact_tasks.listed",
    ),
    PlainRoute(
        "POST", "/api/v1/ops/contact-tasks/{task_id}/claim", claim_contact_task, auth=OPERATOR
    ),
    PlainRoute(
        "POST", "/api/v1/ops/contact-tasks/{task_id}/complete", complete_contact_task, auth=OPERATOR
    ),
]
