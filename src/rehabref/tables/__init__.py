"""Tables layer: every table of the service, one module per aggregate.

Importing this package imports each table module, so ``metadata`` is complete (migrations,
tests). Table modules import only the kernel (``rehabref.db`` and friends).
"""

from __future__ import annotations

from rehabref.db import Base
from rehabref.tables import (
    audit,
    billing,
    care,
    channels,
    commission,
    eligibility,
    events,
    idempotency,
    intake,
    jobs,
    links,
    matching,
    operators,
    partners,
    referrals,
    rights,
)

__all__ = [
    "audit",
    "billing",
    "care",
    "channels",
    "commission",
    "eligibility",
    "events",
    "idempotency",
    "intake",
    "jobs",
    "links",
    "matching",
    "metadata",
    "operators",
    "partners",
    "referrals",
    "rights",
]

metadata = Base.metadata
