"""Periodic jobs run by every delivery worker (see ``rehabref.events.worker``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rehabref.db import Database

PeriodicJob = Callable[[Database], Awaitable[None]]
_PERIODIC: dict[str, tuple[float, PeriodicJob]] = {}


def register_periodic(name: str, interval_seconds: float, fn: PeriodicJob) -> None:
    """Run ``await fn(db)`` every ``interval_seconds`` in every worker (jobs must tolerate
    running in several workers at once). Register at import time of a module that
    ``rehabref.app`` imports; re-registering a name replaces it."""
    _PERIODIC[name] = (float(interval_seconds), fn)


def periodic_jobs() -> dict[str, tuple[float, PeriodicJob]]:
    return dict(_PERIODIC)


async def _purge_idempotency(db: Database) -> None:
    from rehabref.idempotency.service import purge_expired

    async with db.write() as conn:
        await purge_expired(conn)


register_periodic("idempotency.purge_expired", 3600, _purge_idempotency)
