"""When a patient message is tried again, where it goes when refused, and which provider
status may replace which.

- A failed attempt (5xx, 429, network error) is retried after the webhooks' backoff
  (``events.schedule.next_attempt``: ``REHABREF_MESSAGE_RETRY_BASE_SECONDS`` doubling, with
  up to 100 % added jitter) or the provider's Retry-After, for ``RETRY_WINDOW``: a message
  hours late is still worth sending (it carries a link or a question the patient can answer),
  a day late it is not; a coordinator takes over instead.
- A permanent refusal is never retried: a WhatsApp message falls back to an SMS with the
  same words and link when SMS is configured; anything else goes to a coordinator.
- Provider statuses only move forward (sent < delivered < read), because callbacks arrive out
  of order; ``failed`` replaces anything short of delivered.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from rehabref.channels.content import Channel
from rehabref.events import schedule

RETRY_WINDOW = timedelta(hours=12)
MAX_RETRY_AFTER = 3600.0

FALLBACK: dict[str, Channel | None] = {"whatsapp": "sms", "sms": None, "email": None}

_RANK = {"pending": 0, "sending": 1, "sent": 2, "delivered": 3, "read": 4}
PROVIDER_STATUSES = frozenset({"queued", "sent", "delivered", "read", "failed"})


def next_attempt(
    *,
    attempts: int,
    created_at: datetime,
    now: datetime,
    base: float,
    rng: Callable[[], float],
    retry_after: float | None = None,
) -> datetime | None:
    """When to try again after ``attempts`` failed tries; None when the window is over."""
    return schedule.next_attempt(
        attempt=attempts,
        created_at=created_at,
        now=now,
        base=base,
        rng=rng,
        retry_after=None if retry_after is None else min(max(retry_after, 1.0), MAX_RETRY_AFTER),
        window=RETRY_WINDOW,
    )


def fallback_channel(channel: str, *, available: Callable[[Channel], bool]) -> Channel | None:
    """Where a refused message goes next (None: to a coordinator)."""
    following = FALLBACK.get(channel)
    if following is not None and available(following):
        return following
    return None


def status_after(current: str, reported: str) -> str | None:
    """The message state after a provider reports ``reported``; None to keep ``current``."""
    if reported == "queued" or reported not in PROVIDER_STATUSES:
        return None
    if reported == "failed":
        return "failed" if _RANK.get(current, 5) < _RANK["delivered"] else None
    if current in _RANK and _RANK[reported] > _RANK[current]:
        return reported
    return None
