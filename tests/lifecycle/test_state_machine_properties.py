"""Property tests of the referral state machine: random move sequences on a real database.

Each hypothesis example creates a referral and applies a random sequence of moves through
``transitions.transition`` (one transaction per move, as the ops endpoint does). Invariants:
a move succeeds exactly when the table allows it; a refused move is 409 and changes nothing;
every accepted move leaves one history row and one event of the documented type, in order;
terminal states accept nothing.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert, select

from rehabref.clock import utcnow
from rehabref.db import Database, table
from rehabref.errors import ApiError
from rehabref.events.sealing import event_data
from rehabref.ids import new_id
from rehabref.referrals.commission import commission_for
from rehabref.referrals.status import STATUSES, TERMINAL
from rehabref.referrals.transitions import (
    ALLOWED,
    EVENT_OF,
    AppointmentChange,
    PaymentChange,
    is_allowed,
)
from rehabref.tables.events import Event
from rehabref.tables.referrals import Referral, ReferralTransition
from rehabref.workflows.moves import move_referral
from tests.support.partners import TEST_RING, onboard

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_events = table(Event)


def test_the_table_covers_every_status_and_matches_the_design():
    assert set(ALLOWED) == set(STATUSES)
    for status, targets in ALLOWED.items():
        assert targets <= set(STATUSES)
        assert ("cancelled" in targets) == (status not in TERMINAL)
    assert ALLOWED["received"] == {"contact_pending", "assistant_started", "cancelled"}
    assert ALLOWED["contact_pending"] == {"assistant_started", "booked", "cancelled"}
    assert ALLOWED["assistant_started"] == {"booked", "cancelled"}
    assert ALLOWED["booked"] == {"attended", "booked", "cancelled"}
    assert ALLOWED["attended"] == {"paid", "closed", "cancelled"}
    assert ALLOWED["paid"] == {"closed", "cancelled"}
    assert ALLOWED["closed"] == ALLOWED["cancelled"] == frozenset()
    assert all(not is_allowed(status, "received") for status in STATUSES)


def _reachable() -> set[str]:
    seen, todo = {"received"}, ["received"]
    while todo:
        for nxt in ALLOWED[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_status_is_reachable_and_every_path_ends_in_a_terminal_state():
    assert _reachable() == set(STATUSES)
    # No cycles other than the booked self-loop (reschedule): every journey can end.
    for status in STATUSES:
        assert not any(status in ALLOWED[t] for t in ALLOWED[status] if t != status)


class Harness:
    def __init__(self, database_url: str, partner_id: str, bps: int | None) -> None:
        self.loop = asyncio.new_event_loop()
        self.db = Database(database_url, pool_size=2)
        self.partner_id = partner_id
        self.bps = bps

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    async def new_referral(self, care_mode: str) -> str:
        now = utcnow()
        referral_id = new_id("ref")
        async with self.db.write() as conn:
            await conn.execute(
                insert(_referrals),
                {
                    "id": referral_id,
                    "partner_id": self.partner_id,
                    "environment": "test",
                    "shape": "v1",
                    "status": "received",
                    "external_ref": f"prop-{referral_id}",
                    "patient_first_name": "Tunde",
                    "patient_phone": "+2348031234567",
                    "patient_city": "Lagos",
                    "care_mode": care_mode,
                    "route": "assistant",
                    "preferred_contact": "sms",
                    "created_at": now,
                    "updated_at": now,
                },
            )
        return referral_id

    async def move(self, referral_id: str, to: str, amount: int) -> ApiError | None:
        appointment = payment = None
        if to == "booked":
            appointment = AppointmentChange(datetime(2026, 11, 2, 9, tzinfo=UTC), "remote")
        if to == "paid":
            payment = PaymentChange(amount_minor=amount, currency="NGN")
        try:
            async with self.db.write() as conn:
                await move_referral(
                    conn,
                    referral_id=referral_id,
                    to=to,
                    actor="test:property",
                    reason="property walk",
                    appointment=appointment,
                    payment=payment,
                    ring=TEST_RING,
                )
        except ApiError as exc:
            return exc
        return None

    async def state(self, referral_id: str):  # type: ignore[no-untyped-def]
        async with self.db.read() as conn:
            row = (
                await conn.execute(select(_referrals).where(_referrals.c.id == referral_id))
            ).one()
            moves = (
                await conn.execute(
                    select(_transitions.c.from_status, _transitions.c.to_status)
                    .where(_transitions.c.referral_id == referral_id)
                    .order_by(_transitions.c.created_at)
                )
            ).all()
            events = (
                await conn.execute(
                    select(_events.c.type, _events.c.data)
                    .where(_events.c.referral_id == referral_id)
                    .order_by(_events.c.occurred_at)
                )
            ).all()
        return row, moves, events

    def close(self) -> None:
        self.run(self.db.dispose())
        self.loop.close()


@pytest.fixture(scope="module")
def harness(database_url):
    partner = onboard(database_url, name="Property Clinic", commission_bps=750, show_payments=True)
    h = Harness(database_url, partner["partner_id"], 750)
    yield h
    h.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    moves=st.lists(st.sampled_from(STATUSES), min_size=1, max_size=12),
    amount=st.integers(min_value=1, max_value=50_000_000),
)
def test_random_move_sequences_follow_the_table(harness, moves, amount):
    referral_id = harness.run(harness.new_referral("either"))
    status = "received"
    accepted: list[tuple[str, str]] = []
    for to in moves:
        error = harness.run(harness.move(referral_id, to, amount))
        if is_allowed(status, to):
            assert error is None, (status, to, error and error.code)
            accepted.append((status, to))
            status = to
        else:
            assert error is not None and error.status == 409
            assert error.code == "invalid_transition"
    row, history, events = harness.run(harness.state(referral_id))
    assert row.status == status
    assert [(m.from_status, m.to_status) for m in history] == accepted
    assert [e.type for e in events] == [EVENT_OF[to] for _, to in accepted]
    for event in events:
        data = event_data(TEST_RING, event.data)
        assert data["referral_id"] == referral_id
    if status in TERMINAL:
        assert all(harness.run(harness.move(referral_id, t, 1)) for t in STATUSES)
    if any(to == "paid" for _, to in accepted):
        assert row.payment_amount_minor == amount
        assert row.commission_minor == commission_for(amount, bps=750, fixed_minor=None)
        assert row.commission_status == "pending_settlement"
    else:
        assert row.payment_amount_minor is None


# A walk that only takes legal moves reaches every state; hypothesis picks the branch.
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(choices=st.lists(st.integers(min_value=0, max_value=10), min_size=1, max_size=10))
def test_legal_walks_always_succeed(harness, choices):
    referral_id = harness.run(harness.new_referral("remote"))
    status = "received"
    taken: list[str] = []
    for choice in choices:
        options = sorted(ALLOWED[status])
        if not options:
            break
        to = options[choice % len(options)]
        assert harness.run(harness.move(referral_id, to, 2_000_000)) is None
        status = to
        taken.append(to)
    row, history, events = harness.run(harness.state(referral_id))
    assert row.status == status
    assert [m.to_status for m in history] == taken
    assert [e.type for e in events] == [EVENT_OF[to] for to in taken]
