"""When a referral's outcome measures (spec 2.7: PSFS, NDI, ODI, NPRS/VAS) are overdue.

Rule (docs/console.md restates it): a baseline measure is due with the first completed
session; while care goes on, a follow-up is due every ``FOLLOW_UP_DAYS``. A referral is
overdue when a session was completed and no measure was ever recorded, or when the latest
measure is more than ``FOLLOW_UP_DAYS`` older than the latest completed session. Pure: the
times are passed in.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from rehabref.clock import as_utc

FOLLOW_UP_DAYS = 14


def overdue_since(
    *, first_session: datetime | None, last_session: datetime | None, last_measure: datetime | None
) -> datetime | None:
    """Since when the next measure is overdue, or None when nothing is due."""
    if first_session is None or last_session is None:
        return None
    if last_measure is None:
        return as_utc(first_session)
    due = as_utc(last_measure) + timedelta(days=FOLLOW_UP_DAYS)
    return due if as_utc(last_session) > due else None
