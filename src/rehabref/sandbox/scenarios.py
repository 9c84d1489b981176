"""Sandbox scenarios (spec 6.5) driven through the same workflows as real work.

A referral created with a ``sk_test_`` key for test phone N schedules durable jobs:
1 intake completed (about 1 s), 2 + provider matched (about 3 s), 3 + one session
scheduled, started and completed with a sample pain reduction 7 -> 3 (about 5 s), 4 is the
eligibility check (400 ineligible, see ``sandbox/coverage.py``), 5 makes the first delivery
of each of the referral's events fail with a simulated HTTP 500 before it is delivered again.
``begin`` is a referral-created hook (it returns the scenario's job rows, written with the
referral) and ``handlers`` the job kinds, both wired in ``wiring.py``; a step whose
precondition has not happened yet retries later.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import sessions as care_sessions
from rehabref.db import table
from rehabref.eligibility.adapters import CoverageSources
from rehabref.errors import ApiError
from rehabref.jobs import Handlers, JobRow, NotReady, job_row
from rehabref.matching.service import match_referral
from rehabref.referrals.tasks import unmatched_task_open
from rehabref.sandbox.phones import scenario_for
from rehabref.tables.events import Delivery, Event
from rehabref.tables.intake import AssistantSession, ContactTask
from rehabref.tables.referrals import Referral
from rehabref.workflows.intake import intake_completed
from rehabref.workflows.sessions import complete_session

_referrals = table(Referral)
_sessions = table(AssistantSession)
_tasks = table(ContactTask)
_deliveries = table(Delivery)
_events = table(Event)

ACTOR = "sandbox:scenario"
INTAKE_DELAY = timedelta(seconds=1)
MATCH_DELAY = timedelta(seconds=3)
SESSION_DELAY = timedelta(seconds=5)
SAMPLE_PAIN_BEFORE = 7
SAMPLE_PAIN_AFTER = 3
# A fixed point in Lagos for the simulated GPS check-in and check-out.
SAMPLE_LAT = 6.5244
SAMPLE_LNG = 3.3792

# Which jobs each scenario schedules, with their delay after creation.
PLAN: dict[int, tuple[tuple[str, timedelta], ...]] = {
    1: (("sandbox.intake", INTAKE_DELAY),),
    2: (("sandbox.intake", INTAKE_DELAY), ("sandbox.match", MATCH_DELAY)),
    3: (
        ("sandbox.intake", INTAKE_DELAY),
        ("sandbox.match", MATCH_DELAY),
        ("sandbox.session", SESSION_DELAY),
    ),
    4: (),
    5: (("sandbox.intake", INTAKE_DELAY),),
}


def runs_scenario(environment: str, phone: str | None) -> bool:
    """Whether a referral created now starts a sandbox scenario (test keys, test phones)."""
    return environment == "test" and scenario_for(phone) is not None


def delivery_faults(environment: str, phone: str | None) -> int:
    """Scenario 5: how many simulated HTTP 500s each delivery of the new referral's events
    answers first (0 for every other referral)."""
    return 1 if environment == "test" and scenario_for(phone) == 5 else 0


def begin(
    *,
    referral_id: str,
    environment: str,
    phone: str | None,
    now: datetime,
) -> list[JobRow]:
    """The scenario jobs of a test phone's new referral (test keys only; none otherwise),
    written with the referral in its create (a referral-created hook, wired in ``wiring``)."""
    if not runs_scenario(environment, phone):
        return []
    scenario = scenario_for(phone)
    return [
        job_row(
            kind=kind,
            payload={"referral_id": referral_id, "scenario": scenario},
            due_at=now + delay,
            now=now,
            referral_id=referral_id,
        )
        for kind, delay in PLAN.get(scenario or 0, ())
    ]


async def _referral(conn: AsyncConnection, referral_id: str) -> Any:
    row = (await conn.execute(select(_referrals).where(_referrals.c.id == referral_id))).first()
    if row is None:
        raise LookupError("referral vanished")
    return row


async def _intake_done(conn: AsyncConnection, referral_id: str) -> bool:
    found = (
        await conn.execute(
            select(_sessions.c.id).where(
                _sessions.c.referral_id == referral_id, _sessions.c.completed_at.is_not(None)
            )
        )
    ).first()
    return found is not None


async def run_intake(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if row.status == "cancelled" or await _intake_done(conn, referral_id):
        return
    try:
        await intake_completed(
            conn,
            referral_id=referral_id,
            availability="weekday_mornings",
            care_mode="home_visit",
            area=row.patient_area,
            actor=ACTOR,
        )
    except ApiError as exc:
        if exc.status != 409:  # 409: completed meanwhile
            raise
    if payload.get("scenario") == 5:
        await fail_first_deliveries(conn, referral_id=referral_id)


async def fail_first_deliveries(conn: AsyncConnection, *, referral_id: str) -> int:
    """Scenario 5: the referral's not yet attempted deliveries answer one simulated HTTP 500.

    Runs in the transaction that wrote the events (the intake step's), so the worker cannot
    have claimed them.
    """
    result = await conn.execute(
        update(_deliveries)
        .where(
            _deliveries.c.event_id.in_(
                select(_events.c.id).where(_events.c.referral_id == referral_id)
            ),
            _deliveries.c.attempt_count == 0,
            _deliveries.c.state == "pending",
            _deliveries.c.simulated_failures == 0,
        )
        .values(simulated_failures=1)
    )
    return int(result.rowcount or 0)


async def run_match(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if getattr(row, "assigned_physio_id", None) is not None or row.status == "cancelled":
        return
    if not await _intake_done(conn, referral_id):
        raise NotReady("intake not completed yet")
    if await unmatched_task_open(conn, referral_id):
        return  # matching ran at intake and nobody fitted: coordinators have the task
    await match_referral(conn, referral_id=referral_id, now=now)


async def run_session(
    conn: AsyncConnection,
    payload: dict[str, Any],
    now: datetime,
    *,
    coverage: CoverageSources,
) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if row.status == "cancelled":
        return
    if getattr(row, "assigned_physio_id", None) is None:
        raise NotReady("no physiotherapist assigned yet")
    started = now - timedelta(minutes=50)
    session_id = await care_sessions.schedule_session(
        conn,
        referral_id=referral_id,
        scheduled_at=started,
        modality="home_visit",
        session_type="Initial assessment and mobility exercises",
        actor=ACTOR,
        # The visit's address: the GPS check-in below is verified against it, wherever
        # the test patient's city or area is.
        location=(SAMPLE_LAT, SAMPLE_LNG),
    )
    await care_sessions.start_session(
        conn,
        session_id=session_id,
        check_in_at=started,
        check_in_lat=SAMPLE_LAT,
        check_in_lng=SAMPLE_LNG,
        actor=ACTOR,
    )
    await complete_session(
        conn,
        coverage=coverage,
        session_id=session_id,
        pain_before=SAMPLE_PAIN_BEFORE,
        pain_after=SAMPLE_PAIN_AFTER,
        notes_summary="Sandbox session: assessment, mobility and strengthening exercises; "
        f"pain reduced from {SAMPLE_PAIN_BEFORE} to {SAMPLE_PAIN_AFTER}.",
        check_out_at=now - timedelta(minutes=5),
        check_out_lat=SAMPLE_LAT,
        check_out_lng=SAMPLE_LNG,
        actor=ACTOR,
    )


def handlers(coverage: CoverageSources) -> Handlers:
    """The scenario steps, by job kind (wired in ``wiring.job_handlers``)."""

    async def session_step(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        await run_session(conn, payload, now, coverage=coverage)

    return {
        "sandbox.intake": run_intake,
        "sandbox.match": run_match,
        "sandbox.session": session_step,
    }
