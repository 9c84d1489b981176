"""Writing a referral create (a ``CreatePlan``) and its idempotency record, all or nothing.

One function, ``CreateStore.persist``, with two adapters chosen once at start-up
(``create_store``):

- **PostgreSQL** (``create_store_postgres``): one statement of data-modifying CTEs, written
  out in that module (``CREATE_REFERRAL``), on a raw pooled connection in autocommit: one
  round trip.
- **Portable** (SQLite; below): the same rows as SQLAlchemy Core inserts in one
  ``Database.write()`` transaction.

A key, ``external_ref`` or ``partner_reference`` seen before fails its unique index and the
store raises ``IntegrityError`` having written nothing; ``idempotency.flow`` turns that into a
replay, a 422 or the caller's 409. The audit record of the create (``plan.audit``) is
written with it. Both write the deliveries (``CreatePlan.deliveries``, the
one fan-out) for the endpoints active when the create is written; an endpoint registered while
a create is in flight may miss that create's events, as with any transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import record
from rehabref.crypto import KeyRing
from rehabref.db import Database, table
from rehabref.events.outbox import active_endpoints
from rehabref.events.sealing import sealed_event_row
from rehabref.idempotency.service import KeyClaim
from rehabref.referrals.coordinator_notes import stored_transitions
from rehabref.referrals.sealing import stored_referral
from rehabref.tables.channels import OutboundMessage
from rehabref.tables.eligibility import ReferralCoverage
from rehabref.tables.events import Delivery, Event
from rehabref.tables.idempotency import IdempotencyRecord
from rehabref.tables.intake import AssistantSession, ContactTask, IntakeConversation
from rehabref.tables.jobs import ScheduledJob
from rehabref.tables.referrals import Referral, ReferralTransition
from rehabref.workflows.create_plan import CreatePlan, Row
from rehabref.workflows.create_store_postgres import PostgresCreateStore


class CreateStore(Protocol):
    async def persist(self, plan: CreatePlan, claim: KeyClaim | None) -> bytes:
        """Write the plan, its deliveries and the claim's record of the plan's response
        together, or nothing (``IntegrityError`` when a unique index refuses a row); returns
        the response. A ``persist`` for ``idempotency.flow.IdempotentCreates.create``."""
        ...


def create_store(db: Database, ring: KeyRing) -> CreateStore:
    return PortableCreateStore(db, ring) if db.is_sqlite else PostgresCreateStore(db, ring)


_referrals = table(Referral)
_transitions = table(ReferralTransition)
_sessions = table(AssistantSession)
_tasks = table(ContactTask)
_messages = table(OutboundMessage)
_conversations = table(IntakeConversation)
_coverage = table(ReferralCoverage)
_events = table(Event)
_deliveries = table(Delivery)
_jobs = table(ScheduledJob)
_records = table(IdempotencyRecord)


class PortableCreateStore:
    """Any database SQLAlchemy speaks: Core inserts in one write transaction."""

    def __init__(self, db: Database, ring: KeyRing) -> None:
        self._db = db
        self._ring = ring

    async def persist(self, plan: CreatePlan, claim: KeyClaim | None) -> bytes:
        referral = stored_referral(self._ring, plan.referral)
        events = [sealed_event_row(self._ring, event.row) for event in plan.events]
        async with self._db.write() as conn:
            await _insert(conn, _referrals, [referral])
            await _insert(conn, _transitions, stored_transitions(self._ring, plan.transitions))
            await _insert(conn, _sessions, plan.assistant_sessions)
            await _insert(conn, _tasks, plan.contact_tasks)
            await _insert(conn, _messages, plan.messages)
            await _insert(conn, _conversations, plan.conversations)
            await _insert(conn, _coverage, plan.coverage)
            await _insert(conn, _events, events)
            endpoints = await active_endpoints(
                conn, partner_id=plan.partner_id, environment=plan.environment
            )
            await _insert(conn, _deliveries, plan.deliveries(endpoints))
            await _insert(conn, _jobs, plan.jobs)
            if claim is not None:
                await _insert(conn, _records, [claim.record(plan.response)])
            await record(conn, plan.audit)
        return plan.response


async def _insert(conn: AsyncConnection, target: Table, rows: Sequence[Row]) -> None:
    if rows:
        await conn.execute(insert(target), list(rows))
