"""Which due deliveries a worker claims next: fairly, and never past an endpoint's cap.

Threat: one partner with slow or hanging endpoints and a large backlog must not delay
anyone else's deliveries (a shared first-in-first-out queue let one sandbox key hold every
send slot). So a claim:

- skips endpoints that are disabled or whose circuit is open (``endpoint_health.py``);
- groups due deliveries in *lanes*, one per endpoint (a target without an endpoint, such as a
  ``callback_url``, is its own lane), and counts the lane's deliveries already in flight (an
  unexpired claim) against its cap (``endpoint_health.in_flight_cap``: ``Caps.lane`` while
  healthy, 2 once failing, 1 while its circuit is half-open);
- counts a partner's deliveries in flight across all its lanes against ``partner_cap``, so
  many lanes (say, one callback URL per referral) cannot take every slot either;
- takes what is left round-robin: the first due delivery of every partner before anyone's
  second, and within a partner its lanes in turn.

The ranking runs in one query (window functions, on SQLite and PostgreSQL alike); the caller
claims the ids it returns in the same transaction, serialised with other claimers
(``DeliveryWorker.claim``), so caps hold across workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, func, literal, or_, select

from rehabref.db import table
from rehabref.events.endpoint_health import FAILURES_TO_OPEN, in_flight_cap
from rehabref.tables.events import Delivery, Event, WebhookEndpoint

_deliveries = table(Delivery)
_events = table(Event)
_endpoints = table(WebhookEndpoint)


@dataclass(frozen=True)
class Caps:
    lane: int = 8  # deliveries in flight per healthy endpoint (or per target without one)
    partner: int = 16  # deliveries in flight per partner, all endpoints together


def fair_due(*, now: datetime, caps: Caps, limit: int) -> Any:
    """The ids of up to ``limit`` claimable deliveries, fairest first."""
    d, e, w = _deliveries, _events, _endpoints
    lane = func.coalesce(d.c.endpoint_id, d.c.target_url)
    in_flight = and_(d.c.claimed_until.is_not(None), d.c.claimed_until >= now)
    busy = case((in_flight, 0), else_=1)  # in flight first: they fill the caps first
    failures = func.coalesce(w.c.consecutive_failures, 0)  # 0: a target without endpoint
    lane_cap = case(
        (failures >= FAILURES_TO_OPEN, literal(in_flight_cap(FAILURES_TO_OPEN, cap=caps.lane))),
        (failures > 0, literal(in_flight_cap(1, cap=caps.lane))),
        else_=literal(in_flight_cap(0, cap=caps.lane)),
    )
    ranked = (
        select(
            d.c.id,
            d.c.next_attempt_at,
            e.c.partner_id,
            busy.label("busy"),
            lane_cap.label("lane_cap"),
            func.row_number()
            .over(partition_by=lane, order_by=(busy, d.c.next_attempt_at, d.c.id))
            .label("lane_rank"),
        )
        .select_from(d.join(e, e.c.id == d.c.event_id).outerjoin(w, w.c.id == d.c.endpoint_id))
        .where(
            d.c.state == "pending",
            d.c.next_attempt_at <= now,
            or_(
                w.c.id.is_(None),
                and_(
                    w.c.disabled_at.is_(None),
                    or_(w.c.circuit_open_until.is_(None), w.c.circuit_open_until <= now),
                ),
                in_flight,  # still counted against its partner's cap, never claimed again
            ),
        )
        .subquery("ranked")
    )
    r = ranked.c
    within_lane = (
        select(
            r.id,
            r.busy,
            r.next_attempt_at,
            func.row_number()
            .over(partition_by=r.partner_id, order_by=(r.busy, r.lane_rank, r.next_attempt_at))
            .label("partner_rank"),
        )
        .where(r.lane_rank <= r.lane_cap)
        .subquery("within_lane")
    )
    p = within_lane.c
    return (
        select(p.id)
        .where(p.busy == 1, p.partner_rank <= caps.partner)
        .order_by(p.partner_rank, p.next_attempt_at, p.id)
        .limit(limit)
    )
