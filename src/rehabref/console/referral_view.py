"""The console's referral page: details, timeline, messages with the patient, sessions and
the moves it offers.

Rendered by the referral routes and, after a refused session form, by the care forms.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from litestar import Request
from litestar.response import Template
from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing.schemas import pay_url
from rehabref.billing.store import requests_of_referral
from rehabref.care.appointments import UNBOOKABLE
from rehabref.channels.timeline import timeline
from rehabref.clock import as_utc, utcnow
from rehabref.console import queries, referral_queries
from rehabref.console.render import page
from rehabref.console.session import Signed
from rehabref.console.slot_board import (
    MODE_LABELS,
    OFFER_LABELS,
    WEEKS_AHEAD,
    lagos_time,
    offers_shown,
    slot_board,
    week_of,
)
from rehabref.db import table
from rehabref.matching.assignments import assignments_of
from rehabref.matching.roster import in_scope
from rehabref.matching.rules import SPECIALIZATIONS
from rehabref.ops.service import history as transitions_of
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import clinical_text, patient_identity
from rehabref.referrals.transitions import ALLOWED, APPOINTMENT_MODES
from rehabref.services import services_of
from rehabref.tables.care import CareSession
from rehabref.tables.matching import Physiotherapist

MODALITIES = ("home_visit", "in_clinic", "remote")
_sessions = table(CareSession)
_physios = table(Physiotherapist)


async def sessions_of(conn: AsyncConnection, referral_id: str) -> list[Row[Any]]:
    query = (
        select(_sessions, _physios.c.name.label("physio_name"))
        .join(_physios, _physios.c.id == _sessions.c.physio_id)
        .where(_sessions.c.referral_id == referral_id)
        .order_by(_sessions.c.session_number)
    )
    return list((await conn.execute(query)).all())


async def active_physios(conn: AsyncConnection, referral: ReferralRow) -> list[Row[Any]]:
    """Who a session of this referral may be booked with: the live registry for a live
    referral, the partner's sandbox roster for a test one."""
    scope = in_scope(environment=referral.environment, partner_id=referral.partner_id)
    query: Any = (
        select(_physios.c.id, _physios.c.name, _physios.c.city)
        .where(scope, _physios.c.active.is_(True))
        .order_by(_physios.c.name)
        .limit(200)
    )
    return list((await conn.execute(query)).all())


MOVE_LABELS = {
    "contact_pending": "Queue for human contact",
    "assistant_started": "Mark assistant started",
    "booked": "Book appointment",
    "attended": "Mark attended",
    "paid": "Record payment",
    "closed": "Close",
    "cancelled": "Cancel referral",
}


async def render_referral(
    request: Request[Any, Any, Any],
    signed: Signed,
    referral_id: str,
    *,
    error: str | None = None,
    status: int = 200,
) -> Template:
    ring = services_of(request).box.ring
    async with services_of(request).db.read() as conn:
        row = await queries.referral(conn, referral_id)
        if row is None:
            return page(
                "message",
                {"title": "Not found", "message": "No referral with this identifier."},
                signed=signed,
                status=404,
            )
        transitions = await transitions_of(conn, ring, referral_id)
        events = await queries.events_with_deliveries(conn, ring, referral_id)
        tasks = await queries.tasks_of(conn, referral_id)
        sessions = await sessions_of(conn, referral_id)
        physios = await active_physios(conn, row)
        messages = await timeline(conn, ring, referral_id)
        card_payments = await requests_of_referral(conn, referral_id)
        intake = await referral_queries.intake_answers(conn, referral_id)
        physio = await referral_queries.physio(conn, row.assigned_physio_id)
        assignments = await assignments_of(conn, ring=ring, referral_id=referral_id)
        actions = await referral_queries.coordinator_actions(conn, referral_id)
        board = await slot_board(
            conn, ring, row, week=week_of(request.query_params.get("week")), now=utcnow()
        )
        offers = await offers_shown(conn, board, referral_id)
        wanted_city = request.query_params.get("pcity", row.patient_city)
        wanted_spec = request.query_params.get("pspec") or None
        wanted_spec = wanted_spec if wanted_spec in SPECIALIZATIONS else None
        options = await referral_queries.candidates(
            conn, row, city=wanted_city, specialization=wanted_spec
        )
        names = await referral_queries.physio_names(
            conn,
            {a.physio_id for a in assignments}
            | {a.previous_physio_id for a in assignments if a.previous_physio_id},
        )
    moves = sorted(ALLOWED.get(row.status, frozenset()), key=list(MOVE_LABELS).index)
    return page(
        "referral",
        {
            "r": row,
            "clinical": clinical_text(ring, row),
            "patient": patient_identity(ring, row),
            "intake": intake,
            "physio": physio,
            "assignments": assignments,
            "physio_names": names,
            "actions": actions,
            "candidates": options,
            "candidate_city": wanted_city or "",
            "candidate_spec": wanted_spec or "",
            "filtered": "pcity" in request.query_params,
            "specializations": SPECIALIZATIONS,
            "upcoming": row.appointment_scheduled_at is not None
            and as_utc(row.appointment_scheduled_at) > utcnow(),
            "moves": [(move, MOVE_LABELS[move]) for move in moves],
            "appointment_modes": sorted(APPOINTMENT_MODES.get(row.care_mode, frozenset())),
            "slot_modes": sorted(APPOINTMENT_MODES.get(row.care_mode, APPOINTMENT_MODES[None])),
            "mode_labels": MODE_LABELS,
            "board": board,
            "offers": offers,
            "offer_labels": OFFER_LABELS,
            "can_book": row.status not in UNBOOKABLE and board.booked is None,
            "lagos_time": lagos_time,
            "weeks_ahead": WEEKS_AHEAD,
            "transitions": transitions,
            "events": events,
            "tasks": tasks,
            "sessions": sessions,
            "physios": physios,
            "messages": messages,
            "card_payments": card_payments,
            "pay_url": partial(pay_url, services_of(request).settings.base_url),
            "modalities": MODALITIES,
            "error": error,
        },
        signed=signed,
        status=status,
        notice=request.query_params.get("notice"),
    )
