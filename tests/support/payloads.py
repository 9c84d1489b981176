"""Request bodies that tests start from and vary."""

from __future__ import annotations

import copy
import uuid
from typing import Any


def v1_referral(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "external_ref": f"EXT-{uuid.uuid4().hex[:12]}",
        "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
        "reason": "Lower back pain after lifting",
        "care_mode": "either",
        "preferred_contact": "messaging",
        "route": "assistant",
        "consent": {
            "accepted": True,
            "accepted_at": "2026-11-20T09:30:00Z",
            "version": "2026-01",
            "source": "clinic_form",
        },
    }
    for key, value in overrides.items():
        body[key] = value
    return copy.deepcopy(body)
