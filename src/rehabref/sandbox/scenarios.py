"""Sandbox scenarios (spec 6.5) driven through the same workflows as real work.

A referral created with a ``sk_test_`` key for test phone N schedules durable jobs:
1 intake completed (about 1 s), 2 + provider matched (from the partner's sandbox roster,
``sandbox/roster.py``), 3 + one session scheduled, started and completed with a sample pain
reduction 7 -> 3 (about 5 s), 4 is the eligibility check (400 ineligible, see
``sandbox/coverage.py``), 5 completes the intake like 1 while every event of the referral is
delivered as three copies (``sandbox/replay_transport.py``). ``begin`` is a referral-created
hook (it returns the scenario's job rows, written with the referral), ``handlers`` the job
kinds and ``tell_partner`` what runs when a step gives up, all wired in ``wiring.py``; a step
whose precondition has not happened yet retries later, and a step that cannot run is
reported to the partner as a ``sandbox.scenario_failed`` event.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import sessions as care_sessions
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.eligibility.adapters import CoverageSources
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.jobs import FailedJob, GiveUp, Handlers, JobRow, NotReady, job_row
from rehabref.matching.roster import RosterSources
from rehabref.matching.service import match_referral
from rehabref.referrals.event_data import callback_targets, referral_base
from rehabref.referrals.tasks import unmatched_task_open
from rehabref.sandbox.phones import scenario_for
from rehabref.tables.intake import AssistantSession, ContactTask
from rehabref.tables.referrals import Referral
from rehabref.workflows.intake import intake_completed
from rehabref.workflows.sessions import complete_session

_referrals = table(Referral)
_sessions = table(AssistantSession)
_tasks = table(ContactTask)

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


async def run_intake(
    conn: AsyncConnection,
    payload: dict[str, Any],
    now: datetime,
    *,
    roster: RosterSources,
    ring: KeyRing,
) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if row.status == "cancelled" or await _intake_done(conn, referral_id):
        return
    try:
        await intake_completed(
            conn,
            roster=roster,
            ring=ring,
            referral_id=referral_id,
            availability="weekday_mornings",
            care_mode="home_visit",
            area=row.patient_area,
            actor=ACTOR,
        )
    except ApiError as exc:
        if exc.status != 409:  # 409: completed meanwhile
            raise


NOBODY_FITS = "no physiotherapist of the sandbox roster fits this referral"


async def run_match(
    conn: AsyncConnection,
    payload: dict[str, Any],
    now: datetime,
    *,
    roster: RosterSources,
    ring: KeyRing,
) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if getattr(row, "assigned_physio_id", None) is not None or row.status == "cancelled":
        return
    if not await _intake_done(conn, referral_id):
        raise NotReady("intake not completed yet")
    if await unmatched_task_open(conn, referral_id):
        raise GiveUp(NOBODY_FITS)  # matching ran at intake and found nobody
    if (
        await match_referral(conn, roster=roster, ring=ring, referral_id=referral_id, now=now)
        is None
    ):
        raise GiveUp(NOBODY_FITS)


async def run_session(
    conn: AsyncConnection,
    payload: dict[str, Any],
    now: datetime,
    *,
    coverage: CoverageSources,
    ring: KeyRing,
) -> None:
    referral_id = str(payload["referral_id"])
    row = await _referral(conn, referral_id)
    if row.status == "cancelled":
        return
    if getattr(row, "assigned_physio_id", None) is None:
        if await unmatched_task_open(conn, referral_id):
            raise GiveUp(NOBODY_FITS)
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
        ring=ring,
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


def handlers(coverage: CoverageSources, roster: RosterSources, ring: KeyRing) -> Handlers:
    """The scenario steps, by job kind (wired in ``wiring.job_handlers``)."""

    async def intake_step(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        await run_intake(conn, payload, now, roster=roster, ring=ring)

    async def match_step(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        await run_match(conn, payload, now, roster=roster, ring=ring)

    async def session_step(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        await run_session(conn, payload, now, coverage=coverage, ring=ring)

    return {
        "sandbox.intake": intake_step,
        "sandbox.match": match_step,
        "sandbox.session": session_step,
    }


async def tell_partner(
    conn: AsyncConnection, failed: FailedJob, now: datetime, *, ring: KeyRing
) -> None:
    """A scenario step gave up: the partner gets a ``sandbox.scenario_failed`` event (in
    their event log and at their webhook endpoints) saying which step and why."""
    if not failed.kind.startswith("sandbox.") or failed.referral_id is None:
        return
    row = await _referral(conn, failed.referral_id)
    data = referral_base(row)
    data.update(
        scenario=failed.payload.get("scenario"),
        step=failed.kind.removeprefix("sandbox."),
        attempts=failed.attempts,
        reason=failed.reason,
    )
    await record_events(
        conn,
        ring,
        partner_id=row.partner_id,
        environment=row.environment,
        events=[
            NewEvent(
                "sandbox.scenario_failed",
                data,
                row.id,
                extra_targets=callback_targets(row),
            )
        ],
    )
