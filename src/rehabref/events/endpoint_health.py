"""Endpoint health: when one webhook endpoint is backed off, and when it is disabled.

Threat: one partner's endpoints that hang or fail must not cost anyone else their deliveries.
The worker caps what one endpoint (and one partner) may have in flight (``fair_claim.py``);
this module decides, from an endpoint's recent results, how much more it gets tried.

- Every attempt that reached (or tried to reach) the endpoint is a result: a 2xx is a success,
  anything else (an error status, a timeout, a refused connection) a failure.
- While an endpoint's last attempt failed, it gets at most ``FAILING_CAP`` sends in flight
  (instead of the worker's per-endpoint cap).
- ``FAILURES_TO_OPEN`` consecutive failures open the endpoint's circuit: none of its
  deliveries is claimed for ``open_seconds`` (30 s, doubling with every further failure, at
  most 10 minutes). When that passes the circuit is half-open: one delivery at a time is
  tried (a probe). A success closes the circuit; a failure opens it again, for longer.
- ``DISABLE_AFTER`` (24 hours, the retry window) of nothing but failures disables the
  endpoint: its pending deliveries are cancelled, nothing new is queued for it, and the
  partner sees why (API, console, and an e-mail when one is on file). The partner re-enables
  it by API, which starts it afresh (closed circuit, no failures counted).

Pure: time is passed in; results are folded one at a time in the order they happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

FAILURES_TO_OPEN = 5
FIRST_OPEN_SECONDS = 30.0
MAX_OPEN_SECONDS = 600.0
DISABLE_AFTER = timedelta(hours=24)
DISABLED_REASON = "failing"  # why the worker disabled an endpoint (the API's reason code)
FAILING_CAP = 2  # deliveries in flight to an endpoint whose last attempt failed

CircuitState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class Health:
    consecutive_failures: int = 0
    # The first failure of the current run of failures; None while healthy.
    failing_since: datetime | None = None
    circuit_open_until: datetime | None = None
    disabled_at: datetime | None = None
    disabled_reason: str | None = None


@dataclass(frozen=True)
class Result:
    at: datetime
    ok: bool


def open_seconds(failures: int) -> float:
    """How long the circuit stays open after failure number ``failures`` (>= the threshold)."""
    doublings = min(max(failures - FAILURES_TO_OPEN, 0), 20)
    return min(FIRST_OPEN_SECONDS * 2.0**doublings, MAX_OPEN_SECONDS)


def after(health: Health, result: Result) -> Health:
    """The endpoint's health once ``result`` is known. A disabled endpoint stays disabled
    (results of sends in flight when it was disabled change nothing)."""
    if health.disabled_at is not None:
        return health
    if result.ok:
        return Health()
    failures = health.consecutive_failures + 1
    since = health.failing_since or result.at
    open_until = None
    if failures >= FAILURES_TO_OPEN:
        open_until = result.at + timedelta(seconds=open_seconds(failures))
    failed = Health(failures, since, open_until)
    if failures >= FAILURES_TO_OPEN and result.at - since >= DISABLE_AFTER:
        return replace(failed, disabled_at=result.at, disabled_reason=DISABLED_REASON)
    return failed


def fold(health: Health, results: Iterable[Result]) -> Health:
    for result in sorted(results, key=lambda item: item.at):
        health = after(health, result)
    return health


def circuit(health: Health, *, now: datetime) -> CircuitState:
    if health.consecutive_failures < FAILURES_TO_OPEN:
        return "closed"
    if health.circuit_open_until is not None and health.circuit_open_until > now:
        return "open"
    return "half_open"


def in_flight_cap(failures: int, *, cap: int) -> int:
    """Deliveries one endpoint may have in flight: ``cap`` while healthy, ``FAILING_CAP``
    once it has failed (a hanging endpoint is found out by its first timeout), one probe
    while its circuit is half-open."""
    if failures >= FAILURES_TO_OPEN:
        return 1
    if failures > 0:
        return min(cap, FAILING_CAP)
    return cap
