"""When a failed delivery is tried again, and when it stops being tried.

Attempt ``n`` (1-based) that fails is retried after ``b * 2**(n-1) * (1 + r)`` seconds, where
``b`` is ``REHABREF_WEBHOOK_RETRY_BASE_SECONDS`` and ``r`` a uniform random number in
[0, 1): exponential backoff with up to 100 % added jitter, capped at ``MAX_DELAY_SECONDS``.
The jitter spreads retries of many deliveries that failed together; because it is added
(never subtracted) the first retry never comes sooner than ``b`` and every gap is longer
than the one before until the cap. A 429 or 503 answer with ``Retry-After`` is retried after
the time it asks for instead (capped the same way). Deliveries are retried until
``RETRY_WINDOW`` after they were created (the event time for first deliveries); an attempt
that would fall later marks the delivery ``failed`` (it can still be redelivered).
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from datetime import datetime, timedelta

RETRY_WINDOW = timedelta(hours=24)
MAX_DELAY_SECONDS = 3600.0
MAX_RETRY_AFTER_SECONDS = 3600.0


def backoff_seconds(attempt: int, *, base: float, rng: Callable[[], float]) -> float:
    """Delay after failed attempt number ``attempt`` (1 = the first attempt)."""
    step = float(base) * float(2 ** min(max(attempt - 1, 0), 30))
    return float(min(step * (1.0 + float(rng())), MAX_DELAY_SECONDS))


def retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date); None when absent/invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return min(max((when - now).total_seconds(), 0.0), MAX_RETRY_AFTER_SECONDS)


def next_attempt(
    *,
    attempt: int,
    created_at: datetime,
    now: datetime,
    base: float,
    rng: Callable[[], float],
    retry_after: float | None = None,
    window: timedelta = RETRY_WINDOW,
) -> datetime | None:
    """The time of the next attempt, or None when the window (24 h) is over (failed)."""
    delay = retry_after if retry_after is not None else backoff_seconds(attempt, base=base, rng=rng)
    when = now + timedelta(seconds=delay)
    if when > created_at + window:
        return None
    return when
