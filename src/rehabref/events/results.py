"""What the delivery worker writes once sends are done: attempts, states, endpoint health.

``plan`` is pure (time and randomness passed in): the attempt rows, each delivery's next
state (``schedule.next_attempt``), and each endpoint's new results. ``write`` stores a plan
in the caller's transaction (never commits). Only the lease holder's results are written,
and a delivery cancelled while its send was in flight stays ``cancelled`` (its attempt is
still logged, so ``attempt_count`` always equals the log's length).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, case, insert, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events import schedule
from rehabref.events.endpoint_health import Result
from rehabref.events.endpoint_state import record_results
from rehabref.events.sealing import sealed_excerpt
from rehabref.events.transport import Sent
from rehabref.ids import new_id
from rehabref.tables.events import Delivery, DeliveryAttempt

log = logging.getLogger("rehabref.worker")

_deliveries = table(Delivery)
_attempts = table(DeliveryAttempt)

RETRY_STATUSES_WITH_RETRY_AFTER = frozenset({429, 503})


@dataclass(frozen=True)
class Claimed:
    id: str
    event_id: str
    endpoint_id: str | None
    referral_id: str | None
    target_url: str
    attempt_count: int
    created_at: datetime
    partner_id: str
    environment: str
    # The envelope as stored (sealed): opened only when it is sent (``events.sealing``).
    stored_body: str
    lease_until: datetime


@dataclass(frozen=True)
class Done:
    """One claimed delivery's send: what to log, and whether it says anything about the
    endpoint's health (a missing signing secret is ours, not the endpoint's)."""

    item: Claimed
    sent: Sent
    reached_target: bool


@dataclass(frozen=True)
class Plan:
    attempts: list[dict[str, Any]]
    outcomes: list[dict[str, Any]]
    health: dict[str, list[Result]] = field(default_factory=dict)


def outcome(
    item: Claimed,
    sent: Sent,
    *,
    worker_id: str,
    now: datetime,
    base: float,
    rng: Callable[[], float],
) -> dict[str, Any]:
    """The delivery's row after this send: succeeded, pending (when next) or failed."""
    count = item.attempt_count + len(sent.attempts)
    result = sent.outcome
    row: dict[str, Any] = {
        "b_id": item.id,
        "b_by": worker_id,
        "b_count": count,
        "b_code": result.status_code,
    }
    if result.ok:
        sent_at = sent.attempts[0].attempted_at
        return {**row, "b_state": "succeeded", "b_next": sent_at, "b_done": now}
    retry_after = None
    if result.status_code in RETRY_STATUSES_WITH_RETRY_AFTER:
        retry_after = schedule.retry_after_seconds(result.retry_after, now=now)
    when = schedule.next_attempt(
        attempt=count,
        created_at=item.created_at,
        now=now,
        base=base,
        rng=rng,
        retry_after=retry_after,
    )
    if when is None:
        log.info("delivery failed", extra={"delivery_id": item.id, "attempts": count})
        return {**row, "b_state": "failed", "b_next": now, "b_done": now}
    return {**row, "b_state": "pending", "b_next": when, "b_done": None}


def plan(
    done: Sequence[Done],
    *,
    worker_id: str,
    now: datetime,
    base: float,
    rng: Callable[[], float],
) -> Plan:
    attempts = [
        {
            "id": new_id("att"),
            "delivery_id": each.item.id,
            "attempted_at": attempt.attempted_at,
            "status_code": attempt.result.status_code,
            "latency_ms": attempt.result.latency_ms,
            "error": attempt.result.error,
            "response_excerpt": attempt.result.excerpt,
            "note": attempt.note,
        }
        for each in done
        for attempt in each.sent.attempts
    ]
    outcomes = [
        outcome(each.item, each.sent, worker_id=worker_id, now=now, base=base, rng=rng)
        for each in done
    ]
    health: dict[str, list[Result]] = defaultdict(list)
    for each in done:
        if each.reached_target and each.item.endpoint_id is not None:
            at = each.sent.attempts[-1].attempted_at
            health[each.item.endpoint_id].append(Result(at, each.sent.outcome.ok))
    return Plan(attempts, outcomes, dict(health))


async def write(
    conn: AsyncConnection, planned: Plan, *, ring: KeyRing, now: datetime, lock: bool
) -> list[str]:
    """Store the plan; returns the endpoints it disabled."""
    d = _deliveries
    cancelled = d.c.state == "cancelled"

    def unless_cancelled(value: Any, column: Any) -> Any:
        return case((cancelled, column), else_=value)

    # Endpoint rows first: deleting an endpoint locks it, then its deliveries, and so does
    # this, so the two never wait on each other in a cycle.
    disabled = await record_results(conn, planned.health, ring=ring, now=now, lock=lock)
    if planned.attempts:
        attempts = [
            {**attempt, "response_excerpt": sealed_excerpt(ring, attempt["response_excerpt"])}
            for attempt in planned.attempts
        ]
        await conn.execute(insert(_attempts), attempts)
    if planned.outcomes:
        await conn.execute(
            update(d)
            .where(d.c.id == bindparam("b_id"), d.c.claimed_by == bindparam("b_by"))
            .values(
                state=unless_cancelled(bindparam("b_state", type_=d.c.state.type), d.c.state),
                attempt_count=bindparam("b_count"),
                last_status_code=bindparam("b_code"),
                next_attempt_at=unless_cancelled(
                    bindparam("b_next", type_=d.c.next_attempt_at.type), d.c.next_attempt_at
                ),
                completed_at=unless_cancelled(
                    bindparam("b_done", type_=d.c.completed_at.type), d.c.completed_at
                ),
                claimed_until=None,
                claimed_by=None,
            ),
            planned.outcomes,
        )
    return disabled
