"""Periodic jobs the delivery worker runs besides deliveries (chosen in ``wiring.py``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from rehabref.db import Database

PeriodicJob = Callable[[Database], Awaitable[Any]]
# name -> (interval in seconds, job)
PeriodicJobs = Mapping[str, tuple[float, PeriodicJob]]
