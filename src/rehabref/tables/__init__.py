"""Tables layer: every table of the service, one module per aggregate.

Importing this package imports each table module, so ``metadata`` is complete (migrations,
tests). Table modules import only the kernel (``rehabref.db`` and friends).
"""

from __future__ import annotations

from rehabref.db import Base
from rehabref.tables import (
    assignments,
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
    payer_billing,
    physio_app,
    referrals,
    rights,
    scheduling,
)

__all__ = [
    "assignments",
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
    "payer_billing",
    "physio_app",
    "referrals",
    "rights",
    "scheduling",
]

metadata = Base.metadata
